// SPDX-License-Identifier: MIT
/*
 * How long reading a Google Benchmark binary's list takes with many names
 * (gbench_parse_list, the text of --benchmark_list_tests): N names of the
 * shape Google Benchmark prints ("BM_family/123/real_time"), parsed ROUNDS
 * times; prints the best time. Nothing is asserted: the figure is for
 * reading (benches/results_scale.py prints it beside compare and merge).
 * Usage: gbench-list-scale [N] [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/strutil.h"
#include "gbench/gbench.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	unsigned rounds = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 3;
	char *text = NULL;
	size_t len = 0;
	double best = -1;
	FILE *f = open_memstream(&text, &len);

	if (!f || n == 0 || rounds == 0) {
		fprintf(stderr, "usage: gbench-list-scale [N] [ROUNDS]\n");
		return 2;
	}
	for (size_t i = 0; i < n; i++)
		fprintf(f, "BM_family%zu/%zu/real_time\n", i % 97, i);
	if (fclose(f) != 0)
		return 1;
	for (unsigned k = 0; k < rounds; k++) {
		char **names;
		size_t got;
		double t0 = now_s(), t;

		if (gbench_parse_list(text, len, &names, &got) < 0 || got != n) {
			fprintf(stderr, "gbench-list-scale: the list did not parse\n");
			return 1;
		}
		t = now_s() - t0;
		str_free_n(names, got);
		if (best < 0 || t < best)
			best = t;
	}
	printf("gbench list of %zu names: %.3f s (best of %u)\n", n, best, rounds);
	free(text);
	return 0;
}
