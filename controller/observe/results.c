// SPDX-License-Identifier: MIT
/* The figures of an observing session (session.h), and freeing it. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"
#include "util/strutil.h"
#include "arch/agent.h"
#include "observe/session.h"

/* ---- results ------------------------------------------------------------------- */

/* A duration for a note: "640 ns", "1.23 µs", "4.5 ms". */
static const char *ns_text(double ns, char *buf, size_t size)
{
	if (ns < 1e3)
		snprintf(buf, size, "%.3g ns", ns);
	else if (ns < 1e6)
		snprintf(buf, size, "%.3g µs", ns / 1e3);
	else
		snprintf(buf, size, "%.3g ms", ns / 1e6);
	return buf;
}

/* The stop accounting at controller time t: the last checkpoint at or
 * before it. */
static const struct checkpoint *checkpoint_at(const struct session *s, int64_t t)
{
	size_t lo = 0, hi = s->ncheckpoints;

	if (!hi || s->checkpoints[0].t > t)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->checkpoints[mid].t <= t)
			lo = mid;
		else
			hi = mid;
	}
	return &s->checkpoints[lo];
}

/* A patched function's calls from counter readings to the controller's
 * clock, with the stops that fell inside each (a breakpoint of another
 * function, a sample, a library loaded). */
static void fast_times(struct session *s, struct func *f)
{
	for (size_t i = 0; i < f->ncalls; i++) {
		struct observe_call *c = &f->calls[i];
		const struct checkpoint *a, *b;

		c->t_start = observe_fast_ns(s, (uint64_t)c->t_start);
		c->t_end = observe_fast_ns(s, (uint64_t)c->t_end);
		a = checkpoint_at(s, c->t_start);
		b = checkpoint_at(s, c->t_end);
		c->stopped_start = a ? a->stopped : 0;
		c->resumes_start = a ? a->resumes : 0;
		c->stopped_end = b ? b->stopped : c->stopped_start;
		c->resumes_end = b ? b->resumes : c->resumes_start;
	}
}

/* What the agent adds inside a patched call, from the empty function's
 * patched calls: their median, and half their 10–90 % spread as its ±. */
static void fast_calibrate(struct session *s)
{
	struct observe_calibration *cal = &s->res->calib;
	struct observe_summary sum;
	struct func *f;
	double *v;

	if (s->calib_fast_func == UINT32_MAX)
		return;
	f = &s->funcs[s->calib_fast_func];
	fast_times(s, f);
	if (!f->ncalls)
		return;
	v = malloc(f->ncalls * sizeof(*v));
	if (!v)
		return;
	for (size_t i = 0; i < f->ncalls; i++)
		v[i] = observe_corrected(f->calls[i].t_start, f->calls[i].t_end,
					 f->calls[i].stopped_end - f->calls[i].stopped_start,
					 f->calls[i].resumes_end - f->calls[i].resumes_start,
					 s->res->calibrated ? cal->latency : 0);
	if (observe_summarize(v, f->ncalls, &sum) == 0) {
		double read_ns = (double)s->tsc_read / (s->tsc_rate > 0 ? s->tsc_rate : 1);

		cal->patched_calls = f->ncalls;
		cal->overhead = sum.median;
		cal->overhead_p10 = sum.p10;
		cal->overhead_p90 = sum.p90;
		/* Half the spread, but never finer than one reading of the
		 * counter: durations come in its steps. */
		cal->overhead_pm = (sum.p90 - sum.p10) / 2;
		if (cal->overhead_pm < read_ns)
			cal->overhead_pm = read_ns;
		s->res->overhead_calibrated = true;
	}
	free(v);
}

static int func_result(struct session *s, struct func *f, struct observe_func_result *out)
{
	double lat = s->res->calibrated ? s->res->calib.latency : 0;
	double half = s->res->calibrated
			      ? (s->res->calib.latency_p90 - s->res->calib.latency_p10) / 2
			      : 0;
	double *res = NULL;
	uint64_t returned = 0;
	int r;

	out->name = f->name;
	out->symbol = f->symbol;
	out->object = f->object;
	f->name = f->symbol = f->object = NULL;
	out->addr = f->addr;
	out->skip = f->skip;
	out->unmatched = f->unmatched;
	out->ci_low = out->ci_high = NAN;
	out->error = f->unarmed;
	f->unarmed = NULL;
	out->patched = f->fast;
	out->fallback = f->fallback;
	f->fallback = NULL;
	if (f->fast) {
		uint32_t fi = (uint32_t)(f - s->funcs);
		uint64_t entered = observe_fast_entered(s, fi);
		uint64_t open;

		returned = observe_fast_returned(s, fi);
		open = entered > returned ? entered - returned : 0;

		/* Calls that began and never came back through the agent:
		 * left by a longjmp or an exception, or running at the
		 * exit; or still running when observing ended (a detach,
		 * --duration), and not counted. Returns whose record the
		 * ring lost are said as such. */
		if (s->t_stopped_observing)
			s->open_at_end += open;
		else
			f->unmatched += open;
		out->unmatched = f->unmatched;
		fast_times(s, f);
	}
	if (out->error)
		return 0; /* nothing of it was seen */
	if (f->skip) {
		out->calls = f->skipped;
		return 0;
	}
	/* A patched function's count is the agent's, which no full ring
	 * shortens: its records are the calls timed. */
	out->calls = f->fast && returned > f->ncalls ? returned : f->ncalls;
	out->timed = f->ncalls;
	if (!f->ncalls)
		return 0;
	out->ns = malloc(f->ncalls * sizeof(*out->ns));
	res = malloc(f->ncalls * sizeof(*res));
	if (!out->ns || !res) {
		free(res);
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->ncalls; i++) {
		const struct observe_call *c = &f->calls[i];

		out->ns[i] =
			observe_corrected(c->t_start, c->t_end, c->stopped_end - c->stopped_start,
					  c->resumes_end - c->resumes_start, lat);
		if (f->fast && s->res->overhead_calibrated)
			out->ns[i] = out->ns[i] > s->res->calib.overhead
					     ? out->ns[i] - s->res->calib.overhead
					     : 0;
		out->hist[observe_hist_bucket(out->ns[i])]++;
		res[i] = (double)(c->resumes_end - c->resumes_start);
	}
	{
		struct observe_summary rs;

		observe_summarize(res, f->ncalls, &rs);
		out->uncertainty = rs.median * half;
		if (f->fast && s->res->overhead_calibrated)
			out->uncertainty += s->res->calib.overhead_pm;
	}
	/* The durations stay in the order of the calls (the results'
	 * raw_samples); the summary sorts a copy. */
	memcpy(res, out->ns, f->ncalls * sizeof(*res));
	observe_summarize(res, f->ncalls, &out->sum);
	r = stats_bootstrap_median(res, f->ncalls, NULL, &out->ci_low, &out->ci_high);
	free(res);
	if (r == -ENOMEM)
		return r;
	if ((f->fast ? s->res->overhead_calibrated : s->res->calibrated) &&
	    observe_unresolved(out->sum.median, out->uncertainty)) {
		char u[32], m[32];

		out->unresolved = true;
		if (asprintf(&out->note,
			     "calls shorter than observe can resolve (±%s): their median, %s, is "
			     "within %d ± of zero, %s; `benchtrap run --symbol` "
			     "times a function in a loop of calls, with nothing inside them",
			     ns_text(out->uncertainty, u, sizeof(u)),
			     ns_text(out->sum.median, m, sizeof(m)), OBSERVE_UNRESOLVED_FACTOR,
			     f->fast ? "the noise of the clock and of the agent's own cost"
				     : "the stops' noise") < 0) {
			out->note = NULL;
			return -ENOMEM;
		}
	}
	r = observe_rounds(f->calls, f->ncalls, lat, &out->round_ns, &out->rounds,
			   &out->round_max_threads);
	if (r < 0)
		return r;
	return observe_summarize(out->round_ns, out->rounds, &out->round_sum);
}

int observe_build_results(struct session *s, const char *const *pats, size_t npats)
{
	struct observe_result *res = s->res;
	int r = 0;

	res->funcs = calloc(s->nfuncs ? s->nfuncs : 1, sizeof(*res->funcs));
	if (!res->funcs)
		return -ENOMEM;
	fast_calibrate(s);
	res->patched = s->npatched > 0;
	if (!res->calibrated && s->calib_page) {
		size_t late = 0;

		for (size_t i = 0; i < s->nfuncs; i++)
			late += !s->funcs[i].fast && !s->funcs[i].calib && !s->funcs[i].skip &&
				s->funcs[i].ncalls > 0;
		/* patched at the start, so calibrated for patched calls only */
		if (late && res->overhead_calibrated)
			observe_diagnose(s,
					 "%zu function%s timed by breakpoints %s armed after the "
					 "calibration (in a library loaded later): the latency of "
					 "their stops is not removed, and their ± is unknown",
					 late, late == 1 ? "" : "s", late == 1 ? "was" : "were");
	}
	if (s->agent_map) {
		uint64_t lost, broken, recovered;

		observe_fast_counters(s, &lost, &broken, &recovered);
		if (lost)
			observe_diagnose(
				s,
				"%" PRIu64 " call%s of patched functions %s not timed: more "
				"than %u threads, more than %u calls open in one thread, or "
				"a signal handler's call while the agent ran",
				lost, lost == 1 ? "" : "s", lost == 1 ? "was" : "were",
				AGENT_THREADS, AGENT_DEPTH);
		if (broken)
			observe_diagnose(s,
					 "%" PRIu64 " tail call%s of patched functions found no "
					 "open call to return through and %s not timed",
					 broken, broken == 1 ? "" : "s",
					 broken == 1 ? "was" : "were");
		if (recovered)
			observe_diagnose(
				s,
				"%" PRIu64 " return%s came through a call the agent had "
				"taken for left behind (another stack's, a signal handler's): "
				"%s not timed",
				recovered, recovered == 1 ? "" : "s",
				recovered == 1 ? "it was" : "they were");
		if (s->ring_lost)
			observe_diagnose(s,
					 "%" PRIu64 " patched call%s %s lost: the agent's ring "
					 "was overwritten before benchtrap read it",
					 s->ring_lost, s->ring_lost == 1 ? "" : "s",
					 s->ring_lost == 1 ? "was" : "were");
	}
	for (size_t i = 0; i < s->nfuncs && r == 0; i++) {
		if (s->funcs[i].calib)
			continue;
		r = func_result(s, &s->funcs[i], &res->funcs[res->nfuncs]);
		if (r == 0 && s->o->profile_dir)
			r = observe_profile_write(s, &s->funcs[i], res->nfuncs,
						  &res->funcs[res->nfuncs]);
		res->nfuncs++;
	}
	for (size_t i = 0, said = 0; i < res->nfuncs && r == 0; i++) {
		const struct observe_func_result *fr = &res->funcs[i];

		if (fr->skip || fr->error || fr->timed >= fr->calls)
			continue;
		if (said++ < 8)
			observe_diagnose(s,
					 "%s: %" PRIu64 " of its %" PRIu64 " calls timed (%.1f%%), "
					 "the others' records lost with the ring; its count is "
					 "whole",
					 fr->name, fr->timed, fr->calls,
					 100.0 * (double)fr->timed / (double)fr->calls);
	}
	for (size_t i = 0; i < npats; i++)
		if (!s->pattern_hit[i])
			observe_diagnose(
				s,
				"no function matched '%s' in the program or the libraries it "
				"loaded",
				pats[i]);
	if (s->open_at_end)
		observe_diagnose(
			s, "%" PRIu64 " call%s still running when observing ended %s not counted",
			s->open_at_end, s->open_at_end == 1 ? " was" : "s were",
			s->open_at_end == 1 ? "and is" : "and are");
	if (res->attached && res->restored_mismatch)
		observe_diagnose(
			s, "after detaching, %zu breakpoint address%s not hold the file's code",
			res->restored_mismatch, res->restored_mismatch == 1 ? " does" : "es do");
	return r;
}

void observe_result_clear(struct observe_result *r)
{
	for (size_t i = 0; i < r->nfuncs; i++) {
		free(r->funcs[i].name);
		free(r->funcs[i].symbol);
		free(r->funcs[i].object);
		free(r->funcs[i].error);
		free(r->funcs[i].fallback);
		free(r->funcs[i].ns);
		free(r->funcs[i].round_ns);
		free(r->funcs[i].note);
		free(r->funcs[i].profile_folded);
		free(r->funcs[i].profile_svg);
		free(r->funcs[i].profile_note);
	}
	free(r->funcs);
	str_free_n(r->diagnostics, r->ndiagnostics);
	free(r->crash);
	memset(r, 0, sizeof(*r));
}

void observe_session_free(struct session *s)
{
	for (size_t i = 0; i < s->nfuncs; i++) {
		free(s->funcs[i].name);
		free(s->funcs[i].symbol);
		free(s->funcs[i].object);
		free(s->funcs[i].unarmed);
		free(s->funcs[i].fallback);
		free(s->funcs[i].calls);
	}
	observe_profile_free(s);
	free(s->funcs);
	free(s->entries);
	for (size_t i = 0; i < s->nobjs; i++) {
		free(s->objs[i].path);
		free(s->objs[i].jt);
		elf_close(s->objs[i].ef);
	}
	free(s->objs);
	for (size_t i = 0; i < s->nstacks; i++)
		observe_stack_free(&s->stacks[i]);
	free(s->stacks);
	free(s->pattern_hit);
	free(s->deferred);
	free(s->touched);
	observe_fast_free(s);
}
