/* SPDX-License-Identifier: MIT */
/*
 * The code of rounds (arch/rounds.h) for x86-64: injected into a child, so
 * freestanding. No call but through the pointers it is given, no data of
 * its own, no relocation; arch/blob.py refuses to build anything else.
 */
#include <stdint.h>

#include "arch/rounds.h"

#define SYS_futex 202
#define SYS_gettid 186
#define SYS_sched_yield 24
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129
#define CLOCK_MONOTONIC 1
#define CLOCK_THREAD_CPUTIME_ID 3

typedef void (*body_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
typedef int (*clock_fn)(int, int64_t *);

static inline long sys3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

static inline long sys4(long nr, long a, long b, long c, long d)
{
	register long r10 __asm__("r10") = d;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

/* Sleep while *word is 'val' (or until woken; a spurious return is
 * harmless, every caller checks again). */
static void futex_wait(uint32_t *word, uint32_t val)
{
	sys4(SYS_futex, (long)word, FUTEX_WAIT_PRIVATE, val, 0);
}

static void futex_wake(uint32_t *word)
{
	sys3(SYS_futex, (long)word, FUTEX_WAKE_PRIVATE, 0x7fffffff);
}

static uint32_t load(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/*
 * A worker: one thread of the child, started by the child's own
 * pthread_create. Between rounds it sleeps on ctl->gen.
 */
__attribute__((used, noinline)) void *rounds_worker(struct rounds_slot *s)
{
	struct rounds_ctl *c = (struct rounds_ctl *)s->ctl;
	clock_fn clock;
	int64_t c0[2], c1[2];
	uint32_t seen = 0, g;

	s->tid = (int32_t)sys3(SYS_gettid, 0, 0, 0);
	for (;;) {
		while ((g = load(&c->gen)) == seen)
			futex_wait(&c->gen, seen);
		seen = g;
		if (c->quit)
			return 0;

		body_fn fn = (body_fn)c->fn;
		const uint64_t *a = (const uint64_t *)c->args;
		uint64_t n = c->n;
		unsigned spins = 0;

		clock = (clock_fn)c->clock;
		/* The start barrier: released together, so that the timed
		 * intervals overlap. More threads than processors must not
		 * spin each other out of the time they need to arrive. */
		__atomic_add_fetch(&c->arrived, 1, __ATOMIC_ACQ_REL);
		while (load(&c->arrived) < c->nthreads) {
			__builtin_ia32_pause();
			if (++spins % 4096 == 0)
				sys3(SYS_sched_yield, 0, 0, 0);
		}
		clock(CLOCK_THREAD_CPUTIME_ID, c0);
		clock(CLOCK_MONOTONIC, s->t0);
		do
			fn(a[0], a[1], a[2], a[3], a[4], a[5]);
		while (--n);
		clock(CLOCK_MONOTONIC, s->t1);
		clock(CLOCK_THREAD_CPUTIME_ID, c1);
		s->cpu_ns = (uint64_t)((c1[0] - c0[0]) * 1000000000 + (c1[1] - c0[1]));
		if (__atomic_add_fetch(&c->done, 1, __ATOMIC_ACQ_REL) == c->nthreads)
			futex_wake(&c->done);
	}
}

/*
 * One round, on the main thread (an injected call): start the workers and
 * sleep until the last one is done.
 */
__attribute__((used, noinline)) long rounds_run(struct rounds_ctl *c)
{
	uint32_t d;

	__atomic_store_n(&c->arrived, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&c->done, 0, __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->gen, 1, __ATOMIC_RELEASE);
	futex_wake(&c->gen);
	if (c->quit)
		return 0;
	while ((d = load(&c->done)) < c->nthreads)
		futex_wait(&c->done, d);
	return 0;
}
