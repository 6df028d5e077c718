/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct stats_options stats_options_default(void)
{
	return STATS_OPTIONS_DEFAULT;
}

/* ---- Order statistics -------------------------------------------------- */

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* The midpoint of two order statistics; halving first cannot overflow. */
static double mid2(double a, double b)
{
	return a * 0.5 + b * 0.5;
}

static void swap_double(double *a, double *b)
{
	double t = *a;

	*a = *b;
	*b = t;
}

static double median_of_3(double a, double b, double c)
{
	if (a > b)
		swap_double(&a, &b);
	if (b > c)
		b = c;
	return a > b ? a : b;
}

/* A position in [lo, hi) from a cheap LCG (Knuth's MMIX constants). */
static size_t pick(uint64_t *state, size_t lo, size_t hi)
{
	*state = *state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	return lo + (size_t)((*state >> 16) % (hi - lo));
}

/*
 * Put the k-th smallest of a[0..n) at a[k], smaller-or-equal values before it
 * and greater-or-equal after, and return it. Three-way partitioning keeps this
 * linear when most values are equal, as instruction counts usually are. The
 * pivot is the median of three pseudo-randomly placed elements: the fixed
 * first/middle/last choice is quadratic on V-shaped input, which is exactly
 * what the deviations |x - median| of sorted samples are.
 */
static double select_kth(double *a, size_t n, size_t k)
{
	uint64_t state = n;
	size_t lo = 0, hi = n;

	while (hi - lo > 1) {
		double p = median_of_3(a[pick(&state, lo, hi)], a[pick(&state, lo, hi)],
				       a[pick(&state, lo, hi)]);
		/* [lo, lt) < p, [lt, i) == p, [gt, hi) > p */
		size_t lt = lo, i = lo, gt = hi;

		while (i < gt) {
			if (a[i] < p)
				swap_double(&a[lt++], &a[i++]);
			else if (a[i] > p)
				swap_double(&a[i], &a[--gt]);
			else
				i++;
		}
		if (k < lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return a[k];
	}
	return a[k];
}

double stats_median(double *scratch, size_t n)
{
	if (n == 0)
		return NAN;

	double hi = select_kth(scratch, n, n / 2);

	if (n % 2)
		return hi;

	/* Everything before n/2 is <= hi; the lower middle is their maximum. */
	double lo = scratch[0];

	for (size_t i = 1; i < n / 2; i++)
		if (scratch[i] > lo)
			lo = scratch[i];
	return mid2(lo, hi);
}

static double median_sorted(const double *sorted, size_t n)
{
	return n % 2 ? sorted[n / 2] : mid2(sorted[n / 2 - 1], sorted[n / 2]);
}

double stats_quantile_sorted(const double *sorted, size_t n, double p)
{
	if (n == 0 || !(p >= 0.0 && p <= 1.0))
		return NAN;

	double h = (double)(n - 1) * p;
	size_t lo = (size_t)h;

	if (lo >= n - 1)
		return sorted[n - 1];

	double frac = h - (double)lo;

	if (frac == 0.0 || sorted[lo] == sorted[lo + 1])
		return sorted[lo];
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

int stats_disagree(const double *ours, const double *own, size_t n, double *ret_ratio,
		   double *ret_tol)
{
	double *q = calloc(n + 1, sizeof(*q)), m, iqr;

	*ret_ratio = 1;
	*ret_tol = 0;
	if (!q)
		return -ENOMEM;
	for (size_t j = 0; j < n; j++) {
		if (!(ours[j] > 0) || !(own[j] > 0)) {
			free(q);
			return -EINVAL;
		}
		q[j] = ours[j] / own[j];
	}
	if (n == 0) {
		free(q);
		return 0;
	}
	qsort(q, n, sizeof(*q), cmp_double);
	m = stats_quantile_sorted(q, n, 0.5);
	iqr = stats_quantile_sorted(q, n, 0.75) - stats_quantile_sorted(q, n, 0.25);
	free(q);
	/* The median's standard error: 1.253 sigma / sqrt(n), sigma from the
	 * interquartile range as for a normal distribution (IQR / 1.349). */
	*ret_ratio = m;
	*ret_tol = 0.10 + 3 * 1.253 * (iqr / 1.349) / sqrt((double)n) / m;
	return n >= 3 && fabs(m - 1) > *ret_tol;
}

/* ---- Moments ----------------------------------------------------------- */

/*
 * Mean by compensated (Neumaier) summation, then the variance by the
 * corrected two-pass formula, which stays accurate when the spread is tiny
 * next to the mean (a 300 ns benchmark that varies by picoseconds).
 */
static void mean_stddev(const double *x, size_t n, double *ret_mean, double *ret_stddev)
{
	double sum = 0.0, comp = 0.0;

	for (size_t i = 0; i < n; i++) {
		double t = sum + x[i];

		if (fabs(sum) >= fabs(x[i]))
			comp += (sum - t) + x[i];
		else
			comp += (x[i] - t) + sum;
		sum = t;
	}

	double mean = (sum + comp) / (double)n;

	*ret_mean = mean;
	if (n < 2) {
		*ret_stddev = 0.0;
		return;
	}

	double ss = 0.0, s = 0.0;

	for (size_t i = 0; i < n; i++) {
		double d = x[i] - mean;

		ss += d * d;
		s += d;
	}

	double var = (ss - s * s / (double)n) / (double)(n - 1);

	*ret_stddev = var > 0.0 ? sqrt(var) : 0.0;
}

double stats_cv_of(const double *x, size_t n)
{
	double mean, sd;

	if (n < 2)
		return 0.0;
	mean_stddev(x, n, &mean, &sd);
	if (isnan(mean) || isnan(sd))
		return NAN;
	return mean == 0.0 ? 0.0 : sd / fabs(mean);
}

/* ---- Random numbers ---------------------------------------------------- */

/*
 * xoshiro256** (Blackman and Vigna, "Scrambled linear pseudorandom number
 * generators", 2018), its state filled from the seed by splitmix64 as the
 * authors recommend, so that any seed, 0 included, gives a usable state.
 */
struct rng {
	uint64_t s[4];
	double spare; /* second normal deviate of the polar method */
	bool has_spare;
};

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint64_t rotl64(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static void rng_seed(struct rng *r, uint64_t seed)
{
	for (size_t i = 0; i < ARRAY_SIZE(r->s); i++)
		r->s[i] = splitmix64(&seed);
	r->has_spare = false;
}

static uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl64(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl64(s[3], 45);
	return result;
}

/* Uniform on the open interval (0, 1): 53 random bits, centred in their cell. */
static double rng_uniform(struct rng *r)
{
	return ((double)(rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

/* Standard normal by Marsaglia's polar method. */
static double rng_normal(struct rng *r)
{
	double u, v, s;

	if (r->has_spare) {
		r->has_spare = false;
		return r->spare;
	}
	do {
		u = 2.0 * rng_uniform(r) - 1.0;
		v = 2.0 * rng_uniform(r) - 1.0;
		s = u * u + v * v;
	} while (s >= 1.0 || s == 0.0);

	double f = sqrt(-2.0 * log(s) / s);

	r->spare = v * f;
	r->has_spare = true;
	return u * f;
}

/* Gamma(shape, 1) for shape >= 1 (Marsaglia and Tsang, 2000). */
static double rng_gamma(struct rng *r, double shape)
{
	double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);

	for (;;) {
		double x = rng_normal(r), v = 1.0 + c * x;

		if (v <= 0.0)
			continue;
		v = v * v * v;

		double u = rng_uniform(r), x2 = x * x;

		if (u < 1.0 - 0.0331 * x2 * x2)
			return d * v;
		if (log(u) < 0.5 * x2 + d * (1.0 - v + log(v)))
			return d * v;
	}
}

/* Beta(a, b) for a, b >= 1, as X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b). */
static double rng_beta(struct rng *r, double a, double b)
{
	double x = rng_gamma(r, a), y = rng_gamma(r, b);

	return x / (x + y);
}

/* ---- Bootstrap of the median ------------------------------------------- */

static size_t cell_of(double u, size_t n)
{
	double c = floor(u * (double)n);

	return c >= (double)(n - 1) ? n - 1 : (size_t)c;
}

/*
 * One bootstrap replicate of the median of sorted[0..n).
 *
 * A resample draws n indices I_j = floor(n U_j) with U_j uniform on (0, 1).
 * floor(n u) does not decrease with u, so the k-th smallest index is
 * floor(n U_(k)), and as 'sorted' is ascending the k-th smallest resampled
 * value is sorted[floor(n U_(k))]. The k-th order statistic of n uniforms is
 * Beta(k, n - k + 1); given U_(k) = u, the next one is the least of n - k
 * uniforms on (u, 1), u + (1 - u)(1 - V^(1/(n-k))). So the resample's median
 * comes from one or two such draws, with exactly the distribution that
 * drawing all n values and selecting the median would give.
 *
 *   sorted:  x0  x1  x2 ... x(n-1)      index = floor(n U), U in (0,1)
 *            |---|---|--- ... ---|
 *            0  1/n 2/n          1      U_(k) ~ Beta(k, n-k+1)
 */
static double replicate_median(struct rng *r, const double *sorted, size_t n)
{
	size_t k = (n + 1) / 2; /* 1-based rank of the (lower) middle */
	double u = rng_beta(r, (double)k, (double)(n - k + 1));
	double lo = sorted[cell_of(u, n)];

	if (n % 2)
		return lo;

	double w = -expm1(log(rng_uniform(r)) / (double)(n - k));

	return mid2(lo, sorted[cell_of(u + (1.0 - u) * w, n)]);
}

static bool all_finite(const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return false;
	return true;
}

static int check_options(const struct stats_options *opt)
{
	if (!(opt->confidence > 0.0 && opt->confidence < 1.0))
		return -EINVAL;
	if (opt->resamples == 0 || opt->resamples > STATS_RESAMPLES_MAX)
		return -EINVAL;
	return 0;
}

int stats_bootstrap_median(const double *sorted, size_t n, const struct stats_options *opt,
			   double *ret_low, double *ret_high)
{
	struct stats_options def = STATS_OPTIONS_DEFAULT;
	struct rng rng;
	double *reps;
	int r;

	if (!opt)
		opt = &def;
	if (!sorted || n == 0 || !ret_low || !ret_high)
		return -EINVAL;
	r = check_options(opt);
	if (r < 0)
		return r;
	if (n == 1 || sorted[0] == sorted[n - 1]) {
		*ret_low = *ret_high = sorted[0];
		return 0;
	}

	reps = malloc(opt->resamples * sizeof(*reps));
	if (!reps)
		return -ENOMEM;
	rng_seed(&rng, opt->seed);
	for (unsigned i = 0; i < opt->resamples; i++)
		reps[i] = replicate_median(&rng, sorted, n);
	qsort(reps, opt->resamples, sizeof(*reps), cmp_double);

	double alpha = 1.0 - opt->confidence;

	*ret_low = stats_quantile_sorted(reps, opt->resamples, alpha / 2.0);
	*ret_high = stats_quantile_sorted(reps, opt->resamples, 1.0 - alpha / 2.0);
	free(reps);
	return 0;
}

/* ---- Summary ----------------------------------------------------------- */

static void count_outliers(const double *sorted, size_t n, struct stats_summary *s)
{
	double lo_mild = s->q1 - 1.5 * s->iqr, lo_severe = s->q1 - 3.0 * s->iqr;
	double hi_mild = s->q3 + 1.5 * s->iqr, hi_severe = s->q3 + 3.0 * s->iqr;

	for (size_t i = 0; i < n; i++) {
		double x = sorted[i];

		if (x < lo_severe)
			s->outliers_low_severe++;
		else if (x < lo_mild)
			s->outliers_low_mild++;
		else if (x > hi_severe)
			s->outliers_high_severe++;
		else if (x > hi_mild)
			s->outliers_high_mild++;
	}
	s->outliers = s->outliers_low_mild + s->outliers_low_severe + s->outliers_high_mild +
		      s->outliers_high_severe;
}

int stats_summarize(const double *samples, size_t n, const struct stats_options *opt,
		    struct stats_summary *ret)
{
	struct stats_options def = STATS_OPTIONS_DEFAULT;
	struct stats_summary s = { .n = n };
	double *sorted = NULL, *scratch = NULL;
	int r;

	if (!opt)
		opt = &def;
	if (!samples || n == 0 || !ret)
		return -EINVAL;
	r = check_options(opt);
	if (r < 0)
		return r;
	if (!all_finite(samples, n))
		return -EDOM;
	if (n > SIZE_MAX / sizeof(double))
		return -ENOMEM;

	sorted = malloc(n * sizeof(*sorted));
	scratch = malloc(n * sizeof(*scratch));
	if (!sorted || !scratch) {
		r = -ENOMEM;
		goto out;
	}
	memcpy(sorted, samples, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_double);

	s.min = sorted[0];
	s.max = sorted[n - 1];
	s.confidence = opt->confidence;
	if (s.min == s.max) {
		/* Exactly, not up to the rounding of a sum. */
		s.mean = s.median = s.q1 = s.q3 = s.ci_low = s.ci_high = s.min;
		goto done;
	}

	mean_stddev(sorted, n, &s.mean, &s.stddev);
	if (!isfinite(s.mean) || !isfinite(s.stddev)) {
		r = -ERANGE;
		goto out;
	}
	/* Rounding must not put the mean outside the samples. */
	s.mean = fmin(fmax(s.mean, s.min), s.max);
	s.cv = s.mean == 0.0 ? 0.0 : s.stddev / fabs(s.mean);

	s.median = median_sorted(sorted, n);
	s.q1 = stats_quantile_sorted(sorted, n, 0.25);
	s.q3 = stats_quantile_sorted(sorted, n, 0.75);
	s.iqr = s.q3 - s.q1;

	for (size_t i = 0; i < n; i++)
		scratch[i] = fabs(sorted[i] - s.median);
	s.mad = stats_median(scratch, n);

	count_outliers(sorted, n, &s);

	r = stats_bootstrap_median(sorted, n, opt, &s.ci_low, &s.ci_high);
	if (r < 0)
		goto out;

	if (!isfinite(s.cv) || !isfinite(s.iqr) || !isfinite(s.mad)) {
		r = -ERANGE;
		goto out;
	}
done:
	*ret = s;
	r = 0;
out:
	free(scratch);
	free(sorted);
	return r;
}

/* ---- Formatting -------------------------------------------------------- */

/* Copy a finished string out, or fail without touching 'buf'. */
static int put(const char *s, char *buf, size_t size)
{
	size_t len = strlen(s);

	if (!buf || len >= size)
		return -ENOBUFS;
	memcpy(buf, s, len + 1);
	return 0;
}

static size_t int_digits(const char *s)
{
	if (*s == '-')
		s++;
	return strspn(s, "0123456789");
}

/* true when s (a formatted number) shows nothing but zeros. */
static bool all_zero(const char *s)
{
	return strspn(s, "-0.") == strlen(s);
}

/*
 * v with 4 significant digits, three decimals below 1, none from 1000 on.
 * The digit count is read back from the printed text, so that 9.9996 becomes
 * "10.00" rather than "10.000", and the decimal point is whatever the locale
 * prints: only digits are counted.
 */
static void format_sig4(double v, char *out, size_t size)
{
	double a = fabs(v);
	int decimals = a < 10.0 ? 3 : a < 100.0 ? 2 : a < 1000.0 ? 1 : 0;

	for (;;) {
		snprintf(out, size, "%.*f", decimals, v);
		if (all_zero(out) && out[0] == '-')
			memmove(out, out + 1, strlen(out)); /* no "-0.000" */
		if (decimals == 0 || int_digits(out) + (size_t)decimals <= 4)
			return;
		decimals--;
	}
}

int stats_format_duration(double ns, char *buf, size_t size)
{
	/* "\xc2\xb5" is U+00B5 MICRO SIGN in UTF-8, spelled out so that the
	 * source's encoding cannot matter. */
	static const struct {
		const char *name;
		double scale;
	} units[] = { { "ns", 1.0 }, { "\xc2\xb5s", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
	char num[64], out[80];
	size_t u = 0;

	if (!isfinite(ns))
		return -EDOM;
	while (u + 1 < ARRAY_SIZE(units) && fabs(ns) >= units[u + 1].scale)
		u++;
	for (;;) {
		format_sig4(ns / units[u].scale, num, sizeof(num));
		/* 999.96 ns prints as "1000": that is 1.000 µs. */
		if (int_digits(num) < 4 || u + 1 == ARRAY_SIZE(units))
			break;
		u++;
	}
	snprintf(out, sizeof(out), "%s %s", num, units[u].name);
	return put(out, buf, size);
}

int stats_format_count(double v, char *buf, size_t size)
{
	char num[48], out[64];
	size_t lead, len, o = 0;
	const char *p = num;

	if (!isfinite(v) || fabs(v) >= 1e18)
		return -EDOM;
	snprintf(num, sizeof(num), v == floor(v) ? "%.0f" : "%.1f", v);
	if (all_zero(num) && num[0] == '-')
		p++;
	if (*p == '-')
		out[o++] = *p++;
	len = int_digits(p);
	for (lead = 0; lead < len; lead++) {
		if (lead > 0 && (len - lead) % 3 == 0)
			out[o++] = ',';
		out[o++] = p[lead];
	}
	strcpy(out + o, p + len); /* the decimals, if any */
	return put(out, buf, size);
}

int stats_format_bytes(double v, char *buf, size_t size)
{
	static const char *const units[] = { "KiB", "MiB", "GiB" };
	char out[32];
	double a = fabs(v);
	int k = -1;

	if (!isfinite(v) || a >= 1152921504606846976.0)
		return -EDOM;
	while (k < 2 && a >= 1024.0) {
		a /= 1024.0;
		k++;
	}
	if (k < 0)
		snprintf(out, sizeof(out), v == floor(v) ? "%.0f B" : "%.1f B", v);
	else
		snprintf(out, sizeof(out), "%s%.2f %s", v < 0 ? "-" : "", a, units[k]);
	return put(out, buf, size);
}

int stats_format_value(const char *unit, double v, char *buf, size_t size)
{
	if (!unit || !strcmp(unit, "ns"))
		return stats_format_duration(v, buf, size);
	if (!strcmp(unit, "bytes"))
		return stats_format_bytes(v, buf, size);
	return stats_format_count(v, buf, size);
}

/* ---- Comparing two sets of samples ------------------------------------- */

int stats_bootstrap_ratio(const double *base_sorted, size_t nbase, const double *head_sorted,
			  size_t nhead, const struct stats_options *opt, double *ret_low,
			  double *ret_high)
{
	struct stats_options def = STATS_OPTIONS_DEFAULT;
	struct rng rng;
	double *reps;
	int r = 0;

	if (!opt)
		opt = &def;
	if (!base_sorted || !head_sorted || nbase == 0 || nhead == 0 || !ret_low || !ret_high)
		return -EINVAL;
	r = check_options(opt);
	if (r < 0)
		return r;
	if (!all_finite(base_sorted, nbase) || !all_finite(head_sorted, nhead))
		return -EDOM;

	reps = malloc(opt->resamples * sizeof(*reps));
	if (!reps)
		return -ENOMEM;
	rng_seed(&rng, opt->seed);
	for (unsigned i = 0; i < opt->resamples; i++) {
		double b = replicate_median(&rng, base_sorted, nbase);
		double h = replicate_median(&rng, head_sorted, nhead);

		/* A ratio means nothing once the base can be zero or negative
		 * (a benchmark that measured no time). */
		if (!(b > 0.0) || !(h >= 0.0)) {
			r = -EDOM;
			goto out;
		}
		reps[i] = h / b;
	}
	qsort(reps, opt->resamples, sizeof(*reps), cmp_double);

	double alpha = 1.0 - opt->confidence;

	*ret_low = stats_quantile_sorted(reps, opt->resamples, alpha / 2.0);
	*ret_high = stats_quantile_sorted(reps, opt->resamples, 1.0 - alpha / 2.0);
out:
	free(reps);
	return r;
}

int stats_geomean(const double *x, size_t n, double *ret)
{
	double sum = 0.0;

	if (!x || n == 0 || !ret)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]) || !(x[i] > 0.0))
			return -EDOM;
		sum += log(x[i]);
	}
	*ret = exp(sum / (double)n);
	return 0;
}

double stats_pair(double base, double head)
{
	if (!(isfinite(base) && base > 0 && isfinite(head) && head > 0))
		return NAN;
	return head / base;
}

int stats_paired_ratio(const double *ratios, size_t n, const struct stats_options *opt,
		       double *ret_ratio, double *ret_low, double *ret_high, size_t *ret_used)
{
	double *logs, lo, hi, mid;
	size_t k = 0;
	int r;

	if (!ratios || !ret_ratio || !ret_low || !ret_high || !ret_used)
		return -EINVAL;
	logs = malloc((n ? n : 1) * sizeof(*logs));
	if (!logs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (isfinite(ratios[i]) && ratios[i] > 0.0)
			logs[k++] = log(ratios[i]);
	if (k < 2 || 2 * k < n) {
		free(logs);
		return -EDOM;
	}
	qsort(logs, k, sizeof(*logs), cmp_double);
	mid = k % 2 ? logs[k / 2] : (logs[k / 2 - 1] + logs[k / 2]) / 2;
	r = stats_bootstrap_median(logs, k, opt, &lo, &hi);
	free(logs);
	if (r < 0)
		return r;
	*ret_ratio = exp(mid);
	*ret_low = exp(lo);
	*ret_high = exp(hi);
	*ret_used = k;
	return 0;
}

/* Student's t density's integral from 0 to x, df degrees of freedom, by
 * Simpson's rule on the substitution that keeps the tail finite. */
static double t_half_cdf(double x, unsigned df)
{
	double nu = df, c = exp(lgamma((nu + 1) / 2) - lgamma(nu / 2)) / sqrt(nu * M_PI);
	const int steps = 4000; /* even */
	double h = x / steps, sum = 0;

	for (int k = 0; k <= steps; k++) {
		double t = k * h, f = c * pow(1 + t * t / nu, -(nu + 1) / 2);

		sum += (k == 0 || k == steps ? 1 : k % 2 ? 4 : 2) * f;
	}
	return sum * h / 3;
}

double stats_t_quantile(double q, unsigned df)
{
	double lo = 0, hi = 1, want;
	bool upper;

	if (df == 0 || !(q > 0 && q < 1))
		return NAN;
	if (q == 0.5)
		return 0;
	upper = q > 0.5;
	want = (upper ? q : 1 - q) - 0.5;
	while (t_half_cdf(hi, df) < want && hi < 1e6)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-10; i++) {
		double mid = (lo + hi) / 2;

		if (t_half_cdf(mid, df) < want)
			lo = mid;
		else
			hi = mid;
	}
	return upper ? (lo + hi) / 2 : -(lo + hi) / 2;
}

int stats_paired_ratio_groups(const double *ratios, size_t n, const size_t *groups, size_t ngroups,
			      const struct stats_options *opt, double *ret_ratio, double *ret_low,
			      double *ret_high, size_t *ret_used)
{
	double *meds, *logs, ratio, low, high, mean = 0, ss = 0, half, t;
	size_t used, k = 0, at = 0, total = 0;
	int r;

	if (!ratios || !ret_ratio || !ret_low || !ret_high || !ret_used)
		return -EINVAL;
	for (size_t g = 0; groups && g < ngroups; g++)
		total += groups[g];
	if (!groups || ngroups < 2 || total != n)
		return stats_paired_ratio(ratios, n, opt, ret_ratio, ret_low, ret_high, ret_used);
	r = stats_paired_ratio(ratios, n, opt, &ratio, &low, &high, &used);
	if (r < 0)
		return r;
	meds = malloc(ngroups * sizeof(*meds));
	logs = malloc((n ? n : 1) * sizeof(*logs));
	if (!meds || !logs) {
		free(meds);
		free(logs);
		return -ENOMEM;
	}
	for (size_t g = 0; g < ngroups; g++, at += groups[g - 1]) {
		size_t m = 0;

		for (size_t i = at; i < at + groups[g]; i++)
			if (isfinite(ratios[i]) && ratios[i] > 0.0)
				logs[m++] = log(ratios[i]);
		if (m < 2)
			continue;
		qsort(logs, m, sizeof(*logs), cmp_double);
		meds[k++] = m % 2 ? logs[m / 2] : (logs[m / 2 - 1] + logs[m / 2]) / 2;
	}
	free(logs);
	if (k < 2) {
		free(meds);
		*ret_ratio = ratio;
		*ret_low = low;
		*ret_high = high;
		*ret_used = used;
		return 0;
	}
	for (size_t g = 0; g < k; g++)
		mean += meds[g] / (double)k;
	for (size_t g = 0; g < k; g++)
		ss += (meds[g] - mean) * (meds[g] - mean);
	free(meds);
	t = stats_t_quantile(
		1 - (1 - (opt ? opt->confidence : stats_options_default().confidence)) / 2,
		(unsigned)(k - 1));
	/* The estimate stays the pooled median (one process that read far
	 * off moves it little); how far the processes' own medians spread
	 * is the interval's half-width about it. */
	half = t * sqrt(ss / (double)(k - 1) / (double)k);
	*ret_ratio = ratio;
	*ret_low = fmin(exp(log(ratio) - half), low);
	*ret_high = fmax(exp(log(ratio) + half), high);
	*ret_used = used;
	return 0;
}
