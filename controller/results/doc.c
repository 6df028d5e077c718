/* SPDX-License-Identifier: MIT */
/*
 * Reading a results document piecewise (internal.h): a tree of jansson
 * values takes about seven times its text, so the benchmarks, nearly all of
 * a large file, are parsed one at a time and freed once read. The rest of
 * the document is a tree as before.
 *
 * The scanner below only finds where each value ends (strings and brackets
 * matched, anything else up to the next delimiter) and leaves every check
 * to jansson, which parses each span on its own: a span it accepts is a
 * JSON value, so a document whose every piece is accepted is JSON. When a
 * piece is refused, the caller parses the whole text for jansson's own
 * message, with the line and column in the file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "results/internal.h"

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t skip_ws(const char *s, size_t i, size_t n)
{
	while (i < n && is_ws(s[i]))
		i++;
	return i;
}

/* One past the closing quote of the string at s[i] ('"'), or 0. */
static size_t string_end(const char *s, size_t i, size_t n)
{
	for (i++; i < n; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == '"')
			return i + 1;
	}
	return 0;
}

/* One past the end of the value at s[i], or 0 when it does not end. */
static size_t value_end(const char *s, size_t i, size_t n)
{
	size_t depth = 0, j;

	if (i >= n)
		return 0;
	if (s[i] == '"')
		return string_end(s, i, n);
	if (s[i] == '{' || s[i] == '[') {
		for (j = i; j < n; j++) {
			if (s[j] == '"') {
				j = string_end(s, j, n);
				if (!j)
					return 0;
				j--;
			} else if (s[j] == '{' || s[j] == '[') {
				depth++;
			} else if (s[j] == '}' || s[j] == ']') {
				if (--depth == 0)
					return j + 1;
			}
		}
		return 0;
	}
	for (j = i; j < n && !is_ws(s[j]) && !strchr(",:{}[]\"", s[j]); j++)
		;
	return j > i ? j : 0;
}

/* The value s[off .. off + len), parsed alone, or NULL. */
static json_t *parse_span(const char *s, size_t off, size_t len)
{
	return json_loadb(s + off, len, JSON_DECODE_ANY, NULL);
}

static int push_span(struct results_doc *d, size_t *cap, size_t off, size_t len)
{
	if (d->nspans == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		struct results_span *n = realloc(d->spans, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		d->spans = n;
		*cap = ncap;
	}
	d->spans[d->nspans++] = (struct results_span){ off, len };
	return 0;
}

/* The elements of the array at s[*i] ('['), into d->spans; *i past it. */
static int scan_benchmarks(struct results_doc *d, size_t *i)
{
	const char *s = d->text;
	size_t n = d->len, cap = 0, j = skip_ws(s, *i + 1, n), e;

	free(d->spans);
	d->spans = NULL;
	d->nspans = 0;
	if (j < n && s[j] == ']') {
		*i = j + 1;
		return 0;
	}
	for (;;) {
		e = value_end(s, j, n);
		if (!e)
			return -EINVAL;
		if (push_span(d, &cap, j, e - j) < 0)
			return -ENOMEM;
		j = skip_ws(s, e, n);
		if (j < n && s[j] == ']') {
			*i = j + 1;
			return 0;
		}
		if (j >= n || s[j] != ',')
			return -EINVAL;
		j = skip_ws(s, j + 1, n);
	}
}

/* The members of the top-level object, as jansson would set them (a key
 * given twice: the last value, at the first one's place). */
static int scan_root(struct results_doc *d)
{
	const char *s = d->text;
	size_t n = d->len, i = skip_ws(s, 0, n), e;
	int r;

	if (i >= n || s[i] != '{')
		return -EINVAL;
	d->root = json_object();
	if (!d->root)
		return -ENOMEM;
	i = skip_ws(s, i + 1, n);
	if (i < n && s[i] == '}') {
		i++;
		goto end;
	}
	for (;;) {
		json_t *key, *v;
		bool benchmarks;

		if (i >= n || s[i] != '"' || !(e = string_end(s, i, n)))
			return -EINVAL;
		key = parse_span(s, i, e - i);
		if (!json_is_string(key)) {
			json_decref(key);
			return -EINVAL;
		}
		benchmarks = !strcmp(json_string_value(key), "benchmarks");
		i = skip_ws(s, e, n);
		if (i >= n || s[i] != ':') {
			json_decref(key);
			return -EINVAL;
		}
		i = skip_ws(s, i + 1, n);
		if (benchmarks && i < n && s[i] == '[') {
			r = scan_benchmarks(d, &i);
			v = r == 0 ? json_array() : NULL;
			d->streamed = true;
		} else {
			e = value_end(s, i, n);
			v = e ? parse_span(s, i, e - i) : NULL;
			r = v ? 0 : -EINVAL;
			i = e;
			if (benchmarks)
				d->streamed = false;
		}
		if (r == 0 && (!v || json_object_set_new(d->root, json_string_value(key), v) < 0))
			r = -ENOMEM;
		json_decref(key);
		if (r < 0)
			return r;
		i = skip_ws(s, i, n);
		if (i < n && s[i] == '}') {
			i++;
			break;
		}
		if (i >= n || s[i] != ',')
			return -EINVAL;
		i = skip_ws(s, i + 1, n);
	}
end:
	return skip_ws(s, i, n) == n ? 0 : -EINVAL;
}

int results_doc_scan(char *text, size_t len, struct results_doc **ret)
{
	struct results_doc *d = calloc(1, sizeof(*d));
	int r;

	if (!d)
		return -ENOMEM;
	d->text = text;
	d->len = len;
	r = scan_root(d);
	if (r < 0) {
		d->text = NULL; /* still the caller's */
		results_doc_free(d);
		return r;
	}
	*ret = d;
	return 0;
}

size_t results_doc_nbench(const struct results_doc *d)
{
	if (d->streamed)
		return d->nspans;
	return json_array_size(json_object_get(d->root, "benchmarks"));
}

json_t *results_doc_bench(const struct results_doc *d, size_t i, bool *ret_nomem)
{
	json_error_t err;
	json_t *v;

	*ret_nomem = false;
	if (!d->streamed)
		return json_incref(json_array_get(json_object_get(d->root, "benchmarks"), i));
	v = json_loadb(d->text + d->spans[i].off, d->spans[i].len, JSON_DECODE_ANY, &err);
	if (!v && json_error_code(&err) == json_error_out_of_memory)
		*ret_nomem = true;
	return v;
}

void results_doc_free(struct results_doc *d)
{
	if (!d)
		return;
	json_decref(d->root);
	free(d->text);
	free(d->spans);
	free(d);
}
