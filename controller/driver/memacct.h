/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_DRIVER_MEMACCT_H
#define BENCHTRAP_DRIVER_MEMACCT_H

/*
 * The memory instrument's accounting (docs/instruments.md), kept apart
 * from the allocator wrappers (alloc.c) so that it can be tested alone:
 * what a counted call allocates, frees, holds at its peak and leaves.
 * Sizes are the sizes asked for, not what the allocator rounds them to.
 *
 * Blocks allocated while counting are remembered (address -> size) in an
 * open-addressing table the caller provides, so that a free or realloc of
 * one gives its size back; a block from before the call is not in it, and
 * freeing it counts a free and changes no byte figure. Nothing here
 * allocates, and nothing here locks: the caller serializes the calls on
 * one accounting (alloc.c: a spin lock).
 *
 * A round of threads (--threads) shares one accounting, so that a block
 * one thread allocates and another frees gives its size back, and live
 * and peak are the process's; each call may also name the calling
 * thread's own counters (struct memacct_thread, NULL: none), which the
 * caller keeps where it likes (alloc.c: a static array, one per thread of
 * the round): what that thread asked for, its allocations, its frees.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct memacct_block {
	uintptr_t addr; /* 0: empty slot */
	size_t size;
};

/* One thread's own share: the sum over the threads is the accounting's
 * allocations, frees and bytes when every call names its thread. */
struct memacct_thread {
	uint64_t allocations, frees, bytes;
};

struct memacct {
	uint64_t allocations; /* malloc, calloc, realloc (but to size 0), memalign... */
	uint64_t frees;	      /* free of a block, and realloc to size 0 */
	uint64_t bytes;	      /* asked for, in all */
	uint64_t live, peak;  /* of blocks allocated while counting */
	bool overflow;	      /* the table was full: live and peak are low */
	struct memacct_block *v;
	size_t cap; /* a power of two */
	size_t n;
};

static inline size_t memacct_slot(const struct memacct *m, uintptr_t a)
{
	/* Fibonacci hashing of the address without its alignment bits. */
	return (size_t)(((uint64_t)(a >> 4) * 0x9e3779b97f4a7c15ull) >> 32) & (m->cap - 1);
}

/* Start counting, with the table v of cap entries (a power of two), all
 * empty the first time (a fresh anonymous mapping); the blocks a call
 * before left in it are forgotten. */
static inline void memacct_start(struct memacct *m, struct memacct_block *v, size_t cap)
{
	size_t left = m->v == v ? m->n : 0;

	for (size_t i = 0; left && i < cap; i++)
		if (v[i].addr) {
			v[i].addr = 0;
			left--;
		}
	*m = (struct memacct){ .v = v, .cap = cap };
}

/* False when the table is full: the block is not counted live (live and
 * peak become lower bounds), since its free could not give its size back. */
static inline bool memacct_remember(struct memacct *m, uintptr_t a, size_t size)
{
	if (m->n + 1 >= m->cap - m->cap / 4) {
		m->overflow = true;
		return false;
	}
	size_t i = memacct_slot(m, a);

	while (m->v[i].addr)
		i = (i + 1) & (m->cap - 1);
	m->v[i] = (struct memacct_block){ a, size };
	m->n++;
	return true;
}

/* Forget block a; its size in *size. False when it is not remembered. */
static inline bool memacct_forget(struct memacct *m, uintptr_t a, size_t *size)
{
	size_t i = memacct_slot(m, a);

	while (m->v[i].addr && m->v[i].addr != a)
		i = (i + 1) & (m->cap - 1);
	if (!m->v[i].addr)
		return false;
	*size = m->v[i].size;
	m->n--;
	/* Backward-shift deletion: no tombstones. */
	for (size_t j = (i + 1) & (m->cap - 1); m->v[j].addr; j = (j + 1) & (m->cap - 1)) {
		size_t home = memacct_slot(m, m->v[j].addr);

		/* Move j into the hole at i unless its home lies in (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			m->v[i] = m->v[j];
			i = j;
		}
	}
	m->v[i].addr = 0;
	return true;
}

/* *bytes += size, never past the top. */
static inline void memacct_add_bytes(uint64_t *bytes, size_t size)
{
	*bytes = *bytes + size < *bytes ? UINT64_MAX : *bytes + size;
}

/* An allocation of 'size' bytes asked for (0 when it failed), for m and,
 * if given, thread t. */
static inline void memacct_count_alloc(struct memacct *m, struct memacct_thread *t, size_t size)
{
	m->allocations++;
	memacct_add_bytes(&m->bytes, size);
	if (t) {
		t->allocations++;
		memacct_add_bytes(&t->bytes, size);
	}
}

/* A block p of 'size' bytes asked for by thread t (NULL: none named); p
 * NULL: the allocation failed, a call that allocated no byte. */
static inline void memacct_alloc(struct memacct *m, struct memacct_thread *t, const void *p,
				 size_t size)
{
	memacct_count_alloc(m, t, p ? size : 0);
	if (!p)
		return;
	if (!memacct_remember(m, (uintptr_t)p, size))
		return;
	m->live += size;
	if (m->live > m->peak)
		m->peak = m->live;
}

/* free(p) by thread t (NULL: none named). */
static inline void memacct_free(struct memacct *m, struct memacct_thread *t, const void *p)
{
	size_t size;

	if (!p)
		return;
	m->frees++;
	if (t)
		t->frees++;
	if (memacct_forget(m, (uintptr_t)p, &size))
		m->live -= size;
}

/* realloc(old, size) returned p, in thread t (NULL: none named). To size
 * 0 (p NULL, old freed) it is a free; from NULL an allocation; otherwise an
 * allocation of 'size' whose old block, if counted, is released (in place
 * or moved alike, whichever thread allocated it). */
static inline void memacct_realloc(struct memacct *m, struct memacct_thread *t, const void *old,
				   const void *p, size_t size)
{
	size_t was;

	if (!old) {
		memacct_alloc(m, t, p, size);
		return;
	}
	if (size == 0 && !p) {
		memacct_free(m, t, old);
		return;
	}
	memacct_count_alloc(m, t, p ? size : 0);
	if (!p)
		return; /* failed: the old block stays */
	if (memacct_forget(m, (uintptr_t)old, &was))
		m->live -= was;
	if (!memacct_remember(m, (uintptr_t)p, size))
		return;
	m->live += size;
	if (m->live > m->peak)
		m->peak = m->live;
}

#endif
