/* SPDX-License-Identifier: MIT */
/*
 * Statistics: known values, edge cases, outliers, the bootstrap interval of
 * the median, the paired ratio and unit formatting.
 *
 * Reference values were computed with Python 3.11's statistics module
 * (mean, stdev, median, quantiles(n=4, method='inclusive'), which is type 7),
 * and are hard-coded here; each block says so. No test asserts a duration.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stats/stats.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define assert_near(a, b, tol) check_near((a), (b), (tol), #a, __LINE__)

static void check_near(double a, double b, double tol, const char *expr, int line)
{
	if (!(fabs(a - b) <= tol))
		fail_msg("line %d: %s = %.17g, expected %.17g (within %g)", line, expr, a, b, tol);
}

/* The tests' own generator (a 64-bit LCG, Knuth's MMIX constants), kept
 * apart from the one under test so that data and resampling are independent. */
static uint64_t lcg_state;

static double test_uniform(void)
{
	lcg_state = lcg_state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	return (double)(lcg_state >> 11) * 0x1.0p-53;
}

/* Approximately normal (Irwin-Hall, 12 uniforms), symmetric about 'centre'. */
static double test_normalish(double centre, double sd)
{
	double s = 0.0;

	for (int i = 0; i < 12; i++)
		s += test_uniform();
	return centre + sd * (s - 6.0);
}

static void fill_normalish(double *x, size_t n, uint64_t seed, double centre, double sd)
{
	lcg_state = seed;
	for (size_t i = 0; i < n; i++)
		x[i] = test_normalish(centre, sd);
}

static struct stats_options opts(unsigned resamples, double confidence, uint64_t seed)
{
	struct stats_options o = stats_options_default();

	o.resamples = resamples;
	o.confidence = confidence;
	o.seed = seed;
	return o;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

static void test_known_even(void **state)
{
	/* Python: mean 8.225, stdev 3.7573076944949704, median 7.875,
	 * quantiles inclusive [5.625, 7.875, 10.5], median |x - 7.875| = 2.75,
	 * stdev / mean = 0.45681552516656176. */
	const double x[] = { 12.5, 3.0, 7.25, 9.0, 4.5, 15.0, 6.0, 8.5, 11.0, 5.5 };
	struct stats_summary s;

	assert_int_equal(stats_summarize(x, ARRAY_SIZE(x), NULL, &s), 0);
	assert_int_equal(s.n, 10);
	assert_near(s.min, 3.0, 0);
	assert_near(s.max, 15.0, 0);
	assert_near(s.mean, 8.225, 1e-12);
	assert_near(s.stddev, 3.7573076944949704, 1e-12);
	assert_near(s.median, 7.875, 0);
	assert_near(s.q1, 5.625, 1e-12);
	assert_near(s.q3, 10.5, 1e-12);
	assert_near(s.iqr, 4.875, 1e-12);
	assert_near(s.mad, 2.75, 0);
	assert_near(s.cv, 0.45681552516656176, 1e-12);
	assert_int_equal(s.outliers, 0);
	assert_near(s.confidence, 0.95, 0);
	assert_true(s.ci_low <= s.median && s.median <= s.ci_high);
	assert_true(s.ci_low >= s.min && s.ci_high <= s.max);
}

static void test_known_odd(void **state)
{
	/* Python: mean 319.57142857142856, stdev 44.454732192261766, median 302.0,
	 * quantiles inclusive [300.625, 302.0, 307.625], MAD 3.0,
	 * cv 0.1391073425774843. Fences: 307.625 + 3 * 7 = 328.625 < 420, so 420
	 * is a severe high outlier and nothing else is. */
	const double x[] = { 302.0, 298.5, 310.25, 305.0, 299.75, 301.5, 420.0 };
	struct stats_summary s;

	assert_int_equal(stats_summarize(x, ARRAY_SIZE(x), NULL, &s), 0);
	assert_near(s.mean, 319.57142857142856, 1e-10);
	assert_near(s.stddev, 44.454732192261766, 1e-10);
	assert_near(s.median, 302.0, 0);
	assert_near(s.q1, 300.625, 1e-12);
	assert_near(s.q3, 307.625, 1e-12);
	assert_near(s.mad, 3.0, 0);
	assert_near(s.cv, 0.1391073425774843, 1e-12);
	assert_int_equal(s.outliers_high_severe, 1);
	assert_int_equal(s.outliers_high_mild, 0);
	assert_int_equal(s.outliers_low_mild + s.outliers_low_severe, 0);
	assert_int_equal(s.outliers, 1);
	assert_true(s.ci_low <= 302.0 && 302.0 <= s.ci_high);
}

static void test_one_sample(void **state)
{
	const double x[] = { 42.5 };
	struct stats_summary s;

	assert_int_equal(stats_summarize(x, 1, NULL, &s), 0);
	assert_int_equal(s.n, 1);
	assert_near(s.min, 42.5, 0);
	assert_near(s.max, 42.5, 0);
	assert_near(s.mean, 42.5, 0);
	assert_near(s.median, 42.5, 0);
	assert_near(s.q1, 42.5, 0);
	assert_near(s.q3, 42.5, 0);
	assert_near(s.ci_low, 42.5, 0);
	assert_near(s.ci_high, 42.5, 0);
	assert_near(s.stddev, 0, 0);
	assert_near(s.iqr, 0, 0);
	assert_near(s.mad, 0, 0);
	assert_near(s.cv, 0, 0);
	assert_int_equal(s.outliers, 0);
}

static void test_two_samples(void **state)
{
	/* Python: mean 3.0, stdev 2.8284271247461903, median 3.0, quantiles
	 * inclusive [2.0, 3.0, 4.0], MAD 2.0. Resamples of {1, 5} have median 1,
	 * 3 or 5 with probabilities 1/4, 1/2, 1/4, so a 95% interval is [1, 5]. */
	const double x[] = { 5.0, 1.0 };
	struct stats_summary s;

	assert_int_equal(stats_summarize(x, 2, NULL, &s), 0);
	assert_near(s.mean, 3.0, 0);
	assert_near(s.stddev, 2.8284271247461903, 1e-15);
	assert_near(s.median, 3.0, 0);
	assert_near(s.q1, 2.0, 0);
	assert_near(s.q3, 4.0, 0);
	assert_near(s.mad, 2.0, 0);
	assert_near(s.ci_low, 1.0, 0);
	assert_near(s.ci_high, 5.0, 0);
}

static void test_all_equal(void **state)
{
	double x[100];
	struct stats_summary s;

	/* 0.1 is not a binary fraction: a summed mean would come out as
	 * 0.10000000000000002 or so, and the stddev as a few 1e-17. */
	for (size_t i = 0; i < ARRAY_SIZE(x); i++)
		x[i] = 0.1;
	assert_int_equal(stats_summarize(x, ARRAY_SIZE(x), NULL, &s), 0);
	assert_true(s.mean == 0.1);
	assert_true(s.median == 0.1);
	assert_true(s.stddev == 0.0);
	assert_true(s.cv == 0.0);
	assert_true(s.iqr == 0.0 && s.mad == 0.0);
	assert_true(s.ci_low == 0.1 && s.ci_high == 0.1);
	assert_int_equal(s.outliers, 0);
}

static void test_errors(void **state)
{
	const double good[] = { 1.0, 2.0, 3.0 };
	double bad[] = { 1.0, 2.0, 3.0 };
	struct stats_summary s, before;
	struct stats_options o;

	memset(&s, 0xa5, sizeof(s));
	before = s;
	assert_int_equal(stats_summarize(good, 0, NULL, &s), -EINVAL);
	assert_int_equal(stats_summarize(NULL, 3, NULL, &s), -EINVAL);
	assert_int_equal(stats_summarize(good, 3, NULL, NULL), -EINVAL);
	bad[1] = NAN;
	assert_int_equal(stats_summarize(bad, 3, NULL, &s), -EDOM);
	bad[1] = INFINITY;
	assert_int_equal(stats_summarize(bad, 3, NULL, &s), -EDOM);
	bad[1] = -INFINITY;
	assert_int_equal(stats_summarize(bad, 3, NULL, &s), -EDOM);

	o = opts(100, 0.0, 1);
	assert_int_equal(stats_summarize(good, 3, &o, &s), -EINVAL);
	o = opts(100, 1.0, 1);
	assert_int_equal(stats_summarize(good, 3, &o, &s), -EINVAL);
	o = opts(100, NAN, 1);
	assert_int_equal(stats_summarize(good, 3, &o, &s), -EINVAL);
	o = opts(0, 0.95, 1);
	assert_int_equal(stats_summarize(good, 3, &o, &s), -EINVAL);
	o = opts(STATS_RESAMPLES_MAX + 1, 0.95, 1);
	assert_int_equal(stats_summarize(good, 3, &o, &s), -EINVAL);

	/* Finite samples whose mean overflows. */
	const double huge[] = { 1.7e308, 1.7e308, 1.0 };

	assert_int_equal(stats_summarize(huge, 3, NULL, &s), -ERANGE);

	/* The output was never touched. */
	assert_memory_equal(&s, &before, sizeof(s));
}

static void test_outliers(void **state)
{
	/* Python: q1 = 10, q3 = 20 (inclusive quartiles), so iqr = 10 and the
	 * fences are -20, -5 (low) and 35, 50 (high). Values on a fence are not
	 * beyond it: -5 and 35 are not outliers, 50 is mild. */
	const double beyond[] = { -25, -10, -5, 35, 40, 50, 60, 100 };
	double x[25];
	size_t n = 0;
	struct stats_summary s;

	for (size_t i = 0; i < ARRAY_SIZE(beyond); i++)
		x[n++] = beyond[i];
	for (int i = 0; i < 5; i++)
		x[n++] = 10;
	for (int i = 0; i < 7; i++)
		x[n++] = 15;
	for (int i = 0; i < 5; i++)
		x[n++] = 20;
	assert_int_equal(n, ARRAY_SIZE(x));

	assert_int_equal(stats_summarize(x, n, NULL, &s), 0);
	assert_near(s.q1, 10, 0);
	assert_near(s.q3, 20, 0);
	assert_near(s.iqr, 10, 0);
	assert_int_equal(s.outliers_low_severe, 1);  /* -25 */
	assert_int_equal(s.outliers_low_mild, 1);    /* -10 */
	assert_int_equal(s.outliers_high_mild, 2);   /* 40, 50 */
	assert_int_equal(s.outliers_high_severe, 2); /* 60, 100 */
	assert_int_equal(s.outliers, 6);
}

static void test_input_unmodified(void **state)
{
	double x[1001], copy[1001];
	struct stats_summary s;

	fill_normalish(x, ARRAY_SIZE(x), 7, 500.0, 20.0);
	memcpy(copy, x, sizeof(x));
	assert_int_equal(stats_summarize(x, ARRAY_SIZE(x), NULL, &s), 0);
	assert_memory_equal(x, copy, sizeof(x));
}

static void test_median_quantile(void **state)
{
	double odd[] = { 9, 1, 8, 2, 7, 3, 6, 4, 5 };
	double even[] = { 4, 4, 1, 9, 4, 2, 4, 8 };
	double dup[64];
	const double sorted[] = { 1, 2, 3, 4, 10 };

	assert_near(stats_median(odd, ARRAY_SIZE(odd)), 5, 0);
	/* sorted: 1 2 4 4 4 4 8 9 */
	assert_near(stats_median(even, ARRAY_SIZE(even)), 4, 0);
	for (size_t i = 0; i < ARRAY_SIZE(dup); i++)
		dup[i] = i % 2 ? 3.0 : 1.0;
	assert_near(stats_median(dup, ARRAY_SIZE(dup)), 2.0, 0);
	assert_true(isnan(stats_median(dup, 0)));

	/* Shapes that defeat a first/middle/last pivot: V (the deviations of
	 * sorted samples from their median) and organ pipe. */
	static double v[20001];
	size_t nv = ARRAY_SIZE(v);

	for (size_t i = 0; i < nv; i++)
		v[i] = fabs((double)i - 10000.0); /* 0 once, 1..10000 twice: median 5000 */
	assert_near(stats_median(v, nv), 5000, 0);
	for (size_t i = 0; i < nv; i++)
		v[i] = (double)(i < nv / 2 ? i : nv - 1 - i); /* 0..9999 twice, 10000 once */
	assert_near(stats_median(v, nv), 5000, 0);
	for (size_t i = 0; i < nv - 1; i++)
		v[i] = (double)(i < 10000 ? i : 19999 - i); /* 0..9999 twice */
	assert_near(stats_median(v, nv - 1), 4999.5, 0);

	/* Type 7: h = 4p, interpolate. p = 0.9: h = 3.6, 4 + 0.6 * 6 = 7.6. */
	assert_near(stats_quantile_sorted(sorted, 5, 0.0), 1, 0);
	assert_near(stats_quantile_sorted(sorted, 5, 1.0), 10, 0);
	assert_near(stats_quantile_sorted(sorted, 5, 0.5), 3, 0);
	assert_near(stats_quantile_sorted(sorted, 5, 0.9), 7.6, 1e-12);
	assert_near(stats_quantile_sorted(sorted, 5, 0.125), 1.5, 1e-12);
	assert_true(isnan(stats_quantile_sorted(sorted, 5, -0.1)));
	assert_true(isnan(stats_quantile_sorted(sorted, 5, 1.5)));
	assert_true(isnan(stats_quantile_sorted(sorted, 5, NAN)));
	assert_true(isnan(stats_quantile_sorted(sorted, 0, 0.5)));
}

static void test_cv_of(void **state)
{
	/* Python: stdev([12.5, ..., 5.5]) / mean(...) = 0.45681552516656176. */
	const double x[] = { 12.5, 3.0, 7.25, 9.0, 4.5, 15.0, 6.0, 8.5, 11.0, 5.5 };
	const double zero_mean[] = { -1.0, 1.0 };
	const double with_nan[] = { 1.0, NAN };

	assert_near(stats_cv_of(x, ARRAY_SIZE(x)), 0.45681552516656176, 1e-12);
	assert_near(stats_cv_of(x, 1), 0, 0);
	assert_near(stats_cv_of(zero_mean, 2), 0, 0);
	assert_true(isnan(stats_cv_of(with_nan, 2)));
}

/* Two clocks over the same intervals: agreement within 10 % plus noise;
 * a set-up held in one of them, 3x, is a disagreement; too few to tell. */
static void test_disagree(void **state)
{
	(void)state;
	double own[8] = { 100, 102, 98, 101, 99, 100, 103, 97 }, ours[8], ratio, tol;

	for (size_t j = 0; j < 8; j++)
		ours[j] = own[j] * (1.05 + 0.01 * (double)(j % 2));
	assert_int_equal(stats_disagree(ours, own, 8, &ratio, &tol), 0);
	assert_near(ratio, 1.055, 0.006);
	assert_true(tol >= 0.10 && tol < 0.12);
	for (size_t j = 0; j < 8; j++)
		ours[j] = own[j] * 3;
	assert_int_equal(stats_disagree(ours, own, 8, &ratio, &tol), 1);
	assert_near(ratio, 3, 1e-12);
	for (size_t j = 0; j < 8; j++)
		ours[j] = own[j] / 2;
	assert_int_equal(stats_disagree(ours, own, 8, &ratio, &tol), 1);
	/* Wildly noisy ratios: the tolerance widens with them. */
	for (size_t j = 0; j < 8; j++)
		ours[j] = own[j] * (j % 2 ? 0.4 : 2.6);
	assert_int_equal(stats_disagree(ours, own, 8, &ratio, &tol), 0);
	assert_true(tol > 1);
	assert_int_equal(stats_disagree(ours, own, 2, &ratio, &tol), 0);
	assert_int_equal(stats_disagree(ours, own, 0, &ratio, &tol), 0);
	assert_near(ratio, 1, 0);
	ours[3] = 0;
	assert_int_equal(stats_disagree(ours, own, 8, &ratio, &tol), -EINVAL);
}

/* ---- Bootstrap --------------------------------------------------------- */

static void test_ci_narrows(void **state)
{
	static double small[100], large[10000];
	struct stats_summary s, l;

	fill_normalish(small, ARRAY_SIZE(small), 11, 1000.0, 10.0);
	fill_normalish(large, ARRAY_SIZE(large), 12, 1000.0, 10.0);
	assert_int_equal(stats_summarize(small, ARRAY_SIZE(small), NULL, &s), 0);
	assert_int_equal(stats_summarize(large, ARRAY_SIZE(large), NULL, &l), 0);
	assert_true(s.ci_low <= s.median && s.median <= s.ci_high);
	assert_true(l.ci_low <= l.median && l.median <= l.ci_high);
	/* The width goes as 1/sqrt(n): about 10 times narrower; allow 3. */
	assert_true(l.ci_high - l.ci_low < (s.ci_high - s.ci_low) / 3.0);
	assert_true(l.ci_high > l.ci_low);
}

static void test_seed(void **state)
{
	static double x[10000];
	struct stats_summary a, b, c;
	struct stats_options o1 = opts(10000, 0.95, 1), o2 = opts(10000, 0.95, 2);

	fill_normalish(x, ARRAY_SIZE(x), 99, 300.0, 5.0);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	assert_int_equal(stats_summarize(x, ARRAY_SIZE(x), &o1, &a), 0);
	assert_int_equal(stats_summarize(x, ARRAY_SIZE(x), &o1, &b), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	/* Another seed resamples differently (the endpoints move a little). */
	assert_int_equal(stats_summarize(x, ARRAY_SIZE(x), &o2, &c), 0);
	assert_true(a.ci_low != c.ci_low || a.ci_high != c.ci_high);
	assert_near(a.median, c.median, 0);
}

static void test_seeds_contain_true_median(void **state)
{
	/* 1000 plus 5000 normal-ish deviations and their mirror images: the
	 * distribution is symmetric about 1000, which is both its true median
	 * and the sample's. Every seed's interval must contain it. */
	static double x[10001];
	size_t half = ARRAY_SIZE(x) / 2;

	lcg_state = 2024;
	x[0] = 1000.0;
	for (size_t i = 0; i < half; i++) {
		double d = test_normalish(0.0, 25.0);

		x[1 + i] = 1000.0 + d;
		x[1 + half + i] = 1000.0 - d;
	}
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct stats_options o = opts(10000, 0.95, seed * UINT64_C(0x9e3779b97f4a7c15));
		struct stats_summary s;

		assert_int_equal(stats_summarize(x, ARRAY_SIZE(x), &o, &s), 0);
		assert_true(s.ci_low < 1000.0 && 1000.0 < s.ci_high);
		/* Standard error of the median ~ 1.2533 * 25 / 100 = 0.31: the
		 * interval is about +-0.6 wide; make sure it is not absurd. */
		assert_true(s.ci_high - s.ci_low < 3.0);
	}
}

/*
 * An exact bootstrap distribution, as the values a resample median can take
 * (ascending) and its CDF at each. A percentile endpoint at level q, taken
 * from enough resamples, must lie between the values where the CDF crosses
 * q - eps and q + eps.
 */
struct exact_cdf {
	size_t n;
	double value[128], cdf[128];
};

static void check_endpoint(const struct exact_cdf *e, double got, double q, double eps)
{
	double lo = NAN, hi = e->value[e->n - 1];

	for (size_t j = e->n; j-- > 0;) {
		if (e->cdf[j] >= q - eps)
			lo = e->value[j];
		if (e->cdf[j] >= q + eps)
			hi = e->value[j];
	}
	if (!(got >= lo && got <= hi))
		fail_msg("endpoint at %g is %g, exact bootstrap says [%g, %g]", q, got, lo, hi);
}

/* Intervals of the median of x[0..n) at several levels against e. 200000
 * resamples: the empirical CDF's standard error is below 0.0012, so an eps of
 * 0.006 is five of them. */
static void check_levels(const double *x, size_t n, const struct exact_cdf *e)
{
	const double levels[] = { 0.3, 0.5, 0.8, 0.9, 0.95, 0.99 };
	const double eps = 0.006;

	for (size_t i = 0; i < ARRAY_SIZE(levels); i++) {
		struct stats_options o = opts(200000, levels[i], n * 10 + i);
		double lo, hi;

		assert_int_equal(stats_bootstrap_median(x, n, &o, &lo, &hi), 0);
		check_endpoint(e, lo, (1.0 - levels[i]) / 2.0, eps);
		check_endpoint(e, hi, (1.0 + levels[i]) / 2.0, eps);
	}
}

/* P(Binomial(n, p) >= m) */
static double binom_tail(unsigned n, double p, unsigned m)
{
	double sum = 0.0;

	if (p >= 1.0)
		return 1.0;
	for (unsigned i = m; i <= n; i++)
		sum += exp(lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) + i * log(p) +
			   (n - i) * log1p(-p));
	return sum;
}

static void test_bootstrap_exact_odd(void **state)
{
	/* For x = 1..n, n odd, the resample median is <= j when at least
	 * (n + 1) / 2 of the n draws are, each being so with probability j / n. */
	static struct exact_cdf e = { .n = 51 };
	double x[51];

	for (size_t j = 1; j <= e.n; j++) {
		x[j - 1] = (double)j;
		e.value[j - 1] = (double)j;
		e.cdf[j - 1] = binom_tail(e.n, (double)j / e.n, (e.n + 1) / 2);
	}
	check_levels(x, ARRAY_SIZE(x), &e);
}

static void test_bootstrap_exact_even(void **state)
{
	/* For x = 1..n, n = 2 and 6: enumerate all n^n equally likely
	 * resamples and tabulate their medians (on a grid of halves). */
	for (unsigned n = 2; n <= 6; n += 4) {
		static struct exact_cdf e;
		double x[6];
		unsigned draw[6] = { 0 }, count[11] = { 0 }, total = 0;

		for (;;) {
			unsigned c[7] = { 0 }, seen = 0, a = 0, b = 0;

			for (unsigned i = 0; i < n; i++)
				c[draw[i] + 1]++;
			/* the (n/2)-th and (n/2 + 1)-th smallest values */
			for (unsigned v = 1; v <= n; v++) {
				if (!a && seen + c[v] >= n / 2)
					a = v;
				if (!b && seen + c[v] >= n / 2 + 1)
					b = v;
				seen += c[v];
			}
			count[a + b - 2]++; /* median (a + b) / 2 */
			total++;
			unsigned i = 0; /* next resample: count in base n */

			while (i < n && ++draw[i] == n)
				draw[i++] = 0;
			if (i == n)
				break;
		}
		e.n = 0;
		for (unsigned k = 0, acc = 0; k <= 2 * (n - 1); k++) {
			acc += count[k];
			e.value[e.n] = 1.0 + k / 2.0;
			e.cdf[e.n++] = (double)acc / total;
		}
		assert_int_equal(total, n == 2 ? 4 : 46656);
		for (unsigned i = 0; i < n; i++)
			x[i] = i + 1.0;
		check_levels(x, n, &e);
	}
}

static void test_bootstrap_brute_even(void **state)
{
	/* The plain bootstrap, written out: draw n with replacement, sort,
	 * take the median. Its interval must agree with the library's to
	 * within one step of the replicate medians' grid (0.5 here). */
	enum { N = 40, R = 40000 };
	static double reps[R];
	double x[N], draw[N], lo, hi;
	struct stats_options o = opts(R, 0.9, 77);

	for (size_t i = 0; i < N; i++)
		x[i] = (double)(i + 1);
	lcg_state = 31337;
	for (size_t r = 0; r < R; r++) {
		for (size_t i = 0; i < N; i++)
			draw[i] = x[(size_t)(test_uniform() * N)];
		qsort(draw, N, sizeof(double), cmp_double);
		reps[r] = (draw[N / 2 - 1] + draw[N / 2]) / 2.0;
	}
	qsort(reps, R, sizeof(double), cmp_double);
	assert_int_equal(stats_bootstrap_median(x, N, &o, &lo, &hi), 0);
	assert_near(lo, stats_quantile_sorted(reps, R, 0.05), 0.5);
	assert_near(hi, stats_quantile_sorted(reps, R, 0.95), 0.5);
}

static void test_bootstrap_coverage(void **state)
{
	/* 400 data sets of 101 normal-ish values with true median 0: a 90%
	 * interval should cover 0 about 360 times. The count is fixed by the
	 * seeds; the bounds say what a correct bootstrap may give. */
	enum { SETS = 400, N = 101 };
	double x[N];
	unsigned covered = 0;
	struct stats_options o = opts(2000, 0.9, 3);

	lcg_state = 4242;
	for (unsigned k = 0; k < SETS; k++) {
		struct stats_summary s;

		for (size_t i = 0; i < N; i++)
			x[i] = test_normalish(0.0, 1.0);
		o.seed = k;
		assert_int_equal(stats_summarize(x, N, &o, &s), 0);
		covered += s.ci_low <= 0.0 && 0.0 <= s.ci_high;
	}
	print_message("coverage of a 90%% interval: %u of %u\n", covered, SETS);
	assert_in_range(covered, SETS * 84 / 100, SETS * 97 / 100);
}

/* ---- Paired ratios ----------------------------------------------------- */

enum { PAIRS = 400 };

/*
 * A shared runner as docs/statistics.md describes it: both builds take
 * 100 ns (head 'slowdown' times that) times the host's factor, 1.0 for the
 * first half of the pairs and 2.0 for the second, each sample with its own
 * multiplicative noise, uniform within +-4%. ratio[i] = head[i] / base[i].
 */
static void fill_pairs(double *base, double *head, double *ratio, double slowdown, uint64_t seed)
{
	lcg_state = seed;
	for (size_t i = 0; i < PAIRS; i++) {
		double host = i < PAIRS / 2 ? 1.0 : 2.0;

		base[i] = 100.0 * host * (1.0 + 0.08 * (test_uniform() - 0.5));
		head[i] = 100.0 * slowdown * host * (1.0 + 0.08 * (test_uniform() - 0.5));
		ratio[i] = head[i] / base[i];
	}
}

static void test_paired_host_doubles(void **state)
{
	double base[PAIRS], head[PAIRS], ratio[PAIRS];
	struct stats_options o = opts(10000, 0.99, STATS_DEFAULT_SEED);
	double r, lo, hi, ulo, uhi;
	size_t used;

	fill_pairs(base, head, ratio, 1.0, 2024);
	assert_int_equal(stats_paired_ratio(ratio, PAIRS, &o, &r, &lo, &hi, &used), 0);
	assert_int_equal(used, PAIRS);
	assert_near(r, 1.0, 0.01);
	assert_true(lo <= r && r <= hi);
	assert_true(lo < 1.0 && 1.0 < hi);

	/* The same samples unpaired: each side's median falls between the
	 * two speeds of the host, and resampling moves it from one to the
	 * other, so the interval of the ratio of medians spans most of
	 * [0.5, 2]. This is why compare pairs samples. */
	qsort(base, PAIRS, sizeof(base[0]), cmp_double);
	qsort(head, PAIRS, sizeof(head[0]), cmp_double);
	assert_int_equal(stats_bootstrap_ratio(base, PAIRS, head, PAIRS, &o, &ulo, &uhi), 0);
	print_message("host doubles: paired %.4f [%.4f, %.4f] (width %.4f), "
		      "unpaired [%.4f, %.4f] (width %.4f)\n",
		      r, lo, hi, hi - lo, ulo, uhi, uhi - ulo);
	assert_true(ulo < 1.0 && 1.0 < uhi);
	assert_true(uhi - ulo > 20.0 * (hi - lo));
}

/* Student's t quantiles against the tables' values. */
static void test_t_quantile(void **state)
{
	(void)state;
	assert_near(stats_t_quantile(0.975, 1), 12.7062, 1e-3);
	assert_near(stats_t_quantile(0.995, 3), 5.8409, 1e-3);
	assert_near(stats_t_quantile(0.995, 7), 3.4995, 1e-3);
	assert_near(stats_t_quantile(0.975, 10), 2.2281, 1e-3);
	assert_near(stats_t_quantile(0.025, 10), -2.2281, 1e-3);
	assert_near(stats_t_quantile(0.5, 4), 0.0, 1e-12);
	assert_true(isnan(stats_t_quantile(0.975, 0)));
	assert_true(isnan(stats_t_quantile(1.0, 3)));
}

/*
 * Pairs from several processes: within each, the ratios are tight around
 * a level of that process (where it landed in memory), which varies from
 * one process to the next around 1. The pooled bootstrap sees only the
 * within-process noise and excludes 1; the groups' interval holds it.
 * One group, or groups that do not add up, is the pooled interval.
 */
static void test_paired_groups(void **state)
{
	static const double level[6] = { 1.008, 1.004, 1.006, 0.997, 1.005, 1.002 };
	double ratio[6 * 100], r, lo, hi, pr, plo, phi;
	size_t groups[6], used;
	struct stats_options o = opts(10000, 0.99, STATS_DEFAULT_SEED);

	(void)state;
	lcg_state = 77;
	for (size_t g = 0; g < 6; g++) {
		groups[g] = 100;
		for (size_t i = 0; i < 100; i++)
			ratio[g * 100 + i] = level[g] * (1.0 + 0.002 * (test_uniform() - 0.5));
	}
	assert_int_equal(stats_paired_ratio(ratio, 600, &o, &pr, &plo, &phi, &used), 0);
	assert_int_equal(stats_paired_ratio_groups(ratio, 600, groups, 6, &o, &r, &lo, &hi, &used),
			 0);
	print_message("groups: pooled %.4f [%.4f, %.4f], groups %.4f [%.4f, %.4f]\n", pr, plo, phi,
		      r, lo, hi);
	assert_int_equal(used, 600);
	assert_true(plo > 1.0); /* the pooled interval: a confident wrong answer */
	assert_true(lo < 1.0 && 1.0 < hi);
	assert_true(lo <= plo && phi <= hi);
	assert_true(lo <= r && r <= hi);
	/* The estimate is the pooled median, as with one group. */
	assert_true(r == pr);
	/* One group: the pooled interval. */
	groups[0] = 600;
	assert_int_equal(stats_paired_ratio_groups(ratio, 600, groups, 1, &o, &r, &lo, &hi, &used),
			 0);
	assert_true(r == pr && lo == plo && hi == phi);
	/* Groups not adding up to n: the pooled interval, not a wrong one. */
	groups[0] = 100;
	assert_int_equal(stats_paired_ratio_groups(ratio, 600, groups, 2, &o, &r, &lo, &hi, &used),
			 0);
	assert_true(r == pr && lo == plo && hi == phi);
	/* A real change stands out of the groups' interval too. */
	for (size_t i = 0; i < 600; i++)
		ratio[i] *= 1.05;
	for (size_t g = 0; g < 6; g++)
		groups[g] = 100;
	assert_int_equal(stats_paired_ratio_groups(ratio, 600, groups, 6, &o, &r, &lo, &hi, &used),
			 0);
	assert_true(lo > 1.02);
}

static void test_paired_slower(void **state)
{
	double base[PAIRS], head[PAIRS], ratio[PAIRS];
	struct stats_options o = opts(10000, 0.99, STATS_DEFAULT_SEED);
	double r, lo, hi;
	size_t used;

	fill_pairs(base, head, ratio, 1.05, 2025);
	assert_int_equal(stats_paired_ratio(ratio, PAIRS, &o, &r, &lo, &hi, &used), 0);
	assert_int_equal(used, PAIRS);
	assert_true(1.03 <= r && r <= 1.07);
	assert_true(lo <= r && r <= hi);
	assert_true(lo > 1.0);
}

static void test_paired_log_scale(void **state)
{
	/* A 2x and a 0.5x weigh the same: the median of two ratios is their
	 * geometric mean, and the interval of two values is [min, max]. */
	const double x[] = { 2.0, 0.5 };
	double r, lo, hi;
	size_t used;

	assert_int_equal(stats_paired_ratio(x, 2, NULL, &r, &lo, &hi, &used), 0);
	assert_int_equal(used, 2);
	assert_near(r, 1.0, 1e-15);
	assert_near(lo, 0.5, 1e-15);
	assert_near(hi, 2.0, 1e-15);
}

static void test_paired_errors(void **state)
{
	const double good[] = { 1.0, 1.1, 0.9, 1.05 };
	const double one[] = { 1.0 };
	/* Two usable of five: fewer than half. */
	const double mostly_bad[] = { 1.0, 0.0, -1.0, NAN, 1.1 };
	/* Two usable of four: exactly half is enough. */
	const double half_bad[] = { 1.0, 0.0, NAN, 1.1 };
	const double one_usable[] = { 1.0, -2.0 };
	struct stats_options o;
	double r = 7.0, lo = 7.0, hi = 7.0;
	size_t used = 7;

	assert_int_equal(stats_paired_ratio(NULL, 4, NULL, &r, &lo, &hi, &used), -EINVAL);
	assert_int_equal(stats_paired_ratio(good, 4, NULL, NULL, &lo, &hi, &used), -EINVAL);
	assert_int_equal(stats_paired_ratio(good, 4, NULL, &r, NULL, &hi, &used), -EINVAL);
	assert_int_equal(stats_paired_ratio(good, 4, NULL, &r, &lo, NULL, &used), -EINVAL);
	assert_int_equal(stats_paired_ratio(good, 4, NULL, &r, &lo, &hi, NULL), -EINVAL);
	o = opts(100, 1.0, 1);
	assert_int_equal(stats_paired_ratio(good, 4, &o, &r, &lo, &hi, &used), -EINVAL);
	o = opts(0, 0.99, 1);
	assert_int_equal(stats_paired_ratio(good, 4, &o, &r, &lo, &hi, &used), -EINVAL);

	assert_int_equal(stats_paired_ratio(good, 0, NULL, &r, &lo, &hi, &used), -EDOM);
	assert_int_equal(stats_paired_ratio(one, 1, NULL, &r, &lo, &hi, &used), -EDOM);
	assert_int_equal(stats_paired_ratio(one_usable, 2, NULL, &r, &lo, &hi, &used), -EDOM);
	assert_int_equal(stats_paired_ratio(mostly_bad, 5, NULL, &r, &lo, &hi, &used), -EDOM);

	/* The outputs were never touched. */
	assert_true(r == 7.0 && lo == 7.0 && hi == 7.0);
	assert_int_equal(used, 7);

	assert_int_equal(stats_paired_ratio(half_bad, 4, NULL, &r, &lo, &hi, &used), 0);
	assert_int_equal(used, 2);
}

static void test_paired_left_out(void **state)
{
	/* Ratios that are not finite and positive are left out: the result
	 * is bit for bit that of the usable ratios alone, in the same order. */
	const double usable[] = { 1.02, 0.97, 1.10, 0.99, 1.01, 1.03, 0.95 };
	const double mixed[] = { 1.02, 0.0,  0.97,     1.10, -1.0, 0.99,
				 NAN,  1.01, INFINITY, 1.03, -0.0, 0.95 };
	struct stats_options o = opts(10000, 0.99, 5);
	double a[3], b[3];
	size_t ua, ub;

	assert_int_equal(
		stats_paired_ratio(usable, ARRAY_SIZE(usable), &o, &a[0], &a[1], &a[2], &ua), 0);
	assert_int_equal(stats_paired_ratio(mixed, ARRAY_SIZE(mixed), &o, &b[0], &b[1], &b[2], &ub),
			 0);
	assert_int_equal(ua, ARRAY_SIZE(usable));
	assert_int_equal(ub, ARRAY_SIZE(usable));
	assert_memory_equal(a, b, sizeof(a));
	/* The median of seven is the fourth smallest, 1.01, through log and exp. */
	assert_near(a[0], 1.01, 1e-15);
	assert_true(a[1] <= a[0] && a[0] <= a[2]);
}

static void test_pair(void **state)
{
	/* Two preempted empty passes are two negative times: their quotient
	 * is positive and must not pass for a ratio. */
	assert_true(isnan(stats_pair(-3.0, -6.0)));
	assert_true(isnan(stats_pair(10.0, -1.0)));
	assert_true(isnan(stats_pair(-1.0, 10.0)));
	assert_true(isnan(stats_pair(0.0, 10.0)));
	assert_true(isnan(stats_pair(10.0, 0.0)));
	assert_true(isnan(stats_pair(NAN, 10.0)));
	assert_true(isnan(stats_pair(10.0, INFINITY)));
	assert_true(stats_pair(200.0, 210.0) == 210.0 / 200.0);
}

static void test_paired_deterministic(void **state)
{
	double base[PAIRS], head[PAIRS], ratio[PAIRS];
	double a[3], b[3];
	size_t ua, ub;

	fill_pairs(base, head, ratio, 1.05, 7);
	memset(a, 0, sizeof(a));
	memset(b, 0xff, sizeof(b));
	assert_int_equal(stats_paired_ratio(ratio, PAIRS, NULL, &a[0], &a[1], &a[2], &ua), 0);
	assert_int_equal(stats_paired_ratio(ratio, PAIRS, NULL, &b[0], &b[1], &b[2], &ub), 0);
	assert_memory_equal(a, b, sizeof(a));
	assert_int_equal(ua, ub);
}

/* ---- Formatting -------------------------------------------------------- */

static void expect_duration(double ns, const char *want)
{
	char buf[32];

	assert_int_equal(stats_format_duration(ns, buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
}

static void test_format_duration(void **state)
{
	char buf[16];

	expect_duration(0.0, "0.000 ns");
	expect_duration(0.312, "0.312 ns");
	expect_duration(0.99996, "1.000 ns");
	expect_duration(1.0, "1.000 ns");
	expect_duration(9.9996, "10.00 ns");
	expect_duration(99.996, "100.0 ns");
	expect_duration(312.44, "312.4 ns");
	expect_duration(999.94, "999.9 ns");
	expect_duration(999.96, "1.000 \xc2\xb5s"); /* rounds up into the next unit */
	expect_duration(1000.0, "1.000 \xc2\xb5s");
	expect_duration(1234.6, "1.235 \xc2\xb5s");
	expect_duration(12345.6, "12.35 \xc2\xb5s");
	expect_duration(999960.0, "1.000 ms");
	expect_duration(12345678.0, "12.35 ms");
	expect_duration(999960000.0, "1.000 s");
	expect_duration(1.5e9, "1.500 s");
	expect_duration(1234.4e9, "1234 s");
	expect_duration(12345.6e9, "12346 s");
	expect_duration(-312.44, "-312.4 ns"); /* after subtracting the loop's cost */
	expect_duration(-1234.6, "-1.235 \xc2\xb5s");
	expect_duration(-0.0001, "0.000 ns");

	strcpy(buf, "untouched");
	assert_int_equal(stats_format_duration(NAN, buf, sizeof(buf)), -EDOM);
	assert_int_equal(stats_format_duration(INFINITY, buf, sizeof(buf)), -EDOM);
	/* "1.235 µs" is 9 bytes (µ takes two) plus the NUL. */
	assert_int_equal(stats_format_duration(1234.6, buf, 9), -ENOBUFS);
	assert_string_equal(buf, "untouched");
	assert_int_equal(stats_format_duration(1234.6, buf, 10), 0);
	assert_string_equal(buf, "1.235 \xc2\xb5s");
}

static void expect_count(double v, const char *want)
{
	char buf[32];

	assert_int_equal(stats_format_count(v, buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
}

static void test_format_count(void **state)
{
	char buf[8] = "same";

	expect_count(0, "0");
	expect_count(7, "7");
	expect_count(999, "999");
	expect_count(1000, "1,000");
	expect_count(543, "543");
	expect_count(128070, "128,070");
	expect_count(1234567, "1,234,567");
	expect_count(-1234567, "-1,234,567");
	expect_count(1234.5, "1,234.5");
	expect_count(2.5 / 3.0, "0.8");
	expect_count(-0.01, "0.0");
	expect_count(1e17, "100,000,000,000,000,000");

	assert_int_equal(stats_format_count(1e18, buf, sizeof(buf)), -EDOM);
	assert_int_equal(stats_format_count(NAN, buf, sizeof(buf)), -EDOM);
	assert_int_equal(stats_format_count(12345678, buf, sizeof(buf)), -ENOBUFS);
	assert_string_equal(buf, "same");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_even),
		cmocka_unit_test(test_known_odd),
		cmocka_unit_test(test_one_sample),
		cmocka_unit_test(test_two_samples),
		cmocka_unit_test(test_all_equal),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_outliers),
		cmocka_unit_test(test_input_unmodified),
		cmocka_unit_test(test_median_quantile),
		cmocka_unit_test(test_disagree),
		cmocka_unit_test(test_cv_of),
		cmocka_unit_test(test_ci_narrows),
		cmocka_unit_test(test_seed),
		cmocka_unit_test(test_seeds_contain_true_median),
		cmocka_unit_test(test_bootstrap_exact_odd),
		cmocka_unit_test(test_bootstrap_exact_even),
		cmocka_unit_test(test_bootstrap_brute_even),
		cmocka_unit_test(test_bootstrap_coverage),
		cmocka_unit_test(test_paired_host_doubles),
		cmocka_unit_test(test_paired_slower),
		cmocka_unit_test(test_t_quantile),
		cmocka_unit_test(test_paired_groups),
		cmocka_unit_test(test_paired_log_scale),
		cmocka_unit_test(test_paired_errors),
		cmocka_unit_test(test_paired_left_out),
		cmocka_unit_test(test_pair),
		cmocka_unit_test(test_paired_deterministic),
		cmocka_unit_test(test_format_duration),
		cmocka_unit_test(test_format_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
