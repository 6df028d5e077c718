/* SPDX-License-Identifier: MIT */
/* Rust criterion suites: their list, the anchored filter, the names of
 * Bencher's batch functions, sample.json, and the figures: instructions
 * per iteration from the warm-up's doubling calls, time per iteration as
 * the least-squares slope of the measured samples. */
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

#include "criterion/criterion.h"
#include "elf/elf.h"
#include "suite/suite.h"
#include "util/strutil.h"

static void test_list(void **state)
{
	/* As criterion 0.3.6 prints it: its warnings on stdout too, a blank
	 * line after each benchmark but a group's last. */
	static const char out[] =
		"WARNING: HTML report generation will become a non-default optional feature in "
		"Criterion.rs 0.4.0.\n"
		"This feature is being moved to cargo-criterion (https://github.com/bheisler/"
		"cargo-criterion) and will be optional in a future version of Criterion.rs.\n"
		"\n"
		"Gnuplot not found, using plotters backend\n"
		"fib/10: bench\n"
		"fib/20: bench\n"
		"\n"
		"sum_1000: bench\r\n"
		"\n"
		"group/chase: bench\n"
		"a: b: bench\n"
		"not: bench at all\n"
		": bench\n"
		"last: bench";
	char **names = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(criterion_parse_list(out, strlen(out), &names, &n), 0);
	assert_int_equal(n, 6);
	assert_string_equal(names[0], "fib/10");
	assert_string_equal(names[1], "fib/20");
	assert_string_equal(names[2], "sum_1000");
	assert_string_equal(names[3], "group/chase");
	/* The id is all before the last ": bench". */
	assert_string_equal(names[4], "a: b");
	assert_string_equal(names[5], "last");
	assert_null(names[6]);
	str_free_n(names, n);

	assert_int_equal(criterion_parse_list("", 0, &names, &n), 0);
	assert_int_equal(n, 0);
	assert_null(names[0]);
	str_free_n(names, n);

	/* An id with a control character cannot be selected for sure. */
	assert_int_equal(criterion_parse_list("a\tb: bench\n", 11, &names, &n), -EINVAL);
	assert_int_equal(criterion_parse_list("a\0b: bench\n", 11, &names, &n), -EINVAL);
}

static void test_filter(void **state)
{
	char *re;

	(void)state;
	re = criterion_filter_regex("fib/20");
	assert_string_equal(re, "^fib/20$");
	free(re);
	re = criterion_filter_regex("a.b+(c)|[d]{2}^$#&-~*?\\");
	assert_string_equal(re, "^a\\.b\\+\\(c\\)\\|\\[d\\]\\{2\\}\\^\\$\\#\\&\\-\\~\\*\\?\\\\$");
	free(re);
	re = criterion_filter_regex("");
	assert_string_equal(re, "^$");
	free(re);
}

static void test_batch_names(void **state)
{
	(void)state;
	assert_true(criterion_is_batch_fn("criterion::bencher::Bencher<M>::iter"));
	assert_true(
		criterion_is_batch_fn("criterion::bencher::Bencher<M>::iter::h6be01009ae718136"));
	assert_true(criterion_is_batch_fn("criterion::bencher::Bencher<M>::iter_custom"));
	assert_true(criterion_is_batch_fn("criterion::bencher::Bencher<M>::iter_batched"));
	assert_true(criterion_is_batch_fn(
		"criterion::bencher::Bencher<M>::iter_batched_ref::h0123456789abcdef"));
	assert_true(criterion_is_batch_fn("<criterion::bencher::Bencher<criterion::measurement::"
					  "WallTime>>::iter::<u64, fixture::f::{closure#0}>"));
	/* A closure inside one, another function of Bencher, not Bencher. */
	assert_false(criterion_is_batch_fn("criterion::bencher::Bencher<M>::iter::{{closure}}"));
	assert_false(criterion_is_batch_fn(
		"criterion::bencher::Bencher<M>::iter_with_setup::h0123456789abcdef"));
	assert_false(criterion_is_batch_fn("criterion::bencher::Bencher<M>::iterate"));
	assert_false(criterion_is_batch_fn("criterion::bencher::AsyncBencher<A,M>::iter"));
	assert_false(criterion_is_batch_fn("criterion::routine::Routine::bench"));
	assert_false(criterion_is_batch_fn("mycrate::Bencher<M>::iter"));
	assert_false(
		criterion_is_batch_fn("criterion::bencher::Bencher<M>::iter::hnothex0123456789"));
}

static void test_sample(void **state)
{
	static const char doc[] = "{\"sampling_mode\":\"Linear\",\"iters\":[374.0,748.0,1122.0],"
				  "\"times\":[17214834.0,29119699.0,63660322.0]}";
	uint64_t *iters = NULL;
	double *times = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(criterion_parse_sample(doc, strlen(doc), &iters, &times, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(iters[0], 374);
	assert_int_equal(iters[2], 1122);
	assert_true(times[1] == 29119699.0);
	free(iters);
	free(times);

	static const char *const bad[] = {
		"",
		"[]",
		"{\"iters\":[1.0]}",
		"{\"iters\":[1.0,2.0],\"times\":[1.0]}",
		"{\"iters\":[],\"times\":[]}",
		"{\"iters\":[0.0],\"times\":[1.0]}",
		"{\"iters\":[1.5],\"times\":[1.0]}",
		"{\"iters\":[1.0],\"times\":[-1.0]}",
		"{\"iters\":[\"1\"],\"times\":[1.0]}",
		NULL,
	};
	for (size_t i = 0; bad[i]; i++) {
		iters = (uint64_t *)0x1;
		assert_int_equal(criterion_parse_sample(bad[i], strlen(bad[i]), &iters, &times, &n),
				 -EINVAL);
		assert_ptr_equal(iters, (uint64_t *)0x1);
	}
}

static void test_slope(void **state)
{
	/* Linear sampling, d, 2d, ...: 5 ns per iteration and 300 ns per
	 * call, exactly. */
	uint64_t it[10];
	double t[10], s = 0;

	(void)state;
	for (size_t i = 0; i < 10; i++) {
		it[i] = 374 * (i + 1);
		t[i] = 5.0 * (double)it[i] + 300;
	}
	assert_int_equal(criterion_slope(it, t, 10, &s), 0);
	assert_true(fabs(s - 5.0) < 1e-9);
	/* Noise about the line: the fit of 1,2,3 against 10,30,20 is
	 * 5 per iteration (sxy 10 over sxx 2). */
	const uint64_t i3[] = { 1, 2, 3 };
	const double t3[] = { 10, 30, 20 };

	assert_int_equal(criterion_slope(i3, t3, 3, &s), 0);
	assert_true(fabs(s - 5.0) < 1e-12);
	/* Flat sampling: no slope to fit; total time over iterations. */
	const uint64_t flat[] = { 4, 4, 4 };
	const double tf[] = { 40, 44, 36 };

	assert_int_equal(criterion_slope(flat, tf, 3, &s), 0);
	assert_true(fabs(s - 10.0) < 1e-12);
	s = 3;
	assert_int_equal(criterion_slope(flat, tf, 0, &s), -EINVAL);
	assert_true(s == 3);
}

/* The fixture suite is criterion's row, its batch functions every
 * instance of Bencher<M>::iter by valgrind's name; a Rust binary without
 * criterion is not. */
static void test_fixture(void **state)
{
#ifdef HAVE_CRITERION_FIXTURE
	struct elf_file *ef = NULL, *other = NULL;
	struct criterion_fn *fns = NULL;
	const struct suite_kind *k;
	const char *what = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(elf_open(CRITERION_FIXTURE, &ef, &what), 0);
	assert_true(criterion_detect(ef));
	k = suite_kind_of(ef);
	assert_string_equal(k->name, "criterion");
	assert_true(suite_leaf_runs(&k->leaf[MEASURE_WALLTIME]));
	assert_true(suite_leaf_pairs(&k->leaf[MEASURE_WALLTIME]));
	assert_true(suite_leaf_runs(&k->leaf[MEASURE_CALLGRIND]));
	assert_false(suite_leaf_runs(&k->leaf[MEASURE_PERF]));
	assert_non_null(k->leaf[MEASURE_PERF].refusal);
	assert_true(suite_leaf_runs(&k->leaf[MEASURE_MEMORY]));
	assert_int_equal(criterion_batch_fns(ef, &fns, &n), 0);
	/* One instance per closure type: iter's for fib's (both parameters),
	 * sum's, the chase's, the crash's, the twins' (all three),
	 * batched/plain's and alloc/vec's; iter_batched's for batched/setup's. */
	assert_int_equal(n, 8);
	size_t iters = 0, batched = 0;

	for (size_t i = 0; i < n; i++) {
		iters += !strcmp(fns[i].name, "criterion::bencher::Bencher<M>::iter");
		batched += !strcmp(fns[i].name, "criterion::bencher::Bencher<M>::iter_batched");
		assert_true(fns[i].link_addr != 0);
		for (size_t j = 0; j < i; j++)
			assert_true(fns[j].link_addr != fns[i].link_addr);
	}
	assert_int_equal(iters, 7);
	assert_int_equal(batched, 1);
	criterion_fns_free(fns, n);
	/* The clock criterion's WallTime reads inside them. */
	struct criterion_clock clock;

	assert_int_equal(criterion_clock_fns(ef, &clock), 0);
	assert_true(clock.now && clock.elapsed && clock.now != clock.elapsed);
	assert_true(clock.now_size && clock.elapsed_size);
	assert_int_equal(elf_open(OTHER_FIXTURE, &other, &what), 0);
	assert_false(criterion_detect(other));
	assert_int_equal(criterion_clock_fns(other, &clock), -ENOENT);
	assert_string_not_equal(suite_kind_of(other)->name, "criterion");
	elf_close(other);
	elf_close(ef);
#else
	(void)state;
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list),	    cmocka_unit_test(test_filter),
		cmocka_unit_test(test_batch_names),
		cmocka_unit_test(test_sample),	    cmocka_unit_test(test_slope),
		cmocka_unit_test(test_fixture),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
