/* SPDX-License-Identifier: MIT */
/*
 * Change points: noisy series with and without steps, exact series, NAN
 * points, series too short to split, one slow run, a host that is
 * sometimes slower, the size floor
 * (min_step), determinism and bad options.
 *
 * The noisy series are generated here with their own generator (a 64-bit
 * LCG, Knuth's MMIX constants, and Box-Muller), apart from the one under
 * test. Each series is fixed by its seed, so each assertion is about one
 * known series; the rates over many series are measured by
 * benches/changepoints.c.
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

#include "stats/changepoint.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t lcg_state;

static double test_uniform(void)
{
	lcg_state = lcg_state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	/* (0, 1]: never 0, so that log() below is finite. */
	return ((double)(lcg_state >> 11) + 1.0) * 0x1.0p-53;
}

static double test_gaussian(void)
{
	return sqrt(-2.0 * log(test_uniform())) * cos(2.0 * M_PI * test_uniform());
}

/*
 * n points around 'level' with Gaussian noise of coefficient of variation
 * 'cv'; from index steps[k] on, the level is multiplied by 1 + sizes[k].
 */
static void fill_steps(double *x, size_t n, uint64_t seed, double level, double cv,
		       const size_t *steps, const double *sizes, size_t nsteps)
{
	lcg_state = seed;
	for (size_t i = 0; i < n; i++) {
		double l = level;

		for (size_t k = 0; k < nsteps; k++) {
			if (i >= steps[k])
				l *= 1.0 + sizes[k];
		}
		x[i] = l * (1.0 + cv * test_gaussian());
	}
}

static void fill_flat(double *x, size_t n, uint64_t seed, double level, double cv)
{
	fill_steps(x, n, seed, level, cv, NULL, NULL, 0);
}

static struct changepoint_opts defaults(void)
{
	struct changepoint_opts o;

	changepoint_opts_default(&o);
	return o;
}

/* The change points of x under o, which must succeed. */
static size_t find(const double *x, size_t n, const struct changepoint_opts *o,
		   struct changepoint **ret)
{
	size_t got = 12345;

	*ret = (struct changepoint *)&got; /* must be overwritten */
	assert_int_equal(changepoints_find(x, n, o, ret, &got), 0);
	if (got == 0)
		assert_null(*ret);
	else
		assert_non_null(*ret);
	return got;
}

static void test_defaults(void **state)
{
	struct changepoint_opts o = defaults();

	assert_false(o.exact);
	assert_true(o.alpha == 0.01);
	assert_int_equal(o.min_segment, 3);
	assert_int_equal(o.permutations, 199);
	assert_true(o.min_step == 0.01);
}

static void test_flat_none(void **state)
{
	struct changepoint_opts o = defaults();
	double x[200];
	struct changepoint *cp;

	/* Ten flat series, 3 % noise: not one change point among them. */
	for (uint64_t seed = 1; seed <= 10; seed++) {
		fill_flat(x, ARRAY_SIZE(x), seed, 1000.0, 0.03);
		assert_int_equal(find(x, ARRAY_SIZE(x), &o, &cp), 0);
	}
}

static void test_one_step(void **state)
{
	struct changepoint_opts o = defaults();
	const size_t at[] = { 100 };
	const double size[] = { 0.10 };
	double x[200];
	struct changepoint *cp;

	fill_steps(x, ARRAY_SIZE(x), 42, 1000.0, 0.03, at, size, 1);
	assert_int_equal(find(x, ARRAY_SIZE(x), &o, &cp), 1);
	assert_in_range(cp[0].at, 98, 102);
	assert_true(fabs(cp[0].step - 0.10) < 0.02);
	assert_true(fabs(cp[0].before - 1000.0) < 15.0);
	assert_true(fabs(cp[0].after - 1100.0) < 15.0);
	assert_true(cp[0].step == cp[0].after / cp[0].before - 1.0);
	assert_true(cp[0].p > 0.0 && cp[0].p <= o.alpha);
	free(cp);

	/* The same step down. */
	const double down[] = { -0.10 };

	fill_steps(x, ARRAY_SIZE(x), 43, 1000.0, 0.03, at, down, 1);
	assert_int_equal(find(x, ARRAY_SIZE(x), &o, &cp), 1);
	assert_in_range(cp[0].at, 98, 102);
	assert_true(fabs(cp[0].step + 0.10) < 0.02);
	free(cp);
}

static void test_two_steps(void **state)
{
	struct changepoint_opts o = defaults();
	const size_t at[] = { 60, 140 };
	const double size[] = { 0.10, -0.15 };
	double x[200];
	struct changepoint *cp;

	fill_steps(x, ARRAY_SIZE(x), 7, 500.0, 0.03, at, size, 2);
	assert_int_equal(find(x, ARRAY_SIZE(x), &o, &cp), 2);
	assert_in_range(cp[0].at, 58, 62);
	assert_in_range(cp[1].at, 138, 142);
	assert_true(fabs(cp[0].step - 0.10) < 0.02);
	assert_true(fabs(cp[1].step + 0.15) < 0.02);
	/* Neighbouring change points share the segment between them. */
	assert_true(cp[0].after == cp[1].before);
	free(cp);
}

/*
 * Up and back down 30 points later. The first cut of the whole series falls
 * at one edge of the bump with most of the series on the far side; the
 * size floor is applied to the final segments, so the bump is not lost.
 */
static void test_bump(void **state)
{
	struct changepoint_opts o = defaults();
	const size_t at[] = { 80, 110 };
	const double size[] = { 0.10, -1.0 / 11.0 };
	double x[200];
	struct changepoint *cp;

	fill_steps(x, ARRAY_SIZE(x), 11, 1000.0, 0.03, at, size, 2);
	assert_int_equal(find(x, ARRAY_SIZE(x), &o, &cp), 2);
	assert_in_range(cp[0].at, 78, 82);
	assert_in_range(cp[1].at, 108, 112);
	assert_true(cp[0].step > 0.07 && cp[1].step < -0.07);
	free(cp);
}

static void test_exact(void **state)
{
	struct changepoint_opts o = defaults();
	const double x[] = { 5, 5, 5, 7, 7, NAN, 7, 3, NAN, 3, 0, 0, 4 };
	struct changepoint *cp;

	o.exact = true;
	assert_int_equal(find(x, ARRAY_SIZE(x), &o, &cp), 4);
	assert_int_equal(cp[0].at, 3);
	assert_true(cp[0].before == 5 && cp[0].after == 7);
	assert_true(fabs(cp[0].step - 0.4) < 1e-15);
	assert_int_equal(cp[1].at, 7); /* against 7 at index 6, past the NAN */
	assert_true(cp[1].before == 7 && cp[1].after == 3);
	assert_int_equal(cp[2].at, 10);
	assert_true(cp[2].after == 0 && fabs(cp[2].step + 1.0) < 1e-15);
	assert_int_equal(cp[3].at, 12);
	assert_true(isnan(cp[3].step)); /* from 0 */
	for (size_t j = 0; j < 4; j++)
		assert_true(cp[j].p == 0.0);
	free(cp);

	/* A constant exact series, and one a single point long. */
	const double flat[] = { 128070, 128070, NAN, 128070 };

	assert_int_equal(find(flat, ARRAY_SIZE(flat), &o, &cp), 0);
	assert_int_equal(find(flat, 1, &o, &cp), 0);

	/* One instruction more is a change point. */
	const double one[] = { 128070, 128070, 128071 };

	assert_int_equal(find(one, ARRAY_SIZE(one), &o, &cp), 1);
	assert_int_equal(cp[0].at, 2);
	free(cp);
}

static void test_nan(void **state)
{
	struct changepoint_opts o = defaults();
	const size_t at[] = { 100 };
	const double size[] = { 0.10 };
	const size_t holes[] = { 0, 10, 50, 97, 98, 99, 100, 101, 150, 199 };
	double x[200];
	struct changepoint *cp;

	fill_steps(x, ARRAY_SIZE(x), 42, 1000.0, 0.03, at, size, 1);
	for (size_t k = 0; k < ARRAY_SIZE(holes); k++)
		x[holes[k]] = NAN;
	x[20] = INFINITY;
	assert_int_equal(find(x, ARRAY_SIZE(x), &o, &cp), 1);
	/* An index into x, of a point that is there. */
	assert_in_range(cp[0].at, 94, 106);
	assert_true(isfinite(x[cp[0].at]));
	assert_true(fabs(cp[0].step - 0.10) < 0.02);
	free(cp);

	/* With the steps' first point gone, 'at' is the first point after. */
	const double exact[] = { 1, 1, 1, NAN, NAN, 2, 2 };

	o.exact = true;
	assert_int_equal(find(exact, ARRAY_SIZE(exact), &o, &cp), 1);
	assert_int_equal(cp[0].at, 5);
	free(cp);

	/* Nothing but NANs. */
	for (size_t i = 0; i < ARRAY_SIZE(x); i++)
		x[i] = NAN;
	o.exact = false;
	assert_int_equal(find(x, ARRAY_SIZE(x), &o, &cp), 0);
	o.exact = true;
	assert_int_equal(find(x, ARRAY_SIZE(x), &o, &cp), 0);
}

static void test_tiny(void **state)
{
	struct changepoint_opts o = defaults();
	const double x[] = { 100, 100, 100, 200, 200 };
	struct changepoint *cp;

	/* Fewer than 2 * min_segment points: no segment can be cut. */
	assert_int_equal(find(x, ARRAY_SIZE(x), &o, &cp), 0);
	assert_int_equal(find(x, 1, &o, &cp), 0);
	assert_int_equal(find(NULL, 0, &o, &cp), 0);

	/* Six points, NANs not counting. */
	const double six[] = { 100, 101, 99, NAN, 300, 301, 299 };

	o.min_segment = 4;
	assert_int_equal(find(six, ARRAY_SIZE(six), &o, &cp), 0);
}

static void test_deterministic(void **state)
{
	struct changepoint_opts o = defaults();
	const size_t at[] = { 50, 120 };
	const double size[] = { 0.05, -0.05 };
	double x[200];
	struct changepoint *a, *b;
	size_t na, nb;

	fill_steps(x, ARRAY_SIZE(x), 99, 1000.0, 0.02, at, size, 2);
	na = find(x, ARRAY_SIZE(x), &o, &a);
	nb = find(x, ARRAY_SIZE(x), &o, &b);
	assert_int_equal(na, nb);
	assert_true(na >= 1);
	for (size_t j = 0; j < na; j++) {
		assert_int_equal(a[j].at, b[j].at);
		assert_true(a[j].p == b[j].p);
		assert_true(a[j].before == b[j].before && a[j].after == b[j].after);
	}
	free(b);

	/* Another seed: other permutations, the same clear steps. */
	o.seed = 1;
	nb = find(x, ARRAY_SIZE(x), &o, &b);
	assert_int_equal(na, nb);
	for (size_t j = 0; j < na; j++)
		assert_int_equal(a[j].at, b[j].at);
	free(a);
	free(b);
}

/* One slow run in a flat series is no step, wherever it is. */
static void test_outlier(void **state)
{
	struct changepoint_opts o = defaults();
	const size_t where[] = { 0, 1, 2, 100, 197, 198, 199 };
	double x[200];
	struct changepoint *cp;

	for (size_t k = 0; k < ARRAY_SIZE(where); k++) {
		fill_flat(x, ARRAY_SIZE(x), 5, 1000.0, 0.01);
		x[where[k]] *= 1.5;
		assert_int_equal(find(x, ARRAY_SIZE(x), &o, &cp), 0);
	}
}

/*
 * The host's bimodal speed: 15 % of the runs, at random, are 10 % slower.
 * Runs of two or three slow points happen, and are no step: the
 * permutations spread the same slow points at random and find such runs
 * as often.
 */
static void test_bimodal_host(void **state)
{
	struct changepoint_opts o = defaults();
	double x[200];
	struct changepoint *cp;

	for (uint64_t seed = 20; seed < 30; seed++) {
		fill_flat(x, ARRAY_SIZE(x), seed, 1000.0, 0.03);
		for (size_t i = 0; i < ARRAY_SIZE(x); i++) {
			if (test_uniform() < 0.15)
				x[i] *= 1.10;
		}
		assert_int_equal(find(x, ARRAY_SIZE(x), &o, &cp), 0);
	}
}

/*
 * A 0.5 % step in 2000 points with 0.5 % noise is significant, and is
 * reported only when min_step allows it.
 */
static void test_min_step(void **state)
{
	struct changepoint_opts o = defaults();
	const size_t at[] = { 1000 };
	const double size[] = { 0.005 };
	static double x[2000];
	struct changepoint *cp;

	fill_steps(x, ARRAY_SIZE(x), 3, 1000.0, 0.005, at, size, 1);
	assert_int_equal(find(x, ARRAY_SIZE(x), &o, &cp), 0);

	o.min_step = 0.0;
	assert_int_equal(find(x, ARRAY_SIZE(x), &o, &cp), 1);
	assert_in_range(cp[0].at, 980, 1020);
	assert_true(cp[0].step > 0.002 && cp[0].step < 0.008);
	free(cp);
}

static void test_einval(void **state)
{
	const double x[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct changepoint_opts o;
	struct changepoint *cp = (struct changepoint *)&o;
	size_t n = 777;

#define EXPECT_EINVAL(field, value)                                                          \
	do {                                                                                 \
		o = defaults();                                                              \
		o.field = (value);                                                           \
		assert_int_equal(changepoints_find(x, ARRAY_SIZE(x), &o, &cp, &n), -EINVAL); \
	} while (0)

	EXPECT_EINVAL(alpha, 0.0);
	EXPECT_EINVAL(alpha, 1.0);
	EXPECT_EINVAL(alpha, -0.5);
	EXPECT_EINVAL(alpha, NAN);
	EXPECT_EINVAL(min_segment, 0);
	EXPECT_EINVAL(permutations, 0);
	EXPECT_EINVAL(permutations, 50); /* p is at least 1/51 > 0.01 */
	EXPECT_EINVAL(min_step, -0.01);
	EXPECT_EINVAL(min_step, NAN);
	EXPECT_EINVAL(min_step, INFINITY);
#undef EXPECT_EINVAL
	/* Outputs untouched on failure. */
	assert_ptr_equal(cp, (struct changepoint *)&o);
	assert_int_equal(n, 777);

	o = defaults();
	assert_int_equal(changepoints_find(NULL, 3, &o, &cp, &n), -EINVAL);
	assert_int_equal(changepoints_find(x, ARRAY_SIZE(x), &o, NULL, &n), -EINVAL);
	assert_int_equal(changepoints_find(x, ARRAY_SIZE(x), &o, &cp, NULL), -EINVAL);

	/* The smallest test that can reach alpha is allowed; NULL options too. */
	o.permutations = 99;
	assert_int_equal(changepoints_find(x, ARRAY_SIZE(x), &o, &cp, &n), 0);
	free(cp);
	assert_int_equal(changepoints_find(x, ARRAY_SIZE(x), NULL, &cp, &n), 0);
	free(cp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),      cmocka_unit_test(test_flat_none),
		cmocka_unit_test(test_one_step),      cmocka_unit_test(test_two_steps),
		cmocka_unit_test(test_bump),	      cmocka_unit_test(test_exact),
		cmocka_unit_test(test_nan),	      cmocka_unit_test(test_tiny),
		cmocka_unit_test(test_deterministic), cmocka_unit_test(test_outlier),
		cmocka_unit_test(test_bimodal_host),  cmocka_unit_test(test_min_step),
		cmocka_unit_test(test_einval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
