/* SPDX-License-Identifier: MIT */
/*
 * Threaded benchmarks, without running one: the --threads list, each
 * benchmark expanded once per count (names, order, BENCHTRAP_THREADS
 * registrations replaced, shards), and the results file's threads and
 * per_thread written, read back and merged.
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
#include <unistd.h>

#include <cmocka.h>

#include "measure/measure.h"
#include "report/report.h"
#include "results/results.h"

/* Parse 'text' into a fresh list; the return of measure_threads_parse. */
static int parse(const char *text, struct measure_threads *list, struct measure_threads_bad *bad)
{
	*list = (struct measure_threads){ 0 };
	return measure_threads_parse(text, list, bad);
}

static void test_parse_valid(void **state)
{
	struct measure_threads l;
	struct measure_threads_bad bad;

	assert_int_equal(parse("1", &l, &bad), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.v[0], 1);

	/* In the order given, not sorted. */
	assert_int_equal(parse("4,1,2", &l, &bad), 0);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.v[0], 4);
	assert_int_equal(l.v[1], 1);
	assert_int_equal(l.v[2], 2);

	assert_int_equal(parse("64", &l, &bad), 0);
	assert_int_equal(l.v[0], MEASURE_MAX_THREADS);
	assert_int_equal(parse("007", &l, &bad), 0);
	assert_int_equal(l.v[0], 7);

	/* Every count at once fits. */
	char all[512] = "";

	for (unsigned i = 1; i <= MEASURE_MAX_THREADS; i++)
		snprintf(all + strlen(all), sizeof(all) - strlen(all), "%s%u", i > 1 ? "," : "", i);
	assert_int_equal(parse(all, &l, &bad), 0);
	assert_int_equal(l.n, MEASURE_MAX_THREADS);
	assert_int_equal(l.v[63], 64);

	/* A second --threads adds to the list. */
	assert_int_equal(parse("1,2", &l, &bad), 0);
	assert_int_equal(measure_threads_parse("8", &l, &bad), 0);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.v[2], 8);
}

static void test_parse_errors(void **state)
{
	static const struct {
		const char *text;
		enum measure_threads_bad_what what;
		const char *item;
	} cases[] = {
		{ "", MEASURE_THREADS_EMPTY, "" },
		{ ",", MEASURE_THREADS_EMPTY, "" },
		{ "1,,2", MEASURE_THREADS_EMPTY, "" },
		{ "1,", MEASURE_THREADS_EMPTY, "" },
		{ ",1", MEASURE_THREADS_EMPTY, "" },
		{ "x", MEASURE_THREADS_NOT_NUMBER, "x" },
		{ "1,x", MEASURE_THREADS_NOT_NUMBER, "x" },
		{ "2x", MEASURE_THREADS_NOT_NUMBER, "2x" },
		{ "-1", MEASURE_THREADS_NOT_NUMBER, "-1" },
		{ "+2", MEASURE_THREADS_NOT_NUMBER, "+2" },
		{ " 2", MEASURE_THREADS_NOT_NUMBER, " 2" },
		{ "1.5", MEASURE_THREADS_NOT_NUMBER, "1.5" },
		{ "1;2", MEASURE_THREADS_NOT_NUMBER, "1;2" },
		{ "0", MEASURE_THREADS_RANGE, "0" },
		{ "000", MEASURE_THREADS_RANGE, "000" },
		{ "65", MEASURE_THREADS_RANGE, "65" },
		{ "1,2,100", MEASURE_THREADS_RANGE, "100" },
		{ "99999999999999999999999", MEASURE_THREADS_RANGE, "99999999999999999999999" },
		{ "1,1", MEASURE_THREADS_REPEATED, "1" },
		{ "2,4,02", MEASURE_THREADS_REPEATED, "02" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct measure_threads l;
		struct measure_threads_bad bad = { .what = 99 };

		if (parse(cases[i].text, &l, &bad) != -EINVAL)
			fail_msg("'%s' was accepted", cases[i].text);
		if (bad.what != cases[i].what)
			fail_msg("'%s': error %d, not %d", cases[i].text, bad.what, cases[i].what);
		assert_string_equal(bad.item, cases[i].item);
	}

	/* An item too long to repeat is cut, and the list is left as it was. */
	struct measure_threads l = { .v = { 3 }, .n = 1 };
	struct measure_threads_bad bad;
	char longer[100];

	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	assert_int_equal(measure_threads_parse(longer, &l, &bad), -EINVAL);
	assert_int_equal(strlen(bad.item), sizeof(bad.item) - 1);
	assert_int_equal(measure_threads_parse("4,5,3", &l, &bad), -EINVAL);
	assert_int_equal(bad.what, MEASURE_THREADS_REPEATED);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.v[0], 3);
}

/* A selection as measure_select makes it: registered benchmarks (one with
 * an argument), BENCHTRAP_THREADS registrations, and --symbol calls. */
static void add(struct measure_selection *s, const char *name, const char *symbol, uint64_t addr,
		unsigned nargs, unsigned threads)
{
	struct bench_spec *v = realloc(s->v, (s->n + 1) * sizeof(*v));

	assert_non_null(v);
	s->v = v;
	s->cap = s->n + 1;
	v[s->n] = (struct bench_spec){ .name = strdup(name),
				       .symbol = strdup(symbol),
				       .object = strdup("/bin/x"),
				       .build_id = strdup("abcd"),
				       .in_main = true,
				       .registered = nargs < 3,
				       .link_addr = addr,
				       .args = { 1, 2 },
				       .nargs = nargs,
				       .threads = threads };
	s->n++;
}

static void expect_names(const struct measure_selection *s, const char *const *names, size_t n)
{
	for (size_t i = 0; i < s->n && i < n; i++)
		if (strcmp(s->v[i].name, names[i]) != 0)
			fail_msg("benchmark %zu is '%s', not '%s'", i, s->v[i].name, names[i]);
	assert_int_equal(s->n, n);
}

static void test_expand(void **state)
{
	struct measure_selection s = { 0 };
	struct measure_threads counts = { .v = { 2, 1, 8 }, .n = 3 };

	add(&s, "empty", "benchtrap_bench_empty", 0x1000, 0, 0);
	add(&s, "fib[20]", "benchtrap_bench_fib", 0x2000, 1, 0);
	add(&s, "f(1,2)", "f", 0x3000, 2, 0);
	assert_int_equal(measure_select_threads(&s, &counts), 0);

	static const char *const want[] = {
		"empty[threads=2]",   "empty[threads=1]",   "empty[threads=8]",
		"fib[20][threads=2]", "fib[20][threads=1]", "fib[20][threads=8]",
		"f(1,2)[threads=2]",  "f(1,2)[threads=1]",  "f(1,2)[threads=8]",
	};

	expect_names(&s, want, 9);
	/* Each copy is whole, with its own count. */
	for (size_t i = 0; i < s.n; i++) {
		assert_int_equal(s.v[i].threads, counts.v[i % 3]);
		assert_string_equal(s.v[i].object, "/bin/x");
		assert_string_equal(s.v[i].build_id, "abcd");
		assert_true(s.v[i].in_main);
	}
	assert_string_equal(s.v[3].symbol, "benchtrap_bench_fib");
	assert_int_equal(s.v[4].nargs, 1);
	assert_int_equal(s.v[4].args[0], 1);
	assert_int_equal(s.v[7].nargs, 2);
	assert_int_equal(s.v[8].link_addr, 0x3000);
	measure_selection_clear(&s);

	/* --threads 1 alone: the default, the names stay plain. */
	counts = (struct measure_threads){ .v = { 1 }, .n = 1 };
	add(&s, "fib[20]", "benchtrap_bench_fib", 0x2000, 1, 0);
	add(&s, "f(1,2)", "f", 0x3000, 2, 0);
	assert_int_equal(measure_select_threads(&s, &counts), 0);
	expect_names(&s, (const char *const[]){ "fib[20]", "f(1,2)" }, 2);
	assert_int_equal(s.v[0].threads, 1);
	measure_selection_clear(&s);

	/* One count other than 1 is named. */
	counts = (struct measure_threads){ .v = { 4 }, .n = 1 };
	add(&s, "fib[20]", "benchtrap_bench_fib", 0x2000, 1, 0);
	assert_int_equal(measure_select_threads(&s, &counts), 0);
	expect_names(&s, (const char *const[]){ "fib[20][threads=4]" }, 1);
	measure_selection_clear(&s);

	/* No list: as selected. */
	counts = (struct measure_threads){ 0 };
	add(&s, "counter[threads=2]", "benchtrap_bench_counter", 0x4000, 0, 2);
	assert_int_equal(measure_select_threads(&s, &counts), 0);
	expect_names(&s, (const char *const[]){ "counter[threads=2]" }, 1);
	assert_int_equal(s.v[0].threads, 2);
	measure_selection_clear(&s);
}

/* --threads replaces the counts of a BENCHTRAP_THREADS registration: its
 * selected counts become one benchmark, run at the given ones. */
static void test_expand_registered(void **state)
{
	struct measure_selection s = { 0 };
	struct measure_threads counts = { .v = { 3, 5 }, .n = 2 };

	add(&s, "counter[threads=4]", "benchtrap_bench_counter", 0x4000, 0, 4);
	add(&s, "alpha", "benchtrap_bench_alpha", 0x1000, 0, 0);
	add(&s, "counter[threads=1]", "benchtrap_bench_counter", 0x4000, 0, 1);
	/* BENCHTRAP_THREADS(solo, 1) is named as BENCHTRAP(solo). */
	add(&s, "solo", "benchtrap_bench_solo", 0x5000, 0, 1);
	add(&s, "counter[threads=2]", "benchtrap_bench_counter", 0x4000, 0, 2);
	assert_int_equal(measure_select_threads(&s, &counts), 0);

	static const char *const want[] = {
		"counter[threads=3]", "counter[threads=5]", "alpha[threads=3]",
		"alpha[threads=5]",   "solo[threads=3]",    "solo[threads=5]",
	};

	expect_names(&s, want, 6);
	assert_int_equal(s.v[0].threads, 3);
	assert_int_equal(s.v[1].threads, 5);
	measure_selection_clear(&s);

	/* --threads 1: each registration once, plain. */
	counts = (struct measure_threads){ .v = { 1 }, .n = 1 };
	add(&s, "counter[threads=1]", "benchtrap_bench_counter", 0x4000, 0, 1);
	add(&s, "counter[threads=2]", "benchtrap_bench_counter", 0x4000, 0, 2);
	add(&s, "counter[threads=4]", "benchtrap_bench_counter", 0x4000, 0, 4);
	assert_int_equal(measure_select_threads(&s, &counts), 0);
	expect_names(&s, (const char *const[]){ "counter" }, 1);
	assert_int_equal(s.v[0].threads, 1);
	measure_selection_clear(&s);
}

/* Expanded first, sharded after: every NAME[threads=N] falls in the part
 * its own name hashes to, so the counts of one benchmark spread over the
 * parts, and the parts together are the whole expansion. */
static void test_expand_then_shard(void **state)
{
	static const char *const bases[] = { "a", "bb", "fib[20]", "f(1,2)", "counter" };
	struct measure_threads counts = { .v = { 1, 2, 4, 8 }, .n = 4 };
	const unsigned nshards = 3;
	size_t seen = 0;
	bool split = false;

	for (unsigned k = 1; k <= nshards; k++) {
		struct measure_selection s = { 0 };

		for (size_t i = 0; i < 5; i++)
			add(&s, bases[i], "sym", 0x1000 * (i + 1), i == 2, 0);
		assert_int_equal(measure_select_threads(&s, &counts), 0);
		assert_int_equal(s.n, 20);
		measure_select_shard(&s, k, nshards);
		for (size_t i = 0; i < s.n; i++) {
			const char *suffix = strstr(s.v[i].name, "[threads=");

			assert_int_equal(results_shard_of(s.v[i].name, nshards), k - 1);
			assert_non_null(suffix);
			/* The counts of one base, in the order given. */
			if (i && !strncmp(s.v[i].name, s.v[i - 1].name,
					  (size_t)(suffix - s.v[i].name) + 1))
				assert_true(s.v[i].threads > s.v[i - 1].threads);
		}
		/* Some part holds part of one benchmark's counts only. */
		for (size_t i = 0; i < s.n; i++) {
			size_t same = 0;

			for (size_t j = 0; j < s.n; j++)
				same += !strcmp(s.v[j].symbol, s.v[i].symbol) &&
					s.v[j].link_addr == s.v[i].link_addr;
			split = split || (same > 0 && same < 4);
		}
		seen += s.n;
		measure_selection_clear(&s);
	}
	assert_int_equal(seen, 20);
	assert_true(split);
}

/* The results file: threads and per_thread for a benchmark on more than
 * one thread, nothing new for one on one thread; read back as written. */
static void test_results_round_trip(void **state)
{
	struct measure_plan plan;
	struct bench_spec specs[3] = {
		{ .name = "counter[threads=2]", .object = "/bin/x", .threads = 2 },
		{ .name = "counter[threads=1]", .object = "/bin/x", .threads = 1 },
		{ .name = "crash[threads=4]", .object = "/bin/x", .threads = 4 },
	};
	double samples[1] = { 10.0 };
	struct measure_thread per[2] = { { .tid = 101, .value = 9.5 },
					 { .tid = 102, .value = NAN } };
	struct bench_result results[3] = {
		{ .spec = &specs[0],
		  .status = BENCH_OK,
		  .instrument = "walltime",
		  .unit = "ns",
		  .value = 10.0,
		  .samples = samples,
		  .nsamples = 1,
		  .iterations = 10,
		  .threads = per,
		  .nthreads = 2 },
		{ .spec = &specs[1],
		  .status = BENCH_OK,
		  .instrument = "walltime",
		  .unit = "ns",
		  .value = 10.0,
		  .samples = samples,
		  .nsamples = 1,
		  .iterations = 10 },
		{ .spec = &specs[2],
		  .status = BENCH_FAILED,
		  .instrument = "walltime",
		  .unit = "ns",
		  .error = "exited with status 1" },
	};
	char *argv[] = { "run", "/bin/x" };
	struct report_run run = { .instrument = "walltime",
				  .isolation = "benchmark",
				  .plan = &plan,
				  .argv = argv,
				  .argc = 2,
				  .results = results,
				  .n = 3 };
	struct results_file *f = NULL;
	char *text = NULL, *err = NULL;

	measure_plan_default(&plan);
	for (int i = 0; i < 2; i++)
		assert_int_equal(stats_summarize(samples, 1, NULL, &results[i].stats), 0);
	run.env = (struct results_env){
		.binary = "/bin/x", .benchtrap = "0.1.0", .date = "2026-12-02T00:00:00Z", .cores = 2
	};
	assert_int_equal(report_write_json_mem(&run, &text), 0);
	assert_non_null(strstr(text, "\"per_thread\""));
	/* One thread: the benchmark is written as before threads existed. */
	char *one = strstr(text, "\"counter[threads=1]\""), *next;

	assert_non_null(one);
	next = strstr(one, "\"crash[threads=4]\"");
	assert_non_null(next);
	*next = '\0';
	assert_null(strstr(one, "\"threads\""));
	assert_null(strstr(one, "\"per_thread\""));
	*next = '"';

	assert_int_equal(results_parse(text, strlen(text), "t.json", &f, &err), 0);
	assert_int_equal(f->n, 3);
	assert_int_equal(f->benches[0].threads, 2);
	assert_int_equal(f->benches[0].nper_thread, 2);
	assert_int_equal(f->benches[0].per_thread[0].tid, 101);
	assert_true(f->benches[0].per_thread[0].value == 9.5);
	assert_int_equal(f->benches[0].per_thread[1].tid, 102);
	assert_true(isnan(f->benches[0].per_thread[1].value));
	assert_int_equal(f->benches[1].threads, 0);
	assert_null(f->benches[1].per_thread);
	/* A failed one says how many threads it was to run on, and has no
	 * figures. */
	assert_int_equal(f->benches[2].threads, 4);
	assert_int_equal(f->benches[2].nper_thread, 0);
	results_free(f);
	free(text);
}

/* merge joins shards as written: a benchmark's threads and per_thread
 * come out as they went in. */
static void test_results_merge(void **state)
{
	static const char doc[] =
		"{\"schema\":\"benchtrap-results/1\",\"environment\":{\"binary\":\"b\"},"
		"\"run\":{\"instrument\":\"walltime\"},\"benchmarks\":[{\"name\":\"%s\","
		"\"instrument\":\"walltime\",\"unit\":\"ns\",\"status\":\"ok\",\"value\":5,"
		"\"stats\":{\"median\":5,\"mean\":5,\"stddev\":0,\"min\":5,\"max\":5,\"q1\":5,"
		"\"q3\":5,\"samples\":1,\"iterations_per_sample\":1},\"threads\":%u,"
		"\"per_thread\":[{\"tid\":7,\"value\":4.5},{\"tid\":8,\"value\":5.5}]}]}";
	char dir[] = "/tmp/benchtrap-test-threads-XXXXXX", out[64], text[1024];
	struct results_file *in[2] = { NULL, NULL }, *merged = NULL;
	char *err = NULL;

	assert_non_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/merged.json", dir);
	snprintf(text, sizeof(text), doc, "c[threads=2]", 2u);
	assert_int_equal(results_parse(text, strlen(text), "a.json", &in[0], NULL), 0);
	snprintf(text, sizeof(text), doc, "c[threads=4]", 4u);
	assert_int_equal(results_parse(text, strlen(text), "b.json", &in[1], NULL), 0);
	assert_int_equal(results_merge(in, 2, out, 0, &err), 0);
	assert_int_equal(results_load(out, &merged, &err), 0);
	assert_int_equal(merged->n, 2);
	assert_int_equal(merged->benches[0].threads, 2);
	assert_int_equal(merged->benches[1].threads, 4);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(merged->benches[i].nper_thread, 2);
		assert_int_equal(merged->benches[i].per_thread[1].tid, 8);
		assert_true(merged->benches[i].per_thread[0].value == 4.5);
	}
	results_free(merged);
	results_free(in[0]);
	results_free(in[1]);
	unlink(out);
	rmdir(dir);
}

static void test_results_parse_errors(void **state)
{
	static const char head[] =
		"{\"schema\":\"benchtrap-results/1\",\"environment\":{},\"benchmarks\":[{"
		"\"name\":\"c[threads=2]\",\"instrument\":\"walltime\",\"unit\":\"ns\","
		"\"status\":\"failed\",";
	static const struct {
		const char *tail, *message;
	} cases[] = {
		{ "\"threads\":\"2\"}]}", "benchmarks[0].threads: expected a whole number" },
		{ "\"threads\":0}]}", "benchmarks[0].threads: expected a whole number from 1" },
		{ "\"threads\":-2}]}", "benchmarks[0].threads: expected a whole number" },
		{ "\"threads\":2,\"per_thread\":{}}]}",
		  "benchmarks[0].per_thread: expected an array" },
		{ "\"threads\":2,\"per_thread\":[1]}]}",
		  "benchmarks[0].per_thread[0]: expected an object" },
		{ "\"threads\":2,\"per_thread\":[{\"value\":1}]}]}",
		  "benchmarks[0].per_thread[0].tid: missing" },
		{ "\"threads\":2,\"per_thread\":[{\"tid\":1,\"value\":\"x\"}]}]}",
		  "benchmarks[0].per_thread[0].value: expected a number" },
		{ "\"threads\":2,\"per_thread\":[{\"tid\":1,\"value\":1},{\"tid\":2,\"value\":1},"
		  "{\"tid\":3,\"value\":1}]}]}",
		  "benchmarks[0].per_thread: 3 threads, but threads is 2" },
		{ "\"per_thread\":[]}]}", "benchmarks[0].per_thread: present, but threads is not" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char doc[512];
		struct results_file *f = NULL;
		char *err = NULL;

		snprintf(doc, sizeof(doc), "%s%s", head, cases[i].tail);
		if (results_parse(doc, strlen(doc), "t.json", &f, &err) != -EINVAL)
			fail_msg("accepted: %s", doc);
		if (!err || !strstr(err, cases[i].message))
			fail_msg("'%s' does not say '%s'", err ? err : "(null)", cases[i].message);
		free(err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_valid),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_expand_registered),
		cmocka_unit_test(test_expand_then_shard),
		cmocka_unit_test(test_results_round_trip),
		cmocka_unit_test(test_results_merge),
		cmocka_unit_test(test_results_parse_errors),
	};

	return cmocka_run_group_tests_name("threads", tests, NULL, NULL);
}
