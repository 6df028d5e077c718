/* SPDX-License-Identifier: MIT */
/*
 * The in-process reference for benches/run_accuracy.py: times one
 * registered benchmark of the example suite from inside its own process,
 * the way an in-process harness does, so that benchtrap's out-of-process
 * figure can be compared with it on the same code from the same build.
 *
 *   inprocess NAME [SECONDS]  ->  prints the median ns per call
 *
 * Method, the same as benchtrap's harness: samples of n calls through a
 * function pointer between two CLOCK_MONOTONIC reads (n grown until a
 * sample lasts 10 ms), each paired with n calls of an empty function whose
 * median per-call cost is subtracted.
 */
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

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t timed(void (*volatile fn)(void), uint64_t n)
{
	uint64_t t0 = now_ns();

	for (uint64_t i = 0; i < n; i++)
		fn();
	return now_ns() - t0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	const struct benchtrap_entry *e;
	double seconds = argc > 2 ? atof(argv[2]) : 1.0;
	static double bench[100000], cal[100000];
	uint64_t n = 1;
	size_t ns = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: inprocess NAME [SECONDS]\n");
		return 2;
	}
	for (e = __start_benchtrap_registry; e < __stop_benchtrap_registry; e++)
		if (e->nargs == 0 && strcmp(e->name, argv[1]) == 0)
			break;
	if (e >= __stop_benchtrap_registry) {
		fprintf(stderr, "inprocess: no zero-argument benchmark named '%s'\n", argv[1]);
		return 2;
	}
	while (timed(e->fn, n) < 10000000)
		n *= 2;
	for (uint64_t t_end = now_ns() + (uint64_t)(seconds * 1e9);
	     now_ns() < t_end && ns < sizeof(bench) / sizeof(bench[0]); ns++) {
		cal[ns] = (double)timed(empty_function, n) / (double)n;
		bench[ns] = (double)timed(e->fn, n) / (double)n;
	}
	printf("%.4f\n", median(bench, ns) - median(cal, ns));
	return 0;
}
