/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_CHANGEPOINT_H
#define BENCHTRAP_CHANGEPOINT_H

/*
 * Change points of a series of figures over commits (docs/history.md): the
 * places where the series' level steps, found without a fixed threshold.
 * Pure: no I/O, no allocation but the result and scratch space freed before
 * returning. The method and its measured precision are in
 * docs/changepoints.md.
 *
 * A noisy series (walltime) is cut by E-divisive means (Matteson and James,
 * 2014): the series is split where the energy distance between the two sides
 * is largest, the split is kept when a permutation test finds it significant
 * and the medians of the two sides differ by at least min_step, and each
 * side is searched again. An exact series (instruction counts, bytes) has a
 * change point wherever a value differs from the one before.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct changepoint {
	size_t at;	      /* index in x of the first point after the step (1..n-1) */
	double before, after; /* the medians of the segments either side, each
				 reaching to the neighbouring change point */
	double step;	      /* after / before - 1 (NAN when before is 0) */
	double p;	      /* permutation p-value: how often a series with the
				 same values in random order splits as well;
				 0 for an exact series */
};

struct changepoint_opts {
	/* The figures are exact (callgrind, memory): no noise, so every
	 * point whose value differs from the one before is a change point. */
	bool exact;
	double alpha;	       /* significance a step must reach, 0 < alpha < 1: 0.01 */
	size_t min_segment;    /* points a segment of a noisy series holds at least,
				  so that one slow run is never a segment: 3 */
	unsigned permutations; /* of the significance test: 199; at least
				  1 / alpha - 1, or no step could be significant */
	uint64_t seed;	       /* of the permutations: the same series, the same answer */
	/* Least |after / before - 1| of the two sides' medians for a split to
	 * count: with enough points any step is significant, and a 0.3 % step
	 * found in 2000 commits is not news. 0 keeps every significant step.
	 * Default 0.01. */
	double min_step;
};

void changepoint_opts_default(struct changepoint_opts *o);

/*
 * The change points of x[0..n) (NAN and infinite points are skipped over: a
 * failed run neither makes nor hides a step; 'at' still indexes x), in order
 * of 'at'. o may be NULL for the defaults. Returns 0 with *ret (to free; NULL
 * when none) and *ret_n, or -ENOMEM, or -EINVAL (x NULL with n > 0, ret or
 * ret_n NULL, an option out of range). *ret and *ret_n are written only on
 * success.
 *
 * Cost of a noisy series of m finite points: O(m log m) per evaluation of
 * the split statistic, times up to permutations + 1 per accepted split; a
 * rejected split usually stops after a few permutations.
 */
int changepoints_find(const double *x, size_t n, const struct changepoint_opts *o,
		      struct changepoint **ret, size_t *ret_n);

#endif
