/* SPDX-License-Identifier: MIT */
/* The line said on stderr per finished benchmark, and observe's live line
 * (report/progress.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/progress.h"

static struct bench_spec spec_named(const char *name)
{
	return (struct bench_spec){ .name = (char *)name };
}

/* A walltime result of n samples with median 'median' ns and the 95%
 * interval [lo, hi]. */
static struct bench_result timed(const struct bench_spec *s, double median, double lo, double hi,
				 size_t n)
{
	return (struct bench_result){
		.spec = s,
		.status = BENCH_OK,
		.instrument = "walltime",
		.unit = "ns",
		.value = median,
		.stats = { .n = n, .median = median, .ci_low = lo, .ci_high = hi },
	};
}

/* The line of r, checked against 'want' and freed. */
static void expect_line(const struct bench_result *r, size_t k, size_t n, const char *side,
			const char *want)
{
	char *line = NULL;

	assert_int_equal(report_progress_line(r, k, n, side, &line), 0);
	assert_non_null(line);
	assert_string_equal(line, want);
	free(line);
}

static void test_walltime(void **state)
{
	struct bench_spec s = spec_named("fib[20]");
	struct bench_result r = timed(&s, 8203, 8138, 8326, 93);

	(void)state;
	/* ± half the interval over the median: 94 / 8203 = 1.15%. */
	expect_line(&r, 3, 11, NULL, "[3/11] fib[20]  8.203 µs ± 1.1%");
	r = timed(&s, 59.17, 58.94, 59.38, 90);
	expect_line(&r, 12, 1000, NULL, "[12/1000] fib[20]  59.17 ns ± 0.4%");
}

static void test_walltime_no_spread(void **state)
{
	struct bench_spec s = spec_named("optimized_away");
	struct bench_result r = timed(&s, 0.058, 0.035, 0.146, 48);

	(void)state;
	/* Indistinguishable from an empty function: a spread relative to
	 * nothing means nothing, as the table's CV says "-". */
	r.no_time = true;
	expect_line(&r, 1, 2, NULL, "[1/2] optimized_away  0.058 ns");
	/* Under five samples, no interval, as in the table. */
	r = timed(&s, 340, 300, 380, 4);
	expect_line(&r, 2, 2, NULL, "[2/2] optimized_away  340.0 ns");
}

static void test_counting(void **state)
{
	struct bench_spec s = spec_named("fib[20]");
	struct bench_result r = { .spec = &s,
				  .status = BENCH_OK,
				  .instrument = "callgrind",
				  .unit = "instructions",
				  .value = 198492,
				  .stats = { .n = 1, .median = 198492 } };

	(void)state;
	expect_line(&r, 3, 3, NULL, "[3/3] fib[20]  198,492 instructions");
	r.value = 1234.5;
	expect_line(&r, 1, 3, NULL, "[1/3] fib[20]  1,234.5 instructions");
	r.instrument = "memory";
	r.unit = "bytes";
	r.value = 4096;
	expect_line(&r, 1, 3, NULL, "[1/3] fib[20]  4.00 KiB allocated");
}

static void test_failed(void **state)
{
	struct bench_spec s = spec_named("crash");
	struct bench_result r = {
		.spec = &s,
		.status = BENCH_FAILED,
		.unit = "ns",
		.error = "SIGSEGV (Segmentation fault) at address 0x10\n  #0 crash_now\n",
	};

	(void)state;
	/* The first line of the error: the backtrace stays in the report. */
	expect_line(&r, 2, 10, NULL,
		    "[2/10] crash  failed: SIGSEGV (Segmentation fault) at address 0x10");
	r.error = NULL;
	expect_line(&r, 2, 10, NULL, "[2/10] crash  failed: ?");
}

static void test_side(void **state)
{
	struct bench_spec s = spec_named("work");
	struct bench_result r = timed(&s, 2916, 2870, 2962, 40);

	(void)state;
	expect_line(&r, 2, 7, "head", "[2/7] work (head)  2.916 µs ± 1.6%");
	r.status = BENCH_FAILED;
	r.error = "exited with status 3";
	expect_line(&r, 1, 7, "base", "[1/7] work (base)  failed: exited with status 3");
}

/* observe's line of (calls, funcs, elapsed ns), checked against 'want'. */
static void expect_observe(uint64_t calls, size_t funcs, int64_t ns, const char *want)
{
	char buf[128];

	assert_int_equal(report_observe_progress(calls, funcs, ns, buf, sizeof(buf)), 0);
	assert_string_equal(buf, want);
}

static void test_observe(void **state)
{
	char small[16] = "kept";

	(void)state;
	expect_observe(12345, 3, 4200000000LL, "observing: 12,345 calls of 3 functions, 4.2 s");
	/* One of each: singular; nothing yet: plural, 0.0 s. */
	expect_observe(1, 1, 150000000, "observing: 1 call of 1 function, 0.1 s");
	expect_observe(0, 0, 0, "observing: 0 calls of 0 functions, 0.0 s");
	/* Truncated, not rounded: 59.99 s is not a minute yet. */
	expect_observe(2, 2, 59990000000LL, "observing: 2 calls of 2 functions, 59.9 s");
	expect_observe(1234567, 2, 60000000000LL,
		       "observing: 1,234,567 calls of 2 functions, 1 min 00 s");
	expect_observe(7, 1, (12 * 60 + 5) * 1000000000LL + 999999999,
		       "observing: 7 calls of 1 function, 12 min 05 s");
	expect_observe(7, 1, (3 * 3600 + 7 * 60 + 59) * 1000000000LL,
		       "observing: 7 calls of 1 function, 3 h 07 min");
	/* A clock that went back says 0.0 s, not a negative time. */
	expect_observe(7, 1, -5, "observing: 7 calls of 1 function, 0.0 s");
	/* The largest count still fits the documented 128 bytes. */
	{
		char buf[128];

		assert_int_equal(
			report_observe_progress(UINT64_MAX, SIZE_MAX, INT64_MAX, buf, sizeof(buf)),
			0);
		assert_true(strlen(buf) < sizeof(buf));
	}
	/* Too small a buffer: -ENOBUFS, buffer untouched. */
	assert_int_equal(report_observe_progress(1, 1, 0, small, sizeof(small)), -ENOBUFS);
	assert_string_equal(small, "kept");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walltime), cmocka_unit_test(test_walltime_no_spread),
		cmocka_unit_test(test_counting), cmocka_unit_test(test_failed),
		cmocka_unit_test(test_side),	 cmocka_unit_test(test_observe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
