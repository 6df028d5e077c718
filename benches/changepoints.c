// SPDX-License-Identifier: MIT
/*
 * How well changepoints_find (controller/stats/changepoint.h) finds the
 * steps of noisy series of 200 commits, beside the rules CI jobs commonly
 * use, and how long it takes (docs/changepoints.md).
 *
 * Each series is a level of 1000 with Gaussian noise of 3 % CV, on a host
 * whose speed is bimodal: each run, with probability 0.15, is 8-12 % slower.
 * A series has one step of 2, 5 or 10 %, up or down (half each), at a
 * position drawn uniformly from [10, 190], or no step. The methods:
 *
 *   e-divisive   changepoints_find, with the default options unless
 *                ALPHA, MIN_SEGMENT or MIN_STEP are given
 *   prev > 5 %   a point that differs from the one before by more than 5 %
 *   med10 > 5 %  a point that differs from the median of the 10 before by
 *                more than 5 % (from the 11th point on)
 *
 * A detection is true when it is within 3 commits of the step, and a step
 * is matched by one detection at most (the nearest); every other detection
 * is a false positive, those in the series without a step included.
 * Nothing is asserted: the table is for reading.
 *
 * Usage: changepoints [SERIES_PER_ROW [SEED [ALPHA [MIN_SEGMENT [MIN_STEP]]]]]
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stats/stats.h"
#include "stats/changepoint.h"

#define LEN 200
#define TOLERANCE 3
#define NMETHODS 3
#define TIMED_SERIES 50
#define TIMED_ROUNDS 5

static struct changepoint_opts opts;

static const char *const method_names[NMETHODS] = { "e-divisive", "prev > 5 %", "med10 > 5 %" };

/* The rows: step sizes, 0 for the series without a step. */
static const double step_sizes[] = { 0.02, 0.05, 0.10, 0.0 };
#define NROWS (sizeof(step_sizes) / sizeof(step_sizes[0]))

/* ---- Series ------------------------------------------------------------ */

/* xorshift64* (Vigna, 2016), apart from the generator under test. */
static uint64_t rng_state;

static double uniform(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return ((double)((rng_state * UINT64_C(2685821657736338717)) >> 11) + 1.0) * 0x1.0p-53;
}

static double gaussian(void)
{
	return sqrt(-2.0 * log(uniform())) * cos(2.0 * M_PI * uniform());
}

/*
 * One series with a step of 'size' (0: none), up or down; returns the
 * index of the first point after the step, or LEN when there is none.
 */
static size_t make_series(double *x, double size, bool down)
{
	size_t at = size > 0.0 ? 10 + (size_t)(uniform() * 181.0) : LEN;
	double after = down ? 1.0 / (1.0 + size) : 1.0 + size;

	for (size_t i = 0; i < LEN; i++) {
		double v = 1000.0 * (i >= at ? after : 1.0);

		v *= 1.0 + 0.03 * gaussian();
		if (uniform() < 0.15)
			v *= 1.08 + 0.04 * uniform();
		x[i] = v;
	}
	return at;
}

/* ---- Methods ----------------------------------------------------------- */

/* Each writes the indices it flags to 'flags' and returns how many. */

static size_t run_edivisive(const double *x, size_t *flags)
{
	struct changepoint *cp;
	size_t n;

	if (changepoints_find(x, LEN, &opts, &cp, &n) < 0) {
		fprintf(stderr, "changepoints: changepoints_find failed\n");
		exit(1);
	}
	for (size_t j = 0; j < n; j++)
		flags[j] = cp[j].at;
	free(cp);
	return n;
}

static size_t run_prev(const double *x, size_t *flags)
{
	size_t n = 0;

	for (size_t i = 1; i < LEN; i++) {
		if (fabs(x[i] / x[i - 1] - 1.0) > 0.05)
			flags[n++] = i;
	}
	return n;
}

static size_t run_median10(const double *x, size_t *flags)
{
	double window[10];
	size_t n = 0;

	for (size_t i = 10; i < LEN; i++) {
		memcpy(window, x + i - 10, sizeof(window));
		if (fabs(x[i] / stats_median(window, 10) - 1.0) > 0.05)
			flags[n++] = i;
	}
	return n;
}

static size_t (*const methods[NMETHODS])(const double *, size_t *) = {
	run_edivisive,
	run_prev,
	run_median10,
};

/* ---- Scoring ----------------------------------------------------------- */

#define NEAR 10

struct score {
	unsigned long steps, hits, flags;
	unsigned long near; /* false positives within NEAR commits of the step */
	double offset;	    /* sum of |detection - step| over the hits */
};

static void score_series(struct score *s, size_t at, const size_t *flags, size_t n)
{
	size_t best = SIZE_MAX, best_d = SIZE_MAX;

	s->flags += n;
	if (at >= LEN)
		return;
	s->steps++;
	for (size_t j = 0; j < n; j++) {
		size_t d = flags[j] > at ? flags[j] - at : at - flags[j];

		if (d <= TOLERANCE && d < best_d) {
			best = j;
			best_d = d;
		}
	}
	if (best != SIZE_MAX) {
		s->hits++;
		s->offset += (double)best_d;
	}
	for (size_t j = 0; j < n; j++) {
		size_t d = flags[j] > at ? flags[j] - at : at - flags[j];

		if (j != best && d <= NEAR)
			s->near++;
	}
}

/* "precision / recall" of a row with steps. */
static void print_cell(const struct score *s)
{
	char cell[32];

	if (s->flags == 0)
		snprintf(cell, sizeof(cell), "  -  / %.2f", (double)s->hits / s->steps);
	else
		snprintf(cell, sizeof(cell), "%.2f / %.2f", (double)s->hits / s->flags,
			 (double)s->hits / s->steps);
	printf(" %-22s |", cell);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
	unsigned long per_row = argc > 1 ? strtoul(argv[1], NULL, 10) : 200;
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	struct score rows[NROWS][NMETHODS], all[NMETHODS];
	static double timed[TIMED_SERIES][LEN];
	double x[LEN], t[NMETHODS][TIMED_ROUNDS];
	size_t flags[LEN];

	changepoint_opts_default(&opts);
	if (argc > 3)
		opts.alpha = strtod(argv[3], NULL);
	if (argc > 4)
		opts.min_segment = strtoul(argv[4], NULL, 10);
	if (argc > 5)
		opts.min_step = strtod(argv[5], NULL);
	if (per_row == 0 || argc > 6) {
		fprintf(stderr, "usage: changepoints [SERIES_PER_ROW [SEED [ALPHA [MIN_SEGMENT "
				"[MIN_STEP]]]]]\n");
		return 2;
	}
	memset(rows, 0, sizeof(rows));
	memset(all, 0, sizeof(all));
	rng_state = seed * UINT64_C(0x9e3779b97f4a7c15) | 1;

	for (size_t r = 0; r < NROWS; r++) {
		for (unsigned long k = 0; k < per_row; k++) {
			size_t at = make_series(x, step_sizes[r], k % 2 == 1);

			for (size_t m = 0; m < NMETHODS; m++) {
				size_t n = methods[m](x, flags);

				score_series(&rows[r][m], at, flags, n);
				score_series(&all[m], at, flags, n);
			}
		}
	}

	printf("%lu series of %d commits per row, 3 %% Gaussian noise, 15 %% of runs "
	       "8-12 %% slower, seed %llu\n",
	       per_row, LEN, (unsigned long long)seed);
	printf("e-divisive: alpha %g, min_segment %zu, min_step %g, %u permutations\n", opts.alpha,
	       opts.min_segment, opts.min_step, opts.permutations);
	printf("precision / recall, a detection within +-%d commits of the step; "
	       "without a step, false positives\n\n",
	       TOLERANCE);
	printf("| step  |");
	for (size_t m = 0; m < NMETHODS; m++)
		printf(" %-22s |", method_names[m]);
	printf("\n|-------|");
	for (size_t m = 0; m < NMETHODS; m++)
		printf("------------------------|");
	printf("\n");
	for (size_t r = 0; r < NROWS; r++) {
		if (step_sizes[r] > 0.0)
			printf("| %2.0f %%  |", step_sizes[r] * 100.0);
		else
			printf("| none  |");
		for (size_t m = 0; m < NMETHODS; m++) {
			char cell[32];

			if (step_sizes[r] > 0.0) {
				print_cell(&rows[r][m]);
				continue;
			}
			snprintf(cell, sizeof(cell), "%lu fp, %.2f/series", rows[r][m].flags,
				 (double)rows[r][m].flags / per_row);
			printf(" %-22s |", cell);
		}
		printf("\n");
	}
	printf("| all   |");
	for (size_t m = 0; m < NMETHODS; m++)
		print_cell(&all[m]);
	printf("\n\n");
	for (size_t m = 0; m < NMETHODS; m++) {
		unsigned long fp = all[m].flags - all[m].hits;

		printf("%s: true detections %.2f commits from the step on average; "
		       "%lu of %lu false positives within %d commits of a step\n",
		       method_names[m], all[m].hits ? all[m].offset / all[m].hits : 0.0,
		       all[m].near, fp, NEAR);
	}

	/* The time of 50 series, one in four of each row, best and median of 5. */
	for (size_t s = 0; s < TIMED_SERIES; s++)
		make_series(timed[s], step_sizes[s % NROWS], s % 2 == 1);
	for (size_t m = 0; m < NMETHODS; m++) {
		for (size_t k = 0; k < TIMED_ROUNDS; k++) {
			double t0 = now_s();

			for (size_t s = 0; s < TIMED_SERIES; s++)
				methods[m](timed[s], flags);
			t[m][k] = now_s() - t0;
		}
		qsort(t[m], TIMED_ROUNDS, sizeof(t[m][0]), cmp_double);
	}
	printf("\ntime for %d series of %d points (best, median of %d rounds):\n", TIMED_SERIES,
	       LEN, TIMED_ROUNDS);
	for (size_t m = 0; m < NMETHODS; m++)
		printf("  %-12s %9.3f ms  %9.3f ms\n", method_names[m], t[m][0] * 1e3,
		       t[m][TIMED_ROUNDS / 2] * 1e3);
	return 0;
}
