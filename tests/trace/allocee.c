// SPDX-License-Identifier: MIT
/*
 * The fixture of the memory instrument's tests (test-allocs.c): batch
 * functions whose allocations are known, each called once from main, in
 * this order:
 *
 *   keep     4 blocks of 64 bytes live together, then freed: 256 bytes at
 *            once at the most
 *   seq      4 blocks of 100 bytes one after the other: 100 at once
 *   grow     10 bytes, realloc'ed to 1000, freed: 1000 at once
 *   aligned  posix_memalign of 256, left live (freed by main afterwards)
 *   cross    frees the aligned block, allocates 16 and leaves them live:
 *            a block of another call freed is none of this one's
 *   refused  50 bytes, a realloc of them to 2^62 that fails (they stay
 *            live), 10 more, both freed: 60 at once
 *
 * The pointers go through a volatile array so that no allocation is
 * optimized away.
 */
#include <stdlib.h>

void keep(void);
void seq(void);
void grow(void);
void aligned(void);
void cross(void);
void refused(void);

static void *volatile slots[8];

__attribute__((noinline)) void keep(void)
{
	for (int i = 0; i < 4; i++)
		slots[i] = malloc(64);
	for (int i = 0; i < 4; i++)
		free(slots[i]);
}

__attribute__((noinline)) void seq(void)
{
	for (int i = 0; i < 4; i++) {
		slots[0] = malloc(100);
		free(slots[0]);
	}
}

__attribute__((noinline)) void grow(void)
{
	slots[0] = malloc(10);
	slots[0] = realloc(slots[0], 1000);
	free(slots[0]);
}

__attribute__((noinline)) void aligned(void)
{
	void *p = NULL;

	if (posix_memalign(&p, 64, 256) == 0)
		slots[5] = p;
}

__attribute__((noinline)) void cross(void)
{
	free(slots[5]);
	slots[6] = malloc(16);
}

__attribute__((noinline)) void refused(void)
{
	static volatile size_t huge = (size_t)1 << 62;

	slots[0] = malloc(50);
	if (realloc(slots[0], huge))
		return; /* not on any machine this runs on */
	slots[1] = malloc(10);
	free(slots[1]);
	free(slots[0]);
}

int main(void)
{
	keep();
	seq();
	grow();
	aligned();
	cross();
	refused();
	free(slots[6]);
	return 0;
}
