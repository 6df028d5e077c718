/* SPDX-License-Identifier: MIT */
/* Reading results files into plain structs, with precise errors (results.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "results/internal.h"
#include "results/results.h"

/* Where a message is going: the file's label and the first error. */
struct parser {
	const char *label;
	char *error;
	bool nomem;
};

static int failf(struct parser *p, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Record the first error; returns -EINVAL. */
static int failf(struct parser *p, const char *where, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;

	if (p->error || p->nomem)
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
	return p->error || p->nomem;
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

/* A string member: required or optional; null is NULL when 'nullable'. */
static char *get_string(struct parser *p, const json_t *obj, const char *base, const char *key,
			bool required, bool nullable)
{
	char where[256];
	json_t *v = json_object_get(obj, key);
	char *s;

	path_join(where, sizeof(where), base, key);
	if (!v) {
		if (required)
			failf(p, where, "missing");
		return NULL;
	}
	if (json_is_null(v) && nullable)
		return NULL;
	if (!json_is_string(v)) {
		failf(p, where, "expected a string, not %s", type_name(v));
		return NULL;
	}
	s = strdup(json_string_value(v));
	if (!s)
		p->nomem = true;
	return s;
}

/* A number member; null (a figure that was not finite) is NAN. */
static double get_number(struct parser *p, const json_t *obj, const char *base, const char *key,
			 bool required)
{
	char where[256];
	json_t *v = json_object_get(obj, key);

	path_join(where, sizeof(where), base, key);
	if (!v) {
		if (required)
			failf(p, where, "missing");
		return NAN;
	}
	if (json_is_null(v))
		return NAN;
	if (!json_is_number(v)) {
		failf(p, where, "expected a number, not %s", type_name(v));
		return NAN;
	}
	return json_number_value(v);
}

static uint64_t get_count(struct parser *p, const json_t *obj, const char *base, const char *key,
			  bool required)
{
	char where[256];
	json_t *v = json_object_get(obj, key);

	path_join(where, sizeof(where), base, key);
	if (!v) {
		if (required)
			failf(p, where, "missing");
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		failf(p, where, "expected a whole number, not %s",
		      json_is_integer(v) ? "a negative one" : type_name(v));
		return 0;
	}
	return (uint64_t)json_integer_value(v);
}

static void parse_env(struct parser *p, const json_t *root, struct results_env *e)
{
	json_t *env = json_object_get(root, "environment");
	json_t *v;

	e->cores = -1;
	e->aslr = -1;
	if (!env) {
		failf(p, "environment", "missing");
		return;
	}
	if (!json_is_object(env)) {
		failf(p, "environment", "expected an object, not %s", type_name(env));
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
	v = json_object_get(env, "cores");
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v))
			failf(p, "environment.cores", "expected a whole number, not %s",
			      type_name(v));
		else
			e->cores = (int)json_integer_value(v);
	}
	v = json_object_get(env, "aslr");
	if (v && !json_is_null(v)) {
		if (!json_is_boolean(v))
			failf(p, "environment.aslr", "expected true or false, not %s",
			      type_name(v));
		else
			e->aslr = json_is_true(v);
	}
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
}

static int parse_bench(struct parser *p, const json_t *b, size_t idx, struct results_bench *r)
{
	char base[48], where[160];
	json_t *v;

	snprintf(base, sizeof(base), "benchmarks[%zu]", idx);
	r->value = NAN;
	if (!json_is_object(b)) {
		failf(p, base, "expected an object, not %s", type_name(b));
		return -EINVAL;
	}
	r->name = get_string(p, b, base, "name", true, false);
	if (r->name && !*r->name)
		failf(p, base, "name: empty");
	r->symbol = get_string(p, b, base, "symbol", false, true);
	r->instrument = get_string(p, b, base, "instrument", true, false);
	r->unit = get_string(p, b, base, "unit", true, false);
	r->error = get_string(p, b, base, "error", false, true);
	if (failed(p))
		return -EINVAL;

	v = json_object_get(b, "status");
	snprintf(where, sizeof(where), "%s.status", base);
	if (!v)
		return failf(p, where, "missing");
	if (!json_is_string(v))
		return failf(p, where, "expected a string, not %s", type_name(v));
	if (!strcmp(json_string_value(v), "ok"))
		r->ok = true;
	else if (strcmp(json_string_value(v), "failed") != 0)
		return failf(p, where, "expected \"ok\" or \"failed\", not \"%s\"",
			     json_string_value(v));

	r->value = get_number(p, b, base, "value", r->ok);
	snprintf(where, sizeof(where), "%s.value", base);
	if (r->ok && !failed(p) && isnan(r->value))
		return failf(p, where, "null, but status is \"ok\"");

	v = json_object_get(b, "stats");
	snprintf(where, sizeof(where), "%s.stats", base);
	if (r->ok && (!v || json_is_null(v)))
		return failf(p, where, "%s, but status is \"ok\"", v ? "null" : "missing");
	if (v && !json_is_null(v)) {
		if (!json_is_object(v))
			return failf(p, where, "expected an object, not %s", type_name(v));
		parse_stats(p, v, where, &r->stats);
		r->has_stats = true;
	}

	/* Files written before the field existed say it in a diagnostic. */
	v = json_object_get(b, "no_time");
	snprintf(where, sizeof(where), "%s.no_time", base);
	bool has_no_time = v && !json_is_null(v);

	if (has_no_time && !json_is_boolean(v))
		return failf(p, where, "expected true or false, not %s", type_name(v));
	if (has_no_time)
		r->no_time = json_is_true(v);

	v = json_object_get(b, "diagnostics");
	snprintf(where, sizeof(where), "%s.diagnostics", base);
	if (v && !json_is_null(v)) {
		size_t i;
		json_t *d;

		if (!json_is_array(v))
			return failf(p, where, "expected an array, not %s", type_name(v));
		r->diagnostics = calloc(json_array_size(v) + 1, sizeof(*r->diagnostics));
		if (!r->diagnostics) {
			p->nomem = true;
			return -ENOMEM;
		}
		json_array_foreach(v, i, d)
		{
			if (!json_is_string(d)) {
				snprintf(where, sizeof(where), "%s.diagnostics[%zu]", base, i);
				return failf(p, where, "expected a string, not %s", type_name(d));
			}
			r->diagnostics[i] = strdup(json_string_value(d));
			if (!r->diagnostics[i]) {
				p->nomem = true;
				return -ENOMEM;
			}
			r->ndiagnostics = i + 1;
			if (!has_no_time &&
			    !strncmp(r->diagnostics[i], "measured no execution time", 26))
				r->no_time = true;
		}
	}

	v = json_object_get(b, "raw_samples");
	snprintf(where, sizeof(where), "%s.raw_samples", base);
	if (v && !json_is_null(v)) {
		size_t i;
		json_t *d;

		if (!json_is_array(v))
			return failf(p, where, "expected an array, not %s", type_name(v));
		if (json_array_size(v) == 0)
			return -ENOMEM;
		r->raw = malloc(json_array_size(v) * sizeof(*r->raw));
		if (!r->raw) {
			p->nomem = true;
			return -ENOMEM;
		}
		json_array_foreach(v, i, d)
		{
			if (!json_is_number(d)) {
				snprintf(where, sizeof(where), "%s.raw_samples[%zu]", base, i);
				return failf(p, where, "expected a number, not %s", type_name(d));
			}
			r->raw[i] = json_number_value(d);
		}
		r->nraw = json_array_size(v);
	}
	return 0;
}

static void bench_clear(struct results_bench *b)
{
	free(b->name);
	free(b->symbol);
	free(b->instrument);
	free(b->unit);
	free(b->error);
	free(b->raw);
	for (size_t i = 0; i < b->ndiagnostics; i++)
		free(b->diagnostics[i]);
	free(b->diagnostics);
}

static void env_clear(struct results_env *e)
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
}

void results_free(struct results_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++)
		bench_clear(&f->benches[i]);
	free(f->benches);
	env_clear(&f->env);
	free(f->instrument);
	free(f->isolation);
	free(f->path);
	if (f->doc) {
		json_decref(f->doc->root);
		free(f->doc);
	}
	free(f);
}

static int parse_root(struct parser *p, json_t *root, struct results_file *f)
{
	json_t *v, *b;
	size_t i;

	if (!json_is_object(root))
		return failf(p, NULL, "expected a results document (a JSON object), not %s",
			     type_name(root));
	v = json_object_get(root, "schema");
	if (!v)
		return failf(p, "schema",
			     "missing: not a benchtrap results file (write one with `benchtrap "
			     "run --output FILE`)");
	if (!json_is_string(v))
		return failf(p, "schema", "expected a string, not %s", type_name(v));
	if (strcmp(json_string_value(v), RESULTS_SCHEMA) != 0) {
		if (!strncmp(json_string_value(v), "benchtrap-results/", 18))
			return failf(p, "schema",
				     "unknown version \"%s\" (this benchtrap reads \"%s\"; use the "
				     "benchtrap that wrote it)",
				     json_string_value(v), RESULTS_SCHEMA);
		return failf(p, "schema", "\"%s\" is not a benchtrap results file (\"%s\")",
			     json_string_value(v), RESULTS_SCHEMA);
	}
	parse_env(p, root, &f->env);
	if (failed(p))
		return -EINVAL;

	v = json_object_get(root, "run");
	if (v && !json_is_null(v)) {
		if (!json_is_object(v))
			return failf(p, "run", "expected an object, not %s", type_name(v));
		f->instrument = get_string(p, v, "run", "instrument", false, true);
		f->isolation = get_string(p, v, "run", "isolation", false, true);
		if (failed(p))
			return -ENOMEM;
	}

	v = json_object_get(root, "benchmarks");
	if (!v)
		return failf(p, "benchmarks", "missing");
	if (!json_is_array(v))
		return failf(p, "benchmarks", "expected an array, not %s", type_name(v));
	f->benches = calloc(json_array_size(v) + 1, sizeof(*f->benches));
	if (!f->benches) {
		p->nomem = true;
		return -EINVAL;
	}
	json_array_foreach(v, i, b)
	{
		f->n = i + 1;
		parse_bench(p, b, i, &f->benches[i]);
		if (failed(p))
			return -ENOMEM;
	}
	return 0;
}

int results_parse(const char *text, size_t len, const char *label, struct results_file **ret,
		  char **ret_error)
{
	struct parser p = { .label = label };
	struct results_file *f = calloc(1, sizeof(*f));
	json_error_t jerr;
	json_t *root;
	int r = -EINVAL;

	if (!f || !(f->path = strdup(label))) {
		free(f);
		return -ENOMEM;
	}
	root = json_loadb(text, len, 0, &jerr);
	if (!root) {
		if (len == 0)
			failf(&p, NULL, "empty file, not a results document");
		else
			failf(&p, NULL, "not JSON: %s at line %d, column %d", jerr.text, jerr.line,
			      jerr.column);
		goto fail;
	}
	f->doc = calloc(1, sizeof(*f->doc));
	if (!f->doc) {
		json_decref(root);
		p.nomem = true;
		goto fail;
	}
	f->doc->root = root;
	parse_root(&p, root, f);
	if (failed(&p))
		goto fail;
	*ret = f;
	return 0;
fail:
	if (p.nomem)
		r = -ENOMEM;
	if (ret_error)
		*ret_error = p.error;
	else
		free(p.error);
	results_free(f);
	return r;
}

int results_load(const char *path, struct results_file **ret, char **ret_error)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "re") : stdin;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int r;

	if (!f) {
		r = -errno;
		goto fail_errno;
	}
	for (;;) {
		if (len == cap) {
			char *nb;

			cap = cap ? cap * 2 : 65536;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				if (f != stdin)
					fclose(f);
				return -ENOMEM;
			}
			buf = nb;
		}
		size_t got = fread(buf + len, 1, cap - len, f);

		len += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		r = -errno ? -errno : -EIO;
		free(buf);
		if (f != stdin)
			fclose(f);
		goto fail_errno;
	}
	if (f != stdin)
		fclose(f);
	r = results_parse(buf ? buf : "", len, path, ret, ret_error);
	free(buf);
	return r;

fail_errno:
	if (ret_error) {
		const char *why = r == -ENOENT	 ? "no such file (check the path, or write it with "
						   "`benchtrap run --output FILE`)"
				  : r == -EISDIR ? "is a directory, not a results file"
						 : strerror(-r);

		if (asprintf(ret_error, "%s: %s", path, why) < 0)
			*ret_error = NULL;
	}
	return r;
}

bool results_instrument_exact(const char *instrument)
{
	return instrument && strcmp(instrument, "walltime") != 0;
}
