/* SPDX-License-Identifier: MIT */
/*
 * Change points of a series of figures over commits. The method, and why it
 * was chosen over a fixed threshold, is in docs/changepoints.md; the API in
 * changepoint.h.
 *
 * A noisy series goes through three steps:
 *
 *   1. split: binary segmentation. Each segment is cut where the energy
 *      statistic of its two sides is largest (E-divisive means, Matteson and
 *      James 2014, with |x - y| as the distance), and the cut is kept when a
 *      permutation test finds it significant. Both sides are then searched
 *      again, until no segment has a significant cut.
 *   2. merge: while the smallest step between neighbouring segments'
 *      medians is below min_step, that cut is dropped and its neighbours'
 *      steps are measured again.
 *   3. report each cut with the medians of the segments either side.
 *
 * The size test is made on the final segments rather than while splitting:
 * a bump (up at 80, down at 110) is found by a first cut at one of its edges
 * whose far side still holds the rest of the series, so the medians of that
 * first cut's sides can differ by nothing.
 *
 * The values are used as they are, not their logarithms: the permutation
 * test does not depend on the scale or the origin of the figures, the steps
 * of interest (up to 2x) look much the same on either scale, and a log
 * would fail on the zero or negative figures that a time with the loop's
 * cost subtracted, or a count, can be.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"
#include "stats/changepoint.h"

#define CHANGEPOINT_DEFAULT_SEED UINT64_C(0x6368616e67657074) /* "changept" */

void changepoint_opts_default(struct changepoint_opts *o)
{
	*o = (struct changepoint_opts){
		.exact = false,
		.alpha = 0.01,
		.min_segment = 3,
		.permutations = 199,
		.seed = CHANGEPOINT_DEFAULT_SEED,
		.min_step = 0.01,
	};
}

static bool opts_valid(const struct changepoint_opts *o)
{
	if (!(o->alpha > 0.0 && o->alpha < 1.0))
		return false;
	if (o->min_segment < 1 || o->permutations < 1)
		return false;
	/* The least p-value a test of this many permutations can give. */
	if (1.0 / ((double)o->permutations + 1.0) > o->alpha * (1.0 + 1e-9))
		return false;
	return o->min_step >= 0.0 && isfinite(o->min_step);
}

/* ---- Generator --------------------------------------------------------- */

/* splitmix64 (Steele, Lea and Flood, 2014), from its published description. */
static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/*
 * Each segment draws from its own stream, seeded by the options' seed and
 * the segment's bounds, so that its test does not depend on the order in
 * which the other segments were tested.
 */
static uint64_t segment_seed(uint64_t seed, size_t lo, size_t hi)
{
	uint64_t s = seed ^ ((uint64_t)lo * UINT64_C(0xd1b54a32d192ed03));

	s = splitmix64(&s) ^ ((uint64_t)hi * UINT64_C(0xaef17502108ef2d9));
	return splitmix64(&s);
}

/*
 * Fisher-Yates. The modulo's bias is below m / 2^64, far below what a
 * p-value from a few hundred permutations can show.
 */
static void shuffle(size_t *a, size_t m, uint64_t *state)
{
	for (size_t i = m - 1; i > 0; i--) {
		size_t j = (size_t)(splitmix64(state) % (i + 1));
		size_t t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
}

/* ---- Working space ----------------------------------------------------- */

struct cut {
	size_t at;	      /* in the finite points */
	double p;	      /* of the split that made it */
	double before, after; /* medians of the segments either side */
};

/*
 * Everything a noisy series needs, each array sized for the m finite points
 * (the Fenwick trees for m + 1, cuts and segments for the most a series can
 * hold with min_segment points each).
 */
struct work {
	const struct changepoint_opts *o;
	size_t m;
	double *val; /* the finite points, in order */
	size_t *idx; /* their indices in x */

	/* The segment under test. Its k-th point is sorted[rank[k]]. */
	double *sorted;	  /* its values ascending, less the least of them */
	double *rowsum;	  /* by rank: the sum of |sorted[r] - y| over its values y */
	size_t *rank;	  /* shuffled in place by the permutation test */
	size_t *fw_count; /* Fenwick trees over the ranks: how many points */
	double *fw_sum;	  /* of the left side hold each rank, and their sum */

	double *scratch; /* for medians */
	struct cut *cuts;
	size_t ncuts, max_cuts;
	size_t *stack; /* segments still to search, as (lo, hi) pairs */
};

static void work_free(struct work *w)
{
	free(w->val);
	free(w->idx);
	free(w->sorted);
	free(w->rowsum);
	free(w->rank);
	free(w->fw_count);
	free(w->fw_sum);
	free(w->scratch);
	free(w->cuts);
	free(w->stack);
}

static int work_alloc(struct work *w, size_t m)
{
	w->max_cuts = m / w->o->min_segment + 1;
	w->val = calloc(m, sizeof(*w->val));
	w->idx = calloc(m, sizeof(*w->idx));
	w->sorted = calloc(m, sizeof(*w->sorted));
	w->rowsum = calloc(m, sizeof(*w->rowsum));
	w->rank = calloc(m, sizeof(*w->rank));
	w->fw_count = calloc(m + 1, sizeof(*w->fw_count));
	w->fw_sum = calloc(m + 1, sizeof(*w->fw_sum));
	w->scratch = calloc(m, sizeof(*w->scratch));
	w->cuts = calloc(w->max_cuts, sizeof(*w->cuts));
	w->stack = calloc(2 * w->max_cuts, sizeof(*w->stack));
	if (!w->val || !w->idx || !w->sorted || !w->rowsum || !w->rank || !w->fw_count ||
	    !w->fw_sum || !w->scratch || !w->cuts || !w->stack)
		return -ENOMEM;
	return 0;
}

/* ---- The split statistic ----------------------------------------------- */

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* The first position of sorted[0..m) holding y, which is there. */
static size_t lower_bound(const double *sorted, size_t m, double y)
{
	size_t lo = 0, hi = m;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sorted[mid] < y)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Fill sorted, rowsum and rank for the segment val[lo, lo + m). Equal
 * values share a rank; that is harmless, as their distance is 0 whichever
 * side of each other the Fenwick trees put them. Subtracting the least value
 * keeps the sums small, so that their rounding stays far below the
 * distances being summed.
 */
static void segment_prepare(struct work *w, size_t lo, size_t m)
{
	const double *v = w->val + lo;
	double base, total = 0.0, below = 0.0;

	memcpy(w->sorted, v, m * sizeof(*v));
	qsort(w->sorted, m, sizeof(*w->sorted), cmp_double);
	base = w->sorted[0];
	for (size_t k = 0; k < m; k++) {
		w->sorted[k] -= base;
		total += w->sorted[k];
	}
	for (size_t k = 0; k < m; k++) {
		double y = w->sorted[k];
		double n_below = (double)k, n_above = (double)(m - 1 - k);

		w->rowsum[k] = (n_below * y - below) + (total - below - y - n_above * y);
		below += y;
	}
	for (size_t k = 0; k < m; k++)
		w->rank[k] = lower_bound(w->sorted, m, v[k] - base);
}

static void fenwick_add(struct work *w, size_t m, size_t r, double y)
{
	for (size_t i = r + 1; i <= m; i += i & -i) {
		w->fw_count[i]++;
		w->fw_sum[i] += y;
	}
}

/* How many points of the left side have a rank below r, and their sum. */
static void fenwick_below(const struct work *w, size_t r, size_t *ret_count, double *ret_sum)
{
	size_t count = 0;
	double sum = 0.0;

	for (size_t i = r; i > 0; i -= i & -i) {
		count += w->fw_count[i];
		sum += w->fw_sum[i];
	}
	*ret_count = count;
	*ret_sum = sum;
}

/*
 * Matteson and James' statistic for a left side of nl points and a right
 * side of nr: nl nr / (nl + nr) times the energy distance, twice the mean
 * distance between the sides less the mean distance within each (U-statistics:
 * a side of one point has no pairs, and contributes 0).
 */
static double energy(double within_l, double within_r, double between, size_t nl, size_t nr)
{
	double l = (double)nl, r = (double)nr;
	double e = 2.0 * between / (l * r);

	if (nl > 1)
		e -= within_l / (l * (l - 1.0) / 2.0);
	if (nr > 1)
		e -= within_r / (r * (r - 1.0) / 2.0);
	return e * l * r / (l + r);
}

/*
 * The largest statistic of the segment's m points, in the order of
 * w->rank, over the cuts that leave at least min_segment points each side;
 * its cut (the size of the left side) in *ret_tau.
 *
 * The cut moves from left to right one point at a time. With W_L the sum of
 * distances within the left side, W_R within the right and B between them,
 * moving point tau across adds its distances to the left side (found with
 * the Fenwick trees in O(log m)) to W_L, removes its distances to the rest
 * of the right side (its row sum less those) from W_R, and B is whatever is
 * left of the total. O(m log m) for all cuts, against O(m^2) for an
 * incremental update of the pairwise sums or O(m^3) for summing each cut's
 * pairs afresh.
 */
static double best_split(struct work *w, size_t m, size_t *ret_tau)
{
	size_t min_seg = w->o->min_segment;
	double total = 0.0, wl = 0.0, wr, left_sum = 0.0, best = -INFINITY;

	for (size_t k = 0; k < m; k++)
		total += w->rowsum[w->rank[k]];
	total /= 2.0; /* each pair was counted from both ends */
	wr = total;
	memset(w->fw_count, 0, (m + 1) * sizeof(*w->fw_count));
	memset(w->fw_sum, 0, (m + 1) * sizeof(*w->fw_sum));

	for (size_t tau = 0; tau + min_seg <= m; tau++) {
		size_t r = w->rank[tau], n_lo;
		double y = w->sorted[r], sum_lo, to_left;

		if (tau >= min_seg) {
			double q = energy(wl, wr, total - wl - wr, tau, m - tau);

			if (q > best) {
				best = q;
				*ret_tau = tau;
			}
		}
		/* The n_lo left points below y are y - v away, the others v - y. */
		fenwick_below(w, r, &n_lo, &sum_lo);
		to_left = ((double)n_lo * y - sum_lo) +
			  ((left_sum - sum_lo) - (double)(tau - n_lo) * y);
		wl += to_left;
		wr -= w->rowsum[r] - to_left;
		fenwick_add(w, m, r, y);
		left_sum += y;
	}
	return best;
}

/*
 * Whether the segment [lo, hi), prepared, with best statistic 'observed',
 * splits significantly: its p-value (1 + the permutations of its points
 * whose best statistic reaches 'observed') / (permutations + 1) is at most
 * alpha. The test stops as soon as too many permutations have reached it
 * for the cut to be significant: most segments searched have no step, and
 * they are decided after a few permutations instead of all of them.
 */
static bool significant(struct work *w, size_t lo, size_t hi, double observed, double *ret_p)
{
	const struct changepoint_opts *o = w->o;
	size_t m = hi - lo, tau;
	uint64_t state = segment_seed(o->seed, lo, hi);
	double tries = (double)o->permutations + 1.0;
	/* A permutation within rounding of the observed value counts as a tie. */
	double reach = observed * (1.0 - 1e-9);
	unsigned hits = 0;

	for (unsigned k = 0; k < o->permutations; k++) {
		shuffle(w->rank, m, &state);
		if (best_split(w, m, &tau) >= reach) {
			hits++;
			if ((hits + 1.0) / tries > o->alpha * (1.0 + 1e-9))
				return false;
		}
	}
	*ret_p = (hits + 1.0) / tries;
	return true;
}

/* ---- Steps between segments -------------------------------------------- */

static double median_of(struct work *w, size_t lo, size_t hi)
{
	memcpy(w->scratch, w->val + lo, (hi - lo) * sizeof(*w->scratch));
	return stats_median(w->scratch, hi - lo);
}

static double relative_step(double before, double after)
{
	return before == 0.0 ? NAN : after / before - 1.0;
}

/* How large a step is for min_step: a step from 0 to anything else is large. */
static double step_size(double before, double after)
{
	if (before == 0.0)
		return after == 0.0 ? 0.0 : INFINITY;
	return fabs(after - before) / fabs(before);
}

/* Measure cut j's medians against its neighbouring cuts (or the ends). */
static void cut_measure(struct work *w, size_t j)
{
	size_t lo = j > 0 ? w->cuts[j - 1].at : 0;
	size_t hi = j + 1 < w->ncuts ? w->cuts[j + 1].at : w->m;

	w->cuts[j].before = median_of(w, lo, w->cuts[j].at);
	w->cuts[j].after = median_of(w, w->cuts[j].at, hi);
}

static int cmp_cut(const void *pa, const void *pb)
{
	const struct cut *a = pa, *b = pb;

	return (a->at > b->at) - (a->at < b->at);
}

/* Step 1: binary segmentation of the finite points into w->cuts. */
static void split(struct work *w)
{
	size_t min_seg = w->o->min_segment, depth = 0;

	w->stack[depth++] = 0;
	w->stack[depth++] = w->m;
	while (depth > 0) {
		size_t hi = w->stack[--depth], lo = w->stack[--depth];
		size_t m = hi - lo, tau = 0;
		double q, p;

		if (m < 2 * min_seg)
			continue;
		segment_prepare(w, lo, m);
		q = best_split(w, m, &tau);
		/* No cut makes the sides further apart than they are within. */
		if (!(q > 0.0))
			continue;
		if (!significant(w, lo, hi, q, &p))
			continue;
		w->cuts[w->ncuts++] = (struct cut){ .at = lo + tau, .p = p };
		w->stack[depth++] = lo;
		w->stack[depth++] = lo + tau;
		w->stack[depth++] = lo + tau;
		w->stack[depth++] = hi;
	}
	qsort(w->cuts, w->ncuts, sizeof(*w->cuts), cmp_cut);
}

/* Step 2: drop the smallest step while it is below min_step. */
static void merge(struct work *w)
{
	for (size_t j = 0; j < w->ncuts; j++)
		cut_measure(w, j);
	while (w->ncuts > 0) {
		size_t weakest = 0;
		double least = INFINITY;

		for (size_t j = 0; j < w->ncuts; j++) {
			double s = step_size(w->cuts[j].before, w->cuts[j].after);

			if (s < least) {
				least = s;
				weakest = j;
			}
		}
		if (least >= w->o->min_step)
			break;
		memmove(w->cuts + weakest, w->cuts + weakest + 1,
			(w->ncuts - weakest - 1) * sizeof(*w->cuts));
		w->ncuts--;
		/* The cuts either side of the dropped one now reach further. */
		if (weakest > 0)
			cut_measure(w, weakest - 1);
		if (weakest < w->ncuts)
			cut_measure(w, weakest);
	}
}

static int find_noisy(const double *x, size_t n, const struct changepoint_opts *o,
		      struct changepoint **ret, size_t *ret_n)
{
	struct work w = { .o = o };
	struct changepoint *cp = NULL;
	size_t m = 0;
	int r;

	for (size_t i = 0; i < n; i++)
		m += isfinite(x[i]);
	if (m < 2 * o->min_segment) {
		*ret = NULL;
		*ret_n = 0;
		return 0;
	}
	r = work_alloc(&w, m);
	if (r < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (isfinite(x[i])) {
			w.idx[w.m] = i;
			w.val[w.m++] = x[i];
		}
	}

	split(&w);
	merge(&w);

	if (w.ncuts > 0) {
		cp = calloc(w.ncuts, sizeof(*cp));
		if (!cp) {
			r = -ENOMEM;
			goto out;
		}
	}
	for (size_t j = 0; j < w.ncuts; j++) {
		const struct cut *c = &w.cuts[j];

		cp[j] = (struct changepoint){
			.at = w.idx[c->at],
			.before = c->before,
			.after = c->after,
			.step = relative_step(c->before, c->after),
			.p = c->p,
		};
	}
	*ret = cp;
	*ret_n = w.ncuts;
	r = 0;
out:
	work_free(&w);
	return r;
}

/* ---- Exact series ------------------------------------------------------ */

/*
 * Every finite point that differs from the finite point before it. The
 * segments between are constant, so their medians are those two values.
 */
static int find_exact(const double *x, size_t n, struct changepoint **ret, size_t *ret_n)
{
	struct changepoint *cp = NULL;
	size_t count = 0, prev = SIZE_MAX;

	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]))
			continue;
		if (prev != SIZE_MAX && x[i] != x[prev])
			count++;
		prev = i;
	}
	if (count > 0) {
		cp = calloc(count, sizeof(*cp));
		if (!cp)
			return -ENOMEM;
	}
	count = 0;
	prev = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]))
			continue;
		if (prev != SIZE_MAX && x[i] != x[prev]) {
			cp[count++] = (struct changepoint){
				.at = i,
				.before = x[prev],
				.after = x[i],
				.step = relative_step(x[prev], x[i]),
				.p = 0.0,
			};
		}
		prev = i;
	}
	*ret = cp;
	*ret_n = count;
	return 0;
}

int changepoints_find(const double *x, size_t n, const struct changepoint_opts *o,
		      struct changepoint **ret, size_t *ret_n)
{
	struct changepoint_opts defaults;

	if ((!x && n > 0) || !ret || !ret_n)
		return -EINVAL;
	if (!o) {
		changepoint_opts_default(&defaults);
		o = &defaults;
	}
	if (!opts_valid(o))
		return -EINVAL;
	if (o->exact)
		return find_exact(x, n, ret, ret_n);
	return find_noisy(x, n, o, ret, ret_n);
}
