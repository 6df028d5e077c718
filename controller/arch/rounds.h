/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_ARCH_ROUNDS_H
#define BENCHTRAP_ARCH_ROUNDS_H

/*
 * Rounds: a benchmark body on N threads at once (--threads N), with no
 * lock and no timing code in the target. The code is injected into the
 * child next to the harness (arch/harness.h); it is built from C
 * (arch/<arch>/rounds-code.c, freestanding: no library call, no data of its
 * own, no relocation) into position-independent bytes at build time
 * (arch/blob.py checks that), so that the barrier and the futexes can be
 * read as C rather than as hand-assembled bytes.
 *
 * The controller, at main:
 *
 *   1. writes a struct rounds_ctl into a data page of the child;
 *   2. calls the child's own pthread_create(&slot->thread, NULL,
 *      rounds_worker, slot) once per thread (an injected call): each worker
 *      is a real thread of the program, with its TLS, its stack and its
 *      allocator arena, and waits on ctl->gen;
 *   3. for every round, sets fn and n and calls rounds_run(ctl) on the main
 *      thread, which bumps ctl->gen, wakes the workers and sleeps until the
 *      last of them is done; then the main thread returns to the engine's
 *      trap and the controller reads every slot's t0 and t1.
 *
 * Each worker, per round:
 *
 *     start barrier (spins until every worker arrived); c0; t0;
 *     n times fn(args...); t1; c1; done++ (the last one wakes the main thread)
 *
 * (c0, c1: the thread's own CPU time, so that the controller can tell
 * threads that ran at once from threads that took turns on a processor).
 *
 * so that the N timed intervals overlap and no trap falls inside any of
 * them: the main thread sleeps in the kernel during a round, the workers
 * never stop between rounds but to sleep on ctl->gen (the engine stops
 * them at the main thread's trap, after the round). The round is
 * [min t0, max t1].
 *
 *   4. sets quit and runs one more rounds_run: every worker returns from its
 *      start routine, and the controller joins each with the child's
 *      pthread_join (an injected call), so that a child that goes on to
 *      another benchmark (--isolation shared) is left as it was.
 */

#include <stddef.h>
#include <stdint.h>

/* MEASURE_MAX_THREADS */
#define ROUNDS_MAX_THREADS 64

/* One worker's slot, a cache line of its own (its clock readings are
 * written at the end of a round by one thread only). */
struct rounds_slot {
	uint64_t ctl;	/* address of the struct rounds_ctl */
	uint64_t thread; /* pthread_t, written by pthread_create */
	int64_t t0[2];	/* struct timespec: the interval's start */
	int64_t t1[2];	/* and end */
	uint64_t cpu_ns; /* the thread's CPU time over [t0, t1] (read just outside) */
	int32_t tid;	/* the worker's kernel thread id, set when it starts */
	uint32_t pad;
};

struct rounds_ctl {
	/* Written by the controller between rounds. */
	uint64_t fn;	  /* the function each worker calls n times */
	uint64_t n;	  /* iterations, at least 1 */
	uint64_t args;	  /* address of six 64-bit argument words */
	uint64_t clock;	  /* clock_gettime (the vDSO's, or the harness's stub) */
	uint32_t nthreads; /* workers taking part */
	uint32_t quit;	  /* 1: the next round ends every worker */
	/* Shared by the threads of the child. */
	uint32_t gen;	  /* futex: bumped to start a round */
	uint32_t arrived; /* start barrier */
	uint32_t done;	  /* futex: workers finished with the round */
	uint32_t pad[3];
	struct rounds_slot slot[ROUNDS_MAX_THREADS];
};

_Static_assert(sizeof(struct rounds_slot) == 64, "a slot is one cache line");
_Static_assert(offsetof(struct rounds_ctl, slot) == 64, "slots start on a cache line");

/* The injected bytes (rounds-blob.c, generated), entry points as offsets. */
extern const uint8_t arch_rounds_code[];
extern const size_t arch_rounds_len;
extern const size_t arch_rounds_worker; /* void *rounds_worker(struct rounds_slot *) */
extern const size_t arch_rounds_run;	/* long rounds_run(struct rounds_ctl *) */

#endif
