/* SPDX-License-Identifier: MIT */
/* The memory instrument's accounting (controller/driver/memacct.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "driver/memacct.h"

#define CAP 64
static struct memacct_block table[CAP];

/* A fresh accounting starts on an empty table, as the driver's does (a
 * fresh anonymous mapping); a second start on the same one forgets what
 * the first left. */
static void start(struct memacct *m)
{
	if (!m->v)
		memset(table, 0, sizeof(table));
	memacct_start(m, table, CAP);
}

/* Addresses as an allocator would hand them out: 16-byte aligned. */
#define P(k) ((const void *)(uintptr_t)(0x10000 + 16 * (k)))

static void test_peak_and_leaks(void **state)
{
	struct memacct m = { 0 };

	(void)state;
	start(&m);
	memacct_alloc(&m, NULL, P(1), 100);
	memacct_alloc(&m, NULL, P(2), 200);
	memacct_free(&m, NULL, P(1));
	memacct_alloc(&m, NULL, P(3), 50);
	/* Live: 200 + 50; the peak was 300. */
	assert_int_equal(m.allocations, 3);
	assert_int_equal(m.frees, 1);
	assert_int_equal(m.bytes, 350);
	assert_int_equal(m.peak, 300);
	assert_int_equal(m.live, 250);
	memacct_free(&m, NULL, P(3));
	assert_int_equal(m.live, 200); /* leaked */
	assert_false(m.overflow);
}

static void test_free_from_before(void **state)
{
	struct memacct m = { 0 };

	(void)state;
	start(&m);
	/* A block from before the call: a free, no byte figure moves. */
	memacct_free(&m, NULL, P(40));
	assert_int_equal(m.frees, 1);
	assert_int_equal(m.live, 0);
	assert_int_equal(m.bytes, 0);
	/* free(NULL) is nothing. */
	memacct_free(&m, NULL, NULL);
	assert_int_equal(m.frees, 1);
	/* Nor does a realloc of it release bytes that were never counted. */
	memacct_realloc(&m, NULL, P(41), P(42), 64);
	assert_int_equal(m.allocations, 1);
	assert_int_equal(m.bytes, 64);
	assert_int_equal(m.live, 64);
}

static void test_reallocs(void **state)
{
	struct memacct m = { 0 };

	(void)state;
	start(&m);
	memacct_realloc(&m, NULL, NULL, P(1), 16); /* from NULL: an allocation */
	memacct_realloc(&m, NULL, P(1), P(1), 32); /* grown in place */
	assert_int_equal(m.live, 32);
	memacct_realloc(&m, NULL, P(1), P(2), 64); /* moved */
	assert_int_equal(m.allocations, 3);
	assert_int_equal(m.bytes, 16 + 32 + 64);
	assert_int_equal(m.live, 64);
	assert_int_equal(m.peak, 64);
	/* The old address is no longer a block: freeing it releases nothing. */
	memacct_free(&m, NULL, P(1));
	assert_int_equal(m.live, 64);
	/* A realloc that fails leaves the old block, and allocates no byte. */
	memacct_realloc(&m, NULL, P(2), NULL, 1 << 20);
	assert_int_equal(m.live, 64);
	assert_int_equal(m.allocations, 4);
	assert_int_equal(m.bytes, 16 + 32 + 64);
	/* To size 0: a free. */
	memacct_realloc(&m, NULL, P(2), NULL, 0);
	assert_int_equal(m.frees, 2);
	assert_int_equal(m.live, 0);
	assert_int_equal(m.allocations, 4);
}

static void test_failed_alloc(void **state)
{
	struct memacct m = { 0 };

	(void)state;
	start(&m);
	memacct_alloc(&m, NULL, NULL, 1000);
	assert_int_equal(m.allocations, 1);
	assert_int_equal(m.bytes, 0);
	assert_int_equal(m.live, 0);
	assert_int_equal(m.peak, 0);
	/* Huge requests that succeeded cannot wrap the sum around. */
	memacct_alloc(&m, NULL, P(1), SIZE_MAX);
	memacct_alloc(&m, NULL, P(2), SIZE_MAX);
	assert_true(m.bytes == UINT64_MAX);
}

/* A call that leaks leaves blocks in the table: the next start forgets
 * them, so the next call's frees of them release nothing. */
static void test_start_forgets(void **state)
{
	struct memacct m = { 0 };

	(void)state;
	start(&m);
	memacct_alloc(&m, NULL, P(1), 10);
	memacct_alloc(&m, NULL, P(2), 20);
	start(&m);
	memacct_free(&m, NULL, P(1));
	assert_int_equal(m.live, 0);
	assert_int_equal(m.frees, 1);
	for (size_t i = 0; i < CAP; i++)
		assert_int_equal(table[i].addr, 0);
}

/* The table against a plain list, under random allocations and frees of
 * clustered addresses (long probe runs, wrap-around, backward shifts). */
static void test_table_random(void **state)
{
	struct memacct m = { 0 };
	uintptr_t live[CAP];
	size_t sizes[CAP], n = 0;
	uint64_t want_live = 0, want_peak = 0;
	unsigned seed = 12345;

	(void)state;
	start(&m);
	for (int step = 0; step < 20000; step++) {
		seed = seed * 1103515245u + 12345u;
		bool alloc = n == 0 || (n < CAP / 2 && (seed >> 16) % 3 != 0);

		if (alloc) {
			uintptr_t a;
			bool dup;

			do {
				seed = seed * 1103515245u + 12345u;
				a = 0x10000 + 16 * ((seed >> 16) % 200);
				dup = false;
				for (size_t k = 0; k < n; k++)
					dup |= live[k] == a;
			} while (dup);
			live[n] = a;
			sizes[n] = 1 + (seed >> 20) % 1000;
			memacct_alloc(&m, NULL, (const void *)a, sizes[n]);
			want_live += sizes[n++];
			if (want_live > want_peak)
				want_peak = want_live;
		} else {
			size_t k = (seed >> 16) % n;

			memacct_free(&m, NULL, (const void *)live[k]);
			want_live -= sizes[k];
			live[k] = live[--n];
			sizes[k] = sizes[n];
		}
		assert_int_equal(m.live, want_live);
		assert_int_equal(m.n, n);
	}
	assert_int_equal(m.peak, want_peak);
	assert_false(m.overflow);
}

static void test_overflow(void **state)
{
	struct memacct m = { 0 };

	(void)state;
	start(&m);
	for (size_t k = 0; k < CAP; k++)
		memacct_alloc(&m, NULL, P(k + 1), 1);
	/* Counts stay exact; the table said it could not hold them all, and
	 * the blocks it could not hold are not live: live and peak are lower
	 * bounds, and freeing every block leaves nothing live. */
	assert_int_equal(m.allocations, CAP);
	assert_int_equal(m.bytes, CAP);
	assert_true(m.overflow);
	assert_true(m.n < CAP);
	assert_int_equal(m.live, m.n);
	assert_int_equal(m.peak, m.n);
	for (size_t k = 0; k < CAP; k++)
		memacct_free(&m, NULL, P(k + 1));
	assert_int_equal(m.live, 0);
	assert_int_equal(m.frees, CAP);
}

/* A round of threads: each names its own share; a block one allocates
 * and another frees gives its size back to the process's live bytes, the
 * free is the freeing thread's; the shares add up to the totals, and peak
 * and live are the process's. */
static void test_threads(void **state)
{
	struct memacct m = { 0 };
	struct memacct_thread t[3] = { 0 };

	(void)state;
	start(&m);
	memacct_alloc(&m, &t[0], P(1), 100);
	memacct_alloc(&m, &t[1], P(2), 100);
	assert_int_equal(m.peak, 200);
	memacct_free(&m, &t[1], P(1)); /* thread 0's block, freed by 1 */
	memacct_realloc(&m, &t[0], P(2), P(3), 300); /* thread 1's block, moved by 0 */
	memacct_alloc(&m, &t[2], NULL, 50);	     /* failed: no byte */
	memacct_realloc(&m, &t[2], P(3), NULL, 0);    /* a free by thread 2 */
	memacct_alloc(&m, NULL, P(4), 7);	     /* a thread of no round */
	assert_int_equal(t[0].allocations, 2);
	assert_int_equal(t[0].bytes, 400);
	assert_int_equal(t[0].frees, 0);
	assert_int_equal(t[1].allocations, 1);
	assert_int_equal(t[1].bytes, 100);
	assert_int_equal(t[1].frees, 1);
	assert_int_equal(t[2].allocations, 1);
	assert_int_equal(t[2].bytes, 0);
	assert_int_equal(t[2].frees, 1);
	assert_int_equal(m.allocations, t[0].allocations + t[1].allocations + t[2].allocations + 1);
	assert_int_equal(m.frees, t[0].frees + t[1].frees + t[2].frees);
	assert_int_equal(m.bytes, t[0].bytes + t[1].bytes + t[2].bytes + 7);
	/* 100 + 100, then 100 - 100 + 300: the process's most at once. */
	assert_int_equal(m.peak, 300);
	assert_int_equal(m.live, 7);
	/* A share's bytes saturate as the totals do. */
	memacct_alloc(&m, &t[1], P(5), SIZE_MAX);
	assert_true(t[1].bytes == UINT64_MAX && m.bytes == UINT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_peak_and_leaks), cmocka_unit_test(test_free_from_before),
		cmocka_unit_test(test_reallocs),	       cmocka_unit_test(test_failed_alloc),
		cmocka_unit_test(test_start_forgets),  cmocka_unit_test(test_table_random),
		cmocka_unit_test(test_overflow),	       cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests_name("memacct", tests, NULL, NULL);
}
