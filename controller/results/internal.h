/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_RESULTS_INTERNAL_H
#define BENCHTRAP_RESULTS_INTERNAL_H

/* Inside the results module only: the parsed document, kept for merging. */

#include <stdbool.h>

#include <jansson.h>

struct results_doc {
	json_t *root;
};

struct results_bench;
struct results_stats;

/* Where a reader's message is going: the file's label and the first error. */
struct parser {
	const char *label;
	char *error;
	bool nomem;
};

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
