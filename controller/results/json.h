/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_RESULTS_JSON_H
#define BENCHTRAP_RESULTS_JSON_H

/*
 * Writing benchtrap's JSON documents, for the results and report modules
 * alone (jansson stays inside them). Every document is written by
 * results_json_dump() or results_json_dump_file(): one number format (whole
 * numbers as integers, others with ten significant digits), so a figure has the same text in every
 * file that carries it, and a merged file repeats its inputs' numbers to the digit.
 */

#include <stdio.h>

#include <jansson.h>

#include "results/results.h"

/* A string, or null for NULL. */
json_t *results_json_str(const char *s);
/* Whole numbers up to this are integers in a document: every one of them is
 * a double exactly (2^53). */
#define RESULTS_JSON_EXACT_MAX 9007199254740992.0

/* A number, or null when it is not finite (JSON has no NaN or infinity). A
 * whole number up to RESULTS_JSON_EXACT_MAX is an integer, written with all
 * its digits (a count of 10^10 instructions is not rounded to ten). */
json_t *results_json_num(double v);
/* The "environment" object of a results document (docs/results.md): every
 * field, null where it is unknown. */
json_t *results_json_env(const struct results_env *e);

/*
 * Write 'doc' indented, with a final newline, and release it. Whole reals
 * in it are written as integers first (RESULTS_JSON_EXACT_MAX), wherever
 * they came from. 'doc' may be
 * NULL (a failed json_pack): -ENOMEM. 0, or the write's -errno (-ENOSPC on a
 * full disk; -EIO when the stream gave none) when writing failed.
 */
int results_json_dump(json_t *doc, FILE *f);
/* The same to 'path', written atomically (util/atomic.h). */
int results_json_dump_file(json_t *doc, const char *path);
/* The same into a new string *ret (without the final newline), to free. */
int results_json_dump_mem(json_t *doc, char **ret);
/* The same on one line, with no spaces and a final newline: a line of a
 * journal (report.h). */
int results_json_dump_line(json_t *doc, char **ret);

/*
 * The elements of a streamed array, one at a time: 1 and a new reference in
 * *ret (released by the writer once written), 0 after the last, or a
 * negative errno.
 */
typedef int (*results_json_next_fn)(void *ctx, json_t **ret);

/*
 * Write the object 'doc' as results_json_dump() does, byte for byte, except
 * that the value of its member 'key' (present, at its place, e.g. an empty
 * array) is the array of the elements next() gives: each is written and
 * released before the next is asked for, so the whole array is never held.
 * Releases 'doc'. 0, -ENOMEM, next()'s error, or the write's -errno.
 */
int results_json_dump_stream(json_t *doc, const char *key, results_json_next_fn next, void *ctx,
			     FILE *f);
/* The same to 'path', written atomically (util/atomic.h). */
int results_json_dump_stream_file(json_t *doc, const char *key, results_json_next_fn next,
				  void *ctx, const char *path);

#endif
