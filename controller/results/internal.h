/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_RESULTS_INTERNAL_H
#define BENCHTRAP_RESULTS_INTERNAL_H

/* Inside the results module only: the parsed document, kept for merging. */

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* Where one element of the document's "benchmarks" is in its text. */
struct results_span {
	size_t off, len;
};

/*
 * A document read piecewise (doc.c), so that no whole tree of a large file
 * is ever held: 'root' holds every member but the benchmarks, whose
 * "benchmarks" is an empty array standing in for the 'nspans' elements
 * found in 'text' (when 'streamed'; otherwise 'root' is the whole document,
 * benchmarks and all). The text is kept for results_merge(), which reads
 * each benchmark again to write it as it was.
 */
struct results_doc {
	json_t *root;
	char *text;
	size_t len;
	struct results_span *spans;
	size_t nspans;
	bool streamed;
};

/*
 * Read the document 'text' (len bytes, owned by *ret on success) into a new
 * *ret: the members of the top-level object parsed by jansson one at a
 * time, the elements of "benchmarks" only found. Returns 0, -ENOMEM, or
 * -EINVAL when the text is not a JSON object as this reader expects it:
 * then jansson, given the whole text, says why (or reads it whole).
 */
int results_doc_scan(char *text, size_t len, struct results_doc **ret);
/* Element 'i' of the benchmarks of 'd' (a new reference), or NULL when it
 * is not JSON (or memory ran out: *ret_nomem). */
json_t *results_doc_bench(const struct results_doc *d, size_t i, bool *ret_nomem);
/* How many benchmarks 'd' has, or 0 when "benchmarks" is not an array. */
size_t results_doc_nbench(const struct results_doc *d);
void results_doc_free(struct results_doc *d);

struct results_bench;
struct results_file;
struct results_stats;

/* Where a reader's message is going: the file's label and the first error;
 * 'not_json' when a benchmark read alone was not JSON (the message is then
 * jansson's, for the whole text). */
struct parser {
	const char *label;
	char *error;
	bool nomem;
	bool not_json;
};

/* results_parse() of a 'text' that becomes the file's (freed on failure
 * too): results_load() gives it the buffer it read. */
int results_parse_owned(char *text, size_t len, const char *label, struct results_file **ret,
			char **ret_error);

/* Record the first error of 'p', "LABEL: WHERE: message" (WHERE may be
 * NULL); returns -EINVAL. */
int results_failf(struct parser *p, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- checks beyond the types (check.c); each returns 0, or the failure
 * recorded in 'p' (-EINVAL) naming the field ---------------------------- */

/* 'v', at 'where', is the name of an instrument. */
int results_check_instrument(struct parser *p, const char *where, const char *v);
/* The statistics at 'base' ("benchmarks[3].stats") are in order: min <= q1 <=
 * median <= q3 <= max, min <= mean <= max, no spread below zero, ci_low <=
 * ci_high, a confidence between 0 and 1. */
int results_check_stats(struct parser *p, const char *base, const struct results_stats *s);
/* The figures of a benchmark of a counting instrument (callgrind, perf,
 * memory) are not below zero: value, raw_samples, stats.min. */
int results_check_counts(struct parser *p, const char *base, const struct results_bench *r);

#endif
