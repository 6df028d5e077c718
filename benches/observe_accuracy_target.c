// SPDX-License-Identifier: MIT
/*
 * The program benches/observe_accuracy.py observes: main calls work(K) N
 * times (argv[1], argv[2]) and times every call itself with
 * CLOCK_MONOTONIC, then prints the median of its own timings
 * ("reference_median_ns X"): the in-process reference that observe's
 * median of the same calls is held against. With argv[3] == "tiny", it
 * calls tiny() (an increment, a few ns) the same way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

unsigned long work(unsigned long k);
void tiny(void);

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long work(unsigned long k)
{
	unsigned long x = 0;

	for (unsigned long i = 0; i < k; i++) {
		x += i * i;
		__asm__ volatile("" : "+r"(x));
	}
	sink = x;
	return x;
}

__attribute__((noinline)) void tiny(void)
{
	sink++;
	__asm__ volatile("nop; nop; nop; nop; nop");
}

static long long ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000;
	unsigned long k = argc > 2 ? strtoul(argv[2], NULL, 10) : 36000;
	int use_tiny = argc > 3 && !strcmp(argv[3], "tiny");
	long long *d = malloc((size_t)n * sizeof(*d));

	if (!d || n < 1)
		return 2;
	for (long i = 0; i < n; i++) {
		long long t0 = ns();

		if (use_tiny)
			tiny();
		else
			work(k);
		d[i] = ns() - t0;
	}
	qsort(d, (size_t)n, sizeof(*d), cmp);
	printf("reference_median_ns %lld\n", d[n / 2]);
	free(d);
	return 0;
}
