/* SPDX-License-Identifier: MIT */
/* Writing benchtrap's JSON documents (json.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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

#define DUMP_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))

/* The write's own errno (ENOSPC on a full disk), before anything else can
 * change it; EIO only when the stream did not say. */
static int write_error(void)
{
	return errno > 0 ? -errno : -EIO;
}

/* ---- streaming ---------------------------------------------------------- */

/*
 * A value written at 'depth' inside a document: jansson writes a value
 * alone as at depth 0, and nested, every newline of it (there is none
 * inside a string, where it is "\n") is followed by two more spaces a
 * level. So the value alone, each newline followed by depth * 2 spaces.
 */
struct nested {
	FILE *f;
	unsigned depth;
};

static int nested_out(const char *buf, size_t size, void *data)
{
	static const char spaces[] = "                                ";
	const struct nested *n = data;

	while (size) {
		const char *nl = memchr(buf, '\n', size);
		size_t len = nl ? (size_t)(nl - buf) + 1 : size, pad = nl ? n->depth * 2 : 0;

		if (fwrite(buf, 1, len, n->f) != len)
			return -1;
		for (size_t k; pad; pad -= k) {
			k = pad < sizeof(spaces) - 1 ? pad : sizeof(spaces) - 1;
			if (fwrite(spaces, 1, k, n->f) != k)
				return -1;
		}
		buf += len;
		size -= len;
	}
	return 0;
}

static int put_nested(const json_t *v, FILE *f, unsigned depth)
{
	struct nested n = { f, depth };

	errno = 0;
	return json_dump_callback(v, nested_out, &n, DUMP_FLAGS | JSON_ENCODE_ANY) < 0
		       ? write_error()
		       : 0;
}

static int put(FILE *f, const char *s)
{
	errno = 0;
	return fputs(s, f) == EOF ? write_error() : 0;
}

/* The streamed array at depth 1, as jansson writes an array: "[]" when
 * empty, else each element on a line of its own. */
static int put_stream(FILE *f, results_json_next_fn next, void *ctx)
{
	size_t n = 0;
	json_t *v, *w;
	int r;

	while ((r = next(ctx, &v)) > 0) {
		w = whole(v);
		if (w) {
			json_decref(v);
			v = w;
		} else {
			whole_numbers(v);
		}
		r = put(f, n++ ? ",\n    " : "[\n    ");
		if (r == 0)
			r = put_nested(v, f, 2);
		json_decref(v);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	return put(f, n ? "\n  ]" : "[]");
}

struct stream {
	json_t *doc;
	const char *key;
	results_json_next_fn next;
	void *ctx;
};

/* The document, member by member as jansson writes an object, with the
 * streamed one in place of its stand-in. */
static int dump_stream(FILE *f, void *data)
{
	const struct stream *s = data;
	const char *k;
	json_t *v, *ks;
	bool first = true;
	int r;

	if (!json_is_object(s->doc))
		return -EINVAL;
	whole_numbers(s->doc);
	r = put(f, json_object_size(s->doc) ? "{" : "{}");
	if (r < 0)
		return r;
	json_object_foreach(s->doc, k, v)
	{
		ks = json_string(k);
		if (!ks)
			return -ENOMEM;
		r = put(f, first ? "\n  " : ",\n  ");
		if (r == 0)
			r = put_nested(ks, f, 1);
		json_decref(ks);
		if (r == 0)
			r = put(f, ": ");
		if (r == 0)
			r = !strcmp(k, s->key) ? put_stream(f, s->next, s->ctx) : put_nested(v, f, 1);
		if (r < 0)
			return r;
		first = false;
	}
	if (r == 0 && !first)
		r = put(f, "\n}");
	return r < 0 ? r : put(f, "\n");
}

int results_json_dump_stream(json_t *doc, const char *key, results_json_next_fn next, void *ctx,
			     FILE *f)
{
	struct stream s = { doc, key, next, ctx };
	int r;

	if (!doc)
		return -ENOMEM;
	r = dump_stream(f, &s);
	json_decref(doc);
	return r;
}

int results_json_dump_stream_file(json_t *doc, const char *key, results_json_next_fn next,
				  void *ctx, const char *path)
{
	struct stream s = { doc, key, next, ctx };
	int r;

	if (!doc)
		return -ENOMEM;
	r = atomic_write(path, dump_stream, &s);
	json_decref(doc);
	return r;
}

/* 'doc' to 'f', kept: the fill of an atomic write. */
static int dump(FILE *f, void *doc)
{
	int r;

	whole_numbers(doc);
	errno = 0;
	r = json_dumpf(doc, f, DUMP_FLAGS);
	if (r == 0 && fputc('\n', f) == EOF)
		r = -1;
	return r < 0 ? write_error() : 0;
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
	text = json_dumps(doc, DUMP_FLAGS);
	json_decref(doc);
	if (!text)
		return -ENOMEM;
	*ret = text;
	return 0;
}

int results_json_dump_line(json_t *doc, char **ret)
{
	char *text, *line;

	if (!doc)
		return -ENOMEM;
	whole_numbers(doc);
	text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
	json_decref(doc);
	if (!text)
		return -ENOMEM;
	line = realloc(text, strlen(text) + 2);
	if (!line) {
		free(text);
		return -ENOMEM;
	}
	strcat(line, "\n");
	*ret = line;
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
