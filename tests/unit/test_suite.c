/* SPDX-License-Identifier: MIT */
/* The table of kinds of suite (controller/suite/suite.c): its rows, their
 * cells, and the reserved target arguments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "measure/measure.h"
#include "suite/suite.h"

static const struct suite_kind *kind_named(const char *name)
{
	size_t n;
	const struct suite_kind *k = suite_kinds(&n);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(k[i].name, name))
			return &k[i];
	return NULL;
}

/* Every row says what it is and, per instrument, what measures it or why
 * nothing does; the native row is last and takes any binary. */
static void test_rows(void **state)
{
	size_t n;
	const struct suite_kind *k = suite_kinds(&n);

	(void)state;
	assert_true(n >= 2);
	assert_ptr_equal(suite_native(), &k[n - 1]);
	assert_null(k[n - 1].detect);
	assert_string_equal(k[n - 1].name, "benchtrap");
	for (size_t i = 0; i < n; i++) {
		assert_non_null(k[i].name);
		assert_non_null(k[i].title);
		if (i + 1 < n)
			assert_non_null(k[i].detect);
		/* A kind that lists makes a spec of each name. */
		assert_true(!k[i].list == !k[i].spec);
		if (k[i].lists_by_running)
			assert_non_null(k[i].list);
		for (int c = 0; c < MEASURE_N_INSTRUMENTS; c++) {
			const struct suite_leaf *l = &k[i].leaf[c];

			/* Runs one way, or is refused with a reason. */
			assert_true(suite_leaf_runs(l) || l->refusal);
			assert_false(l->run && l->own);
			assert_false(l->paired && l->own);
		}
	}
}

/* The native row's cells are the instruments' rows. */
static void test_native_cells(void **state)
{
	size_t n;
	const struct measure_instrument *ins = measure_instruments(&n);
	const struct suite_kind *native = suite_native();

	(void)state;
	for (size_t i = 0; i < n; i++) {
		const struct suite_leaf *l = &native->leaf[ins[i].id];

		assert_ptr_equal(l->run, ins[i].run);
		assert_int_equal(l->options & ~SUITE_PRELOADS, ins[i].options);
		assert_int_equal(!!(l->options & SUITE_PRELOADS),
				 measure_instrument_has(&ins[i], MEASURE_PRELOADS));
		assert_int_equal(!!l->paired, measure_instrument_has(&ins[i], MEASURE_PAIRABLE));
	}
	assert_ptr_equal(native->leaf[MEASURE_WALLTIME].paired, measure_walltime_paired);
}

/* Google Benchmark: perf refused with its reason, walltime paired, none of
 * the instruments' options applying, its flags reserved. */
static void test_gbench_row(void **state)
{
	const struct suite_kind *g = kind_named("gbench");

	(void)state;
	assert_non_null(g);
	assert_string_equal(g->title, "Google Benchmark");
	assert_true(g->lists_by_running);
	assert_false(suite_leaf_runs(&g->leaf[MEASURE_PERF]));
	assert_non_null(g->leaf[MEASURE_PERF].refusal);
	assert_true(suite_leaf_pairs(&g->leaf[MEASURE_WALLTIME]));
	assert_true(suite_leaf_runs(&g->leaf[MEASURE_CALLGRIND]));
	assert_false(suite_leaf_pairs(&g->leaf[MEASURE_CALLGRIND]));
	assert_true(suite_leaf_runs(&g->leaf[MEASURE_MEMORY]));
	for (int c = 0; c < MEASURE_N_INSTRUMENTS; c++)
		assert_int_equal(g->leaf[c].options, 0);
}

static void test_reserved(void **state)
{
	const struct suite_kind *g = kind_named("gbench");
	char *args[] = { "--benchmark_min_time=0.1", "--verbose", "--benchmark_filterx=1" };
	char *v2[] = { "--benchmark_repetitions=3", "--v=2" };
	char *filter[] = { "--benchmark_filter" };

	(void)state;
	assert_null(suite_reserved_arg(g, args, 3));
	assert_string_equal(suite_reserved_arg(g, v2, 2), "--v=2");
	assert_string_equal(suite_reserved_arg(g, filter, 1), "--benchmark_filter");
	assert_null(suite_reserved_arg(g, v2, 0));
	/* The native row reserves nothing. */
	assert_null(suite_reserved_arg(suite_native(), v2, 2));
}

/* A word that is no option's value is a positional filter (divan's,
 * criterion's): refused; a value is not one, an optional value only when
 * it is true or false. */
static void test_positional(void **state)
{
	const struct suite_kind *d = kind_named("divan"), *c = kind_named("criterion");
	char *values[] = { "--sample-count", "5", "--min-time=0.1", "--max-time", "2" };
	char *filter[] = { "--sample-count", "5", "fib" };
	char *opt_true[] = { "--skip-ext-time", "true", "--timer", "os" };
	char *opt_word[] = { "--skip-ext-time", "fib" };
	char *after[] = { "--timer", "os", "--", "--x" };
	char *crit[] = { "--warm-up-time", "1", "-c", "never", "sum_1000" };

	(void)state;
	assert_null(suite_reserved_arg(d, values, 5));
	assert_string_equal(suite_reserved_arg(d, filter, 3), "fib");
	assert_null(suite_reserved_arg(d, opt_true, 4));
	assert_string_equal(suite_reserved_arg(d, opt_word, 2), "fib");
	assert_string_equal(suite_reserved_arg(d, after, 4), "--x");
	/* A value at the end is still its option's. */
	assert_null(suite_reserved_arg(d, values, 4));
	assert_string_equal(suite_reserved_arg(c, crit, 5), "sum_1000");
	assert_null(suite_reserved_arg(c, crit, 4));
	/* gbench takes no positional word: its own. */
	assert_null(suite_reserved_arg(kind_named("gbench"), filter, 3));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_native_cells),
		cmocka_unit_test(test_gbench_row),
		cmocka_unit_test(test_reserved),
		cmocka_unit_test(test_positional),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
