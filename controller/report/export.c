/* SPDX-License-Identifier: MIT */
/* A results file in other tools' formats: BMF, Google Benchmark, gab (report.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "results/json.h"
#include "report/report.h"

static bool has_ci(const struct results_bench *b)
{
	return b->has_stats && isfinite(b->stats.ci_low) && isfinite(b->stats.ci_high);
}

/* The Bencher measure: its built-in "latency" is nanoseconds; other
 * instruments name theirs by unit ("instructions", "bytes"). */
static const char *bmf_measure(const struct results_bench *b)
{
	return !strcmp(b->unit, "ns") ? "latency" : b->unit;
}

/*
 * Bencher Metric Format: { "NAME": { "MEASURE": { "value": V,
 * "lower_value": L, "upper_value": U } } }, bounds optional. The bounds are
 * the confidence interval of the median. Failed benchmarks have no value
 * and are left out.
 */
static json_t *export_bmf(const struct results_file *rf)
{
	json_t *doc = json_object();

	for (size_t i = 0; doc && i < rf->n; i++) {
		const struct results_bench *b = &rf->benches[i];
		json_t *bench, *m;

		if (!b->ok || !isfinite(b->value))
			continue;
		bench = json_object_get(doc, b->name);
		if (!bench) {
			bench = json_object();
			if (json_object_set_new(doc, b->name, bench) < 0)
				goto nomem;
		}
		m = json_pack("{s:f}", "value", b->value);
		if (!m)
			goto nomem;
		if (has_ci(b)) {
			json_object_set_new(m, "lower_value", json_real(b->stats.ci_low));
			json_object_set_new(m, "upper_value", json_real(b->stats.ci_high));
		}
		if (json_object_set_new(bench, bmf_measure(b), m) < 0)
			goto nomem;
	}
	return doc;
nomem:
	json_decref(doc);
	return NULL;
}

/*
 * Google Benchmark JSON (--benchmark_format=json), as its tools/compare.py
 * reads it: a "context" and "benchmarks" where each recorded sample is one
 * repetition (run_type "iteration", same name), so compare.py's U test
 * sees every sample, followed by the aggregates mean, median, stddev and cv
 * under NAME_mean etc. benchtrap measures wall time only: cpu_time repeats
 * real_time. A count (callgrind, memory) goes in real_time with time_unit
 * "ns" and is also given under its unit's name, with a label saying so.
 */
static json_t *gbench_entry(const struct results_bench *b, size_t family, double v, size_t reps,
			    size_t rep, const char *run_type, const char *aggregate)
{
	json_t *e;
	char name[1100];

	if (aggregate)
		snprintf(name, sizeof(name), "%s_%s", b->name, aggregate);
	else
		snprintf(name, sizeof(name), "%s", b->name);
	e = json_pack("{s:s, s:I, s:I, s:s, s:s, s:I, s:I, s:I, s:I, s:o, s:o, s:s}", "name", name,
		      "family_index", (json_int_t)family, "per_family_instance_index",
		      (json_int_t)0, "run_name", b->name, "run_type", run_type, "repetitions",
		      (json_int_t)reps, "repetition_index", (json_int_t)rep, "threads",
		      (json_int_t)(b->threads ? b->threads : 1), "iterations",
		      (json_int_t)(b->has_stats ? b->stats.iterations_per_sample : 1), "real_time",
		      results_json_num(v), "cpu_time", results_json_num(v), "time_unit", "ns");
	if (!e)
		return NULL;
	if (aggregate) {
		json_object_set_new(e, "aggregate_name", json_string(aggregate));
		json_object_set_new(e, "aggregate_unit",
				    json_string(!strcmp(aggregate, "cv") ? "percentage" : "time"));
	}
	if (strcmp(b->unit, "ns") != 0) {
		char label[128];

		json_object_set_new(e, b->unit, results_json_num(v));
		snprintf(label, sizeof(label), "%s per call (real_time holds the count)", b->unit);
		json_object_set_new(e, "label", json_string(label));
	}
	return e;
}

static json_t *export_gbench(const struct results_file *rf)
{
	const struct results_env *e = &rf->env;
	json_t *doc, *benches = json_array(), *x;

	if (!benches)
		return NULL;
	for (size_t i = 0; i < rf->n; i++) {
		const struct results_bench *b = &rf->benches[i];
		const struct results_stats *s = &b->stats;

		/* An observed function with no call to time has nothing to
		 * report, and did not fail. */
		if (b->status == RESULTS_STATUS_SKIPPED || b->status == RESULTS_STATUS_NO_CALLS)
			continue;
		if (!b->ok) {
			x = gbench_entry(b, i, 0.0, 1, 0, "iteration", NULL);
			if (x) {
				size_t len = b->error ? strcspn(b->error, "\n") : 0;
				char *msg = b->error ? strndup(b->error, len) : NULL;

				json_object_set_new(x, "error_occurred", json_true());
				json_object_set_new(x, "error_message",
						    json_string(msg ? msg : "failed"));
				free(msg);
			}
			if (!x || json_array_append_new(benches, x) < 0)
				goto nomem;
			continue;
		}
		if (!b->nraw) {
			x = gbench_entry(b, i, b->value, 1, 0, "iteration", NULL);
			if (!x || json_array_append_new(benches, x) < 0)
				goto nomem;
			continue;
		}
		for (size_t k = 0; k < b->nraw; k++) {
			x = gbench_entry(b, i, b->raw[k], b->nraw, k, "iteration", NULL);
			if (!x || json_array_append_new(benches, x) < 0)
				goto nomem;
		}
		const struct {
			const char *name;
			double v;
		} aggs[] = {
			{ "mean", s->mean },
			{ "median", s->median },
			{ "stddev", s->stddev },
			{ "cv", s->cv },
		};
		for (size_t k = 0; b->has_stats && k < sizeof(aggs) / sizeof(aggs[0]); k++) {
			if (!isfinite(aggs[k].v))
				continue;
			x = gbench_entry(b, i, aggs[k].v, b->nraw, 0, "aggregate", aggs[k].name);
			if (!x || json_array_append_new(benches, x) < 0)
				goto nomem;
		}
	}
	doc = json_pack("{s:{s:o, s:o, s:o, s:i, s:i, s:b, s:[], s:[], s:s, s:o, s:o}, s:o}",
			"context", "date", e->date ? json_string(e->date) : json_null(),
			"host_name", e->hostname ? json_string(e->hostname) : json_null(),
			"executable", e->binary ? json_string(e->binary) : json_null(), "num_cpus",
			e->cores > 0 ? e->cores : 0, "mhz_per_cpu", 0, "cpu_scaling_enabled",
			e->governor && strcmp(e->governor, "performance") != 0, "caches",
			"load_avg", "library_build_type", "release", "library_version",
			e->benchtrap ? json_string(e->benchtrap) : json_null(), "cpu",
			e->cpu ? json_string(e->cpu) : json_null(), "benchmarks", benches);
	return doc;
nomem:
	json_decref(benches);
	return NULL;
}

/*
 * github-action-benchmark, tool "customSmallerIsBetter": an array of
 * { "name", "unit", "value", "range", "extra" }; range and extra are
 * free text. range is the half-width of the confidence interval of the
 * median. Failed benchmarks have no value and are left out.
 */
static json_t *export_gab(const struct results_file *rf)
{
	json_t *doc = json_array();
	bool mixed = false;

	for (size_t i = 1; i < rf->n; i++)
		if (strcmp(rf->benches[i].instrument, rf->benches[0].instrument))
			mixed = true;
	for (size_t i = 0; doc && i < rf->n; i++) {
		const struct results_bench *b = &rf->benches[i];
		char name[1100], range[64] = "", extra[512];
		json_t *x;

		if (!b->ok || !isfinite(b->value))
			continue;
		if (mixed)
			snprintf(name, sizeof(name), "%s (%s)", b->name, b->instrument);
		else
			snprintf(name, sizeof(name), "%s", b->name);
		if (has_ci(b))
			snprintf(range, sizeof(range), "± %.6g",
				 (b->stats.ci_high - b->stats.ci_low) / 2.0);
		if (b->has_stats)
			snprintf(extra, sizeof(extra),
				 "%s: median of %zu samples × %llu iterations; %g%% CI %.6g … "
				 "%.6g %s",
				 b->instrument, b->stats.samples,
				 (unsigned long long)b->stats.iterations_per_sample,
				 isfinite(b->stats.confidence) ? b->stats.confidence * 100 : 95.0,
				 b->stats.ci_low, b->stats.ci_high, b->unit);
		else
			snprintf(extra, sizeof(extra), "%s", b->instrument);
		x = json_pack("{s:s, s:s, s:f}", "name", name, "unit", b->unit, "value", b->value);
		if (!x)
			goto nomem;
		if (range[0])
			json_object_set_new(x, "range", json_string(range));
		json_object_set_new(x, "extra", json_string(extra));
		if (json_array_append_new(doc, x) < 0)
			goto nomem;
	}
	return doc;
nomem:
	json_decref(doc);
	return NULL;
}

/* One row per format: adding one is a function and a row. */
static const struct {
	const char *name;
	json_t *(*build)(const struct results_file *rf);
} formats[] = {
	{ "bmf", export_bmf },
	{ "gbench", export_gbench },
	{ "gab", export_gab },
};

const char *report_export_name(size_t i)
{
	return i < sizeof(formats) / sizeof(formats[0]) ? formats[i].name : NULL;
}

int report_export(const struct results_file *rf, const char *format, FILE *f)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(format, formats[i].name))
			return results_json_dump(formats[i].build(rf), f);
	return -EINVAL;
}
