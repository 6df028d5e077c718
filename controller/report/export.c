/* SPDX-License-Identifier: MIT */
/* A results file in other tools' formats: BMF, Google Benchmark, gab (report.h). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "results/instrument.h"
#include "results/json.h"
#include "stats/stats.h"
#include "report/report.h"

static bool has_ci(const struct results_bench *b)
{
	return b->has_stats && isfinite(b->stats.ci_low) && isfinite(b->stats.ci_high);
}

/*
 * Whether benchmark 'b' is exported, in every format alike: only with a
 * figure, and not when it measured no time (walltime: not told from an
 * empty function; observe: unresolved; callgrind, perf: almost no
 * instructions). Such a figure is noise: a median of 0 with an interval
 * below zero, or an observed 1337 ns the tool itself calls unresolved,
 * would hand Bencher or a threshold a precision the measurement lacks.
 * Counts what it leaves out in 'notes'.
 */
static bool exported(const struct results_bench *b, struct report_export_notes *notes)
{
	if (b->status == RESULTS_STATUS_FAILED)
		notes->failed++;
	if (!b->ok || !isfinite(b->value))
		return false;
	/* A time not above zero is no time whatever the file says (a writer
	 * that set no "no_time"); a count of zero is a measurement. */
	if (b->no_time || (!strcmp(b->unit, "ns") && !(b->value > 0.0))) {
		notes->no_time++;
		return false;
	}
	notes->exported++;
	return true;
}

/* ---- names ----------------------------------------------------------------- */

/* Whether the benchmarks of 'rf' were measured by more than one instrument
 * (a merged file): gbench and gab names then carry the instrument. */
static bool mixed_instruments(const struct results_file *rf)
{
	for (size_t i = 1; i < rf->n; i++)
		if (strcmp(rf->benches[i].instrument, rf->benches[0].instrument))
			return true;
	return false;
}

/* 64-bit FNV-1a of 's'. */
static uint64_t fnv1a(const char *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

char *report_export_fit_name(const char *name, size_t limit)
{
	size_t len = strlen(name), keep;
	char *out;

	if (len <= limit || limit < REPORT_EXPORT_HASH_LEN + 1)
		return strdup(name);
	/* A prefix cut on a character boundary, then '~' and 16 hex digits of
	 * the whole name's hash: two names that share the prefix stay apart. */
	keep = limit - REPORT_EXPORT_HASH_LEN;
	while (keep > 0 && ((unsigned char)name[keep] & 0xc0) == 0x80)
		keep--;
	out = malloc(keep + REPORT_EXPORT_HASH_LEN + 1);
	if (out)
		snprintf(out, keep + REPORT_EXPORT_HASH_LEN + 1, "%.*s~%016llx", (int)keep, name,
			 (unsigned long long)fnv1a(name));
	return out;
}

/*
 * The name benchmark 'b' gets in an export: its own, with " (INSTRUMENT)"
 * when 'mixed', shortened by report_export_fit_name() to 'limit' bytes (0:
 * no limit). Counts the shortened ones in 'notes'. NULL when out of memory.
 */
static char *export_name(const struct results_bench *b, bool mixed, size_t limit,
			 struct report_export_notes *notes)
{
	char *full, *fit;

	if (mixed ? asprintf(&full, "%s (%s)", b->name, b->instrument) < 0
		  : !(full = strdup(b->name)))
		return NULL;
	if (!limit || strlen(full) <= limit)
		return full;
	fit = report_export_fit_name(full, limit);
	free(full);
	if (fit) {
		notes->shortened++;
		notes->limit = limit;
	}
	return fit;
}

/* ---- bmf ------------------------------------------------------------------- */

/* Bencher's longest benchmark name (it refuses a file holding a longer one);
 * it counts characters, so bytes are on the safe side. */
#define BMF_NAME_MAX 1024

/* The Bencher measure of each instrument. BMF has no field for units: Bencher
 * creates a measure it does not have from its key, with the units of its
 * built-in measure of that slug, else "Measure (units)". So walltime and
 * observe's timed calls go to "latency" (nanoseconds), callgrind to
 * "instructions" (instructions), memory's bytes allocated per call to
 * "total-bytes" (Bencher's "Total bytes", bytes (B), as for DHAT's bytes
 * allocated); perf apart from callgrind ("perf-instructions", no built-in)
 * since both count instructions and a merged file may hold both for one
 * benchmark. */
static const char *bmf_measure(const struct results_bench *b, char *buf, size_t size)
{
	static const char *const measures[RESULTS_N_INSTRUMENTS] = {
		[RESULTS_WALLTIME] = "latency",
		[RESULTS_OBSERVE] = "latency",
		[RESULTS_CALLGRIND] = "instructions",
		[RESULTS_PERF] = "perf-instructions",
		[RESULTS_MEMORY] = "total-bytes",
	};
	const struct results_instrument *in = results_instrument_find(b->instrument);

	if (in && measures[in->id])
		return measures[in->id];
	snprintf(buf, size, "%s-%s", b->instrument, b->unit);
	return buf;
}

/*
 * Bencher Metric Format: { "NAME": { "MEASURE": { "value": V,
 * "lower_value": L, "upper_value": U } } }, bounds optional. The bounds are
 * the confidence interval of the median, widened by observe's ± (the
 * uncertainty of each call's figure). Only exported() benchmarks.
 */
static json_t *export_bmf(const struct results_file *rf, struct report_export_notes *notes)
{
	json_t *doc = json_object();

	for (size_t i = 0; doc && i < rf->n; i++) {
		const struct results_bench *b = &rf->benches[i];
		char buf[64], *name;
		json_t *bench, *m;

		if (!exported(b, notes))
			continue;
		name = export_name(b, false, BMF_NAME_MAX, notes);
		if (!name)
			goto nomem;
		bench = json_object_get(doc, name);
		if (!bench) {
			bench = json_object();
			if (json_object_set_new(doc, name, bench) < 0) {
				free(name);
				goto nomem;
			}
		}
		free(name);
		m = json_pack("{s:o}", "value", results_json_num(b->value));
		if (!m)
			goto nomem;
		if (has_ci(b)) {
			double lo = b->stats.ci_low, hi = b->stats.ci_high;

			/* observe's durations are quantized (one reading of the
			 * clock), and every call's figure carries the ± of the
			 * stops removed: calls of one length have an interval of
			 * no width but are as uncertain as that. */
			if (isfinite(b->stats.uncertainty) && b->stats.uncertainty > 0) {
				lo = fmin(lo, b->value) - b->stats.uncertainty;
				hi = fmax(hi, b->value) + b->stats.uncertainty;
			}
			json_object_set_new(m, "lower_value", results_json_num(lo));
			json_object_set_new(m, "upper_value", results_json_num(hi));
		}
		if (json_object_set_new(bench, bmf_measure(b, buf, sizeof(buf)), m) < 0)
			goto nomem;
	}
	return doc;
nomem:
	json_decref(doc);
	return NULL;
}

/* ---- gbench ---------------------------------------------------------------- */

/*
 * Google Benchmark JSON (--benchmark_format=json), as its tools/compare.py
 * reads it. compare.py's OVERALL_GEOMEAN is the geometric mean of every
 * row that is not an aggregate, so each benchmark is one "iteration" row
 * holding its median (benchtrap's headline) and weighs once, as the
 * benchmarks of a Google Benchmark run with one repetition count do; rows
 * of each sample would weigh a benchmark by its number of samples. The
 * aggregates mean, median, stddev and cv over the samples follow. As
 * Google Benchmark writes a run of N repetitions, every row has
 * "repetitions" N (the number of samples) and the aggregates' "iterations"
 * is N too (statistics.cc: an aggregate is over N measurements); the
 * iteration row's "iterations" is the calls per sample. Only exported()
 * benchmarks: a failed one would be a row with real_time 0, which
 * compare.py reads as a -100% change. A count of none (memory: 0 bytes)
 * is left out of benchtrap compare's geometric mean and would make
 * compare.py's zero: it has the aggregates only.
 *
 * cpu_time: a Google Benchmark binary's walltime run ("gbench" in the
 * results file) carries the cpu time it reported for each repetition, so
 * the rows hold its median and the aggregates over it; with its label,
 * and its counters (bytes_per_second, items_per_second, the user's: their
 * medians over the repetitions) in the iteration and median rows, as the
 * binary wrote them. benchtrap's own walltime measures wall time only:
 * cpu_time repeats real_time. A count (callgrind, memory) goes in
 * real_time with time_unit "ns" and is also given under its unit's name,
 * with a label saying so.
 */

/* The figures of one row: real_time, cpu_time, and whether the binary's
 * counters go in it (their medians: the iteration and median rows). */
struct gbench_row {
	double real, cpu;
	bool counters;
};

static json_t *gbench_entry(const struct results_bench *b, const char *name, size_t family,
			    const struct gbench_row *row, size_t reps, const char *aggregate)
{
	json_t *e;
	json_int_t iters;
	char *full = NULL;

	if (aggregate && asprintf(&full, "%s_%s", name, aggregate) < 0)
		return NULL;
	e = json_pack("{s:s, s:I, s:I, s:s, s:s, s:I}", "name", aggregate ? full : name,
		      "family_index", (json_int_t)family, "per_family_instance_index",
		      (json_int_t)0, "run_name", name, "run_type",
		      aggregate ? "aggregate" : "iteration", "repetitions", (json_int_t)reps);
	free(full);
	if (!e)
		return NULL;
	if (!aggregate)
		json_object_set_new(e, "repetition_index", json_integer(0));
	json_object_set_new(e, "threads", json_integer(b->threads ? b->threads : 1));
	if (aggregate) {
		json_object_set_new(e, "aggregate_name", json_string(aggregate));
		json_object_set_new(e, "aggregate_unit",
				    json_string(!strcmp(aggregate, "cv") ? "percentage" : "time"));
	}
	/* An aggregate is over 'reps' runs; a run is of the calls per sample. */
	iters = aggregate      ? (json_int_t)reps
		: b->has_stats ? (json_int_t)b->stats.iterations_per_sample
			       : 1;
	json_object_set_new(e, "iterations", json_integer(iters));
	json_object_set_new(e, "real_time", results_json_num(row->real));
	json_object_set_new(e, "cpu_time", results_json_num(row->cpu));
	json_object_set_new(e, "time_unit", json_string("ns"));
	if (b->ok && strcmp(b->unit, "ns") != 0) {
		char label[128];

		json_object_set_new(e, b->unit, results_json_num(row->real));
		snprintf(label, sizeof(label), "%s per call (real_time holds the count)", b->unit);
		json_object_set_new(e, "label", json_string(label));
	} else if (b->gbench_label) {
		json_object_set_new(e, "label", json_string(b->gbench_label));
	}
	for (size_t i = 0; b->gbench && row->counters && i < b->ncounters; i++) {
		const char *k = b->counter_names[i];

		/* cpu_time is the row's own; a counter is never named as a
		 * field of the row (the binary's JSON could not have it). */
		if (!strcmp(k, "cpu_time") || json_object_get(e, k) ||
		    !isfinite(b->counter_values[i]))
			continue;
		json_object_set_new(e, k, json_real(b->counter_values[i]));
	}
	return e;
}

/* The value of b's counter 'name', or NAN. */
static double gbench_counter(const struct results_bench *b, const char *name)
{
	for (size_t i = 0; i < b->ncounters; i++)
		if (!strcmp(b->counter_names[i], name))
			return b->counter_values[i];
	return NAN;
}

static int gbench_append(json_t *benches, json_t *x)
{
	return x && json_array_append_new(benches, x) == 0 ? 0 : -ENOMEM;
}

static int gbench_bench(json_t *benches, const struct results_bench *b, const char *name,
			size_t family)
{
	const struct results_stats *s = &b->stats;
	size_t reps = b->has_stats && s->samples ? s->samples : b->nraw ? b->nraw : 1;
	struct stats_summary cpu = { .mean = NAN, .median = NAN, .stddev = NAN, .cv = NAN };
	bool reported = b->gbench && b->ngbench_cpu;
	double cpu_median = b->gbench ? gbench_counter(b, "cpu_time") : NAN;
	int r = 0;

	/* The cpu times the binary reported, summarized as the real times
	 * were (NANs, repetitions without one, left out). */
	if (reported) {
		struct stats_options so = stats_options_default();
		double *v = malloc(b->ngbench_cpu * sizeof(*v));
		size_t n = 0;

		if (!v)
			return -ENOMEM;
		for (size_t i = 0; i < b->ngbench_cpu; i++)
			if (isfinite(b->gbench_cpu[i]))
				v[n++] = b->gbench_cpu[i];
		r = n ? stats_summarize(v, n, &so, &cpu) : -EINVAL;
		free(v);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			reported = false;
		if (reported && !isfinite(cpu_median))
			cpu_median = cpu.median;
	}
	const struct gbench_row row = { b->value, isfinite(cpu_median) ? cpu_median : b->value,
					true };

	if (b->value > 0.0 &&
	    gbench_append(benches, gbench_entry(b, name, family, &row, reps, NULL)) < 0)
		return -ENOMEM;
	const struct {
		const char *name;
		double real, cpu;
	} aggs[] = {
		{ "mean", s->mean, cpu.mean },
		{ "median", s->median, cpu.median },
		{ "stddev", s->stddev, cpu.stddev },
		{ "cv", s->cv, cpu.cv },
	};
	for (size_t k = 0; b->has_stats && k < sizeof(aggs) / sizeof(aggs[0]); k++) {
		struct gbench_row agg = { aggs[k].real, reported ? aggs[k].cpu : aggs[k].real,
					  !strcmp(aggs[k].name, "median") };

		if (!isfinite(aggs[k].real))
			continue;
		if (!isfinite(agg.cpu))
			agg.cpu = agg.real;
		if (gbench_append(benches,
				  gbench_entry(b, name, family, &agg, reps, aggs[k].name)) < 0)
			return -ENOMEM;
	}
	return 0;
}

static json_t *export_gbench(const struct results_file *rf, struct report_export_notes *notes)
{
	const struct results_env *e = &rf->env;
	json_t *benches = json_array();
	bool mixed = mixed_instruments(rf);

	if (!benches)
		return NULL;
	for (size_t i = 0; i < rf->n; i++) {
		char *name;
		int r;

		if (!exported(&rf->benches[i], notes))
			continue;
		name = export_name(&rf->benches[i], mixed, 0, notes);
		r = name ? gbench_bench(benches, &rf->benches[i], name, i) : -ENOMEM;
		free(name);
		if (r < 0) {
			json_decref(benches);
			return NULL;
		}
	}
	return json_pack(
		"{s:{s:o, s:o, s:o, s:i, s:i, s:b, s:[], s:[], s:s, s:o, s:o, s:s}, "
		"s:o}",
		"context", "date", results_json_str(e->date), "host_name",
		results_json_str(e->hostname), "executable", results_json_str(e->binary),
		"num_cpus", e->cores > 0 ? e->cores : 0, "mhz_per_cpu", 0, "cpu_scaling_enabled",
		e->governor && strcmp(e->governor, "performance") != 0, "caches", "load_avg",
		"library_build_type", "release", "library_version", results_json_str(e->benchtrap),
		"cpu", results_json_str(e->cpu), "benchtrap_rows",
		"one iteration row per benchmark, its median; aggregates over its "
		"samples, repetitions and the aggregates' iterations the number of samples; "
		"no rows for a benchmark that failed or measured no time; cpu_time the "
		"binary's own for a Google Benchmark binary, else real_time",
		"benchmarks", benches);
}

/* ---- gab ------------------------------------------------------------------- */

/* 'v' as text in 'buf' (32 bytes): a whole number with all its digits (a
 * count), others with six significant ones. */
static const char *text_num(char *buf, double v)
{
	if (isfinite(v) && v == floor(v) && fabs(v) <= RESULTS_JSON_EXACT_MAX)
		snprintf(buf, 32, "%.0f", v);
	else
		snprintf(buf, 32, "%.6g", v);
	return buf;
}

/*
 * github-action-benchmark, tool "customSmallerIsBetter": an array of
 * { "name", "unit", "value", "range", "extra" }; range and extra are
 * free text. range is the half-width of the confidence interval of the
 * median. Only exported() benchmarks.
 */
static json_t *export_gab(const struct results_file *rf, struct report_export_notes *notes)
{
	json_t *doc = json_array();
	bool mixed = mixed_instruments(rf);

	for (size_t i = 0; doc && i < rf->n; i++) {
		const struct results_bench *b = &rf->benches[i];
		char range[64] = "", extra[512], lo[32], hi[32], *name;
		json_t *x;

		if (!exported(b, notes))
			continue;
		if (has_ci(b))
			snprintf(range, sizeof(range), "± %s",
				 text_num(lo, (b->stats.ci_high - b->stats.ci_low) / 2.0));
		if (b->has_stats)
			snprintf(extra, sizeof(extra),
				 "%s: median of %zu samples × %llu iterations; %g%% CI %s … %s %s",
				 b->instrument, b->stats.samples,
				 (unsigned long long)b->stats.iterations_per_sample,
				 isfinite(b->stats.confidence) ? b->stats.confidence * 100 : 95.0,
				 text_num(lo, b->stats.ci_low), text_num(hi, b->stats.ci_high),
				 b->unit);
		else
			snprintf(extra, sizeof(extra), "%s", b->instrument);
		name = export_name(b, mixed, 0, notes);
		x = name ? json_pack("{s:s, s:s, s:o}", "name", name, "unit", b->unit, "value",
				     results_json_num(b->value))
			 : NULL;
		free(name);
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
	json_t *(*build)(const struct results_file *rf, struct report_export_notes *notes);
} formats[] = {
	{ "bmf", export_bmf },
	{ "gbench", export_gbench },
	{ "gab", export_gab },
};

const char *report_export_name(size_t i)
{
	return i < sizeof(formats) / sizeof(formats[0]) ? formats[i].name : NULL;
}

int report_export(const struct results_file *rf, const char *format, FILE *f,
		  struct report_export_notes *ret_notes)
{
	struct report_export_notes notes = { 0 };
	int r;

	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		if (strcmp(format, formats[i].name) != 0)
			continue;
		r = results_json_dump(formats[i].build(rf, &notes), f);
		if (r == 0 && ret_notes)
			*ret_notes = notes;
		return r;
	}
	return -EINVAL;
}
