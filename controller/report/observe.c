/* SPDX-License-Identifier: MIT */
/* The results file and the table of benchtrap observe (report.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "observe/observe.h"
#include "stats/stats.h"
#include "results/json.h"
#include "report/report.h"
#include "report/table.h"

static const char *end_name(enum observe_end e)
{
	switch (e) {
	case OBSERVE_EXITED:
		return "exited";
	case OBSERVE_KILLED:
		return "killed";
	case OBSERVE_DETACHED:
		return "detached";
	case OBSERVE_GONE:
		return "gone";
	}
	return "?";
}

/*
 * The stats of a results file (docs/results.md) over the calls: each call is
 * one sample of one iteration. observe's own figures (p10, p90, the ±) come
 * with them.
 */
static json_t *summary_json(const struct observe_summary *s)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I}", "median",
			 results_json_num(s->median), "mean", results_json_num(s->mean), "stddev",
			 results_json_num(s->stddev), "cv",
			 results_json_num(s->mean != 0 ? s->stddev / fabs(s->mean) : 0), "min",
			 results_json_num(s->min), "max", results_json_num(s->max), "q1",
			 results_json_num(s->q1), "q3", results_json_num(s->q3), "p10",
			 results_json_num(s->p10), "p90", results_json_num(s->p90), "samples",
			 (json_int_t)s->n, "iterations_per_sample", (json_int_t)1);
}

/* "ok" with a figure; otherwise why there is none (docs/observe.md). */
static const char *func_status(const struct observe_func_result *f)
{
	if (f->error)
		return "failed";
	if (f->skip)
		return "skipped";
	return f->calls ? "ok" : "no_calls";
}

/* What a function without a figure says in its diagnostics. */
static json_t *no_figure_json(const struct observe_func_result *f)
{
	char buf[160];

	if (f->error)
		return json_string(f->error);
	if (f->skip)
		snprintf(buf, sizeof(buf),
			 "skipped (--skip): its calls returned 0 at once and were not timed");
	else if (f->unmatched)
		snprintf(buf, sizeof(buf),
			 "no call returned: %" PRIu64
			 " call%s left it otherwise (longjmp, an exception, or an exit inside it)",
			 f->unmatched, f->unmatched == 1 ? "" : "s");
	else
		snprintf(buf, sizeof(buf), "never called while observed");
	return json_string(buf);
}

static json_t *func_json(const struct observe_result *res, const struct observe_func_result *f)
{
	json_t *hist = json_array(), *stats = json_null(), *raw = json_array(), *rounds;
	bool timed = !f->error && !f->skip && f->timed > 0;

	for (unsigned k = 0; k < OBSERVE_HIST_BUCKETS; k++) {
		if (!f->hist[k])
			continue;
		json_array_append_new(hist, json_pack("{s:f, s:f, s:I}", "ge_ns",
						      k ? ldexp(1.0, (int)k) : 0.0, "lt_ns",
						      ldexp(1.0, (int)k + 1), "count",
						      (json_int_t)f->hist[k]));
	}
	if (timed) {
		stats = summary_json(&f->sum);
		if (isfinite(f->ci_low) && isfinite(f->ci_high)) {
			json_object_set_new(stats, "ci_low", results_json_num(f->ci_low));
			json_object_set_new(stats, "ci_high", results_json_num(f->ci_high));
			json_object_set_new(stats, "confidence",
					    json_real(STATS_OPTIONS_DEFAULT.confidence));
		}
		json_object_set_new(stats, "uncertainty", results_json_num(f->uncertainty));
		json_object_set_new(stats, "calibration",
				    res->calibrated ? results_json_num(res->calib.latency)
						    : json_null());
		if (f->patched)
			json_object_set_new(stats, "overhead",
					    res->overhead_calibrated
						    ? results_json_num(res->calib.overhead)
						    : json_null());
		for (size_t i = 0; i < f->timed; i++)
			json_array_append_new(raw, results_json_num(f->ns[i]));
	}
	rounds = json_pack("{s:I, s:I}", "count", (json_int_t)f->rounds, "max_threads",
			   (json_int_t)f->round_max_threads);
	if (f->rounds) {
		json_object_set_new(rounds, "median", results_json_num(f->round_sum.median));
		json_object_set_new(rounds, "min", results_json_num(f->round_sum.min));
		json_object_set_new(rounds, "max", results_json_num(f->round_sum.max));
		json_object_set_new(rounds, "mean", results_json_num(f->round_sum.mean));
	}
	json_t *diags = json_array(), *b;

	if (!timed)
		json_array_append_new(diags, no_figure_json(f));
	if (f->note)
		json_array_append_new(diags, json_string(f->note));
	if (f->profile_note)
		json_array_append_new(diags, json_string(f->profile_note));
	b = json_pack("{s:s, s:o, s:s, s:[], s:s, s:s, s:o, s:s, s:o, s:b, s:o, s:o, s:o, s:I, "
		      "s:I, s:b, s:o, s:o}",
		      "name", f->name, "symbol", results_json_str(f->symbol), "object", f->object,
		      "args", "instrument", "observe", "unit", "ns", "value",
		      timed ? results_json_num(f->sum.median) : json_null(), "status",
		      func_status(f), "error", results_json_str(f->error), "no_time",
		      timed && f->unresolved, "stats", stats, "diagnostics", diags, "raw_samples",
		      raw, "calls", (json_int_t)f->calls, "unmatched_returns",
		      (json_int_t)f->unmatched, "skipped", f->skip, "histogram", hist,
		      "parallel_rounds", rounds);
	if (b && !f->error && !f->skip) {
		json_object_set_new(b, "timed_calls", json_integer((json_int_t)f->timed));
		json_object_set_new(b, "bounded_by",
				    json_string(f->patched ? "patch" : "breakpoints"));
		if (!f->patched && f->fallback)
			json_object_set_new(b, "not_patched", json_string(f->fallback));
	}
	if (b && (f->profile_folded || f->profile_svg))
		json_object_set_new(b, "flamegraph",
				    json_pack("{s:s?, s:s?}", "folded", f->profile_folded, "svg",
					      f->profile_svg));
	return b;
}

static json_t *doc_json(const struct report_observe *run)
{
	const struct observe_result *res = run->res;
	json_t *benches = json_array(), *argv = json_array(), *target = json_array();
	json_t *diags = json_array(), *calib = json_null(), *o;

	json_array_append_new(argv, json_string("benchtrap"));
	for (int i = 0; i < run->argc; i++)
		json_array_append_new(argv, json_string(run->argv[i]));
	for (size_t i = 0; run->target_argv && run->target_argv[i]; i++)
		json_array_append_new(target, json_string(run->target_argv[i]));
	for (size_t i = 0; i < res->nfuncs; i++)
		json_array_append_new(benches, func_json(res, &res->funcs[i]));
	for (size_t i = 0; i < res->ndiagnostics; i++)
		json_array_append_new(diags, json_string(res->diagnostics[i]));
	if (res->calibrated)
		calib = json_pack("{s:I, s:o, s:o, s:o, s:o}", "calls",
				  (json_int_t)res->calib.calls, "latency_ns",
				  results_json_num(res->calib.latency), "latency_p10_ns",
				  results_json_num(res->calib.latency_p10), "latency_p90_ns",
				  results_json_num(res->calib.latency_p90), "stop_ns",
				  results_json_num(res->calib.stop_median));
	if (res->overhead_calibrated) {
		if (!json_is_object(calib))
			calib = json_object();
		json_object_set_new(calib, "patched_calls",
				    json_integer((json_int_t)res->calib.patched_calls));
		json_object_set_new(calib, "overhead_ns", results_json_num(res->calib.overhead));
		json_object_set_new(calib, "overhead_p10_ns",
				    results_json_num(res->calib.overhead_p10));
		json_object_set_new(calib, "overhead_p90_ns",
				    results_json_num(res->calib.overhead_p90));
		json_object_set_new(calib, "overhead_uncertainty_ns",
				    results_json_num(res->calib.overhead_pm));
	}
	o = json_pack("{s:s, s:o, s:I, s:b, s:o, s:o, s:s, s:o, s:o, s:o, s:I, s:f, s:o}",
		      "instrument", "observe", "command", argv, "pid", (json_int_t)res->pid,
		      "attached", res->attached, "target", run->target_argv ? target : json_null(),
		      "duration_s", run->duration_s > 0 ? json_real(run->duration_s) : json_null(),
		      "end", end_name(res->end), "exit_code",
		      res->end == OBSERVE_EXITED ? json_integer(res->exit_code) : json_null(),
		      "signal",
		      res->end == OBSERVE_KILLED && sigabbrev_np(res->sig)
			      ? json_string(sigabbrev_np(res->sig))
			      : json_null(),
		      "crash", results_json_str(res->crash), "events", (json_int_t)res->events,
		      "observed_s", res->observed_s, "calibration", calib);
	if (!run->target_argv)
		json_decref(target);
	if (o && res->attached)
		json_object_set_new(o, "restored",
				    json_pack("{s:I, s:I}", "bytes_checked",
					      (json_int_t)res->restored_bytes, "mismatches",
					      (json_int_t)res->restored_mismatch));
	if (o)
		json_object_set_new(o, "diagnostics", diags);
	return json_pack("{s:s, s:o, s:o, s:o}", "schema", RESULTS_SCHEMA, "environment",
			 results_json_env(&run->env), "run", o, "benchmarks", benches);
}

int report_observe_json(const struct report_observe *run, FILE *f)
{
	return results_json_dump(doc_json(run), f);
}

int report_observe_json_file(const struct report_observe *run, const char *path)
{
	return results_json_dump_file(doc_json(run), path);
}

static void dur(double ns, char *buf, size_t size)
{
	stats_format_duration(ns, buf, size);
}

/* A function timed by breakpoints for lack of a patch, and why. */
static bool fell_back(const struct observe_func_result *fn)
{
	return !fn->patched && fn->fallback && !fn->error;
}

/*
 * The functions timed by breakpoints, not patched: one line each, or, for
 * a reason shared by more than three, one line for all of them with the
 * first three named (selecting every function of a large program puts
 * thousands past the agent's room).
 */
static void fallback_notes(FILE *f, const struct observe_result *res, bool md, bool color)
{
	bool *said = calloc(res->nfuncs + 1, sizeof(*said));

	for (size_t i = 0; i < res->nfuncs; i++) {
		const struct observe_func_result *fn = &res->funcs[i];
		size_t n = 0, shown = 0;

		if (!fell_back(fn) || (said && said[i]))
			continue;
		for (size_t k = i; said && k < res->nfuncs; k++)
			if (fell_back(&res->funcs[k]) &&
			    !strcmp(res->funcs[k].fallback, fn->fallback))
				n++;
		if (n <= 3) {
			fprintf(f, "%s%snote:%s %s: timed by breakpoints, not patched: %s\n",
				md ? "- " : "", color ? "\033[33m" : "", color ? "\033[0m" : "",
				fn->name, fn->fallback);
			if (said)
				said[i] = true;
			continue;
		}
		fprintf(f, "%s%snote:%s %zu functions timed by breakpoints, not patched: %s (",
			md ? "- " : "", color ? "\033[33m" : "", color ? "\033[0m" : "", n,
			fn->fallback);
		for (size_t k = i; k < res->nfuncs; k++) {
			if (!fell_back(&res->funcs[k]) ||
			    strcmp(res->funcs[k].fallback, fn->fallback))
				continue;
			said[k] = true;
			if (shown < 3)
				fprintf(f, "%s%s", shown ? ", " : "", res->funcs[k].name);
			shown++;
		}
		fprintf(f, ", and %zu more)\n", n - 3);
	}
	free(said);
}

static void print_histograms(const struct observe_result *res, FILE *f, bool md)
{
	bool first = true;

	for (size_t i = 0; i < res->nfuncs; i++) {
		const struct observe_func_result *fn = &res->funcs[i];
		bool any = false;

		if (fn->skip || !fn->timed)
			continue;
		if (first)
			fprintf(f, "\n%shistograms (calls per duration range):\n", md ? "" : "");
		first = false;
		fprintf(f, "%s%s:", md ? "- " : "  ", fn->name);
		for (unsigned k = 0; k < OBSERVE_HIST_BUCKETS; k++) {
			char lo[32], hi[32];

			if (!fn->hist[k])
				continue;
			if (k)
				dur(ldexp(1.0, (int)k), lo, sizeof(lo));
			else
				snprintf(lo, sizeof(lo), "0");
			dur(ldexp(1.0, (int)k + 1), hi, sizeof(hi));
			fprintf(f, "%s %s–%s: %" PRIu64, any ? "," : "", lo, hi, fn->hist[k]);
			any = true;
		}
		fputc('\n', f);
	}
}

void report_observe_table(const struct report_observe *run, FILE *f, enum report_format fmt,
			  bool color)
{
	static const char *const headers[] = { "FUNCTION", "CALLS", "MEDIAN",	 "MEAN",    "MIN",
					       "MAX",	   "±",	    "UNMATCHED", "PARALLEL" };
	static const enum table_align align[] = { TABLE_LEFT,  TABLE_RIGHT, TABLE_RIGHT,
						  TABLE_RIGHT, TABLE_RIGHT, TABLE_RIGHT,
						  TABLE_RIGHT, TABLE_RIGHT, TABLE_LEFT };
	const struct observe_result *res = run->res;
	bool md = fmt == REPORT_MARKDOWN;
	struct table *t = table_new(9, headers, align);

	if (!t)
		return;
	for (size_t i = 0; i < res->nfuncs; i++) {
		const struct observe_func_result *fn = &res->funcs[i];
		char calls[32], med[32] = "", mean[32] = "", mn[32] = "", mx[32] = "", unc[32] = "";
		char unm[32], par[96] = "";

		snprintf(calls, sizeof(calls), "%" PRIu64, fn->calls);
		snprintf(unm, sizeof(unm), "%" PRIu64, fn->unmatched);
		if (fn->error) {
			/* Nothing was seen: no count either (the note says why). */
			snprintf(calls, sizeof(calls), "?");
			snprintf(med, sizeof(med), "not armed");
		} else if (fn->skip) {
			snprintf(med, sizeof(med), "skipped");
		} else if (fn->timed && fn->unresolved) {
			/* Not a figure: noise within the ± (the note says); the
			 * mean of such calls is the noise's too. */
			snprintf(med, sizeof(med), "unresolved");
			dur(fn->sum.min, mn, sizeof(mn));
			dur(fn->sum.max, mx, sizeof(mx));
			dur(fn->uncertainty, unc, sizeof(unc));
		} else if (fn->timed) {
			dur(fn->sum.median, med, sizeof(med));
			dur(fn->sum.mean, mean, sizeof(mean));
			dur(fn->sum.min, mn, sizeof(mn));
			dur(fn->sum.max, mx, sizeof(mx));
			if (fn->patched ? res->overhead_calibrated : res->calibrated)
				dur(fn->uncertainty, unc, sizeof(unc));
			else
				snprintf(unc, sizeof(unc), "?");
		}
		if (fn->rounds) {
			char rm[32];

			dur(fn->round_sum.median, rm, sizeof(rm));
			snprintf(par, sizeof(par), "%zu rounds, median %s, up to %zu threads",
				 fn->rounds, rm, fn->round_max_threads);
		}
		table_add(t, (const char *const[]){ fn->name, calls, med, mean, mn, mx, unc, unm,
						    par });
	}
	if (md)
		table_print_markdown(t, f);
	else
		table_print_text(t, f);
	table_free(t);
	print_histograms(res, f, md);

	fputc('\n', f);
	if (res->calibrated) {
		char lat[32], p10[32], p90[32], stop[32];

		dur(res->calib.latency, lat, sizeof(lat));
		dur(res->calib.latency_p10, p10, sizeof(p10));
		dur(res->calib.latency_p90, p90, sizeof(p90));
		dur(res->calib.stop_median, stop, sizeof(stop));
		fprintf(f,
			"%sstops removed from every duration: measured per stop (median %s), plus "
			"%s per resume (calibrated on %zu calls of an empty function, p10 %s, p90 "
			"%s); ± is that spread over each call's resumes\n",
			md ? "- " : "", stop, lat, res->calib.calls, p10, p90);
	}
	if (res->overhead_calibrated) {
		char oh[32], p10[32], p90[32], pm[32];

		dur(res->calib.overhead, oh, sizeof(oh));
		dur(res->calib.overhead_pm, pm, sizeof(pm));
		dur(res->calib.overhead_p10, p10, sizeof(p10));
		dur(res->calib.overhead_p90, p90, sizeof(p90));
		fprintf(f,
			"%spatched calls: the agent's %s removed from every one (calibrated on "
			"%zu patched calls of an empty function, p10 %s, p90 %s); ± %s: half "
			"that spread, at least one reading of the clock\n",
			md ? "- " : "", oh, res->calib.patched_calls, p10, p90, pm);
	}
	fallback_notes(f, res, md, color);
	if (res->attached)
		fprintf(f,
			"%sdetached from %d: %zu code bytes at breakpoint addresses compared "
			"with the files, %zu differ\n",
			md ? "- " : "", (int)res->pid, res->restored_bytes, res->restored_mismatch);
	for (size_t i = 0; i < res->ndiagnostics; i++)
		fprintf(f, "%s%snote:%s %s\n", md ? "- " : "", color ? "\033[33m" : "",
			color ? "\033[0m" : "", res->diagnostics[i]);
	for (size_t i = 0; i < res->nfuncs; i++)
		if (res->funcs[i].note)
			fprintf(f, "%s%snote:%s %s: %s\n", md ? "- " : "", color ? "\033[33m" : "",
				color ? "\033[0m" : "", res->funcs[i].name, res->funcs[i].note);
	for (size_t i = 0; i < res->nfuncs; i++)
		if (res->funcs[i].profile_note)
			fprintf(f, "%s%snote:%s %s: %s\n", md ? "- " : "", color ? "\033[33m" : "",
				color ? "\033[0m" : "", res->funcs[i].name,
				res->funcs[i].profile_note);
}
