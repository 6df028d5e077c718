/* SPDX-License-Identifier: MIT */
/*
 * What a Google Benchmark binary says, in its own formats: the list of its
 * instances, its JSON output, its log of batches; and the figures benchtrap
 * makes of them. Pure functions: the unit tests feed them text.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "stats/stats.h"
#include "util/array.h"
#include "util/strutil.h"
#include "gbench/gbench.h"

int gbench_parse_list(const char *text, size_t len, char ***ret_names, size_t *ret_n)
{
	return str_list_lines(text, len, NULL, ret_names, ret_n);
}

char *gbench_filter_regex(const char *name)
{
	/* Google Benchmark compiles the filter as a POSIX extended regex
	 * (or std::regex, ECMAScript): a backslash before any of these
	 * makes it literal in both. */
	return str_regex_exact(name, "\\^$.|?*+()[]{}");
}

void gbench_parse_batches(const char *log, const char *name, uint64_t *ret, size_t max,
			  size_t *ret_n)
{
	static const char tag[] = "Running ";
	size_t n = 0, nl = strlen(name);

	for (const char *line = log; line && *line;) {
		const char *end = strchr(line, '\n');
		const char *at = strstr(line, "LOG(2): ");

		if (at && (!end || at < end)) {
			at += strlen("LOG(2): ");
			if (!strncmp(at, tag, sizeof(tag) - 1) &&
			    !strncmp(at + sizeof(tag) - 1, name, nl) &&
			    !strncmp(at + sizeof(tag) - 1 + nl, " for ", 5)) {
				char *e;
				unsigned long long v =
					strtoull(at + sizeof(tag) - 1 + nl + 5, &e, 10);

				if (e != at + sizeof(tag) - 1 + nl + 5 && (*e == '\n' || !*e)) {
					if (n < max)
						ret[n] = v;
					n++;
				}
			}
		}
		line = end ? end + 1 : NULL;
	}
	*ret_n = n;
}

/* ---- JSON ------------------------------------------------------------------ */

static double unit_ns(const char *unit)
{
	if (!unit || !strcmp(unit, "ns"))
		return 1;
	if (!strcmp(unit, "us"))
		return 1e3;
	if (!strcmp(unit, "ms"))
		return 1e6;
	if (!strcmp(unit, "s"))
		return 1e9;
	return NAN;
}

/* The fields of a run that are not counters. */
static bool known_field(const char *k)
{
	static const char *const known[] = {
		"name",
		"family_index",
		"per_family_instance_index",
		"run_name",
		"run_type",
		"repetitions",
		"repetition_index",
		"threads",
		"iterations",
		"real_time",
		"cpu_time",
		"time_unit",
		"aggregate_name",
		"aggregate_unit",
		"error_occurred",
		"error_message",
		"label",
		"big_o",
		"rms",
		"complexity",
		NULL,
	};

	for (size_t i = 0; known[i]; i++)
		if (!strcmp(known[i], k))
			return true;
	return false;
}

void gbench_runs_free(struct gbench_run *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].error_message);
		free(v[i].label);
		for (size_t k = 0; k < v[i].ncounters; k++)
			free(v[i].counter_names[k]);
	}
	free(v);
}

static int bad(char **ret_error, const char *what, const char *detail)
{
	if (ret_error && asprintf(ret_error, "%s%s", what, detail) < 0)
		*ret_error = NULL;
	return -EINVAL;
}

/* The run of 'name' has 'field' 'v', which no run that ran has: -ERANGE,
 * *ret_error naming the field. */
static int bad_field(char **ret_error, const char *field, const json_t *v, const char *name)
{
	if (ret_error && asprintf(ret_error, "%s: %.10g in the run of %s, where a run that ran has %s",
				  field, json_number_value(v), name,
				  strcmp(field, "threads") && strcmp(field, "iterations")
					  ? "a time from 0"
					  : "a count from 1") < 0)
		*ret_error = NULL;
	return -ERANGE;
}

static int read_run(json_t *b, struct gbench_run *r, const char *bn, char **ret_error)
{
	json_t *it = json_object_get(b, "iterations");
	json_t *th = json_object_get(b, "threads");
	json_t *err = json_object_get(b, "error_occurred");
	json_t *msg = json_object_get(b, "error_message");
	double unit = unit_ns(json_string_value(json_object_get(b, "time_unit")));
	const char *k;
	json_t *v;

	r->error = json_is_true(err);
	if (json_is_string(msg)) {
		r->error_message = strdup(json_string_value(msg));
		if (!r->error_message)
			return -ENOMEM;
	}
	if (json_is_string(json_object_get(b, "label"))) {
		r->label = strdup(json_string_value(json_object_get(b, "label")));
		if (!r->label)
			return -ENOMEM;
	}
	if (r->error)
		return 0;
	if (!json_is_integer(it) || json_integer_value(it) < 0 ||
	    !json_is_number(json_object_get(b, "real_time")) || isnan(unit))
		return -EINVAL;
	/* What Google Benchmark never writes for a run that ran. */
	if (json_integer_value(it) == 0)
		return bad_field(ret_error, "iterations", json_object_get(b, "iterations"), bn);
	if (json_number_value(json_object_get(b, "real_time")) < 0)
		return bad_field(ret_error, "real_time", json_object_get(b, "real_time"), bn);
	if (json_number_value(json_object_get(b, "cpu_time")) < 0)
		return bad_field(ret_error, "cpu_time", json_object_get(b, "cpu_time"), bn);
	if (json_is_integer(th) && json_integer_value(th) < 1)
		return bad_field(ret_error, "threads", th, bn);
	r->iterations = (uint64_t)json_integer_value(it);
	r->threads = json_is_integer(th) && json_integer_value(th) > 0
			     ? (unsigned)json_integer_value(th)
			     : 1;
	r->real_ns = json_number_value(json_object_get(b, "real_time")) * unit;
	r->cpu_ns = json_is_number(json_object_get(b, "cpu_time"))
			    ? json_number_value(json_object_get(b, "cpu_time")) * unit
			    : NAN;
	json_object_foreach(b, k, v)
	{
		if (known_field(k) || !json_is_number(v) || r->ncounters == GBENCH_MAX_COUNTERS)
			continue;
		r->counter_names[r->ncounters] = strdup(k);
		if (!r->counter_names[r->ncounters])
			return -ENOMEM;
		r->counter_values[r->ncounters++] = json_number_value(v);
	}
	return 0;
}

int gbench_parse_json(const char *text, size_t len, const char *name, struct gbench_run **ret,
		      size_t *ret_n, char **ret_error)
{
	json_error_t je;
	json_t *doc = json_loadb(text, len, 0, &je), *benches;
	struct gbench_run *v = NULL;
	size_t n = 0, i;
	json_t *b;
	int r = 0;

	if (!doc)
		return bad(ret_error, "not JSON: ", je.text);
	benches = json_object_get(doc, "benchmarks");
	if (!json_is_array(benches)) {
		r = bad(ret_error, "no \"benchmarks\" array: not Google Benchmark's JSON", "");
		goto out;
	}
	v = calloc(json_array_size(benches) + 1, sizeof(*v));
	if (!v) {
		r = -ENOMEM;
		goto out;
	}
	json_array_foreach(benches, i, b)
	{
		const char *bn = json_string_value(json_object_get(b, "name"));
		const char *rt = json_string_value(json_object_get(b, "run_type"));

		if (!bn || strcmp(bn, name) || (rt && strcmp(rt, "iteration")))
			continue;
		r = read_run(b, &v[n], bn, ret_error);
		n++;
		if (r == -ERANGE) {
			r = -EINVAL;
			goto out;
		}
		if (r == -EINVAL) {
			r = bad(ret_error, "no iterations, real_time or time_unit in the run of ",
				bn);
			goto out;
		}
		if (r < 0)
			goto out;
	}
	*ret = v;
	*ret_n = n;
	v = NULL;
out:
	if (v)
		gbench_runs_free(v, n);
	json_decref(doc);
	return r;
}

/* ---- figures --------------------------------------------------------------- */

/* Counter names are few and shared by every result; results point into
 * this list until gbench_strings_clear(). */
static char **interned;
static size_t ninterned;

static const char *intern(const char *s)
{
	char **v;

	for (size_t i = 0; i < ninterned; i++)
		if (!strcmp(interned[i], s))
			return interned[i];
	v = realloc(interned, (ninterned + 1) * sizeof(*v));
	if (!v)
		return NULL;
	interned = v;
	interned[ninterned] = strdup(s);
	return interned[ninterned] ? interned[ninterned++] : NULL;
}

void gbench_strings_clear(void)
{
	str_free_n(interned, ninterned);
	interned = NULL;
	ninterned = 0;
}

static int add_counter(struct bench_result *res, const char *name, double *vals, size_t n)
{
	const char *in;

	if (res->ncounters == MEASURE_MAX_COUNTERS || n == 0)
		return 0;
	in = intern(name);
	if (!in)
		return -ENOMEM;
	res->counters[res->ncounters++] =
		(struct measure_counter){ .name = in, .value = stats_median(vals, n) };
	return 0;
}

int gbench_result_from_runs(const struct gbench_run *runs, size_t n, struct bench_result *res)
{
	struct stats_options so = stats_options_default();
	double *vals;
	int r = 0;

	for (size_t i = 0; i < n; i++) {
		if (runs[i].error) {
			res->status = BENCH_FAILED;
			if (asprintf(&res->error, "the benchmark reported an error: %s",
				     runs[i].error_message ? runs[i].error_message
							   : "(no message)") < 0)
				res->error = NULL;
			return res->error ? 0 : -ENOMEM;
		}
	}
	if (n == 0) {
		res->status = BENCH_FAILED;
		res->error = strdup("the binary reported no run of this benchmark");
		return res->error ? 0 : -ENOMEM;
	}
	res->samples = malloc(n * sizeof(*res->samples));
	res->reported_cpu_ns = malloc(n * sizeof(*res->reported_cpu_ns));
	vals = malloc(n * sizeof(*vals));
	if (!res->samples || !res->reported_cpu_ns || !vals) {
		free(vals);
		return -ENOMEM;
	}
	if (runs[0].label && !(res->reported_label = strdup(runs[0].label))) {
		free(vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		res->samples[i] = runs[i].real_ns;
		res->reported_cpu_ns[i] = runs[i].cpu_ns;
	}
	res->nsamples = n;
	res->iterations = runs[n - 1].iterations;
	res->calls = 0;
	for (size_t i = 0; i < n; i++)
		res->calls += runs[i].iterations;
	if (stats_summarize(res->samples, n, &so, &res->stats) < 0) {
		free(vals);
		res->status = BENCH_FAILED;
		res->error = strdup("no usable time in Google Benchmark's output");
		return res->error ? 0 : -ENOMEM;
	}
	res->value = res->stats.median;
	res->resolution = NAN;
	res->status = BENCH_OK;

	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!isnan(runs[i].cpu_ns))
			vals[k++] = runs[i].cpu_ns;
	r = add_counter(res, "cpu_time", vals, k);
	for (size_t c = 0; r == 0 && c < runs[0].ncounters; c++) {
		const char *cn = runs[0].counter_names[c];

		k = 0;
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < runs[i].ncounters; j++)
				if (!strcmp(runs[i].counter_names[j], cn))
					vals[k++] = runs[i].counter_values[j];
		r = add_counter(res, cn, vals, k);
	}
	free(vals);
	return r;
}

