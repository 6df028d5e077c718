/* SPDX-License-Identifier: MIT */
/*
 * benchtrap export: names shortened for a consumer's limit (a prefix and a
 * hash, distinct for distinct names, cut on a character boundary), whole
 * numbers written with all their digits, Google Benchmark's rows (one
 * iteration row per benchmark and the aggregates), instruments of a merged
 * file kept apart in every format.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "report/report.h"
#include "results/json.h"
#include "results/results.h"

/* ---- helpers --------------------------------------------------------------- */

/* A results document of the benchmarks 'benches' (JSON objects, joined). */
static struct results_file *parse(const char *benches)
{
	static const char head[] =
		"{\"schema\": \"benchtrap-results/1\", \"environment\": {\"cpu\": \"c\", "
		"\"cores\": 2, \"kernel\": \"k\", \"libc\": \"l\", \"binary\": \"b\", "
		"\"build_id\": \"ab\", \"compiler\": null, \"aslr\": false}, \"benchmarks\": [";
	struct results_file *f = NULL;
	char *text, *err = NULL;

	assert_true(asprintf(&text, "%s%s]}", head, benches) > 0);
	if (results_parse(text, strlen(text), "t.json", &f, &err) != 0)
		fail_msg("%s", err);
	free(text);
	return f;
}

/* bench()'s strings, freed after each test. */
static char *made[16];
static size_t nmade;

static int forget(void **state)
{
	(void)state;
	while (nmade)
		free(made[--nmade]);
	return 0;
}

/* One benchmark's JSON: ok with 'value' and three samples around it, or
 * failed when 'value' is NULL. */
static char *bench(const char *name, const char *instrument, const char *value)
{
	const char *unit = !strcmp(instrument, "walltime") ? "ns"
			   : !strcmp(instrument, "memory") ? "bytes"
							   : "instructions";
	char *s;

	if (!value)
		assert_true(asprintf(&s,
				     "{\"name\": \"%s\", \"instrument\": \"%s\", \"unit\": \"%s\", "
				     "\"value\": null, \"status\": \"failed\", \"error\": "
				     "\"killed by SIGSEGV\\n#0 f\", \"stats\": null}",
				     name, instrument, unit) > 0);
	else
		assert_true(asprintf(&s,
				     "{\"name\": \"%s\", \"instrument\": \"%s\", \"unit\": \"%s\", "
				     "\"value\": %s, \"status\": \"ok\", \"error\": null, "
				     "\"stats\": {\"median\": %s, \"mean\": %s, \"stddev\": 1, "
				     "\"min\": %s, \"max\": %s, \"q1\": %s, \"q3\": %s, "
				     "\"samples\": 3, \"iterations_per_sample\": 10, \"cv\": 0.5, "
				     "\"ci_low\": %s, \"ci_high\": %s, \"confidence\": 0.95}, "
				     "\"raw_samples\": [%s, %s, %s], \"diagnostics\": []}",
				     name, instrument, unit, value, value, value, value, value,
				     value, value, value, value, value, value, value) > 0);
	assert_true(nmade < sizeof(made) / sizeof(made[0]));
	made[nmade++] = s;
	return s;
}

/* The export of 'f' as text and parsed; notes in *ret_notes. */
static json_t *export(const struct results_file *f, const char *format, char **ret_text,
		      struct report_export_notes *ret_notes)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);
	json_t *doc;

	assert_non_null(out);
	assert_int_equal(report_export(f, format, out, ret_notes), 0);
	fclose(out);
	doc = json_loads(text, 0, NULL);
	assert_non_null(doc);
	if (ret_text)
		*ret_text = text;
	else
		free(text);
	return doc;
}

/* The rows of a gbench export named 'name'. */
static size_t rows(json_t *doc, const char *name, json_t **ret, size_t max)
{
	json_t *b;
	size_t i, n = 0;

	json_array_foreach(json_object_get(doc, "benchmarks"), i,
			   b) if (!strcmp(json_string_value(json_object_get(b, "name")), name) &&
				  n < max) ret[n++] = b;
	return n;
}

/* ---- names ----------------------------------------------------------------- */

static void test_fit_name(void **state)
{
	char long1[2001], long2[2001], *a, *b, *c, *same;

	(void)state;
	memset(long1, 'x', 2000);
	long1[2000] = 0;
	memcpy(long2, long1, sizeof(long2));
	long2[1999] = 'y'; /* differs past any prefix kept */

	a = report_export_fit_name("fib[20]", 1024);
	assert_string_equal(a, "fib[20]");
	free(a);
	/* Exactly at the limit: kept. */
	long1[1024] = 0;
	a = report_export_fit_name(long1, 1024);
	assert_string_equal(a, long1);
	free(a);
	long1[1024] = 'x';

	a = report_export_fit_name(long1, 1024);
	b = report_export_fit_name(long2, 1024);
	same = report_export_fit_name(long1, 1024);
	assert_int_equal(strlen(a), 1024);
	assert_int_equal(strlen(b), 1024);
	assert_string_not_equal(a, b);
	assert_string_equal(a, same);
	assert_memory_equal(a, long1, 1024 - REPORT_EXPORT_HASH_LEN);
	assert_int_equal(a[1024 - REPORT_EXPORT_HASH_LEN], '~');
	assert_int_equal(strspn(a + 1024 - REPORT_EXPORT_HASH_LEN + 1, "0123456789abcdef"), 16);
	/* A limit with no room for the hash: the name as it is. */
	c = report_export_fit_name("a", 0);
	assert_string_equal(c, "a");
	free(c);
	free(a);
	free(b);
	free(same);
}

/* A prefix never ends inside a UTF-8 character. */
static void test_fit_name_utf8(void **state)
{
	char name[3 * 600 + 1] = "", *s;

	(void)state;
	for (int i = 0; i < 600; i++)
		strcat(name, "\xe2\x82\xac"); /* € */
	s = report_export_fit_name(name, 1024);
	assert_true(strlen(s) <= 1024);
	/* 1007 bytes of prefix room: 335 whole characters (1005 bytes). */
	assert_int_equal(strlen(s), 335 * 3 + REPORT_EXPORT_HASH_LEN);
	assert_memory_equal(s, name, 335 * 3);
	assert_int_equal(s[335 * 3], '~');
	free(s);
}

static uint64_t fnv1a_ref(const char *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
	return h;
}

/* The suffix is the hash of the whole name, so a reader can tell which. */
static void test_fit_name_hash(void **state)
{
	const char *name = "abcdefghijklmnopqrstuvwxyz";
	char want[64], *s;

	(void)state;
	snprintf(want, sizeof(want), "abc~%016llx", (unsigned long long)fnv1a_ref(name));
	s = report_export_fit_name(name, 20);
	assert_string_equal(s, want);
	free(s);
	/* The reference itself: FNV-1a 64 of "a" is af63dc4c8601ec8c. */
	assert_true(fnv1a_ref("a") == UINT64_C(0xaf63dc4c8601ec8c));
}

/* Bencher refuses a file with a name over 1024: every format but bmf keeps
 * the whole name, bmf shortens and counts it; two names that share 1100
 * bytes stay two benchmarks. */
static void test_export_long_names(void **state)
{
	char n1[2001], n2[2001], *b1, *b2, *list;
	struct report_export_notes notes = { 0 };
	struct results_file *f;
	json_t *doc, *x;
	const char *key;

	(void)state;
	memset(n1, 'n', 2000);
	n1[2000] = 0;
	memcpy(n2, n1, sizeof(n2));
	n2[1500] = 'm';
	b1 = bench(n1, "walltime", "10.5");
	b2 = bench(n2, "walltime", "20.5");
	(void)b1;
	(void)b2;
	assert_true(asprintf(&list, "%s, %s, %s", b1, b2, bench("short", "walltime", "3")) > 0);
	f = parse(list);

	doc = export(f, "bmf", NULL, &notes);
	assert_int_equal(json_object_size(doc), 3);
	assert_int_equal(notes.shortened, 2);
	assert_int_equal(notes.limit, 1024);
	json_object_foreach(doc, key, x) assert_true(strlen(key) <= 1024);
	assert_non_null(json_object_get(doc, "short"));
	json_decref(doc);

	notes = (struct report_export_notes){ 0 };
	doc = export(f, "gab", NULL, &notes);
	assert_int_equal(notes.shortened, 0);
	assert_string_equal(json_string_value(json_object_get(json_array_get(doc, 0), "name")), n1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(doc, 1), "name")), n2);
	json_decref(doc);

	doc = export(f, "gbench", NULL, &notes);
	assert_int_equal(notes.shortened, 0);
	assert_int_equal(rows(doc, n1, &x, 1), 1);
	assert_int_equal(rows(doc, n2, &x, 1), 1);
	json_decref(doc);
	results_free(f);
	free(list);
}

/* ---- numbers --------------------------------------------------------------- */

/* Counts of 10^10 and more keep every digit in the results file and in
 * every export; other numbers keep ten significant digits. */
static void test_whole_numbers(void **state)
{
	char *text = NULL, *b, *list;
	struct results_file *f;
	json_t *doc;

	(void)state;
	assert_int_equal(results_json_dump_mem(json_pack("{s:o, s:f, s:o, s:f}", "a",
							 results_json_num(12345678901.0), "b",
							 98765432109876.0, "c",
							 results_json_num(0.1), "d", 2.5),
					       &text),
			 0);
	assert_non_null(strstr(text, "\"a\": 12345678901,"));
	assert_non_null(strstr(text, "\"b\": 98765432109876,"));
	assert_non_null(strstr(text, "\"c\": 0.1,"));
	assert_non_null(strstr(text, "\"d\": 2.5"));
	free(text);

	b = bench("big", "callgrind", "12345678901");
	assert_true(asprintf(&list, "%s, %s", b, bench("t", "walltime", "7905.125")) > 0);
	f = parse(list);
	for (size_t i = 0; report_export_name(i); i++) {
		doc = export(f, report_export_name(i), &text, NULL);
		if (!strstr(text, "12345678901"))
			fail_msg("%s export rounds 12345678901:\n%s", report_export_name(i), text);
		assert_null(strstr(text, "e+10"));
		assert_non_null(strstr(text, "7905.125"));
		free(text);
		json_decref(doc);
	}
	results_free(f);
	free(list);
}

/* ---- gbench rows ----------------------------------------------------------- */

/* bench() with "no_time": true, as run writes a benchmark that measured
 * no time, with the interval 'lo' … 'hi' around its median. */
static char *bench_no_time(const char *name, const char *instrument, const char *value,
			   const char *lo, const char *hi)
{
	char *s;

	assert_true(
		asprintf(&s,
			 "{\"name\": \"%s\", \"instrument\": \"%s\", \"unit\": \"ns\", "
			 "\"value\": %s, \"status\": \"ok\", \"error\": null, \"no_time\": true, "
			 "\"stats\": {\"median\": %s, \"mean\": %s, \"stddev\": 1, "
			 "\"min\": %s, \"max\": %s, \"q1\": %s, \"q3\": %s, "
			 "\"samples\": 3, \"iterations_per_sample\": 10, \"cv\": 0.5, "
			 "\"ci_low\": %s, \"ci_high\": %s, \"confidence\": 0.95}, "
			 "\"raw_samples\": [%s, %s, %s], \"diagnostics\": []}",
			 name, instrument, value, value, value, value, value, value, value, lo, hi,
			 value, value, value) > 0);
	assert_true(nmade < sizeof(made) / sizeof(made[0]));
	made[nmade++] = s;
	return s;
}

static void test_gbench_rows(void **state)
{
	struct report_export_notes notes;
	char *list;
	struct results_file *f;
	json_t *doc, *r[8];

	(void)state;
	assert_true(asprintf(&list, "%s, %s, %s, %s", bench("fast", "walltime", "10.5"),
			     bench("none", "walltime", "0"), bench("dead", "walltime", NULL),
			     bench_no_time("noise", "walltime", "0.5", "-0.9", "1.5")) > 0);
	f = parse(list);
	doc = export(f, "gbench", NULL, &notes);

	/* One iteration row: the median, repetition 0 of the 3 samples, the
	 * calls per sample as its iterations. */
	assert_int_equal(rows(doc, "fast", r, 8), 1);
	assert_string_equal(json_string_value(json_object_get(r[0], "run_type")), "iteration");
	assert_string_equal(json_string_value(json_object_get(r[0], "run_name")), "fast");
	assert_int_equal(json_integer_value(json_object_get(r[0], "repetitions")), 3);
	assert_int_equal(json_integer_value(json_object_get(r[0], "repetition_index")), 0);
	assert_true(json_number_value(json_object_get(r[0], "real_time")) == 10.5);
	assert_true(json_number_value(json_object_get(r[0], "cpu_time")) == 10.5);
	assert_int_equal(json_integer_value(json_object_get(r[0], "iterations")), 10);
	/* The aggregates over the three samples, as Google Benchmark writes
	 * them: no repetition_index, repetitions and iterations the number of
	 * samples (statistics.cc: data.iterations is the count of runs). */
	static const char *const aggs[] = { "mean", "median", "stddev", "cv" };
	for (size_t k = 0; k < 4; k++) {
		char name[32];

		snprintf(name, sizeof(name), "fast_%s", aggs[k]);
		assert_int_equal(rows(doc, name, r, 8), 1);
		assert_string_equal(json_string_value(json_object_get(r[0], "run_type")),
				    "aggregate");
		assert_string_equal(json_string_value(json_object_get(r[0], "run_name")), "fast");
		assert_string_equal(json_string_value(json_object_get(r[0], "aggregate_name")),
				    aggs[k]);
		assert_string_equal(json_string_value(json_object_get(r[0], "aggregate_unit")),
				    k == 3 ? "percentage" : "time");
		assert_null(json_object_get(r[0], "repetition_index"));
		assert_int_equal(json_integer_value(json_object_get(r[0], "repetitions")), 3);
		assert_int_equal(json_integer_value(json_object_get(r[0], "iterations")), 3);
	}
	/* A time of zero not marked no_time (a file of another writer) is no
	 * time all the same. */
	assert_int_equal(rows(doc, "none", r, 8), 0);
	assert_int_equal(rows(doc, "none_median", r, 8), 0);
	/* A failure has no row (compare.py would read its real_time 0 as a
	 * -100% change), nor has a benchmark that measured no time, even with
	 * a median above zero; both are counted. */
	assert_int_equal(rows(doc, "dead", r, 8), 0);
	assert_int_equal(rows(doc, "dead_median", r, 8), 0);
	assert_int_equal(rows(doc, "noise", r, 8), 0);
	assert_int_equal(rows(doc, "noise_median", r, 8), 0);
	assert_int_equal(notes.failed, 1);
	assert_int_equal(notes.no_time, 2);
	assert_int_equal(json_array_size(json_object_get(doc, "benchmarks")), 5);
	json_decref(doc);
	results_free(f);
	free(list);

	/* A count of none is a measurement: its aggregates only, since an
	 * iteration row of 0 would make compare.py's geometric mean 0. */
	f = parse(bench("none", "callgrind", "0"));
	doc = export(f, "gbench", NULL, &notes);
	assert_int_equal(notes.no_time, 0);
	assert_int_equal(rows(doc, "none", r, 8), 0);
	assert_int_equal(rows(doc, "none_median", r, 8), 1);
	assert_true(json_number_value(json_object_get(r[0], "real_time")) == 0);
	json_decref(doc);
	results_free(f);
}

/* The same benchmarks in every format: a walltime median of 0 with an
 * interval below zero and an observed function the tool calls unresolved
 * are left out of bmf, gab and gbench alike, and counted; the others are
 * in all three. */
static void test_no_time_everywhere(void **state)
{
	struct report_export_notes notes;
	char *list, *text;
	struct results_file *f;
	json_t *doc;

	(void)state;
	assert_true(asprintf(&list, "%s, %s, %s, %s", bench("kept", "walltime", "10.5"),
			     bench_no_time("empty", "walltime", "0", "-0.0424", "-0.0029"),
			     bench_no_time("unresolved", "observe", "1337", "1237", "1437"),
			     bench("dead", "walltime", NULL)) > 0);
	f = parse(list);
	for (size_t i = 0; report_export_name(i); i++) {
		memset(&notes, 0xff, sizeof(notes));
		doc = export(f, report_export_name(i), &text, &notes);
		if (!strstr(text, "\"kept"))
			fail_msg("%s export lacks kept:\n%s", report_export_name(i), text);
		if (strstr(text, "empty") || strstr(text, "unresolved") || strstr(text, "dead") ||
		    strstr(text, "1337") || strstr(text, "-0.0"))
			fail_msg("%s export has a row without a figure:\n%s", report_export_name(i),
				 text);
		assert_int_equal(notes.failed, 1);
		assert_int_equal(notes.no_time, 2);
		assert_int_equal(notes.shortened, 0);
		free(text);
		json_decref(doc);
	}
	results_free(f);
	free(list);
}

/* ---- merged files ---------------------------------------------------------- */

/* walltime and callgrind under one name: distinct names in gbench and gab,
 * distinct measures in bmf; perf apart from callgrind. */
static void test_merged_instruments(void **state)
{
	char *list;
	struct results_file *f;
	json_t *doc, *r[8], *m;

	(void)state;
	assert_true(asprintf(&list, "%s, %s, %s, %s", bench("fib", "walltime", "100.5"),
			     bench("fib", "callgrind", "1234"), bench("fib", "perf", "1300"),
			     bench("fib", "memory", "4096")) > 0);
	f = parse(list);

	doc = export(f, "bmf", NULL, NULL);
	m = json_object_get(doc, "fib");
	assert_int_equal(json_object_size(doc), 1);
	assert_int_equal(json_object_size(m), 4);
	/* Bencher's built-in measure in bytes (B): BMF itself has no units. */
	assert_true(json_number_value(
			    json_object_get(json_object_get(m, "total-bytes"), "value")) == 4096);
	assert_true(json_number_value(json_object_get(json_object_get(m, "latency"), "value")) ==
		    100.5);
	assert_true(json_number_value(
			    json_object_get(json_object_get(m, "instructions"), "value")) == 1234);
	assert_true(json_number_value(json_object_get(json_object_get(m, "perf-instructions"),
						      "value")) == 1300);
	json_decref(doc);

	doc = export(f, "gbench", NULL, NULL);
	assert_int_equal(rows(doc, "fib", r, 8), 0);
	assert_int_equal(rows(doc, "fib (walltime)", r, 8), 1);
	assert_int_equal(rows(doc, "fib (callgrind)", r, 8), 1);
	assert_true(json_number_value(json_object_get(r[0], "instructions")) == 1234);
	assert_non_null(strstr(json_string_value(json_object_get(r[0], "label")), "instructions"));
	assert_int_equal(rows(doc, "fib (perf)_median", r, 8), 1);
	json_decref(doc);

	doc = export(f, "gab", NULL, NULL);
	assert_int_equal(json_array_size(doc), 4);
	assert_string_equal(json_string_value(json_object_get(json_array_get(doc, 1), "name")),
			    "fib (callgrind)");
	assert_string_equal(json_string_value(json_object_get(json_array_get(doc, 1), "unit")),
			    "instructions");
	json_decref(doc);
	results_free(f);
	free(list);
}

/* ---- a Google Benchmark binary's own figures -------------------------------- */

/* A gbench walltime benchmark: samples 10, 20, 30 ns, the binary's cpu times
 * 4, 6, 8 ns, its counters and label. */
static char *gbench_bench(const char *name)
{
	char *s;

	assert_true(asprintf(&s,
			     "{\"name\": \"%s\", \"instrument\": \"walltime\", \"unit\": \"ns\", "
			     "\"value\": 20, \"status\": \"ok\", \"error\": null, "
			     "\"stats\": {\"median\": 20, \"mean\": 20, \"stddev\": 10, "
			     "\"min\": 10, \"max\": 30, \"q1\": 15, \"q3\": 25, "
			     "\"samples\": 3, \"iterations_per_sample\": 100, \"cv\": 0.5, "
			     "\"ci_low\": 10, \"ci_high\": 30, \"confidence\": 0.95}, "
			     "\"raw_samples\": [10, 20, 30], \"diagnostics\": [], "
			     "\"counters\": {\"cpu_time\": 6, \"bytes_per_second\": 1.5e9, "
			     "\"size\": 8, \"lost\": null}, "
			     "\"gbench\": {\"cpu_time\": [4, 8, 6], \"label\": \"one copy\"}}",
			     name) > 0);
	assert_true(nmade < sizeof(made) / sizeof(made[0]));
	made[nmade++] = s;
	return s;
}

/* cpu_time, label and counters are the binary's in gbench rows: the median
 * and the aggregates of its cpu times, its counters in the iteration and
 * median rows; benchtrap's own walltime repeats real_time. */
static void test_gbench_reported(void **state)
{
	char *list;
	struct results_file *f;
	json_t *doc, *r[2];

	(void)state;
	assert_true(asprintf(&list, "%s, %s", gbench_bench("BM_m/8"),
			     bench("own", "walltime", "100")) > 0);
	f = parse(list);
	assert_true(f->benches[0].gbench && f->benches[0].ngbench_cpu == 3);
	assert_string_equal(f->benches[0].gbench_label, "one copy");
	assert_int_equal(f->benches[0].ncounters, 4);
	assert_true(isnan(f->benches[0].counter_values[3]));
	assert_false(f->benches[1].gbench);

	doc = export(f, "gbench", NULL, NULL);
	assert_int_equal(rows(doc, "BM_m/8", r, 2), 1);
	assert_true(json_number_value(json_object_get(r[0], "real_time")) == 20);
	assert_true(json_number_value(json_object_get(r[0], "cpu_time")) == 6);
	assert_string_equal(json_string_value(json_object_get(r[0], "label")), "one copy");
	assert_true(json_number_value(json_object_get(r[0], "bytes_per_second")) == 1.5e9);
	assert_true(json_number_value(json_object_get(r[0], "size")) == 8);
	assert_null(json_object_get(r[0], "lost"));
	assert_int_equal(rows(doc, "BM_m/8_mean", r, 2), 1);
	assert_true(json_number_value(json_object_get(r[0], "cpu_time")) == 6);
	assert_true(json_number_value(json_object_get(r[0], "real_time")) == 20);
	assert_null(json_object_get(r[0], "size"));
	assert_string_equal(json_string_value(json_object_get(r[0], "label")), "one copy");
	assert_int_equal(rows(doc, "BM_m/8_stddev", r, 2), 1);
	assert_true(fabs(json_number_value(json_object_get(r[0], "cpu_time")) - 2) < 1e-9);
	assert_int_equal(rows(doc, "BM_m/8_median", r, 2), 1);
	assert_true(json_number_value(json_object_get(r[0], "size")) == 8);
	assert_int_equal(rows(doc, "own", r, 2), 1);
	assert_true(json_number_value(json_object_get(r[0], "cpu_time")) == 100);
	assert_null(json_object_get(r[0], "label"));
	json_decref(doc);
	results_free(f);
	free(list);
}

/* A malformed "gbench" or "counters" is bad input, named by its path. */
static void test_gbench_reported_bad(void **state)
{
	static const char *const bad[] = {
		"\"counters\": [1]",
		"\"counters\": {\"x\": \"1\"}",
		"\"gbench\": 1",
		"\"gbench\": {\"cpu_time\": [\"a\"]}",
		"\"gbench\": {\"label\": 3}",
	};
	static const char head[] =
		"{\"schema\": \"benchtrap-results/1\", \"environment\": {}, \"benchmarks\": "
		"[{\"name\": \"a\", \"instrument\": \"walltime\", \"unit\": \"ns\", "
		"\"value\": null, \"status\": \"failed\", \"error\": \"x\", \"stats\": null, ";

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct results_file *f = NULL;
		char *text, *err = NULL;

		assert_true(asprintf(&text, "%s%s}]}", head, bad[i]) > 0);
		assert_int_equal(results_parse(text, strlen(text), "t.json", &f, &err), -EINVAL);
		assert_non_null(err);
		assert_non_null(strstr(err, "benchmarks[0]."));
		assert_null(f);
		free(err);
		free(text);
	}
}

/* Nothing exported: the notes say so (export then writes nothing). */
static void test_exported_count(void **state)
{
	struct report_export_notes notes;
	struct results_file *f;
	char *list;
	json_t *doc;

	(void)state;
	assert_true(asprintf(&list, "%s, %s", bench("gone", "walltime", NULL),
			     bench("fib", "walltime", "100")) > 0);
	f = parse(list);
	doc = export(f, "gab", NULL, &notes);
	assert_int_equal(notes.exported, 1);
	assert_int_equal(notes.failed, 1);
	json_decref(doc);
	results_free(f);
	free(list);
	f = parse(bench("gone", "walltime", NULL));
	doc = export(f, "bmf", NULL, &notes);
	assert_int_equal(notes.exported, 0);
	assert_int_equal(json_object_size(doc), 0);
	json_decref(doc);
	results_free(f);
}

/* observe's calls of one quantized length: an interval of no width, and a
 * ± on every figure; bmf's bounds carry the ±. */
static void test_bmf_observe_bounds(void **state)
{
	struct report_export_notes notes = { 0 };
	struct results_file *f;
	json_t *doc, *m;

	(void)state;
	f = parse("{\"name\": \"q\", \"instrument\": \"observe\", \"unit\": \"ns\", "
		  "\"value\": 100, \"status\": \"ok\", \"error\": null, "
		  "\"stats\": {\"median\": 100, \"mean\": 100, \"stddev\": 0, "
		  "\"min\": 100, \"max\": 100, \"q1\": 100, \"q3\": 100, "
		  "\"samples\": 3, \"iterations_per_sample\": 1, \"cv\": 0, "
		  "\"ci_low\": 100, \"ci_high\": 100, \"confidence\": 0.95, "
		  "\"uncertainty\": 12.5}, "
		  "\"raw_samples\": [100, 100, 100], \"diagnostics\": []}");
	doc = export(f, "bmf", NULL, &notes);
	m = json_object_get(json_object_get(doc, "q"), "latency");
	if (!m) {
		const char *key;
		json_t *x;

		json_object_foreach(json_object_get(doc, "q"), key, x) m = x;
	}
	assert_non_null(m);
	assert_true(json_number_value(json_object_get(m, "lower_value")) == 87.5);
	assert_true(json_number_value(json_object_get(m, "upper_value")) == 112.5);
	assert_true(json_number_value(json_object_get(m, "value")) == 100);
	json_decref(doc);
	results_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_fit_name, forget),
		cmocka_unit_test_teardown(test_fit_name_utf8, forget),
		cmocka_unit_test_teardown(test_fit_name_hash, forget),
		cmocka_unit_test_teardown(test_export_long_names, forget),
		cmocka_unit_test(test_bmf_observe_bounds),
		cmocka_unit_test_teardown(test_whole_numbers, forget),
		cmocka_unit_test_teardown(test_gbench_rows, forget),
		cmocka_unit_test_teardown(test_no_time_everywhere, forget),
		cmocka_unit_test_teardown(test_merged_instruments, forget),
		cmocka_unit_test_teardown(test_gbench_reported, forget),
		cmocka_unit_test_teardown(test_gbench_reported_bad, forget),
		cmocka_unit_test_teardown(test_exported_count, forget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
