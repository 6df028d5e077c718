// SPDX-License-Identifier: MIT
/*
 * The figures of observed calls: corrected durations, histograms, order
 * statistics, parallel rounds and the calibration (observe.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "observe/observe.h"

double observe_corrected(int64_t t_start, int64_t t_end, int64_t stopped, uint64_t resumes,
			 double latency)
{
	double v = (double)(t_end - t_start) - (double)stopped - (double)resumes * latency;

	return v > 0 ? v : 0;
}

unsigned observe_hist_bucket(double ns)
{
	unsigned k = 0;

	if (!(ns >= 2))
		return 0;
	while (k + 1 < OBSERVE_HIST_BUCKETS && ns >= ldexp(1.0, (int)k + 1))
		k++;
	return k;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Linear interpolation between order statistics (type 7). */
static double quantile(const double *sorted, size_t n, double q)
{
	double h = (double)(n - 1) * q;
	size_t lo = (size_t)floor(h);
	size_t hi = lo + 1 < n ? lo + 1 : lo;

	return sorted[lo] + (h - (double)lo) * (sorted[hi] - sorted[lo]);
}

int observe_summarize(double *v, size_t n, struct observe_summary *ret)
{
	struct observe_summary s = { .n = n };
	double sum = 0;

	if (n == 0) {
		*ret = s;
		return 0;
	}
	if (!v)
		return -EINVAL;
	qsort(v, n, sizeof(*v), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	s.min = v[0];
	s.max = v[n - 1];
	s.mean = sum / (double)n;
	s.median = quantile(v, n, 0.5);
	s.q1 = quantile(v, n, 0.25);
	s.q3 = quantile(v, n, 0.75);
	s.p10 = quantile(v, n, 0.10);
	s.p90 = quantile(v, n, 0.90);
	for (size_t i = 0; n > 1 && i < n; i++)
		s.stddev += (v[i] - s.mean) * (v[i] - s.mean);
	s.stddev = n > 1 ? sqrt(s.stddev / (double)(n - 1)) : 0;
	*ret = s;
	return 0;
}

static int cmp_start(const void *a, const void *b)
{
	const struct observe_call *x = a, *y = b;

	return (x->t_start > y->t_start) - (x->t_start < y->t_start);
}

/* Distinct threads among calls[from, to). */
static size_t count_threads(const struct observe_call *calls, size_t from, size_t to)
{
	size_t n = 0;

	for (size_t i = from; i < to; i++) {
		bool seen = false;

		for (size_t j = from; j < i && !seen; j++)
			seen = calls[j].tid == calls[i].tid;
		n += !seen;
	}
	return n;
}

int observe_rounds(struct observe_call *calls, size_t n, double latency, double **ret_durations,
		   size_t *ret_n, size_t *ret_max_threads)
{
	double *out = NULL;
	size_t nout = 0, max_threads = 0;

	if (n && !calls)
		return -EINVAL;
	qsort(calls, n, sizeof(*calls), cmp_start);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1, first_end = i, last_end = i, threads;

		/* Grow the round while the next call starts before it ends. */
		while (j < n && calls[j].t_start < calls[last_end].t_end) {
			if (calls[j].t_end > calls[last_end].t_end)
				last_end = j;
			j++;
		}
		threads = j - i > 1 ? count_threads(calls, i, j) : 1;
		if (threads >= 2) {
			double *v = realloc(out, (nout + 1) * sizeof(*out));

			if (!v) {
				free(out);
				return -ENOMEM;
			}
			out = v;
			out[nout++] = observe_corrected(
				calls[first_end].t_start, calls[last_end].t_end,
				calls[last_end].stopped_end - calls[first_end].stopped_start,
				calls[last_end].resumes_end - calls[first_end].resumes_start,
				latency);
		}
		if (threads > max_threads)
			max_threads = threads;
		i = j;
	}
	*ret_durations = out;
	*ret_n = nout;
	*ret_max_threads = max_threads;
	return 0;
}

int observe_calibrate(const double *active_ns, const uint64_t *resumes, size_t n,
		      const double *stopped_ns, struct observe_calibration *ret)
{
	struct observe_summary lat, stop;
	double *per = NULL, *st = NULL;
	size_t m = 0;
	int r = -ENOMEM;

	if (n == 0)
		return -EINVAL;
	per = malloc(n * sizeof(*per));
	st = malloc(n * sizeof(*st));
	if (!per || !st)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (resumes[i] == 0)
			continue;
		per[m] = active_ns[i] / (double)resumes[i];
		st[m] = stopped_ns[i] / (double)resumes[i];
		m++;
	}
	if (m == 0) {
		r = -EINVAL;
		goto out;
	}
	observe_summarize(per, m, &lat);
	observe_summarize(st, m, &stop);
	ret->calls = n;
	ret->latency = lat.median;
	ret->latency_p10 = lat.p10;
	ret->latency_p90 = lat.p90;
	ret->stop_median = stop.median;
	r = 0;
out:
	free(per);
	free(st);
	return r;
}

bool observe_unresolved(double median, double uncertainty)
{
	return uncertainty > 0 && median <= OBSERVE_UNRESOLVED_FACTOR * uncertainty;
}
