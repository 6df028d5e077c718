/* SPDX-License-Identifier: MIT */
/* Reading results files into plain structs, with precise errors (results.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "util/strutil.h"
#include "results/internal.h"
#include "results/results.h"
#include "results/json.h"

int results_failf(struct parser *p, const char *where, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;

	if (p->error || p->nomem || p->not_json)
		return -EINVAL;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg || asprintf(&p->error, "%s: %s%s%s", p->label, where ? where : "",
			     where ? ": " : "", msg) < 0) {
		p->error = NULL;
		p->nomem = true;
	}
	free(msg);
	return -EINVAL;
}

static bool failed(const struct parser *p)
{
	return p->error || p->nomem || p->not_json;
}

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
	default:
		return "null";
	}
}

/* "benchmarks[3].stats" + "median" */
static void path_join(char *buf, size_t size, const char *base, const char *key)
{
	snprintf(buf, size, "%s%s%s", base ? base : "", base && *base ? "." : "", key);
}

/* The member 'key' of 'obj', its path in 'where'; NULL when absent, which
 * is a failure when 'required'. */
static json_t *member(struct parser *p, const json_t *obj, const char *base, const char *key,
		      bool required, char *where, size_t size)
{
	json_t *v = json_object_get(obj, key);

	path_join(where, size, base, key);
	if (!v && required)
		results_failf(p, where, "missing");
	return v;
}

static bool is_string(const json_t *v)
{
	return json_is_string(v);
}

static bool is_number(const json_t *v)
{
	return json_is_number(v);
}

static bool is_array(const json_t *v)
{
	return json_is_array(v);
}

static bool is_integer(const json_t *v)
{
	return json_is_integer(v);
}

static bool is_boolean(const json_t *v)
{
	return json_is_boolean(v);
}

/* The member 'key' of 'obj' when 'is' it; NULL when absent (a failure when
 * 'required'), when null and 'nullable', or when of another kind: then a
 * failure "expected <what>". */
static json_t *typed_member(struct parser *p, const json_t *obj, const char *base, const char *key,
			    bool required, bool nullable, bool (*is)(const json_t *),
			    const char *what)
{
	char where[256];
	json_t *v = member(p, obj, base, key, required, where, sizeof(where));

	if (!v || (json_is_null(v) && nullable))
		return NULL;
	if (!is(v)) {
		results_failf(p, where, "expected %s, not %s", what, type_name(v));
		return NULL;
	}
	return v;
}

/* A string member: required or optional; null is NULL when 'nullable'. */
static char *get_string(struct parser *p, const json_t *obj, const char *base, const char *key,
			bool required, bool nullable)
{
	json_t *v = typed_member(p, obj, base, key, required, nullable, is_string, "a string");
	char *s;

	if (!v)
		return NULL;
	s = strdup(json_string_value(v));
	if (!s)
		p->nomem = true;
	return s;
}

/* A number member; null (a figure that was not finite) is NAN. */
static double get_number(struct parser *p, const json_t *obj, const char *base, const char *key,
			 bool required)
{
	json_t *v = typed_member(p, obj, base, key, required, true, is_number, "a number");

	return v ? json_number_value(v) : NAN;
}

static uint64_t get_count(struct parser *p, const json_t *obj, const char *base, const char *key,
			  bool required)
{
	char where[256];
	json_t *v = member(p, obj, base, key, required, where, sizeof(where));

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		results_failf(p, where, "expected a whole number, not %s",
		      json_is_integer(v) ? "a negative one" : type_name(v));
		return 0;
	}
	return (uint64_t)json_integer_value(v);
}

/* An array member, or NULL when absent or null (or not an array: a
 * failure). */
static json_t *get_array(struct parser *p, const json_t *obj, const char *base, const char *key)
{
	return typed_member(p, obj, base, key, false, true, is_array, "an array");
}

/* Element 'i' of the array member 'key' is not 'expected'. */
static int bad_element(struct parser *p, const char *base, const char *key, size_t i,
		       const char *expected, const json_t *v)
{
	char where[256];

	snprintf(where, sizeof(where), "%s.%s[%zu]", base, key, i);
	return results_failf(p, where, "expected %s, not %s", expected, type_name(v));
}

static int nomem(struct parser *p)
{
	p->nomem = true;
	return -ENOMEM;
}

/*
 * What the program was given, from the command line benchtrap recorded:
 * the arguments after "--" and the value of --input. Paths of the binary
 * and of --output differ between two builds' runs and are left out.
 * Anything not a list of strings gives no target (*ret NULL).
 */
static int parse_target(const json_t *cmd, char **ret)
{
	char *s = NULL;
	size_t len = 0, n = json_is_array(cmd) ? json_array_size(cmd) : 0;
	FILE *f;
	bool args = false;

	*ret = NULL;
	if (!n)
		return 0;
	f = open_memstream(&s, &len);
	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *a = json_string_value(json_array_get(cmd, i));

		if (!a) {
			fclose(f);
			free(s);
			return 0;
		}
		if (args) {
			fprintf(f, "arg %s\n", a);
		} else if (!strcmp(a, "--")) {
			args = true;
		} else if (!strcmp(a, "--input") && i + 1 < n) {
			const char *v = json_string_value(json_array_get(cmd, ++i));

			fprintf(f, "input %s\n", v ? v : "");
		} else if (!strncmp(a, "--input=", 8)) {
			fprintf(f, "input %s\n", a + 8);
		}
	}
	if (fclose(f) != 0) {
		free(s);
		return -ENOMEM;
	}
	*ret = s;
	return 0;
}

static void parse_env(struct parser *p, const json_t *root, struct results_env *e)
{
	json_t *env = json_object_get(root, "environment");
	json_t *v;

	e->cores = -1;
	e->aslr = -1;
	if (!env) {
		results_failf(p, "environment", "missing");
		return;
	}
	if (!json_is_object(env)) {
		results_failf(p, "environment", "expected an object, not %s", type_name(env));
		return;
	}
	e->cpu = get_string(p, env, "environment", "cpu", false, true);
	e->kernel = get_string(p, env, "environment", "kernel", false, true);
	e->libc = get_string(p, env, "environment", "libc", false, true);
	e->binary = get_string(p, env, "environment", "binary", false, true);
	e->build_id = get_string(p, env, "environment", "build_id", false, true);
	e->compiler = get_string(p, env, "environment", "compiler", false, true);
	e->governor = get_string(p, env, "environment", "governor", false, true);
	e->hostname = get_string(p, env, "environment", "hostname", false, true);
	e->benchtrap = get_string(p, env, "environment", "benchtrap", false, true);
	e->date = get_string(p, env, "environment", "date", false, true);
	v = typed_member(p, env, "environment", "cores", false, true, is_integer, "a whole number");
	if (v && (json_integer_value(v) < 1 || json_integer_value(v) > INT_MAX)) {
		results_failf(p, "environment.cores", "%" JSON_INTEGER_FORMAT
		      " is not a count of CPUs (null when unknown)", json_integer_value(v));
		return;
	}
	if (v)
		e->cores = (int)json_integer_value(v);
	v = typed_member(p, env, "environment", "aslr", false, true, is_boolean, "true or false");
	if (v)
		e->aslr = json_is_true(v);
}

static void parse_stats(struct parser *p, const json_t *obj, const char *base,
			struct results_stats *s)
{
	s->median = get_number(p, obj, base, "median", true);
	s->mean = get_number(p, obj, base, "mean", true);
	s->stddev = get_number(p, obj, base, "stddev", true);
	s->min = get_number(p, obj, base, "min", true);
	s->max = get_number(p, obj, base, "max", true);
	s->q1 = get_number(p, obj, base, "q1", true);
	s->q3 = get_number(p, obj, base, "q3", true);
	s->samples = (size_t)get_count(p, obj, base, "samples", true);
	s->iterations_per_sample = get_count(p, obj, base, "iterations_per_sample", true);
	s->ci_low = get_number(p, obj, base, "ci_low", false);
	s->ci_high = get_number(p, obj, base, "ci_high", false);
	s->confidence = get_number(p, obj, base, "confidence", false);
	s->cv = get_number(p, obj, base, "cv", false);
	s->uncertainty = get_number(p, obj, base, "uncertainty", false);
}

/* The numbers of array obj.key (absent or null: none) into a new *ret of
 * *ret_n; with allow_null, null elements are NAN. */
static int get_numbers(struct parser *p, const json_t *obj, const char *base, const char *key,
		       bool allow_null, double **ret, size_t *ret_n)
{
	const json_t *v = get_array(p, obj, base, key), *d;
	size_t i;

	if (!v || !json_array_size(v))
		return failed(p) ? -EINVAL : 0;
	*ret = malloc(json_array_size(v) * sizeof(**ret));
	if (!*ret)
		return nomem(p);
	json_array_foreach(v, i, d)
	{
		if (json_is_number(d))
			(*ret)[i] = json_number_value(d);
		else if (allow_null && json_is_null(d))
			(*ret)[i] = NAN;
		else
			return bad_element(p, base, key, i, "a number", d);
	}
	*ret_n = json_array_size(v);
	return 0;
}

/* "paired.processes": whole numbers from 1 that add up to the ratios. */
static int parse_pair_groups(struct parser *p, const json_t *obj, const char *base,
			     struct results_bench *r)
{
	const json_t *v = json_object_get(obj, "processes"), *d;
	size_t i, sum = 0;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return results_failf(p, base, "processes: expected an array, not %s", type_name(v));
	r->pair_groups = calloc(json_array_size(v) + 1, sizeof(*r->pair_groups));
	if (!r->pair_groups)
		return nomem(p);
	json_array_foreach(v, i, d)
	{
		if (!json_is_integer(d) || json_integer_value(d) < 1)
			return bad_element(p, base, "processes", i, "a whole number from 1", d);
		if ((uint64_t)json_integer_value(d) > r->npairs - sum)
			return results_failf(p, base,
					     "processes: more ratios in all than the %zu in \"ratios\"",
					     r->npairs);
		r->pair_groups[i] = (size_t)json_integer_value(d);
		sum += r->pair_groups[i];
	}
	r->npair_groups = json_array_size(v);
	if (sum != r->npairs)
		return results_failf(p, base, "processes: %zu ratios in all, but %zu in \"ratios\"",
				     sum, r->npairs);
	return 0;
}

/* "threads" and "per_thread" of a benchmark run on several threads:
 * absent, or a count from 1 and at most that many {"tid", "value"}. */
static int parse_threads(struct parser *p, const json_t *b, const char *base,
			 struct results_bench *r)
{
	char where[160], ewhere[192];
	json_t *v = member(p, b, base, "threads", false, where, sizeof(where)), *d;
	size_t i;

	if (v && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > UINT_MAX) {
			char num[32];

			snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
				 json_is_integer(v) ? json_integer_value(v) : 0);
			return results_failf(p, where, "expected a whole number from 1, not %s",
				     json_is_integer(v) ? num : type_name(v));
		}
		r->threads = (unsigned)json_integer_value(v);
	}
	v = get_array(p, b, base, "per_thread");
	if (failed(p))
		return -EINVAL;
	if (!v)
		return 0;
	path_join(where, sizeof(where), base, "per_thread");
	if (!r->threads)
		return results_failf(p, where, "present, but threads is not");
	if (json_array_size(v) > r->threads)
		return results_failf(p, where, "%zu threads, but threads is %u", json_array_size(v),
			     r->threads);
	r->per_thread = calloc(json_array_size(v) + 1, sizeof(*r->per_thread));
	if (!r->per_thread)
		return nomem(p);
	json_array_foreach(v, i, d)
	{
		json_t *tid;

		if (!json_is_object(d))
			return bad_element(p, base, "per_thread", i, "an object", d);
		snprintf(ewhere, sizeof(ewhere), "%s[%zu]", where, i);
		tid = typed_member(p, d, ewhere, "tid", true, false, is_integer, "a whole number");
		r->per_thread[i].value = get_number(p, d, ewhere, "value", true);
		if (failed(p))
			return -EINVAL;
		r->per_thread[i].tid = json_integer_value(tid);
		r->nper_thread = i + 1;
	}
	return 0;
}

/* "counters": an object of numbers (null: not finite), absent or null. */
static int parse_counters(struct parser *p, const json_t *b, const char *base,
			  struct results_bench *r)
{
	char where[160];
	const json_t *v = member(p, b, base, "counters", false, where, sizeof(where));
	const char *k;
	json_t *d;
	size_t n;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return results_failf(p, where, "expected an object, not %s", type_name(v));
	n = json_object_size(v);
	r->counter_names = calloc(n + 1, sizeof(*r->counter_names));
	r->counter_values = calloc(n + 1, sizeof(*r->counter_values));
	if (!r->counter_names || !r->counter_values)
		return nomem(p);
	json_object_foreach((json_t *)v, k, d)
	{
		if (!json_is_number(d) && !json_is_null(d))
			return results_failf(p, where, "%s: expected a number, not %s", k, type_name(d));
		r->counter_names[r->ncounters] = strdup(k);
		if (!r->counter_names[r->ncounters])
			return nomem(p);
		r->counter_values[r->ncounters++] = json_is_number(d) ? json_number_value(d) : NAN;
	}
	return 0;
}

/* "gbench": { "cpu_time": [numbers or null], "label": string or null },
 * absent or null. */
static int parse_gbench(struct parser *p, const json_t *b, const char *base,
			struct results_bench *r)
{
	char where[160];
	const json_t *v = member(p, b, base, "gbench", false, where, sizeof(where));

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return results_failf(p, where, "expected an object, not %s", type_name(v));
	r->gbench = true;
	r->gbench_label = get_string(p, v, where, "label", false, true);
	if (get_numbers(p, v, where, "cpu_time", true, &r->gbench_cpu, &r->ngbench_cpu) < 0)
		return -EINVAL;
	return failed(p) ? -EINVAL : 0;
}

static const char *const status_names[] = {
	[RESULTS_STATUS_OK] = "ok",
	[RESULTS_STATUS_FAILED] = "failed",
	[RESULTS_STATUS_SKIPPED] = "skipped",
	[RESULTS_STATUS_NO_CALLS] = "no_calls",
};

const char *results_status_name(enum results_status s)
{
	return (size_t)s < sizeof(status_names) / sizeof(status_names[0]) ? status_names[s] : "?";
}

static int parse_status(const char *s, enum results_status *ret)
{
	for (size_t i = 0; i < sizeof(status_names) / sizeof(status_names[0]); i++)
		if (!strcmp(s, status_names[i])) {
			*ret = (enum results_status)i;
			return 0;
		}
	return -EINVAL;
}

static int parse_bench(struct parser *p, const json_t *b, size_t idx, struct results_bench *r)
{
	char base[48], where[160];
	json_t *v, *d;
	size_t i;

	snprintf(base, sizeof(base), "benchmarks[%zu]", idx);
	r->value = NAN;
	if (!json_is_object(b)) {
		results_failf(p, base, "expected an object, not %s", type_name(b));
		return -EINVAL;
	}
	r->name = get_string(p, b, base, "name", true, false);
	if (r->name && !*r->name)
		results_failf(p, base, "name: empty");
	r->symbol = get_string(p, b, base, "symbol", false, true);
	r->build_id = get_string(p, b, base, "build_id", false, true);
	r->instrument = get_string(p, b, base, "instrument", true, false);
	r->unit = get_string(p, b, base, "unit", true, false);
	r->error = get_string(p, b, base, "error", false, true);
	if (failed(p))
		return -EINVAL;
	path_join(where, sizeof(where), base, "instrument");
	if (results_check_instrument(p, where, r->instrument) < 0)
		return -EINVAL;

	v = member(p, b, base, "status", true, where, sizeof(where));
	if (!v)
		return -EINVAL;
	if (!json_is_string(v))
		return results_failf(p, where, "expected a string, not %s", type_name(v));
	if (parse_status(json_string_value(v), &r->status) < 0)
		return results_failf(p, where,
			     "expected \"ok\", \"failed\", \"skipped\" or \"no_calls\", not \"%s\"",
			     json_string_value(v));
	r->ok = r->status == RESULTS_STATUS_OK;

	r->value = get_number(p, b, base, "value", r->ok);
	path_join(where, sizeof(where), base, "value");
	if (r->ok && !failed(p) && isnan(r->value))
		return results_failf(p, where, "null, but status is \"ok\"");

	v = member(p, b, base, "stats", false, where, sizeof(where));
	if (r->ok && (!v || json_is_null(v)))
		return results_failf(p, where, "%s, but status is \"ok\"", v ? "null" : "missing");
	if (v && !json_is_null(v)) {
		if (!json_is_object(v))
			return results_failf(p, where, "expected an object, not %s", type_name(v));
		parse_stats(p, v, where, &r->stats);
		r->has_stats = true;
		if (failed(p) || results_check_stats(p, where, &r->stats) < 0)
			return -EINVAL;
	}

	/* Files written before the field existed say it in a diagnostic. */
	v = member(p, b, base, "no_time", false, where, sizeof(where));
	bool has_no_time = v && !json_is_null(v);

	if (has_no_time && !json_is_boolean(v))
		return results_failf(p, where, "expected true or false, not %s", type_name(v));
	if (has_no_time)
		r->no_time = json_is_true(v);

	v = get_array(p, b, base, "diagnostics");
	if (v) {
		r->diagnostics = calloc(json_array_size(v) + 1, sizeof(*r->diagnostics));
		if (!r->diagnostics)
			return nomem(p);
		json_array_foreach(v, i, d)
		{
			if (!json_is_string(d))
				return bad_element(p, base, "diagnostics", i, "a string", d);
			r->diagnostics[i] = strdup(json_string_value(d));
			if (!r->diagnostics[i])
				return nomem(p);
			r->ndiagnostics = i + 1;
			if (!has_no_time &&
			    !strncmp(r->diagnostics[i], "measured no execution time", 26))
				r->no_time = true;
		}
	}

	/* An empty list is no samples. */
	if (get_numbers(p, b, base, "raw_samples", false, &r->raw, &r->nraw) < 0)
		return -EINVAL;

	if (results_check_counts(p, base, r) < 0 || parse_threads(p, b, base, r) < 0)
		return -EINVAL;

	if (parse_counters(p, b, base, r) < 0 || parse_gbench(p, b, base, r) < 0)
		return -EINVAL;

	/* A paired comparison's head: the ratio of each pair of samples; null
	 * for a pair whose base measured no time. */
	v = json_object_get(b, "paired");
	if (v && !json_is_null(v)) {
		char pwhere[128];

		if (!json_is_object(v))
			return results_failf(p, base, "paired: expected an object, not %s", type_name(v));
		snprintf(pwhere, sizeof(pwhere), "%s.paired", base);
		if (get_numbers(p, v, pwhere, "ratios", true, &r->pair_ratios, &r->npairs) < 0 ||
		    parse_pair_groups(p, v, pwhere, r) < 0)
			return -EINVAL;
	}
	return failed(p) ? -EINVAL : 0;
}

static void bench_clear(struct results_bench *b)
{
	free(b->name);
	free(b->symbol);
	free(b->build_id);
	free(b->instrument);
	free(b->unit);
	free(b->error);
	free(b->raw);
	free(b->pair_ratios);
	free(b->pair_groups);
	free(b->per_thread);
	str_free_n(b->counter_names, b->ncounters);
	free(b->counter_values);
	free(b->gbench_cpu);
	free(b->gbench_label);
	str_free_n(b->diagnostics, b->ndiagnostics);
}

void results_env_clear(struct results_env *e)
{
	free(e->cpu);
	free(e->kernel);
	free(e->libc);
	free(e->binary);
	free(e->build_id);
	free(e->compiler);
	free(e->governor);
	free(e->hostname);
	free(e->benchtrap);
	free(e->date);
	*e = (struct results_env){ 0 };
}

void results_release_doc(struct results_file *f)
{
	if (f) {
		results_doc_free(f->doc);
		f->doc = NULL;
	}
}

void results_free(struct results_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++)
		bench_clear(&f->benches[i]);
	free(f->benches);
	results_env_clear(&f->env);
	free(f->instrument);
	free(f->isolation);
	free(f->target);
	free(f->partial);
	free(f->path);
	results_free(f->paired_base);
	results_release_doc(f);
	free(f);
}

static int parse_root(struct parser *p, json_t *root, const struct results_doc *d,
		      struct results_file *f);

/* "paired": {"base": a whole results document}, of a paired comparison's
 * head; errors in it name "paired.base" after the file. */
static int parse_paired(struct parser *p, json_t *root, struct results_file *f)
{
	json_t *v = json_object_get(root, "paired"), *base;
	struct parser sub = { 0 };

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return results_failf(p, "paired", "expected an object, not %s", type_name(v));
	base = json_object_get(v, "base");
	if (!base)
		return results_failf(p, "paired.base", "missing");
	f->paired_base = calloc(1, sizeof(*f->paired_base));
	if (!f->paired_base || asprintf(&f->paired_base->path, "%s (paired.base)", p->label) < 0) {
		p->nomem = true;
		return -ENOMEM;
	}
	sub.label = f->paired_base->path;
	parse_root(&sub, base, NULL, f->paired_base);
	if (failed(&sub)) {
		p->nomem = sub.nomem;
		p->error = sub.error;
		return -EINVAL;
	}
	return 0;
}

/* "partial": {"signal", "selected", "measured", "journal"}, each optional,
 * as *ret in words (results_file.partial); absent or null: NULL. */
static int parse_partial(struct parser *p, json_t *v, char **ret)
{
	json_t *sig, *sel, *meas;
	char *s = NULL;
	int r;

	*ret = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return results_failf(p, "partial", "expected an object, not %s", type_name(v));
	sig = json_object_get(v, "signal");
	sel = json_object_get(v, "selected");
	meas = json_object_get(v, "measured");
	if ((sig && !json_is_null(sig) && !json_is_string(sig)) ||
	    (sel && !json_is_null(sel) && !json_is_integer(sel)) ||
	    (meas && !json_is_null(meas) && !json_is_integer(meas)))
		return results_failf(p, "partial",
				     "expected \"signal\" a string, \"selected\" and "
				     "\"measured\" whole numbers");
	if (json_is_true(json_object_get(v, "journal")))
		r = asprintf(&s,
			     "read from the journal of a run that did not finish: %lld "
			     "benchmarks measured",
			     (long long)json_integer_value(meas));
	else if (json_is_string(sig) && json_is_integer(sel))
		r = asprintf(&s, "stopped by %s: %lld of %lld benchmarks measured",
			     json_string_value(sig), (long long)json_integer_value(meas),
			     (long long)json_integer_value(sel));
	else
		r = asprintf(&s, "not every benchmark selected was measured");
	if (r < 0) {
		p->nomem = true;
		return -ENOMEM;
	}
	*ret = s;
	return 0;
}

/* 'root' is a document, whose benchmarks are those of 'd' when given (read
 * one at a time), else its own array's. */
static int parse_root(struct parser *p, json_t *root, const struct results_doc *d,
		      struct results_file *f)
{
	json_t *v, *b;
	size_t nb;

	if (!json_is_object(root))
		return results_failf(p, NULL, "expected a results document (a JSON object), not %s",
			     type_name(root));
	v = json_object_get(root, "schema");
	if (!v)
		return results_failf(p, "schema",
			     "missing: not a benchtrap results file (write one with `benchtrap "
			     "run --output FILE`)");
	if (!json_is_string(v))
		return results_failf(p, "schema", "expected a string, not %s", type_name(v));
	if (strcmp(json_string_value(v), RESULTS_SCHEMA) != 0) {
		if (!strncmp(json_string_value(v), "benchtrap-results/", 18))
			return results_failf(p, "schema",
				     "unknown version \"%s\" (this benchtrap reads \"%s\"; use the "
				     "benchtrap that wrote it)",
				     json_string_value(v), RESULTS_SCHEMA);
		return results_failf(p, "schema", "\"%s\" is not a benchtrap results file (\"%s\")",
			     json_string_value(v), RESULTS_SCHEMA);
	}
	parse_env(p, root, &f->env);
	if (failed(p))
		return -EINVAL;

	v = json_object_get(root, "run");
	if (v && !json_is_null(v)) {
		if (!json_is_object(v))
			return results_failf(p, "run", "expected an object, not %s", type_name(v));
		f->instrument = get_string(p, v, "run", "instrument", false, true);
		f->isolation = get_string(p, v, "run", "isolation", false, true);
		if (failed(p) ||
		    (f->instrument && results_check_instrument(p, "run.instrument", f->instrument) < 0))
			return -EINVAL;
		if (parse_target(json_object_get(v, "command"), &f->target) < 0)
			return -ENOMEM;
	}

	if (parse_partial(p, json_object_get(root, "partial"), &f->partial) < 0)
		return -EINVAL;

	v = json_object_get(root, "benchmarks");
	if (!v)
		return results_failf(p, "benchmarks", "missing");
	if (!json_is_array(v))
		return results_failf(p, "benchmarks", "expected an array, not %s", type_name(v));
	nb = d ? results_doc_nbench(d) : json_array_size(v);
	f->benches = calloc(nb + 1, sizeof(*f->benches));
	if (!f->benches) {
		p->nomem = true;
		return -EINVAL;
	}
	for (size_t i = 0; i < nb; i++) {
		bool nomem = false;

		b = d ? results_doc_bench(d, i, &nomem) : json_array_get(v, i);
		if (!b) {
			p->nomem = nomem;
			p->not_json = !nomem;
			return -EINVAL;
		}
		f->n = i + 1;
		parse_bench(p, b, i, &f->benches[i]);
		/* The structs hold copies: the tree of one benchmark at a time. */
		if (d)
			json_decref(b);
		if (failed(p))
			return -ENOMEM;
	}
	return parse_paired(p, root, f);
}

/* jansson's own message for a text that is not JSON, with the line and
 * column in the whole file. */
static void not_json(struct parser *p, const char *text, size_t len)
{
	json_error_t jerr;
	json_t *root = json_loadb(text, len, 0, &jerr);

	p->not_json = false;
	if (root) {
		/* Not reached: a piece refused alone is refused in the whole. */
		json_decref(root);
		results_failf(p, NULL, "not JSON");
	} else if (len == 0) {
		results_failf(p, NULL, "empty file, not a results document");
	} else {
		results_failf(p, NULL, "not JSON: %s at line %d, column %d", jerr.text, jerr.line,
			      jerr.column);
	}
}

/* Whether every benchmark of 'd' read alone is JSON. */
static bool all_json(const struct results_doc *d)
{
	for (size_t i = 0; d->streamed && i < d->nspans; i++) {
		bool nomem;
		json_t *b = results_doc_bench(d, i, &nomem);

		if (!b && !nomem)
			return false;
		json_decref(b);
	}
	return true;
}

static int parse_owned(char *text, size_t len, const char *label, struct results_file **ret,
		       char **ret_error);

/*
 * A journal (report.h): its first line a document with "journal": true,
 * then a benchmark object a line. Made into the document it stands for,
 * with every whole line's benchmark and "partial" saying so, in a new text
 * *ret (1); 0 when 'text' is not a journal; -ENOMEM. A last line without
 * its newline was cut by the kill that ended the run: left out.
 */
static int journal_document(const char *text, size_t len, char **ret, size_t *ret_len)
{
	const char *nl = text ? memchr(text, '\n', len) : NULL, *end = text + len;
	json_t *root, *benches;
	json_int_t measured = 0;
	char *out;
	int r;

	if (!nl)
		return 0;
	root = json_loadb(text, (size_t)(nl - text), 0, NULL);
	benches = json_object_get(root, "benchmarks");
	if (!json_is_object(root) || !json_is_true(json_object_get(root, "journal")) ||
	    !json_is_array(benches)) {
		json_decref(root);
		return 0;
	}
	for (const char *q = nl + 1; q < end;) {
		const char *e = memchr(q, '\n', (size_t)(end - q));
		json_t *b;

		if (!e)
			break;
		b = json_loadb(q, (size_t)(e - q), 0, NULL);
		if (b && json_array_append_new(benches, b) == 0)
			measured++;
		q = e + 1;
	}
	json_object_del(root, "journal");
	json_object_set_new(root, "partial",
			    json_pack("{s:n, s:n, s:I, s:b}", "signal", "selected", "measured",
				      measured, "journal", 1));
	r = results_json_dump_mem(root, &out);
	if (r < 0)
		return r;
	*ret = out;
	*ret_len = strlen(out);
	return 1;
}

int results_parse_owned(char *text, size_t len, const char *label, struct results_file **ret,
			char **ret_error)
{
	char *doc_text;
	size_t doc_len;
	int j = journal_document(text, len, &doc_text, &doc_len);

	if (j < 0) {
		free(text);
		return j;
	}
	if (j > 0) {
		free(text);
		text = doc_text;
		len = doc_len;
	}
	return parse_owned(text, len, label, ret, ret_error);
}

static int parse_owned(char *text, size_t len, const char *label, struct results_file **ret,
		       char **ret_error)
{
	struct parser p = { .label = label };
	struct results_file *f = calloc(1, sizeof(*f));
	json_error_t jerr;
	json_t *root;
	int r = -EINVAL;

	if (!f || !(f->path = strdup(label))) {
		free(f);
		free(text);
		return -ENOMEM;
	}
	r = results_doc_scan(text, len, &f->doc);
	if (r == -ENOMEM) {
		p.nomem = true;
		goto fail_text;
	}
	if (r < 0) {
		/* Not an object as the scanner reads one: jansson says why, or
		 * (a document the scanner does not expect) reads it whole. */
		root = json_loadb(text ? text : "", len, 0, &jerr);
		if (!root) {
			not_json(&p, text ? text : "", len);
			goto fail_text;
		}
		f->doc = calloc(1, sizeof(*f->doc));
		if (!f->doc) {
			json_decref(root);
			p.nomem = true;
			goto fail_text;
		}
		f->doc->root = root;
		f->doc->text = text;
		f->doc->len = len;
	}
	text = NULL; /* the document's */
	parse_root(&p, f->doc->root, f->doc, f);
	/* Any piece that is not JSON makes the file not JSON, whatever else
	 * was found first: the message a whole parse gives. */
	if (failed(&p) && !p.nomem && (p.not_json || !all_json(f->doc))) {
		free(p.error);
		p.error = NULL;
		not_json(&p, f->doc->text, f->doc->len);
	}
	if (failed(&p))
		goto fail;
	*ret = f;
	return 0;
fail_text:
	free(text);
fail:
	r = p.nomem ? -ENOMEM : -EINVAL;
	if (ret_error)
		*ret_error = p.error;
	else
		free(p.error);
	results_free(f);
	return r;
}

int results_parse(const char *text, size_t len, const char *label, struct results_file **ret,
		  char **ret_error)
{
	char *copy = malloc(len + 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	copy[len] = '\0';
	return results_parse_owned(copy, len, label, ret, ret_error);
}
