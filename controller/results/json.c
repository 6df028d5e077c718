/* SPDX-License-Identifier: MIT */
/* Writing benchtrap's JSON documents (json.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include <jansson.h>

#include "util/atomic.h"
#include "results/json.h"

json_t *results_json_str(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *results_json_num(double v)
{
	/* Whole numbers (counts) as integers: a real is printed with 10
	 * significant digits, which would round a count of 10^10 or more. */
	if (isfinite(v) && v == floor(v) && fabs(v) <= RESULTS_JSON_EXACT_MAX)
		return json_integer((json_int_t)v);
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *results_json_env(const struct results_env *e)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "cpu",
			 results_json_str(e->cpu), "cores",
			 e->cores >= 0 ? json_integer(e->cores) : json_null(), "kernel",
			 results_json_str(e->kernel), "libc", results_json_str(e->libc), "binary",
			 results_json_str(e->binary), "build_id", results_json_str(e->build_id),
			 "compiler", results_json_str(e->compiler), "aslr",
			 e->aslr >= 0 ? json_boolean(e->aslr) : json_null(), "governor",
			 results_json_str(e->governor), "hostname", results_json_str(e->hostname),
			 "benchtrap", results_json_str(e->benchtrap), "date",
			 results_json_str(e->date));
}

/* An integer in place of a whole real, NULL for any other value. */
static json_t *whole(const json_t *v)
{
	double x = json_is_real(v) ? json_real_value(v) : NAN;

	return isfinite(x) && x == floor(x) && fabs(x) <= RESULTS_JSON_EXACT_MAX
		       ? json_integer((json_int_t)x)
		       : NULL;
}

/* Every whole real in 'doc' (from json_pack's "f", or read from a file
 * another program wrote) made an integer, so that ten significant digits
 * do not round a count. */
static void whole_numbers(json_t *doc)
{
	json_t *v, *w;
	void *it;
	size_t i;

	if (json_is_object(doc)) {
		for (it = json_object_iter(doc); it; it = json_object_iter_next(doc, it)) {
			v = json_object_iter_value(it);
			w = whole(v);
			if (w)
				json_object_iter_set_new(doc, it, w);
			else
				whole_numbers(v);
		}
	} else if (json_is_array(doc)) {
		json_array_foreach(doc, i, v)
		{
			w = whole(v);
			if (w)
				json_array_set_new(doc, i, w);
			else
				whole_numbers(v);
		}
	}
}

/* 'doc' to 'f', kept: the fill of an atomic write. */
static int dump(FILE *f, void *doc)
{
	int r;

	whole_numbers(doc);
	errno = 0;
	r = json_dumpf(doc, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	if (r == 0 && fputc('\n', f) == EOF)
		r = -1;
	/* The write's own errno (ENOSPC on a full disk), before anything else
	 * can change it; EIO only when the stream did not say. */
	return r < 0 ? (errno > 0 ? -errno : -EIO) : 0;
}

int results_json_dump(json_t *doc, FILE *f)
{
	int r;

	if (!doc)
		return -ENOMEM;
	r = dump(f, doc);
	json_decref(doc);
	return r;
}

int results_json_dump_mem(json_t *doc, char **ret)
{
	char *text;

	if (!doc)
		return -ENOMEM;
	whole_numbers(doc);
	text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_decref(doc);
	if (!text)
		return -ENOMEM;
	*ret = text;
	return 0;
}

int results_json_dump_file(json_t *doc, const char *path)
{
	int r;

	if (!doc)
		return -ENOMEM;
	r = atomic_write(path, dump, doc);
	json_decref(doc);
	return r;
}
