/* SPDX-License-Identifier: MIT */
/* Google Benchmark binaries: their list, the anchored filter, their JSON
 * output made into results, the batches' log, the per-iteration count,
 * and the names a benchmark's function may have. */
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "elf/elf.h"
#include "gbench/gbench.h"
#include "gbench/internal.h"
#include "util/strutil.h"

static void test_list(void **state)
{
	static const char out[] = "BM_memcpy/8\nBM_memcpy/64\n\nBM_x/threads:4\r\n"
				  "BM_y/real_time\nFix/Foo/16\nBM_t<int>\n";
	char **names = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(gbench_parse_list(out, strlen(out), &names, &n), 0);
	assert_int_equal(n, 6);
	assert_string_equal(names[0], "BM_memcpy/8");
	assert_string_equal(names[2], "BM_x/threads:4");
	assert_string_equal(names[3], "BM_y/real_time");
	assert_string_equal(names[5], "BM_t<int>");
	assert_null(names[6]);
	str_free_n(names, n);

	/* Nothing listed: an empty list, not an error. */
	assert_int_equal(gbench_parse_list("", 0, &names, &n), 0);
	assert_int_equal(n, 0);
	assert_null(names[0]);
	str_free_n(names, n);

	/* A name with a control character cannot be selected exactly. */
	assert_int_equal(gbench_parse_list("BM_a\nBM_\033b\n", 11, &names, &n), -EINVAL);
	/* Nor one with a NUL byte in it. */
	assert_int_equal(gbench_parse_list("BM_a\0b\n", 7, &names, &n), -EINVAL);
}

/* The filter matches its own name and no other, as a POSIX extended
 * regex (what the library compiles it as). */
static void check_filter(const char *name, const char *other)
{
	char *re = gbench_filter_regex(name);
	regex_t rx;

	assert_non_null(re);
	assert_int_equal(re[0], '^');
	assert_int_equal(re[strlen(re) - 1], '$');
	assert_int_equal(regcomp(&rx, re, REG_EXTENDED | REG_NOSUB), 0);
	assert_int_equal(regexec(&rx, name, 0, NULL, 0), 0);
	if (other)
		assert_int_not_equal(regexec(&rx, other, 0, NULL, 0), 0);
	regfree(&rx);
	free(re);
}

static void test_filter(void **state)
{
	char *re;

	(void)state;
	re = gbench_filter_regex("BM_memcpy/8");
	assert_string_equal(re, "^BM_memcpy/8$");
	free(re);
	re = gbench_filter_regex("a.b*c+(d)[e]{f}|g?h^i$j\\k");
	assert_string_equal(re, "^a\\.b\\*c\\+\\(d\\)\\[e\\]\\{f\\}\\|g\\?h\\^i\\$j\\\\k$");
	free(re);
	/* Anchored: /8 does not select /80 or /8/real_time. */
	check_filter("BM_memcpy/8", "BM_memcpy/80");
	check_filter("BM_memcpy/8", "BM_memcpy/8/real_time");
	check_filter("BM_memcpy/8", "xBM_memcpy/8");
	check_filter("BM_x/threads:4", "BM_x/threads:40");
	check_filter("BM_t<int>", "BM_t<long>");
	/* A dot is a dot. */
	check_filter("BM_f/0.5", "BM_f/015");
	check_filter("BM_p/(a|b)", "BM_p/a");
	check_filter("BM_s/[x]+", "BM_s/xx");
}

static const char json[] =
	"{\"context\": {\"date\": \"x\", \"num_cpus\": 2},\n"
	" \"benchmarks\": [\n"
	"  {\"name\": \"BM_m/8\", \"run_name\": \"BM_m/8\", \"run_type\": \"iteration\",\n"
	"   \"repetitions\": 3, \"repetition_index\": 0, \"threads\": 1,\n"
	"   \"iterations\": 1000, \"real_time\": 2.0, \"cpu_time\": 1.5, \"time_unit\": \"us\",\n"
	"   \"bytes_per_second\": 4.0e9, \"size\": 8, \"label\": \"one copy\"},\n"
	"  {\"name\": \"BM_m/8\", \"run_name\": \"BM_m/8\", \"run_type\": \"iteration\",\n"
	"   \"repetitions\": 3, \"repetition_index\": 1, \"threads\": 1,\n"
	"   \"iterations\": 1000, \"real_time\": 4.0, \"cpu_time\": 2.5, \"time_unit\": \"us\",\n"
	"   \"bytes_per_second\": 2.0e9, \"size\": 8},\n"
	"  {\"name\": \"BM_m/8\", \"run_name\": \"BM_m/8\", \"run_type\": \"iteration\",\n"
	"   \"repetitions\": 3, \"repetition_index\": 2, \"threads\": 1,\n"
	"   \"iterations\": 1000, \"real_time\": 3.0, \"cpu_time\": 2.0, \"time_unit\": \"us\",\n"
	"   \"bytes_per_second\": 3.0e9, \"size\": 8},\n"
	"  {\"name\": \"BM_m/8_mean\", \"run_name\": \"BM_m/8\", \"run_type\": \"aggregate\",\n"
	"   \"aggregate_name\": \"mean\", \"iterations\": 3, \"real_time\": 3.0,\n"
	"   \"cpu_time\": 2.0, \"time_unit\": \"us\"},\n"
	"  {\"name\": \"BM_m/80\", \"run_type\": \"iteration\", \"iterations\": 5,\n"
	"   \"real_time\": 9.0, \"cpu_time\": 9.0, \"time_unit\": \"ns\"},\n"
	"  {\"name\": \"BM_t/threads:2\", \"run_type\": \"iteration\", \"threads\": 2,\n"
	"   \"iterations\": 200, \"real_time\": 0.5, \"cpu_time\": 1.0, \"time_unit\": \"ms\"},\n"
	"  {\"name\": \"BM_e\", \"run_type\": \"iteration\", \"error_occurred\": true,\n"
	"   \"error_message\": \"no input\", \"iterations\": 0}\n"
	" ]}\n";

static void test_json(void **state)
{
	struct gbench_run *runs = NULL;
	struct bench_result res;
	char *err = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(gbench_parse_json(json, strlen(json), "BM_m/8", &runs, &n, &err), 0);
	/* The three repetitions; neither the aggregate nor BM_m/80. */
	assert_int_equal(n, 3);
	assert_int_equal(runs[0].iterations, 1000);
	assert_int_equal(runs[0].threads, 1);
	assert_true(fabs(runs[0].real_ns - 2000.0) < 1e-9);
	assert_true(fabs(runs[1].cpu_ns - 2500.0) < 1e-9);
	assert_int_equal(runs[0].ncounters, 2);
	assert_string_equal(runs[0].counter_names[0], "bytes_per_second");
	assert_string_equal(runs[0].counter_names[1], "size");
	assert_string_equal(runs[0].label, "one copy");
	assert_null(runs[1].label);

	measure_result_begin(&res, NULL, "walltime", "ns");
	assert_int_equal(gbench_result_from_runs(runs, n, &res), 0);
	assert_int_equal(res.status, BENCH_OK);
	/* One sample per repetition, the median the headline. */
	assert_int_equal(res.nsamples, 3);
	assert_true(fabs(res.value - 3000.0) < 1e-9);
	assert_true(fabs(res.stats.min - 2000.0) < 1e-9);
	assert_true(fabs(res.stats.max - 4000.0) < 1e-9);
	assert_int_equal(res.iterations, 1000);
	assert_int_equal(res.calls, 3000);
	/* cpu_time, then the library's and the user's counters, medians. */
	assert_int_equal(res.ncounters, 3);
	assert_string_equal(res.counters[0].name, "cpu_time");
	assert_true(fabs(res.counters[0].value - 2000.0) < 1e-9);
	assert_string_equal(res.counters[1].name, "bytes_per_second");
	assert_true(fabs(res.counters[1].value - 3.0e9) < 1);
	assert_string_equal(res.counters[2].name, "size");
	assert_true(fabs(res.counters[2].value - 8) < 1e-9);
	/* Each repetition's cpu time, in the order of the samples, and the
	 * label the binary set. */
	assert_non_null(res.reported_cpu_ns);
	assert_true(fabs(res.reported_cpu_ns[0] - 1500.0) < 1e-9);
	assert_true(fabs(res.reported_cpu_ns[1] - 2500.0) < 1e-9);
	assert_true(fabs(res.reported_cpu_ns[2] - 2000.0) < 1e-9);
	assert_string_equal(res.reported_label, "one copy");
	bench_result_clear(&res);
	gbench_runs_free(runs, n);

	/* Threads: every thread's iterations together, times in ms. */
	assert_int_equal(gbench_parse_json(json, strlen(json), "BM_t/threads:2", &runs, &n, &err),
			 0);
	assert_int_equal(n, 1);
	assert_int_equal(runs[0].threads, 2);
	assert_int_equal(runs[0].iterations, 200);
	assert_true(fabs(runs[0].real_ns - 5e5) < 1e-6);
	gbench_runs_free(runs, n);

	/* SkipWithError: a failure saying the benchmark's own words. */
	assert_int_equal(gbench_parse_json(json, strlen(json), "BM_e", &runs, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_true(runs[0].error);
	measure_result_begin(&res, NULL, "walltime", "ns");
	assert_int_equal(gbench_result_from_runs(runs, n, &res), 0);
	assert_int_equal(res.status, BENCH_FAILED);
	assert_non_null(strstr(res.error, "no input"));
	bench_result_clear(&res);
	gbench_runs_free(runs, n);

	/* A name the output does not have: no runs, and a failed result. */
	assert_int_equal(gbench_parse_json(json, strlen(json), "BM_none", &runs, &n, &err), 0);
	assert_int_equal(n, 0);
	measure_result_begin(&res, NULL, "walltime", "ns");
	assert_int_equal(gbench_result_from_runs(runs, n, &res), 0);
	assert_int_equal(res.status, BENCH_FAILED);
	bench_result_clear(&res);
	gbench_runs_free(runs, n);

	/* Not JSON, and JSON of something else. */
	assert_int_equal(gbench_parse_json("{", 1, "BM_m/8", &runs, &n, &err), -EINVAL);
	assert_non_null(err);
	free(err);
	err = NULL;
	assert_int_equal(gbench_parse_json("{\"a\":1}", 7, "BM_m/8", &runs, &n, &err), -EINVAL);
	assert_non_null(strstr(err, "benchmarks"));
	free(err);
	err = NULL;
	/* A run without its time unit is refused, not read as ns. */
	static const char unitless[] = "{\"benchmarks\":[{\"name\":\"a\",\"iterations\":1,"
				       "\"real_time\":1,\"time_unit\":\"fortnights\"}]}";

	assert_int_equal(gbench_parse_json(unitless, strlen(unitless), "a", &runs, &n, &err),
			 -EINVAL);
	assert_non_null(strstr(err, "time_unit"));
	free(err);
	gbench_strings_clear();
}

/* Values no run that ran has are refused, the message naming the field;
 * an error run has none of them to check. */
static void test_json_bad_values(void **state)
{
	static const struct {
		const char *run, *message;
	} cases[] = {
		{ "\"iterations\":10,\"real_time\":-1,\"cpu_time\":1,\"time_unit\":\"ns\"",
		  "real_time: -1 in the run of a, where a run that ran has a time from 0" },
		{ "\"iterations\":10,\"real_time\":1,\"cpu_time\":-0.5,\"time_unit\":\"us\"",
		  "cpu_time: -0.5 in the run of a" },
		{ "\"iterations\":0,\"real_time\":1,\"time_unit\":\"ns\"",
		  "iterations: 0 in the run of a, where a run that ran has a count from 1" },
		{ "\"iterations\":5,\"real_time\":1,\"threads\":0,\"time_unit\":\"ns\"",
		  "threads: 0 in the run of a" },
		{ "\"iterations\":-5,\"real_time\":1,\"time_unit\":\"ns\"",
		  "no iterations, real_time or time_unit in the run of a" },
	};
	struct gbench_run *runs = NULL;
	size_t n = 0;
	char *err = NULL, doc[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(doc, sizeof(doc), "{\"benchmarks\":[{\"name\":\"a\",%s}]}", cases[i].run);
		runs = (struct gbench_run *)0x1;
		if (gbench_parse_json(doc, strlen(doc), "a", &runs, &n, &err) != -EINVAL || !err ||
		    strncmp(err, cases[i].message, strlen(cases[i].message)))
			fail_msg("case %zu: error '%s', expected '%s'", i, err ? err : "(none)",
				 cases[i].message);
		assert_ptr_equal(runs, (struct gbench_run *)0x1);
		free(err);
		err = NULL;
	}
	/* A run that reported an error has no figures to check. */
	static const char errored[] =
		"{\"benchmarks\":[{\"name\":\"a\",\"error_occurred\":true,"
		"\"error_message\":\"no\",\"iterations\":0,\"real_time\":-1}]}";

	assert_int_equal(gbench_parse_json(errored, strlen(errored), "a", &runs, &n, &err), 0);
	assert_int_equal(n, 1);
	gbench_runs_free(runs, n);
}

/* A list of 100,000 names is read whole, in order (its array grows by
 * doubling: the unit test of that is util's; this one must finish). */
static void test_list_many(void **state)
{
	const size_t count = 100000;
	char *text = NULL, **names = NULL;
	size_t len = 0, n = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	for (size_t i = 0; i < count; i++)
		fprintf(f, "BM_f/%zu\n", i);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(gbench_parse_list(text, len, &names, &n), 0);
	assert_int_equal(n, count);
	assert_string_equal(names[0], "BM_f/0");
	assert_string_equal(names[count - 1], "BM_f/99999");
	assert_null(names[count]);
	str_free_n(names, n);
	free(text);
}

static void test_batches(void **state)
{
	static const char log[] = "2026-12-03T12:23:40+00:00\n"
				  "Running ./bm\n"
				  "-- LOG(2): Running BM_m/8 for 1\n"
				  "-- LOG(2): Ran in 1.9e-06/2.7e-06\n"
				  "-- LOG(2): Running BM_m/80 for 7\n"
				  "-- LOG(2): Running BM_m/8 for 10\n"
				  "-- LOG(2): Running BM_m/8 for 100x\n"
				  "-- LOG(2): Running BM_m/8 for 1000\n"
				  "-- LOG(2): Running BM_m/8 for 13557";
	uint64_t it[3];
	size_t n = 0;

	(void)state;
	gbench_parse_batches(log, "BM_m/8", it, 3, &n);
	/* Four batches of this name (not BM_m/80, not a malformed count);
	 * those past the room given are counted. */
	assert_int_equal(n, 4);
	assert_int_equal(it[0], 1);
	assert_int_equal(it[1], 10);
	assert_int_equal(it[2], 1000);
	gbench_parse_batches("", "BM_m/8", it, 3, &n);
	assert_int_equal(n, 0);
}

/* Demangled names as nm -C prints those of tests/fixtures/gbench/forms.cpp,
 * built with g++ 12 against libbenchmark 1.7.1. */
static void test_match(void **state)
{
	(void)state;
	/* Plain, namespaced, nested, anonymous namespace; instances' args. */
	assert_int_equal(gbench_match_function("BM_x(benchmark::State&)", "BM_x/8"),
			 GBENCH_MATCH_EXACT);
	assert_int_equal(gbench_match_function("snappy::BM_UFlat(benchmark::State&)", "BM_UFlat"),
			 GBENCH_MATCH_EXACT);
	assert_int_equal(gbench_match_function("snappy::BM_args(benchmark::State&)", "BM_args/64"),
			 GBENCH_MATCH_EXACT);
	assert_int_equal(
		gbench_match_function("snappy::inner::BM_nested(benchmark::State&)", "BM_nested"),
		GBENCH_MATCH_EXACT);
	assert_int_equal(gbench_match_function("(anonymous namespace)::BM_anon(benchmark::State&)",
					       "BM_anon"),
			 GBENCH_MATCH_EXACT);
	assert_int_equal(gbench_match_function("snappy::BM_threads(benchmark::State&)",
					       "BM_threads/threads:2"),
			 GBENCH_MATCH_EXACT);
	/* Registered with its namespace: BENCHMARK(inner::BM_qualified). */
	assert_int_equal(gbench_match_function("snappy::inner::BM_qualified(benchmark::State&)",
					       "inner::BM_qualified"),
			 GBENCH_MATCH_EXACT);
	assert_int_equal(gbench_match_function("other::BM_qualified(benchmark::State&)",
					       "inner::BM_qualified"),
			 GBENCH_MATCH_NONE);
	/* A name is a whole component, not a part of one. */
	assert_int_equal(gbench_match_function("snappy::xBM_UFlat(benchmark::State&)", "BM_UFlat"),
			 GBENCH_MATCH_NONE);
	assert_int_equal(gbench_match_function("BM_UFlatx(benchmark::State&)", "BM_UFlat"),
			 GBENCH_MATCH_NONE);
	/* Templates: the return type, the arguments without spaces. */
	assert_int_equal(
		gbench_match_function("void snappy::BM_t<int>(benchmark::State&)", "BM_t<int>"),
		GBENCH_MATCH_EXACT);
	assert_int_equal(
		gbench_match_function("void snappy::BM_t<double>(benchmark::State&)", "BM_t<int>"),
		GBENCH_MATCH_TEMPLATE);
	assert_int_equal(gbench_match_function("void BM_t2<int, 8>(benchmark::State&)",
					       "BM_t2<int,8>/real_time"),
			 GBENCH_MATCH_EXACT);
	assert_int_equal(gbench_match_function("void BM_s<std::__cxx11::basic_string<char, "
					       "std::char_traits<char>, std::allocator<char> > >"
					       "(benchmark::State&)",
					       "BM_s<std::string>"),
			 GBENCH_MATCH_TEMPLATE);
	assert_int_equal(gbench_match_function("void snappy::BM_t<int>(benchmark::State&)", "BM_t"),
			 GBENCH_MATCH_NONE);
	/* Fixtures, namespaced, and templated (BENCHMARK_TEMPLATE_F). */
	assert_int_equal(
		gbench_match_function("snappy::Fix_Foo_Benchmark::BenchmarkCase(benchmark::State&)",
				      "Fix/Foo/16"),
		GBENCH_MATCH_EXACT);
	assert_int_equal(
		gbench_match_function("Fix_Foo_Benchmark::BenchmarkCase(benchmark::State&)",
				      "Fix<int>/Foo"),
		GBENCH_MATCH_EXACT);
	assert_int_equal(gbench_match_function(
				 "Fix_Bar_Benchmark::BenchmarkCase(benchmark::State&)", "Fix/Foo"),
			 GBENCH_MATCH_NONE);
	assert_int_equal(
		gbench_match_function("Fix_Foo_Benchmark::BenchmarkCase(benchmark::State&)", "Fix"),
		GBENCH_MATCH_NONE);
	/* Only a function taking (benchmark::State&) exactly. */
	assert_int_equal(gbench_match_function("BM_x(benchmark::State&, int)", "BM_x"),
			 GBENCH_MATCH_NONE);
	assert_int_equal(gbench_match_function("BM_x()", "BM_x"), GBENCH_MATCH_NONE);
	assert_int_equal(gbench_match_function("BM_x", "BM_x"), GBENCH_MATCH_NONE);
	assert_int_equal(gbench_match_function("ns::BM_x(benchmark::State&)", ""),
			 GBENCH_MATCH_NONE);
	/* A lambda's name is not a function's. */
	assert_int_equal(gbench_match_function("benchmark::internal::LambdaBenchmark<main::{lambda("
					       "benchmark::State&)#1}>::Run(benchmark::State&)",
					       "lambda_loop"),
			 GBENCH_MATCH_NONE);
}

static void test_batch_candidate(void **state)
{
	(void)state;
	assert_true(gbench_batch_candidate("snappy::BM_UFlat(benchmark::State&)"));
	assert_true(gbench_batch_candidate("(anonymous namespace)::BM_anon(benchmark::State&)"));
	assert_true(gbench_batch_candidate("void snappy::BM_t<int>(benchmark::State&)"));
	assert_true(gbench_batch_candidate(
		"snappy::Fix_Foo_Benchmark::BenchmarkCase(benchmark::State&)"));
	/* The lambda's body, inlined into the library's template, or not. */
	assert_true(gbench_batch_candidate("benchmark::internal::LambdaBenchmark<main::{lambda("
					   "benchmark::State&)#1}>::Run(benchmark::State&)"));
	assert_true(gbench_batch_candidate("main::{lambda(benchmark::State&)#1}::operator()"
					   "(benchmark::State&) const"));
	/* The library's own, which run before the benchmark's function. */
	assert_false(gbench_batch_candidate("benchmark::Fixture::Run(benchmark::State&)"));
	assert_false(gbench_batch_candidate("benchmark::Fixture::SetUp(benchmark::State&)"));
	assert_false(gbench_batch_candidate(
		"benchmark::internal::FunctionBenchmark::Run(benchmark::State&)"));
	assert_false(gbench_batch_candidate("snappy::Fix::SetUp(benchmark::State&)"));
	assert_false(gbench_batch_candidate("Fix::TearDown(benchmark::State&)"));
	assert_false(gbench_batch_candidate("benchmark::State::PauseTiming()"));
	assert_false(gbench_batch_candidate("BM_x(benchmark::State&, int)"));
}

/* gbench_lookup on the symbols of a real binary: tests/fixtures/gbench/forms.cpp. */
static void expect_lookup(struct elf_file *ef, const char *name, const char *function,
			  const char *other)
{
	struct gbench_lookup l;

	assert_int_equal(gbench_lookup(ef, name, &l), 0);
	if (function)
		assert_string_equal(l.function, function);
	else
		assert_null(l.function);
	if (other)
		assert_string_equal(l.other, other);
	else
		assert_null(l.other);
	gbench_lookup_clear(&l);
}

static void test_lookup(void **state)
{
	(void)state;
#ifdef GBENCH_FORMS
	struct elf_file *ef = NULL;
	const char *what;
	char *fn;
	uint64_t addr = 0;

	assert_int_equal(elf_open(GBENCH_FORMS, &ef, &what), 0);
	expect_lookup(ef, "BM_UFlat", "snappy::BM_UFlat(benchmark::State&)", NULL);
	expect_lookup(ef, "BM_args/64", "snappy::BM_args(benchmark::State&)", NULL);
	expect_lookup(ef, "BM_anon", "(anonymous namespace)::BM_anon(benchmark::State&)", NULL);
	expect_lookup(ef, "inner::BM_qualified", "snappy::inner::BM_qualified(benchmark::State&)",
		      NULL);
	expect_lookup(ef, "BM_threads/threads:2", "snappy::BM_threads(benchmark::State&)", NULL);
	/* An exact instance outranks the template's other one. */
	expect_lookup(ef, "BM_t<int>", "void snappy::BM_t<int>(benchmark::State&)", NULL);
	/* Template arguments that do not compare: both instances match. */
	struct gbench_lookup l;

	assert_int_equal(gbench_lookup(ef, "BM_s<std::string>", &l), 0);
	assert_non_null(l.function);
	assert_non_null(l.other);
	assert_string_not_equal(l.function, l.other);
	assert_non_null(strstr(l.function, "snappy::BM_s<"));
	assert_non_null(strstr(l.other, "snappy::BM_s<"));
	fn = gbench_lookup_reason(&l, "BM_s<std::string>");
	assert_non_null(strstr(fn, "'BM_s<std::string>' names more than one function"));
	free(fn);
	gbench_lookup_clear(&l);
	assert_null(gbench_function(ef, "BM_s<std::string>", &addr));
	/* A fixture: counted in the Fixture::Run the header defines. */
	expect_lookup(ef, "Fix/Foo/16", "benchmark::Fixture::Run(benchmark::State&)", NULL);
	/* A lambda: no function by that name. */
	expect_lookup(ef, "lambda_loop", NULL, NULL);
	assert_int_equal(gbench_lookup(ef, "lambda_loop", &l), 0);
	fn = gbench_lookup_reason(&l, "lambda_loop");
	assert_string_equal(fn, "no function of the binary taking (benchmark::State&) is named "
				"'lambda_loop'");
	free(fn);
	fn = gbench_function(ef, "BM_nested", &addr);
	assert_string_equal(fn, "snappy::inner::BM_nested(benchmark::State&)");
	assert_true(addr != 0);
	free(fn);
	elf_close(ef);
#else
	skip();
#endif
}

/* Which argument of benchmark::State's constructor is the iteration count,
 * across the library's versions (1.7's, 1.8's with a name before it). */
static void test_count_arg(void **state)
{
	(void)state;
	assert_int_equal(gbench_count_arg("benchmark::State::State(long, std::vector<long, "
					  "std::allocator<long> > const&, int, int, "
					  "benchmark::internal::ThreadTimer*, "
					  "benchmark::internal::ThreadManager*, "
					  "benchmark::internal::PerfCountersMeasurement*)"),
			 1);
	assert_int_equal(
		gbench_count_arg("benchmark::State::State(std::__cxx11::basic_string<char, "
				 "std::char_traits<char>, std::allocator<char> >, long, "
				 "std::vector<long, std::allocator<long> > const&, int)"),
		2);
	assert_int_equal(gbench_count_arg("benchmark::State::State(long long, int)"), 1);
	/* A long inside a template argument is not the count. */
	assert_int_equal(gbench_count_arg("benchmark::State::State(std::vector<long>, long)"), 2);
	assert_int_equal(gbench_count_arg("benchmark::State::State(int, int)"), -1);
	assert_int_equal(gbench_count_arg("benchmark::State::State(int, int, int, int, int, long)"),
			 -1);
	assert_int_equal(gbench_count_arg("benchmark::State::State()"), -1);
	assert_int_equal(gbench_count_arg("benchmark::State::State(long"), -1);
	assert_int_equal(gbench_count_arg("State"), -1);
	assert_int_equal(gbench_count_arg(NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_batches),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_batch_candidate),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_json_bad_values),
		cmocka_unit_test(test_list_many),
		cmocka_unit_test(test_count_arg),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
