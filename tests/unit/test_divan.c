/* SPDX-License-Identifier: MIT */
/* Rust divan suites: their terse list, the thread counts of a --test tree,
 * instance names, divan's table, and the fixture's row and sample
 * barrier. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "divan/divan.h"
#include "elf/elf.h"
#include "suite/suite.h"
#include "util/strutil.h"

static void test_terse(void **state)
{
	static const char out[] = "fixture::sum: benchmark\n"
				  "fixture::fib_args::10: benchmark\r\n"
				  "\n"
				  "warning: something\n"
				  "fixture::group::nested: benchmark\n";
	char **v = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(divan_parse_terse(out, sizeof(out) - 1, &v, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[0], "fixture::sum");
	assert_string_equal(v[1], "fixture::fib_args::10");
	assert_string_equal(v[2], "fixture::group::nested");
	assert_null(v[3]);
	str_free_n(v, n);
	/* A path with a control character cannot be selected exactly. */
	assert_int_equal(divan_parse_terse("a\x01: benchmark\n", 14, &v, &n), -EINVAL);
}

static void test_thread_counts(void **state)
{
	/* divan 0.1.21's --test tree of a threads = [1, 2, 4] benchmark, and
	 * of one with args whose leaves are not thread rows. */
	static const char tree[] = "fixture\n"
				   "\u2570\u2500 sum\n"
				   "   \u251c\u2500 t=1\n"
				   "   \u251c\u2500 t=2\n"
				   "   \u2570\u2500 t=4\n\n";
	static const char args[] = "fixture\n"
				   "\u2570\u2500 fib_args\n"
				   "   \u2570\u2500 10\n";
	static const char odd[] = "\u2570\u2500 t=2x\n\u2570\u2500 t=0\n\u2570\u2500 t=3";
	unsigned v[8];

	(void)state;
	assert_int_equal(divan_thread_counts(tree, sizeof(tree) - 1, v, 8), 3);
	assert_int_equal(v[0], 1);
	assert_int_equal(v[1], 2);
	assert_int_equal(v[2], 4);
	assert_int_equal(divan_thread_counts(tree, sizeof(tree) - 1, v, 2), 2);
	assert_int_equal(divan_thread_counts(args, sizeof(args) - 1, v, 8), 0);
	/* Only whole rows "t=N", N > 0; the last without its newline. */
	assert_int_equal(divan_thread_counts(odd, sizeof(odd) - 1, v, 8), 1);
	assert_int_equal(v[0], 3);
}

static void test_instance_path(void **state)
{
	unsigned t = 9;
	char *p;

	(void)state;
	p = divan_instance_path("fixture::sum/threads:2", &t);
	assert_string_equal(p, "fixture::sum");
	assert_int_equal(t, 2);
	free(p);
	p = divan_instance_path("fixture::fib_args::10", &t);
	assert_string_equal(p, "fixture::fib_args::10");
	assert_int_equal(t, 0);
	free(p);
	/* Not a thread count: the name as it is. */
	p = divan_instance_path("fixture::x/threads:two", &t);
	assert_string_equal(p, "fixture::x/threads:two");
	assert_int_equal(t, 0);
	free(p);
}

static void test_row(void **state)
{
	/* A benchmark of args under its parent, with AllocProfiler's rows
	 * after it (their samples and iters cells empty). */
	static const char table[] =
		"fixture      fastest       \u2502 slowest       \u2502 median        \u2502 mean   "
		"       \u2502 samples \u2502 iters\n"
		"\u2570\u2500 fib_args                \u2502               \u2502               "
		"\u2502               \u2502         \u2502\n"
		"   \u2570\u2500 10     125.9 ns      \u2502 2.32 \u00b5s       \u2502 127.9 ns      "
		"\u2502 347.1 ns      \u2502 10      \u2502 50\n"
		"             max alloc:    \u2502               \u2502               \u2502     "
		"          \u2502         \u2502\n";
	static const char slow[] = "\u2570\u2500 f  1.5 ms \u2502 2 s \u2502 1.25 \u00b5s \u2502 3 ms "
				   "\u2502 4 \u2502 400\n";
	double median = 0;
	uint64_t samples = 0, iters = 0;

	(void)state;
	assert_int_equal(divan_parse_row(table, sizeof(table) - 1, &median, &samples, &iters), 0);
	assert_true(median > 127.89 && median < 127.91);
	assert_int_equal(samples, 10);
	assert_int_equal(iters, 50);
	assert_int_equal(divan_parse_row(slow, sizeof(slow) - 1, &median, &samples, &iters), 0);
	assert_true(median > 1249.9 && median < 1250.1);
	assert_int_equal(iters, 400);
	/* A run that printed no benchmark's row. */
	assert_int_equal(divan_parse_row("fixture\n", 8, &median, &samples, &iters), -EINVAL);
}

static void test_fixture(void **state)
{
#ifdef HAVE_DIVAN_FIXTURE
	struct elf_file *ef = NULL;
	const char *what = NULL;
	const struct suite_kind *k;
	uint64_t addr = 0, size = 0;
	char *name = NULL;

	(void)state;
	assert_int_equal(elf_open(DIVAN_FIXTURE, &ef, &what), 0);
	assert_true(divan_detect(ef));
	k = suite_kind_of(ef);
	assert_string_equal(k->name, "divan");
	assert_true(suite_leaf_runs(&k->leaf[MEASURE_WALLTIME]));
	assert_true(suite_leaf_pairs(&k->leaf[MEASURE_WALLTIME]));
	assert_true(suite_leaf_runs(&k->leaf[MEASURE_CALLGRIND]));
	assert_true(suite_leaf_runs(&k->leaf[MEASURE_MEMORY]));
	assert_false(suite_leaf_runs(&k->leaf[MEASURE_PERF]));
	assert_non_null(k->leaf[MEASURE_PERF].refusal);
	assert_true(divan_sync_fn(ef, &addr, &size, &name));
	assert_true(addr != 0 && size != 0);
	assert_string_equal(name, "divan::benchmark::BenchContext::sample_recorder::{{closure}}::"
				  "{{closure}}::sync_impl");
	free(name);
	elf_close(ef);
	/* Another Rust binary is no divan suite. */
	assert_int_equal(elf_open(OTHER_FIXTURE, &ef, &what), 0);
	assert_false(divan_detect(ef));
	elf_close(ef);
#else
	(void)state;
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_terse),	      cmocka_unit_test(test_thread_counts),
		cmocka_unit_test(test_instance_path), cmocka_unit_test(test_row),
		cmocka_unit_test(test_fixture),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
