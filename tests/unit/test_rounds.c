/* SPDX-License-Identifier: MIT */
/*
 * Rounds (arch/rounds.h), in this process: the injected bytes run here on
 * real threads exactly as they run in a child (they need nothing outside
 * themselves), so their barrier, their futexes and their quit are checked
 * without a tracer; and the arithmetic of a round (its span, each thread's
 * median).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "arch/rounds.h"
#include "measure/harness.h"

typedef void *(*worker_fn)(void *);
typedef long (*run_fn)(struct rounds_ctl *);

enum { N = 3, ROUNDS = 5, ITER = 7 };

static uint64_t calls, met;
static __thread uint64_t my_calls;

/*
 * A body that counts its calls, per thread and in all. The first call of
 * each thread in a round waits there until every thread has made its own:
 * the threads of a round run at once, or this never returns (and the test
 * times out). Nothing here depends on how the threads are scheduled.
 */
static void body(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e, uint64_t f)
{
	if (a + b + c + d + e + f != 1 + 2 + 3 + 4 + 5 + 6)
		abort();
	if (my_calls % ITER == 0) {
		uint64_t round = my_calls / ITER + 1;

		__atomic_add_fetch(&met, 1, __ATOMIC_SEQ_CST);
		while (__atomic_load_n(&met, __ATOMIC_SEQ_CST) < round * N)
			sched_yield();
	}
	my_calls++;
	__atomic_add_fetch(&calls, 1, __ATOMIC_SEQ_CST);
}

static int clock_of_test(int id, int64_t *ts)
{
	struct timespec t;
	int r = clock_gettime(id, &t);

	ts[0] = t.tv_sec;
	ts[1] = t.tv_nsec;
	return r;
}

static uint64_t ns_of(const int64_t *ts)
{
	return (uint64_t)ts[0] * 1000000000u + (uint64_t)ts[1];
}

static void test_rounds_in_process(void **state)
{
	static const uint64_t args[6] = { 1, 2, 3, 4, 5, 6 };
	size_t size = (arch_rounds_len + 4095) & ~(size_t)4095;
	uint8_t *code = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct rounds_ctl *ctl = calloc(1, sizeof(*ctl));
	pthread_t t[N];

	(void)state;
	assert_ptr_not_equal(code, MAP_FAILED);
	assert_non_null(ctl);
	memcpy(code, arch_rounds_code, arch_rounds_len);
	assert_int_equal(mprotect(code, size, PROT_READ | PROT_EXEC), 0);

	ctl->args = (uint64_t)(uintptr_t)args;
	ctl->clock = (uint64_t)(uintptr_t)clock_of_test;
	ctl->nthreads = N;
	ctl->n = ITER;
	ctl->fn = (uint64_t)(uintptr_t)body;
	for (int i = 0; i < N; i++) {
		ctl->slot[i].ctl = (uint64_t)(uintptr_t)ctl;
		assert_int_equal(pthread_create(&t[i], NULL, (worker_fn)(uintptr_t)(code + arch_rounds_worker),
						&ctl->slot[i]),
				 0);
	}
	for (int r = 1; r <= ROUNDS; r++) {
		uint64_t before = __atomic_load_n(&calls, __ATOMIC_SEQ_CST);
		struct measure_bound b[N];
		uint64_t span[2];

		assert_int_equal(((run_fn)(uintptr_t)(code + arch_rounds_run))(ctl), 0);
		/* Every worker made its n calls, and all were done when the
		 * round returned. */
		assert_int_equal(calls - before, (uint64_t)N * ITER);
		assert_int_equal(ctl->done, N);
		for (int i = 0; i < N; i++) {
			assert_true(ctl->slot[i].tid > 0);
			assert_true(ns_of(ctl->slot[i].t0) <= ns_of(ctl->slot[i].t1));
			b[i] = (struct measure_bound){ ctl->slot[i].tid, ns_of(ctl->slot[i].t0),
						       ns_of(ctl->slot[i].t1) };
			for (int j = 0; j < i; j++)
				assert_int_not_equal(ctl->slot[i].tid, ctl->slot[j].tid);
		}
		harness_round_span(b, N, span);
		for (int i = 0; i < N; i++)
			assert_true(span[0] <= b[i].start_ns && b[i].end_ns <= span[1]);
	}
	/* quit: every worker returns from its start routine. */
	ctl->quit = 1;
	assert_int_equal(((run_fn)(uintptr_t)(code + arch_rounds_run))(ctl), 0);
	for (int i = 0; i < N; i++) {
		void *ret = (void *)1;

		assert_int_equal(pthread_join(t[i], &ret), 0);
		assert_null(ret);
	}
	assert_int_equal(calls, (uint64_t)N * ITER * ROUNDS);
	munmap(code, size);
	free(ctl);
}

static void test_round_span(void **state)
{
	struct measure_bound b[3] = { { 1, 100, 200 }, { 2, 90, 150 }, { 3, 120, 260 } };
	uint64_t span[2];

	(void)state;
	harness_round_span(b, 3, span);
	assert_int_equal(span[0], 90);
	assert_int_equal(span[1], 260);
	harness_round_span(b, 1, span);
	assert_int_equal(span[0], 100);
	assert_int_equal(span[1], 200);
	harness_round_span(b, 0, span);
	assert_int_equal(span[0], 0);
	assert_int_equal(span[1], 0);
}

static void test_thread_medians(void **state)
{
	/* Three samples of two threads, sample-major. */
	const double v[] = { 5, 50, 1, 10, 3, 30 };
	const pid_t tids[] = { 11, 12 };
	struct measure_thread out[2];

	(void)state;
	assert_int_equal(harness_thread_medians(v, 2, 3, tids, out), 0);
	assert_int_equal(out[0].tid, 11);
	assert_true(out[0].value == 3);
	assert_int_equal(out[1].tid, 12);
	assert_true(out[1].value == 30);
	/* An even count: the mean of the middle two. */
	assert_int_equal(harness_thread_medians(v, 2, 2, tids, out), 0);
	assert_true(out[0].value == 3 && out[1].value == 30);
	assert_int_equal(harness_thread_medians(v, 2, 0, tids, out), 0);
	assert_true(isnan(out[0].value));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rounds_in_process),
		cmocka_unit_test(test_round_span),
		cmocka_unit_test(test_thread_medians),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
