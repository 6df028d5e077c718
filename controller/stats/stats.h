/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_STATS_STATS_H
#define BENCHTRAP_STATS_STATS_H

/*
 * Summary statistics of one benchmark's samples: per-iteration times in
 * nanoseconds (walltime) or per-call counts (instructions, bytes). What each
 * figure means and why these estimators were chosen is in docs/statistics.md.
 *
 * Nothing here prints, and nothing keeps state between calls: the bootstrap
 * draws from a generator seeded by the caller, so the same samples and the
 * same options give the same interval, bit for bit, on the same libm.
 */

#include <stddef.h>
#include <stdint.h>

/*
 * How to summarize. 'confidence' is the coverage of the interval of the
 * median, strictly between 0 and 1; 'resamples' the number of bootstrap
 * resamples, 1 to STATS_RESAMPLES_MAX; 'seed' seeds the generator.
 */
struct stats_options {
	double confidence;
	unsigned resamples;
	uint64_t seed;
};

#define STATS_RESAMPLES_MAX 10000000u
#define STATS_DEFAULT_SEED UINT64_C(0x62656e6368747261) /* "benchtra" */

#define STATS_OPTIONS_DEFAULT    \
	((struct stats_options){ \
		.confidence = 0.95, .resamples = 10000, .seed = STATS_DEFAULT_SEED })

/* STATS_OPTIONS_DEFAULT as a value, for callers that fill options in steps. */
struct stats_options stats_options_default(void);

/*
 * The MAD below is unscaled. Multiply by this (1 / Phi^-1(3/4)) to get an
 * estimate of the standard deviation that is consistent for normal data.
 */
#define STATS_MAD_NORMAL_SCALE 1.482602218505602

/*
 * The summary of n samples.
 *
 * - min, max, mean, median: as named. For even n the median is the mean of the
 *   two middle order statistics.
 * - stddev: sample standard deviation (divides by n - 1); 0 when n == 1.
 * - q1, q3: the 0.25 and 0.75 quantiles by linear interpolation between order
 *   statistics (Hyndman & Fan type 7, the default of R and numpy, Python's
 *   statistics.quantiles(method='inclusive')); iqr = q3 - q1.
 * - mad: median of |x - median|, unscaled (see STATS_MAD_NORMAL_SCALE).
 * - cv: stddev / |mean|, 0 when mean == 0.
 * - outliers_*: Tukey's fences. A sample is a low outlier when below
 *   q1 - 1.5 iqr, severe when also below q1 - 3 iqr ("mild" counts the others);
 *   high outliers mirror this above q3. 'outliers' is the sum of the four.
 *   When iqr == 0 every sample other than the quartile value is an outlier.
 * - ci_low, ci_high: percentile bootstrap interval of the median at
 *   'confidence' (copied from the options); both equal the sample when n == 1.
 */
struct stats_summary {
	size_t n;
	double min, max, mean, median, stddev;
	double q1, q3, iqr;
	double mad;
	double cv;
	size_t outliers_low_mild, outliers_low_severe, outliers_high_mild, outliers_high_severe;
	size_t outliers;
	double ci_low, ci_high;
	double confidence;
};

/*
 * Summarize 'samples' (not modified; a sorted copy is made) into *ret.
 * 'opt' may be NULL for STATS_OPTIONS_DEFAULT.
 *
 * Returns 0, or -EINVAL (n == 0, NULL pointers, options out of range),
 * -EDOM (a sample is NaN or infinite), -ERANGE (the samples are finite but
 * their mean or variance overflows a double), -ENOMEM. *ret is written only
 * on success.
 *
 * Cost: one sort of the samples plus O(resamples log resamples) for the
 * bootstrap, independent of n (see stats_bootstrap_median); about a
 * millisecond for 10,000 samples at the default options.
 */
int stats_summarize(const double *samples, size_t n, const struct stats_options *opt,
		    struct stats_summary *ret);

/*
 * Percentile bootstrap interval of the median of 'sorted' (n ascending,
 * finite values) at opt->confidence. Each resample is equivalent to drawing
 * n samples with replacement and taking their median; only the one or two
 * middle order statistics of the resample are generated, so a resample costs
 * O(1) instead of O(n). Returns 0, -EINVAL or -ENOMEM; outputs are written
 * only on success.
 */
int stats_bootstrap_median(const double *sorted, size_t n, const struct stats_options *opt,
			   double *ret_low, double *ret_high);

/*
 * The median of scratch[0..n), which this reorders (quickselect, expected
 * O(n), also fast when many values are equal). NaN when n == 0. The values
 * must not be NaN.
 */
double stats_median(double *scratch, size_t n);

/*
 * The p-quantile (0 <= p <= 1) of sorted[0..n) by linear interpolation
 * between order statistics (type 7): with h = (n - 1) p,
 * q = x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h]).
 * NaN when n == 0 or p is outside [0, 1].
 */
double stats_quantile_sorted(const double *sorted, size_t n, double p);

/*
 * Whether two clocks' readings of the same intervals, ours[j] and own[j]
 * (j < n, every value above 0), disagree beyond their noise: *ret_ratio
 * is the median of ours[j] / own[j], *ret_tol the tolerance it was held
 * against: 10 % (the clocks read different instants around the same work)
 * plus three times the median's own standard error, from the ratios'
 * interquartile range. Never with n < 3 (*ret_ratio still set, 1 when
 * n == 0). -EINVAL for a value not above 0, -ENOMEM; else 1 or 0.
 */
int stats_disagree(const double *ours, const double *own, size_t n, double *ret_ratio,
		   double *ret_tol);

/* Coefficient of variation of x[0..n): sample stddev / |mean|; 0 when n < 2
 * or the mean is 0. NaN when x holds a NaN. */
double stats_cv_of(const double *x, size_t n);

/*
 * A duration in nanoseconds as 4 significant digits and a unit, ns, µs
 * (UTF-8), ms or s, the largest unit that keeps the figure at least 1:
 * "312.4 ns", "1.235 µs", "12.35 ms", "1.500 s". Below 1 ns three decimals
 * ("0.312 ns"); from 1000 s on, whole seconds ("12346 s"). Negative values
 * (possible after subtracting the loop's own cost) keep their sign.
 * Returns 0, -EDOM (NaN or infinite), or -ENOBUFS (does not fit in 'size'
 * bytes with its NUL; 16 bytes always suffice below 10^9 s). 'buf' is
 * written only on success.
 */
int stats_format_duration(double ns, char *buf, size_t size);

/*
 * A count (instructions, bytes, calls) with thousands separators, exact
 * rather than abbreviated, since a change of a few instructions is news:
 * "1,234,567". A count that is not a whole number (a total divided by the
 * number of calls) keeps one decimal: "1,234.5". Returns 0, -EDOM (NaN,
 * infinite, or beyond 10^18 in magnitude) or -ENOBUFS; 'buf' is written only
 * on success. 32 bytes always suffice.
 */
int stats_format_count(double v, char *buf, size_t size);

/*
 * A size in bytes, scaled by powers of 1024 with three significant digits
 * past the unit's first: "512 B", "1.50 KiB", "4.00 MiB", "2.25 GiB" (the
 * results file keeps the exact count). Returns 0, -EDOM (NaN, infinite or
 * beyond 2^60) or -ENOBUFS; 16 bytes always suffice.
 */
int stats_format_bytes(double v, char *buf, size_t size);

/* A value in 'unit': a duration for "ns" (or no unit), bytes for
 * "bytes", a count otherwise. */
int stats_format_value(const char *unit, double v, char *buf, size_t size);

/*
 * Percentile bootstrap interval of the ratio median(head) / median(base) at
 * opt->confidence. The two sets are resampled independently (each replicate
 * draws a median of each, as stats_bootstrap_median does, in O(1)), from one
 * generator seeded by opt->seed. Both arrays must be ascending and finite.
 * Returns 0, -EINVAL (empty input, NULL pointers, options out of range),
 * -EDOM (a value is not finite, or a replicate median of 'base' is not
 * positive: the ratio has no meaning) or -ENOMEM; outputs are written only
 * on success.
 *
 * The interval excludes 1 when the medians differ beyond what resampling
 * the samples explains: benchtrap compare calls that significant.
 */
int stats_bootstrap_ratio(const double *base_sorted, size_t nbase, const double *head_sorted,
			  size_t nhead, const struct stats_options *opt, double *ret_low,
			  double *ret_high);

/*
 * Paired comparison (docs/statistics.md, "Paired samples"): ratios[0..n)
 * are head / base of samples taken back to back, one pair at a time, so
 * that a change of the machine's speed that lasts longer than a pair
 * scales both sides and cancels in the ratio. The estimate is the median
 * of the ratios, on the log scale (a 2x and a 0.5x weigh the same), and
 * its interval the percentile bootstrap of that median at
 * opt->confidence, mapped back: *ret_ratio, *ret_low, *ret_high. Ratios
 * that are not finite and positive (a side measured no time) are left
 * out; *ret_used counts the others. Returns 0, -EINVAL (NULL pointers,
 * options out of range), -EDOM (fewer than two usable ratios, or fewer
 * than half of them) or -ENOMEM; outputs are written only on success.
 */
int stats_paired_ratio(const double *ratios, size_t n, const struct stats_options *opt,
		       double *ret_ratio, double *ret_low, double *ret_high, size_t *ret_used);

/*
 * The same over pairs taken in several processes (docs/statistics.md,
 * "Pairs from several processes"): ratios[0..n) in groups of groups[0],
 * groups[1], ... consecutive ratios (ngroups of them, adding up to n), one
 * group a pair of processes. What stays the same within a process (where
 * its code and data landed in memory and cache, the page cache's pages of
 * its binary) varies between groups, and a single group's interval cannot
 * see it. With two groups or more, the estimate is the median of all the
 * ratios (stats_paired_ratio's), and its interval reaches Student's t
 * (ngroups - 1 degrees of freedom) times the standard error of the groups'
 * median log ratios on either side of it, and at least the bootstrap
 * interval of all the ratios pooled. With one group (or
 * groups NULL), stats_paired_ratio(). A group with fewer than two usable
 * ratios is left out. Returns as stats_paired_ratio().
 */
int stats_paired_ratio_groups(const double *ratios, size_t n, const size_t *groups, size_t ngroups,
			      const struct stats_options *opt, double *ret_ratio, double *ret_low,
			      double *ret_high, size_t *ret_used);

/* The q-quantile of Student's t with df degrees of freedom (df >= 1,
 * 0 < q < 1), to 1e-9; NAN outside that. */
double stats_t_quantile(double q, unsigned df);

/* The ratio of one pair, head / base, or NAN when either side is not
 * finite and positive: a per-call time at or below zero is an empty pass
 * that was preempted, and two of them would make a positive ratio of
 * nothing. */
double stats_pair(double base, double head);

/*
 * The geometric mean of x[0..n), exp(mean(log x)): the average of ratios
 * (a change of +10% and one of -9.1% average to 0). Returns 0, -EINVAL
 * (n == 0 or NULL) or -EDOM (a value that is not finite and positive);
 * *ret is written only on success.
 */
int stats_geomean(const double *x, size_t n, double *ret);

#endif
