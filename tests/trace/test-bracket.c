// SPDX-License-Identifier: MIT
/*
 * The bracket engine (measure/bracket.h) against the fixture bracketee.c
 * (argv[1]): every call of a bracketed function reported once, by the
 * thread that made it, with both clock readings; the program's results
 * right (it checks them: the stubs keep the argument and return registers);
 * a function whose first instruction cannot be displaced timed with its
 * breakpoint out, and said; recursion one call; a crash inside a call a
 * failure with the backtrace through to main. No duration is asserted.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "measure/bracket.h"
#include "support.h"

static const char *fixture;

struct outcome {
	struct bracket_call calls[512];
	size_t n;
	int r, status;
	struct trace_failure f;
	size_t ndiag;
	bool diag_refused;
};

static void run_roles(const char *mode, const char *const *fns, const enum bracket_role *roles,
		      size_t nfns, struct outcome *o)
{
	char *argv[] = { (char *)fixture, (char *)mode, NULL };
	struct measure_target t = {
		.binary = fixture,
		.argv = argv,
		.main_link = support_symbol(fixture, "main"),
		.entry_link = support_entry(fixture),
		.cpu = -1,
		.quiet_stdio = true,
	};
	struct bracket_fn bf[4] = { 0 }; /* roles BRACKET_CALL */
	struct bracket_run *r = NULL;
	char *err = NULL;

	memset(o, 0, sizeof(*o));
	for (size_t i = 0; i < nfns; i++) {
		bf[i].object = fixture;
		bf[i].link_addr = support_symbol_sized(fixture, fns[i], &bf[i].size);
		bf[i].role = roles ? roles[i] : BRACKET_CALL;
		bf[i].arg = 1;
		assert_true(bf[i].link_addr != 0);
	}
	if (bracket_start(&t, argv, bf, nfns, -1, -1, &r, &err) != 0)
		fail_msg("bracket_start: %s", err ? err : "?");
	assert_true(bracket_pid(r) > 0);
	for (;;) {
		struct bracket_call c;

		o->r = bracket_next(r, -1, &c, &o->status, &o->f);
		if (o->r != 1)
			break;
		assert_true(o->n < sizeof(o->calls) / sizeof(o->calls[0]));
		o->calls[o->n++] = c;
	}
	const char *const *d = bracket_diagnostics(r, &o->ndiag);

	for (size_t i = 0; i < o->ndiag; i++)
		o->diag_refused |= strstr(d[i], "cannot run elsewhere") != NULL;
	bracket_free(r);
	assert_int_equal(support_children(), 0);
}

static void run_mode(const char *mode, const char *const *fns, size_t nfns, struct outcome *o)
{
	run_roles(mode, fns, NULL, nfns, o);
}

static void expect_calls(const struct outcome *o)
{
	for (size_t i = 0; i < o->n; i++) {
		assert_true(o->calls[i].t0_ns > 0);
		assert_true(o->calls[i].t1_ns >= o->calls[i].t0_ns);
		assert_true(o->calls[i].tid > 0);
		if (i)
			assert_true(o->calls[i].t1_ns >= o->calls[i - 1].t1_ns);
	}
}

static void test_plain(void **state)
{
	static const char *const fns[] = { "disp_ok", "disp_refused" };
	struct outcome *o = calloc(1, sizeof(*o));
	size_t per[2] = { 0, 0 };

	(void)state;
	run_mode("plain", fns, 2, o);
	assert_int_equal(o->r, 0);
	assert_int_equal(o->status, 0); /* every result right */
	assert_int_equal(o->n, 100);
	expect_calls(o);
	for (size_t i = 0; i < o->n; i++) {
		assert_true(o->calls[i].fn < 2);
		per[o->calls[i].fn]++;
		/* main calls them in turn */
		assert_int_equal(o->calls[i].fn, i % 2);
	}
	assert_int_equal(per[0], 50);
	assert_int_equal(per[1], 50);
	/* disp_refused runs in place, its breakpoint out: said. */
	assert_true(o->diag_refused);
	free(o);
}

static void test_recursion(void **state)
{
	static const char *const fns[] = { "rec" };
	struct outcome *o = calloc(1, sizeof(*o));

	(void)state;
	run_mode("rec", fns, 1, o);
	assert_int_equal(o->r, 0);
	assert_int_equal(o->status, 0);
	/* rec(5) calls itself 5 deep: one interval per outer call. */
	assert_int_equal(o->n, 50);
	assert_false(o->diag_refused);
	expect_calls(o);
	free(o);
}

static void test_threads(void **state)
{
	static const char *const fns[] = { "disp_ok" };
	struct outcome *o = calloc(1, sizeof(*o));
	pid_t tids[2] = { 0, 0 };
	size_t per[2] = { 0, 0 };

	(void)state;
	run_mode("threads", fns, 1, o);
	assert_int_equal(o->r, 0);
	assert_int_equal(o->status, 0);
	assert_int_equal(o->n, 100);
	for (size_t i = 0; i < o->n; i++) {
		int k = tids[0] == 0 || tids[0] == o->calls[i].tid ? 0 : 1;

		if (!tids[k])
			tids[k] = o->calls[i].tid;
		assert_int_equal(tids[k], o->calls[i].tid);
		per[k]++;
		assert_true(o->calls[i].t1_ns >= o->calls[i].t0_ns);
	}
	assert_int_equal(per[0], 50);
	assert_int_equal(per[1], 50);
	free(o);
}

/* A function whose second argument says whether the clock starts at its
 * return or stops at its entry (BRACKET_TOGGLE, divan's sync_impl): one
 * batch per sample, its one interval from the start's return to the
 * stop's entry; the argument and return registers kept. */
static void test_toggle(void **state)
{
	static const char *const fns[] = { "sync_point" };
	static const enum bracket_role roles[] = { BRACKET_TOGGLE };
	struct outcome *o = calloc(1, sizeof(*o));

	(void)state;
	run_roles("toggle", fns, roles, 1, o);
	assert_int_equal(o->r, 0);
	assert_int_equal(o->status, 0);
	assert_int_equal(o->n, 50);
	expect_calls(o);
	for (size_t i = 0; i < o->n; i++) {
		assert_int_equal(o->calls[i].fn, 0);
		assert_int_equal(o->calls[i].intervals, 1);
		assert_true(o->calls[i].timed_ns == o->calls[i].t1_ns - o->calls[i].t0_ns);
		if (i)
			assert_true(o->calls[i].t0_ns >= o->calls[i - 1].t1_ns);
	}
	free(o);
}

static void test_crash(void **state)
{
	static const char *const fns[] = { "crash_in" };
	struct outcome *o = calloc(1, sizeof(*o));
	bool in_fn = false, in_main = false;

	(void)state;
	run_mode("crash", fns, 1, o);
	assert_int_equal(o->r, -TRACE_E_FAILED);
	assert_int_equal(o->n, 0);
	assert_int_equal(o->f.kind, TRACE_FAIL_SIGNAL);
	assert_int_equal(o->f.sig, SIGSEGV);
	/* The backtrace walks from the function to main: its return address
	 * is the real one while it is taken. */
	for (size_t i = 0; i < o->f.nframes; i++) {
		in_fn |= !strcmp(o->f.frames[i].func, "crash_in");
		in_main |= !strcmp(o->f.frames[i].func, "main");
	}
	if (!in_fn || !in_main) {
		char buf[8192];

		fail_msg("the backtrace misses crash_in or main: %s",
			 trace_failure_format(&o->f, buf, sizeof(buf)));
	}
	free(o);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_recursion),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_toggle),
		cmocka_unit_test(test_crash),
	};

	if (argc < 2) {
		fprintf(stderr, "usage: %s BRACKETEE\n", argv[0]);
		return 2;
	}
	fixture = argv[1];
	support_subreaper();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
