/* SPDX-License-Identifier: MIT */
/* Comparing two results files: pairs, verdicts, warnings (results.h, docs/ci.md). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"
#include "stats/stats.h"
#include "results/instrument.h"
#include "results/results.h"

static const char *const verdict_names[RESULTS_NVERDICTS] = {
	[RESULTS_REGRESSED] = "regressed",
	[RESULTS_IMPROVED] = "improved",
	[RESULTS_UNCHANGED] = "unchanged",
	[RESULTS_FAILED] = "failed",
	[RESULTS_NEW] = "new",
	[RESULTS_MISSING] = "missing",
	[RESULTS_INCONCLUSIVE] = "inconclusive",
};

const char *results_verdict_name(enum results_verdict v)
{
	return (unsigned)v < RESULTS_NVERDICTS ? verdict_names[v] : "?";
}

void results_compare_opts_default(struct results_compare_opts *o)
{
	*o = (struct results_compare_opts){
		.threshold = RESULTS_DEFAULT_THRESHOLD,
		.confidence = RESULTS_DEFAULT_CONFIDENCE,
		.resamples = 10000,
		.seed = STATS_DEFAULT_SEED,
	};
}

/* ---- sentences ---------------------------------------------------------- */

/* A list of sentences; after a failed allocation it takes no more, and
 * 'nomem' says so once at the end. */
struct sentences {
	struct strv sv;
	bool nomem;
};

static void strv_addf(struct sentences *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void strv_addf(struct sentences *s, const char *fmt, ...)
{
	char *msg;
	va_list ap;

	if (s->nomem)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg || strv_push(&s->sv, msg) < 0) {
		free(msg);
		s->nomem = true;
	}
}

/* ---- environments ------------------------------------------------------- */

static bool str_differs(const char *a, const char *b)
{
	if (!a || !b)
		return a != b;
	return strcmp(a, b) != 0;
}

/* Append "field ('a' vs 'b')" to a growing sentence. */
static int diff_add(char **s, const char *field, const char *a, const char *b)
{
	char *n;

	if (asprintf(&n, "%s%s%s ('%s' vs '%s')", *s ? *s : "", *s ? ", " : "", field,
		     a ? a : "unknown", b ? b : "unknown") < 0)
		return -ENOMEM;
	free(*s);
	*s = n;
	return 0;
}

int results_env_diff(const struct results_env *a, const struct results_env *b, char **ret)
{
	const struct {
		const char *name, *a, *b;
	} fields[] = {
		{ "cpu", a->cpu, b->cpu },
		{ "kernel", a->kernel, b->kernel },
		{ "libc", a->libc, b->libc },
		{ "compiler", a->compiler, b->compiler },
		{ "governor", a->governor, b->governor },
		{ "benchtrap", a->benchtrap, b->benchtrap },
	};
	char *s = NULL;
	int r = 0;

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]) && r == 0; i++)
		if (str_differs(fields[i].a, fields[i].b))
			r = diff_add(&s, fields[i].name, fields[i].a, fields[i].b);
	if (r == 0 && a->cores != b->cores) {
		char ca[16], cb[16];

		snprintf(ca, sizeof(ca), "%d", a->cores);
		snprintf(cb, sizeof(cb), "%d", b->cores);
		r = diff_add(&s, "cores", ca, cb);
	}
	if (r == 0 && a->aslr != b->aslr)
		r = diff_add(&s, "aslr", a->aslr > 0 ? "on" : "off", b->aslr > 0 ? "on" : "off");
	if (r < 0) {
		free(s);
		return r;
	}
	*ret = s;
	return 0;
}

/* ---- pairing ------------------------------------------------------------ */

/* The first benchmark of an indexed file with b's name and instrument, or
 * NULL: O(log n), so that pairing n against n is O(n log n). */
static const struct results_bench *find(const struct results_index *ix,
					const struct results_bench *b)
{
	const struct results_ref *r = results_index_find(ix, b->name, b->instrument);

	return r ? r->bench : NULL;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

static double *sorted_copy(const double *x, size_t n)
{
	double *c = malloc(n * sizeof(*c));

	if (c) {
		memcpy(c, x, n * sizeof(*c));
		qsort(c, n, sizeof(*c), cmp_double);
	}
	return c;
}

/*
 * Walltime: the interval of the ratio of medians from the raw samples; a
 * file without them falls back on the intervals of the two medians (which
 * must not overlap), and one without those on the threshold alone.
 */
static int judge_walltime(struct results_pair *p, const struct results_compare_opts *o)
{
	const struct results_bench *b = p->base, *h = p->head;

	if (b->nraw >= 2 && h->nraw >= 2) {
		struct stats_options so = { o->confidence, o->resamples, o->seed };
		double *bs = sorted_copy(b->raw, b->nraw), *hs = sorted_copy(h->raw, h->nraw);
		int r = bs && hs ? stats_bootstrap_ratio(bs, b->nraw, hs, h->nraw, &so,
							 &p->ratio_low, &p->ratio_high)
				 : -ENOMEM;

		free(bs);
		free(hs);
		if (r == -ENOMEM)
			return r;
		if (r == 0) {
			p->has_interval = true;
			p->significant = p->ratio_low > 1.0 || p->ratio_high < 1.0;
			return 0;
		}
		/* -EDOM: samples at or below zero; judged as below. */
	}
	if (b->has_stats && h->has_stats && isfinite(b->stats.ci_low) &&
	    isfinite(b->stats.ci_high) && isfinite(h->stats.ci_low) && isfinite(h->stats.ci_high)) {
		p->significant =
			h->stats.ci_low > b->stats.ci_high || h->stats.ci_high < b->stats.ci_low;
		p->note = "no raw samples: significance from the intervals of the medians";
		return 0;
	}
	p->significant = true;
	p->note = "no samples or intervals: judged by the threshold alone";
	return 0;
}

/*
 * Paired walltime: the interval of the median of head's pair ratios. A
 * pair whose ratios cannot be used (too few, a side measured no time) is
 * judged on its samples as two files are.
 */
static int judge_paired(struct results_pair *p, const struct results_compare_opts *o)
{
	struct stats_options so = { o->confidence, o->resamples, o->seed };
	double ratio, low, high;
	size_t used;
	int r;

	if (p->head->npairs < 2)
		return -EDOM;
	r = stats_paired_ratio_groups(p->head->pair_ratios, p->head->npairs, p->head->pair_groups,
				      p->head->npair_groups, &so, &ratio, &low, &high, &used);
	if (r < 0)
		return r;
	p->ratio = ratio;
	p->ratio_low = low;
	p->ratio_high = high;
	p->has_interval = true;
	p->paired = true;
	p->significant = low > 1.0 || high < 1.0;
	return 0;
}

static bool observed(const struct results_pair *p)
{
	return results_instrument_has(p->instrument, RESULTS_INSTRUMENT_OBSERVED);
}

/*
 * Observed calls: the stops' cost is removed with one calibration per run,
 * and what is left of its spread, the ± (stats.uncertainty), is shared by
 * every call of that run, so the bootstrap over the calls cannot see it. A
 * change of the medians within the two files' ± together is not a change
 * the files can show.
 */
static bool within_uncertainty(const struct results_bench *b, const struct results_bench *h)
{
	double u = 0.0;

	if (b->has_stats && isfinite(b->stats.uncertainty) && b->stats.uncertainty > 0.0)
		u += b->stats.uncertainty;
	if (h->has_stats && isfinite(h->stats.uncertainty) && h->stats.uncertainty > 0.0)
		u += h->stats.uncertainty;
	return fabs(h->value - b->value) <= u;
}

/* An observed function with no call to time (results_bench.status):
 * neither measured nor failed. */
static bool no_call(const struct results_bench *b)
{
	return b->status == RESULTS_STATUS_SKIPPED || b->status == RESULTS_STATUS_NO_CALLS;
}

/* Why a pair with a side that has no figure has no change. */
static const char *unmeasured_note(const struct results_bench *b, const struct results_bench *h)
{
	if (!h->ok && b && !b->ok)
		return "no figure in base nor head";
	if (!h->ok)
		return h->status == RESULTS_STATUS_SKIPPED ? "skipped in head"
							   : "no call returned in head";
	if (!b)
		return NULL;
	if (!no_call(b))
		return "failed in base";
	return b->status == RESULTS_STATUS_SKIPPED ? "skipped in base" : "no call returned in base";
}

static int judge(struct results_pair *p, const struct results_compare_opts *o, bool paired)
{
	const struct results_bench *b = p->base, *h = p->head;
	double change;

	if (h && !h->ok && !no_call(h)) {
		p->verdict = RESULTS_FAILED;
		return 0;
	}
	if (!h) {
		p->verdict = RESULTS_MISSING;
		return 0;
	}
	if (!h->ok) {
		/* An observed function with no call to time in head: gone
		 * from what head measured, or from neither. */
		p->verdict = b && b->ok ? RESULTS_MISSING : RESULTS_UNCHANGED;
		p->note = unmeasured_note(b, h);
		return 0;
	}
	if (!b || !b->ok) {
		p->verdict = RESULTS_NEW;
		if (b)
			p->note = unmeasured_note(b, h);
		return 0;
	}
	p->verdict = RESULTS_UNCHANGED;
	/* An exact count of nothing (bytes of a call that allocates none):
	 * from none to some is a regression with no ratio, none to none is
	 * unchanged. */
	if (results_instrument_exact(p->instrument) && !b->no_time && !h->no_time &&
	    (b->value == 0.0 || h->value == 0.0)) {
		if (b->value == 0.0 && h->value > 0.0) {
			p->verdict = RESULTS_REGRESSED;
			p->note = "none in base";
		} else if (b->value > 0.0 && h->value == 0.0) {
			p->verdict = RESULTS_IMPROVED;
			p->note = "none in head";
		}
		return 0;
	}
	if (b->no_time || h->no_time || !(b->value > 0.0) || !(h->value > 0.0)) {
		p->note = observed(p) && (b->no_time || h->no_time)
				  ? "shorter than observe resolves: not compared"
				  : "measured no execution time: not compared";
		return 0;
	}
	p->has_ratio = true;
	p->ratio = h->value / b->value;
	if (results_instrument_exact(p->instrument)) {
		p->significant = p->ratio != 1.0;
	} else if (observed(p) && (b->nraw < 2 || h->nraw < 2)) {
		/* One call has no spread: its change could be any call's noise. */
		p->note = "a single call in base or head: no spread to judge a change by";
		return 0;
	} else {
		int r = paired ? judge_paired(p, o) : -EDOM;

		if (r == -EDOM) {
			r = judge_walltime(p, o);
			if (paired && !p->note)
				p->note = "too few usable pairs: judged on the two sides' samples";
		}
		if (r < 0)
			return r;
	}
	if (p->significant && observed(p) && within_uncertainty(b, h)) {
		p->significant = false;
		p->note = "within the calls' ± from removing the stops: not significant";
	}
	if (!p->significant) {
		/* An interval from below -threshold to above +threshold holds
		 * a regression, no change and an improvement alike. */
		if (p->has_interval && p->ratio_low < 1.0 - o->threshold &&
		    p->ratio_high > 1.0 + o->threshold) {
			p->verdict = RESULTS_INCONCLUSIVE;
			if (!p->note)
				p->note = "the interval spans both -threshold and +threshold: "
					  "too wide to tell";
		}
		return 0;
	}
	/* Paired: the median of the pair ratios, not of the medians. */
	change = p->ratio - 1.0;
	if (change > o->threshold)
		p->verdict = RESULTS_REGRESSED;
	else if (change < -o->threshold)
		p->verdict = RESULTS_IMPROVED;
	return 0;
}

/*
 * Order of the report: failures first, then the measured pairs by the size
 * of their change (|log ratio|, so that 2x slower and 2x faster weigh the
 * same), then missing and new ones; the order of the files otherwise.
 */
struct sortable {
	struct results_pair p;
	size_t idx;
};

static int rank_of(const struct results_pair *p)
{
	if (p->verdict == RESULTS_FAILED)
		return 0;
	/* From none to some, or back: a change larger than any ratio. */
	if (!p->has_ratio &&
	    (p->verdict == RESULTS_REGRESSED || p->verdict == RESULTS_IMPROVED))
		return 1;
	if (p->has_ratio)
		return 2;
	if (p->verdict == RESULTS_UNCHANGED)
		return 3;
	return p->verdict == RESULTS_MISSING ? 4 : 5;
}

static int cmp_pairs(const void *pa, const void *pb)
{
	const struct sortable *a = pa, *b = pb;
	int ra = rank_of(&a->p), rb = rank_of(&b->p);

	if (ra != rb)
		return ra - rb;
	if (ra == 2) {
		double la = fabs(log(a->p.ratio)), lb = fabs(log(b->p.ratio));

		if (la != lb)
			return la < lb ? 1 : -1;
	}
	return (a->idx > b->idx) - (a->idx < b->idx);
}

static void first_line(const char *s, char *buf, size_t size)
{
	snprintf(buf, size, "%.*s", (int)strcspn(s ? s : "?", "\n"), s ? s : "?");
}

/*
 * The smallest change the run could have seen: each interval's half-width
 * (results_pair.resolution), their median and the widest, said beside the
 * threshold; and how many benchmarks have an interval wider than the
 * threshold, which a change of the threshold's size could not take off 1.
 * Notes, not warnings: how wide an interval is depends on the machine's
 * noise, and a warning is for what a reviewer must act on.
 */
static int resolution_note(const struct results_comparison *c, struct sentences *notes)
{
	double *v = calloc(c->n + 1, sizeof(*v)), worst = -1.0;
	const char *worst_name = NULL;
	size_t n = 0, wide = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < c->n; i++) {
		const struct results_pair *p = &c->pairs[i];

		if (!isfinite(p->resolution))
			continue;
		v[n++] = p->resolution;
		if (p->resolution > worst) {
			worst = p->resolution;
			worst_name = p->name;
		}
		if (c->threshold > 0.0 && p->resolution > c->threshold)
			wide++;
	}
	if (n) {
		double mid;

		qsort(v, n, sizeof(*v), cmp_double);
		mid = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
		if (n == 1)
			strv_addf(notes,
				  "the smallest change this run could have seen (the half-width "
				  "of the %g%% interval): %.2g%%; the threshold is %g%%",
				  c->confidence * 100.0, worst * 100.0, c->threshold * 100.0);
		else
			strv_addf(notes,
				  "the smallest change this run could have seen (the half-width "
				  "of the %g%% interval): %.2g%% for the median benchmark, %.2g%% "
				  "at most (%s); the threshold is %g%%",
				  c->confidence * 100.0, mid * 100.0, worst * 100.0, worst_name,
				  c->threshold * 100.0);
	}
	if (wide)
		strv_addf(notes,
			  "%zu benchmark%s could not have shown a change of the threshold "
			  "(%g%%): %s interval%s wider than that; longer measurements "
			  "(--time) narrow %s",
			  wide, wide == 1 ? "" : "s", c->threshold * 100.0,
			  wide == 1 ? "its" : "their", wide == 1 ? " is" : "s are",
			  wide == 1 ? "it" : "them");
	free(v);
	return 0;
}

/*
 * Observed functions called a different number of times in base and head:
 * the program did other work, and each median is of another mix of calls
 * (a recursion's levels, a parser's short and long inputs). One note naming
 * the first few.
 */
static int calls_note(const struct results_comparison *c, struct sentences *notes)
{
	char list[256] = "";
	size_t n = 0, len = 0;

	for (size_t i = 0; i < c->n; i++) {
		const struct results_pair *p = &c->pairs[i];

		if (!observed(p) || !p->base || !p->head || !p->base->ok || !p->head->ok ||
		    !p->base->has_stats || !p->head->has_stats ||
		    p->base->stats.samples == p->head->stats.samples)
			continue;
		if (n++ < 3 && len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s %zu vs %zu",
						len ? ", " : "", p->name, p->base->stats.samples,
						p->head->stats.samples);
	}
	if (!n)
		return 0;
	strv_addf(notes,
		  "%zu observed function%s called a different number of times in base and head "
		  "(%s%s): the programs' work differed, and each median is taken over another "
		  "mix of calls",
		  n, n == 1 ? " was" : "s were", list, n > 3 ? ", ..." : "");
	return notes->nomem ? -ENOMEM : 0;
}

static int add_warnings(const struct results_file *base, const struct results_file *head,
			const struct results_index *bix, const struct results_index *hix,
			const struct results_comparison *c, struct sentences *w, struct sentences *notes)
{
	char *diff = NULL;
	char line[512];
	int r;

	for (size_t i = 0; i < c->n; i++) {
		const struct results_pair *p = &c->pairs[i];

		if (p->verdict == RESULTS_FAILED) {
			first_line(p->head->error, line, sizeof(line));
			strv_addf(w, "%s failed in head: %s", p->name, line);
		}
		if (p->head && p->head->ok && p->head->no_time && observed(p))
			strv_addf(w,
				  "%s is shorter than observe can resolve in head: its change is "
				  "not judged (`benchtrap run --symbol` times it without stops)",
				  p->name);
		else if (p->head && p->head->ok && p->head->no_time)
			strv_addf(w,
				  "%s measured no execution time in head: the compiler may have "
				  "removed its body (pass results through benchtrap_black_box())",
				  p->name);
		else if (p->base && p->base->ok && p->base->no_time && p->head && p->head->ok &&
			 observed(p))
			strv_addf(w,
				  "%s is shorter than observe can resolve in base: its change is "
				  "not judged",
				  p->name);
		else if (p->base && p->base->ok && p->base->no_time && p->head && p->head->ok)
			strv_addf(w,
				  "%s measured no execution time in base: its change is not "
				  "judged",
				  p->name);
	}
	r = calls_note(c, notes);
	if (r < 0)
		return r;
	for (size_t i = 0; i < head->n; i++)
		if (find(hix, &head->benches[i]) != &head->benches[i])
			strv_addf(w, "%s (%s) appears more than once in %s: the first is compared",
				  head->benches[i].name, head->benches[i].instrument, head->path);
	for (size_t i = 0; i < base->n; i++)
		if (find(bix, &base->benches[i]) != &base->benches[i])
			strv_addf(w, "%s (%s) appears more than once in %s: the first is compared",
				  base->benches[i].name, base->benches[i].instrument, base->path);

	if (base->partial)
		strv_addf(w,
			  "base is partial (%s): a benchmark it lacks was not measured, "
			  "not removed",
			  base->partial);
	if (head->partial)
		strv_addf(w,
			  "head is partial (%s): a benchmark it lacks was not measured, "
			  "not removed",
			  head->partial);
	r = results_env_diff(&base->env, &head->env, &diff);
	if (r < 0)
		return r;
	if (diff)
		strv_addf(w,
			  "base and head were measured in different environments: %s; "
			  "a change in time may come from the machine rather than the code",
			  diff);
	free(diff);
	if (!results_isolation_alike(base->isolation, head->isolation))
		strv_addf(w, "base ran with --isolation %s and head with --isolation %s",
			  base->isolation, head->isolation);
	if (c->paired && head->instrument && results_instrument_exact(head->instrument))
		strv_addf(notes, "base and head were measured in one run, each benchmark in a "
				 "fresh process of each build; exact counts need no pairing");
	else if (c->paired)
		strv_addf(notes, "base and head were measured side by side: samples alternated "
				 "between a child of each build, and walltime changes are the "
				 "median ratio of the pairs");
	if (c->counts[RESULTS_INCONCLUSIVE] && !c->same_build) {
		size_t k = c->counts[RESULTS_INCONCLUSIVE];

		if (c->paired)
			strv_addf(notes,
				  "%zu benchmark%s inconclusive: %s interval%s of the ratio "
				  "span%s both -%g%% and +%g%%, so the change may be a "
				  "regression, none or an improvement; longer measurements "
				  "(--time) narrow %s",
				  k, k == 1 ? " is" : "s are", k == 1 ? "its" : "their",
				  k == 1 ? "" : "s", k == 1 ? "s" : "", c->threshold * 100.0,
				  c->threshold * 100.0, k == 1 ? "it" : "them");
		else
			strv_addf(notes,
				  "%zu benchmark%s inconclusive: %s interval%s of the ratio "
				  "span%s both -%g%% and +%g%%, so the change may be a "
				  "regression, none or an improvement; `benchtrap compare "
				  "BASE_BINARY HEAD_BINARY` measures both builds side by side, "
				  "where the machine's changes of speed cancel out",
				  k, k == 1 ? " is" : "s are", k == 1 ? "its" : "their",
				  k == 1 ? "" : "s", k == 1 ? "s" : "", c->threshold * 100.0,
				  c->threshold * 100.0);
	}
	r = resolution_note(c, notes);
	if (r < 0)
		return r;
	/* The same build-id is said by the report on a line of its own. */
	if (base->env.build_id && head->env.build_id && !c->same_build &&
	    strcmp(base->env.build_id, head->env.build_id) != 0)
		strv_addf(notes, "the build-ids differ, as expected when the code changed");
	return w->nomem || notes->nomem ? -ENOMEM : 0;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* See results_comparison.same_build. */
static bool same_code(const struct results_file *base, const struct results_file *head,
		      const struct results_comparison *c)
{
	if (!base->env.build_id || !*base->env.build_id ||
	    !same_str(base->env.build_id, head->env.build_id) ||
	    !same_str(base->target, head->target))
		return false;
	for (size_t i = 0; i < c->n; i++) {
		const struct results_bench *b = c->pairs[i].base, *h = c->pairs[i].head;

		if (b && h && !same_str(b->build_id, h->build_id))
			return false;
	}
	return true;
}

int results_compare(const struct results_file *base, const struct results_file *head,
		    const struct results_compare_opts *o, struct results_comparison *ret)
{
	struct results_comparison c = { 0 };
	struct results_compare_opts def;
	struct sortable *s = NULL;
	struct sentences w = { 0 }, notes = { 0 };
	struct results_index bix = { 0 }, hix = { 0 };
	double *ratios = NULL;
	size_t n = 0;
	int r = 0;

	if (!o) {
		results_compare_opts_default(&def);
		o = &def;
	}
	if (!base || !head || !ret || !(o->threshold >= 0.0) || !(o->confidence > 0.0) ||
	    !(o->confidence < 1.0))
		return -EINVAL;
	c.paired = head->paired_base == base;
	s = calloc(base->n + head->n + 1, sizeof(*s));
	ratios = calloc(base->n + head->n + 1, sizeof(*ratios));
	if (!s || !ratios || results_index_build(&base, 1, &bix) < 0 ||
	    results_index_build(&head, 1, &hix) < 0) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < head->n; i++) {
		const struct results_bench *h = &head->benches[i];

		if (find(&hix, h) != h)
			continue;
		s[n].p.head = h;
		s[n].p.base = find(&bix, h);
		s[n].idx = n;
		n++;
	}
	for (size_t i = 0; i < base->n; i++) {
		const struct results_bench *b = &base->benches[i];

		if (find(&bix, b) != b || find(&hix, b))
			continue;
		s[n].p.base = b;
		s[n].idx = n;
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		struct results_pair *p = &s[i].p;
		const struct results_bench *any = p->head ? p->head : p->base;

		p->name = any->name;
		p->instrument = any->instrument;
		p->unit = any->unit;
		r = judge(p, o, c.paired);
		if (r < 0)
			goto out;
		p->resolution = NAN;
		if (p->has_interval && p->has_ratio && p->ratio > 0.0)
			p->resolution =
				fmax(p->ratio_high / p->ratio - 1.0, 1.0 - p->ratio_low / p->ratio);
		c.counts[p->verdict]++;
		if (p->base && p->head)
			c.nboth++;
		if (p->has_ratio && p->ratio > 0.0)
			ratios[c.ngeomean++] = p->ratio;
	}
	qsort(s, n, sizeof(*s), cmp_pairs);
	c.pairs = calloc(n + 1, sizeof(*c.pairs));
	if (!c.pairs) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		c.pairs[i] = s[i].p;
	c.n = n;
	if (c.ngeomean && stats_geomean(ratios, c.ngeomean, &c.geomean) == 0)
		c.has_geomean = true;
	c.threshold = o->threshold;
	c.confidence = o->confidence;
	c.same_build = same_code(base, head, &c);
	c.gate_failed = c.counts[RESULTS_FAILED] || (c.counts[RESULTS_REGRESSED] && !c.same_build);

	r = add_warnings(base, head, &bix, &hix, &c, &w, &notes);
	if (r < 0)
		goto out;
	c.warnings = w.sv.v;
	c.nwarnings = w.sv.n;
	c.notes = notes.sv.v;
	c.nnotes = notes.sv.n;
	w = (struct sentences){ 0 };
	notes = (struct sentences){ 0 };
	*ret = c;
	c = (struct results_comparison){ 0 };
out:
	results_index_clear(&bix);
	results_index_clear(&hix);
	free(c.pairs);
	strv_clear(&w.sv);
	strv_clear(&notes.sv);
	free(ratios);
	free(s);
	return r;
}

void results_comparison_clear(struct results_comparison *c)
{
	free(c->pairs);
	str_free_n(c->warnings, c->nwarnings);
	str_free_n(c->notes, c->nnotes);
	*c = (struct results_comparison){ 0 };
}
