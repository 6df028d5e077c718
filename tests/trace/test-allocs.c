// SPDX-License-Identifier: MIT
/*
 * The memory instrument for a program that runs its own main
 * (measure/allocs.h) against the fixture allocee.c (argv[1]): each call of
 * a batch function given its allocations, frees and bytes, the most bytes
 * of its own blocks live at once and those it left live, exactly as the
 * fixture's comments count them by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "measure/allocs.h"
#include "measure/measure.h"
#include "trace/trace.h"
#include "support.h"

static const char *fixture;

static void test_counts(void **state)
{
	static const char *const fns[] = { "keep", "seq", "grow", "aligned", "cross", "refused" };
	/* allocations, frees, bytes, peak, live */
	static const struct alloc_counts want[] = {
		{ 4, 4, 256, 256, 0 }, { 4, 4, 400, 100, 0 },	 { 2, 1, 1010, 1000, 0 },
		{ 1, 0, 256, 256, 256 }, { 1, 1, 16, 16, 16 },	 { 3, 2, 60 + (1ull << 62), 60, 0 },
	};
	char *argv[] = { (char *)fixture, NULL };
	struct trace_spawn_opts o;
	struct trace_failure f;
	struct trace_proc *p = NULL;
	struct alloc_fn at[6];
	struct alloc_counts *calls = NULL;
	struct bench_result res = { 0 };
	uint64_t main_link = support_symbol(fixture, "main"), main_addr = 0;
	size_t n = 0;

	(void)state;
	trace_spawn_opts_init(&o, argv);
	assert_int_equal(trace_spawn(&o, &p, NULL), 0);
	assert_int_equal(trace_run_to_main(p, main_link, support_entry(fixture), -1, &main_addr, &f),
			 0);
	for (size_t i = 0; i < 6; i++) {
		uint64_t link = support_symbol(fixture, fns[i]);

		assert_true(link != 0);
		at[i] = (struct alloc_fn){ link + main_addr - main_link, BRACKET_CALL };
	}
	assert_int_equal(alloc_count_run(p, at, 6, measure_now_ns() + 60000000000ull,
					 60000000000ull, NULL, NULL, &res, &calls, &n),
			 1);
	assert_int_equal(n, 6);
	for (size_t i = 0; i < 6; i++) {
		print_message("%s: %llu allocations, %llu frees, %llu bytes, peak %llu, live %llu\n",
			      fns[i], (unsigned long long)calls[i].allocations,
			      (unsigned long long)calls[i].frees,
			      (unsigned long long)calls[i].bytes,
			      (unsigned long long)calls[i].peak, (unsigned long long)calls[i].live);
		assert_int_equal(calls[i].allocations, want[i].allocations);
		assert_int_equal(calls[i].frees, want[i].frees);
		assert_int_equal(calls[i].bytes, want[i].bytes);
		assert_int_equal(calls[i].peak, want[i].peak);
		assert_int_equal(calls[i].live, want[i].live);
	}
	free(calls);
	bench_result_clear(&res);
	trace_proc_free(p);
	assert_int_equal(support_children(), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s ALLOCEE\n", argv[0]);
		return 2;
	}
	fixture = argv[1];
	support_subreaper();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
