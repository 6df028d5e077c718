/* SPDX-License-Identifier: MIT */
/*
 * The in-process reference for benches/threads.py: runs one registered
 * benchmark of tests/fixtures/rounds on N threads of its own process, the
 * way an in-process harness does, so that benchtrap's --threads figure can
 * be set beside it for the same code from the same source.
 *
 *   threads_inprocess NAME THREADS [SECONDS]  ->  prints the median ns per call
 *
 * Method, the same as benchtrap's rounds: N threads released together by a
 * barrier each call the function n times between two CLOCK_MONOTONIC reads;
 * a round is [min start, max end]; every sample is the benchmark's round
 * less an empty function's round at the same n, over n (n grown until a
 * round lasts 10 ms).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchtrap.h"

extern const struct benchtrap_entry __start_benchtrap_registry[] __attribute__((weak));
extern const struct benchtrap_entry __stop_benchtrap_registry[] __attribute__((weak));

__attribute__((noinline)) static void empty_function(void)
{
	__asm__ volatile("");
}

#define MAX_THREADS 64

static struct {
	void (*fn)(void);
	uint64_t n;
	unsigned nthreads;
	pthread_barrier_t start, end;
	uint64_t t0[MAX_THREADS], t1[MAX_THREADS];
	int quit;
} job;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *worker(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;

	for (;;) {
		pthread_barrier_wait(&job.start);
		if (job.quit)
			return NULL;
		void (*fn)(void) = job.fn;

		job.t0[id] = now_ns();
		for (uint64_t i = 0; i < job.n; i++)
			fn();
		job.t1[id] = now_ns();
		pthread_barrier_wait(&job.end);
	}
}

/* One round on every thread; the coordinating thread only waits. */
static uint64_t round_of(void (*fn)(void), uint64_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	job.fn = fn;
	job.n = n;
	pthread_barrier_wait(&job.start);
	pthread_barrier_wait(&job.end);
	for (unsigned i = 0; i < job.nthreads; i++) {
		lo = job.t0[i] < lo ? job.t0[i] : lo;
		hi = job.t1[i] > hi ? job.t1[i] : hi;
	}
	return hi - lo;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const struct benchtrap_entry *e = __start_benchtrap_registry;
	double seconds = argc > 3 ? atof(argv[3]) : 2.0, v[100000];
	pthread_t tid[MAX_THREADS];
	size_t ns = 0;
	uint64_t n = 1, start;

	if (argc < 3 || (job.nthreads = (unsigned)atoi(argv[2])) < 1 || job.nthreads > MAX_THREADS) {
		fprintf(stderr, "usage: threads_inprocess NAME THREADS [SECONDS]\n");
		return 2;
	}
	while (e < __stop_benchtrap_registry && strcmp(e->name, argv[1]))
		e++;
	if (e >= __stop_benchtrap_registry || e->nargs) {
		fprintf(stderr, "threads_inprocess: no benchmark %s without arguments\n", argv[1]);
		return 2;
	}
	pthread_barrier_init(&job.start, NULL, job.nthreads + 1);
	pthread_barrier_init(&job.end, NULL, job.nthreads + 1);
	for (unsigned i = 0; i < job.nthreads; i++)
		pthread_create(&tid[i], NULL, worker, (void *)(uintptr_t)i);
	while (round_of(e->fn, n) < 10000000 && n < (1ull << 40))
		n *= 2;
	round_of(e->fn, n);
	start = now_ns();
	while (ns < sizeof(v) / sizeof(v[0]) && (ns < 10 || now_ns() - start < seconds * 1e9)) {
		uint64_t b, c;

		if (ns % 2) {
			b = round_of(e->fn, n);
			c = round_of(empty_function, n);
		} else {
			c = round_of(empty_function, n);
			b = round_of(e->fn, n);
		}
		v[ns++] = ((double)b - (double)c) / (double)n;
	}
	job.quit = 1;
	pthread_barrier_wait(&job.start);
	for (unsigned i = 0; i < job.nthreads; i++)
		pthread_join(tid[i], NULL);
	qsort(v, ns, sizeof(v[0]), cmp_double);
	printf("%.3f\n", ns % 2 ? v[ns / 2] : (v[ns / 2 - 1] + v[ns / 2]) / 2);
	return 0;
}
