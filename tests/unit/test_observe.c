// SPDX-License-Identifier: MIT
/* Unit tests of benchtrap observe's pure logic: matching returns to calls,
 * corrected durations, histograms, order statistics, parallel rounds, the
 * calibration and /proc/PID/maps. */
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

#include "report/report.h"
#include "results/results.h"
#include "unwind/unwind.h"
#include "arch/agent.h"
#include "arch/patch.h"
#include "observe/observe.h"

static void push(struct observe_stack *s, uint32_t func, uint64_t ret, uint64_t sp_after)
{
	struct observe_frame f = { .func = func, .ret_addr = ret, .sp_after = sp_after };

	assert_int_equal(observe_stack_push(s, &f), 0);
}

/* Recursion: each level has its own stack pointer; returns pop one level
 * at a time, innermost first. */
static void test_recursion(void **state)
{
	struct observe_stack s = { .tid = 1 };

	(void)state;
	push(&s, 0, 0x1000, 0x7ff0); /* f called from main */
	push(&s, 0, 0x2000, 0x7fc0); /* f calls f at 0x2000 */
	push(&s, 0, 0x2000, 0x7f90); /* and again */
	/* Innermost returns to 0x2000 with its caller's stack pointer. */
	assert_int_equal(observe_stack_dead(&s, 0x2000, 0x7f90, OBSERVE_NO_FUNC), 0);
	assert_int_equal(observe_stack_returning(&s, 0x2000, 0x7f90), 1);
	s.n--;
	/* A hit at 0x2000 with a deeper stack pointer is someone else's. */
	assert_int_equal(observe_stack_dead(&s, 0x2000, 0x7f00, OBSERVE_NO_FUNC), 0);
	assert_int_equal(observe_stack_returning(&s, 0x2000, 0x7f00), 0);
	assert_int_equal(observe_stack_returning(&s, 0x2000, 0x7fc0), 1);
	s.n--;
	assert_int_equal(observe_stack_returning(&s, 0x2000, 0x7fc0), 0);
	assert_int_equal(observe_stack_returning(&s, 0x1000, 0x7ff0), 1);
	observe_stack_free(&s);
}

/* longjmp: the thread turns up above open frames, which are dead. */
static void test_longjmp(void **state)
{
	struct observe_stack s = { .tid = 1 };

	(void)state;
	push(&s, 0, 0x1000, 0x7ff0);
	push(&s, 1, 0x1100, 0x7f00);
	push(&s, 2, 0x1200, 0x7e00);
	/* Back at main's level (a new call from there, at sp 0x7ff0 - 8). */
	assert_int_equal(observe_stack_dead(&s, 0x1000, 0x7ff0, OBSERVE_NO_FUNC), 2);
	/* The outermost function called again from the same call site at the
	 * same depth: it was left by the longjmp too. */
	assert_int_equal(observe_stack_dead(&s, 0x1000, 0x7ff0, 0), 3);
	/* Another function entered with its pair: a tail call, f stays. */
	assert_int_equal(observe_stack_dead(&s, 0x1000, 0x7ff0, 7), 2);
	/* A new call at the same depth as a dead frame, another return
	 * address: the old one is dead too. */
	s.n = 2;
	assert_int_equal(observe_stack_dead(&s, 0x1300, 0x7f00, 9), 1);
	/* An entry deeper than everything: nothing is dead. */
	assert_int_equal(observe_stack_dead(&s, 0x1300, 0x7d00, 9), 0);
	observe_stack_free(&s);
}

/* Coroutines: two stacks far apart on one thread. A call open on the
 * other stack is not dead when this one's stack pointer is above it, and
 * a return beneath it finds its own call. */
static void test_other_stack(void **state)
{
	struct observe_stack s = { .tid = 1 };
	size_t above;

	(void)state;
	push(&s, 0, 0x1000, 0x10000000); /* A's call, on stack A */
	/* B enters on its stack, 16 MiB above: A's call stays open. */
	assert_int_equal(observe_stack_dead(&s, 0x1000, 0x11000000, 0), 0);
	push(&s, 0, 0x1000, 0x11000000); /* B's call */
	/* A returns while B's call is open: B's is another stack's. */
	assert_int_equal(observe_stack_dead(&s, 0x1000, 0x10000000, OBSERVE_NO_FUNC), 0);
	assert_int_equal(observe_stack_returning(&s, 0x1000, 0x10000000), 0);
	assert_int_equal(observe_stack_beneath(&s, 0x1000, 0x10000000, &above), 1);
	assert_int_equal(above, 1);
	/* Nothing of this stack beneath: none. */
	assert_int_equal(observe_stack_beneath(&s, 0x2000, 0x10000000, &above), 0);
	/* On one stack, 1 MiB apart at most, a frame below is still dead. */
	s.n = 0;
	push(&s, 0, 0x1000, 0x10000000);
	assert_int_equal(observe_stack_dead(&s, 0x1000, 0x10000000 + (1 << 20), 0), 1);
	assert_int_equal(observe_stack_dead(&s, 0x1000, 0x10000000 + (1 << 20) + 16, 0), 0);
	observe_stack_free(&s);
}

/* A tail call: the callee reuses the caller's return address and stack
 * slot; both return at once. */
static void test_tail_call(void **state)
{
	struct observe_stack s = { .tid = 1 };

	(void)state;
	push(&s, 0, 0x1000, 0x7ff0);
	assert_int_equal(observe_stack_dead(&s, 0x1000, 0x7ff0, 1), 0);
	push(&s, 1, 0x1000, 0x7ff0);
	assert_int_equal(observe_stack_returning(&s, 0x1000, 0x7ff0), 2);
	/* A return kills none of them. */
	assert_int_equal(observe_stack_dead(&s, 0x1000, 0x7ff0, OBSERVE_NO_FUNC), 0);
	/* f entered again with the same pair: both are stale. */
	assert_int_equal(observe_stack_dead(&s, 0x1000, 0x7ff0, 0), 2);
	observe_stack_free(&s);
}

static void test_corrected(void **state)
{
	(void)state;
	/* 1000 ns between the stops, 300 stopped, two resumes of 100. */
	assert_true(fabs(observe_corrected(0, 1000, 300, 2, 100) - 500) < 1e-9);
	/* Never negative. */
	assert_true(observe_corrected(0, 100, 300, 2, 100) == 0);
	assert_true(observe_corrected(5, 5, 0, 0, 0) == 0);
}

static void test_hist(void **state)
{
	(void)state;
	assert_int_equal(observe_hist_bucket(0), 0);
	assert_int_equal(observe_hist_bucket(1.9), 0);
	assert_int_equal(observe_hist_bucket(2), 1);
	assert_int_equal(observe_hist_bucket(3.99), 1);
	assert_int_equal(observe_hist_bucket(4), 2);
	assert_int_equal(observe_hist_bucket(1024), 10);
	assert_int_equal(observe_hist_bucket(2047), 10);
	assert_int_equal(observe_hist_bucket(1e300), OBSERVE_HIST_BUCKETS - 1);
	assert_int_equal(observe_hist_bucket(NAN), 0);
}

static void test_summarize(void **state)
{
	double v[] = { 5, 1, 4, 2, 3 };
	struct observe_summary s;

	(void)state;
	assert_int_equal(observe_summarize(v, 5, &s), 0);
	assert_int_equal(s.n, 5);
	assert_true(s.min == 1 && s.max == 5 && s.median == 3 && s.mean == 3);
	assert_true(s.q1 == 2 && s.q3 == 4);
	assert_true(fabs(s.p10 - 1.4) < 1e-9 && fabs(s.p90 - 4.6) < 1e-9);
	/* The sample standard deviation (n - 1): sqrt(10 / 4). */
	assert_true(fabs(s.stddev - sqrt(2.5)) < 1e-12);
	assert_int_equal(observe_summarize(NULL, 0, &s), 0);
	assert_int_equal(s.n, 0);
	/* One call: no spread. */
	double one = 7;

	assert_int_equal(observe_summarize(&one, 1, &s), 0);
	assert_true(s.stddev == 0 && s.median == 7);
}

static struct observe_call call(int64_t a, int64_t b, pid_t tid)
{
	return (struct observe_call){ .t_start = a, .t_end = b, .tid = tid };
}

static void test_rounds(void **state)
{
	struct observe_call c[] = {
		/* round 1: three threads overlapping in a chain */
		call(100, 200, 1),
		call(150, 300, 2),
		call(290, 400, 3),
		/* alone */
		call(500, 600, 1),
		/* recursion on one thread: not parallel */
		call(700, 900, 2),
		call(710, 800, 2),
		/* round 2: two threads, listed out of order */
		call(1050, 1100, 4),
		call(1000, 1200, 1),
	};
	double *d = NULL;
	size_t n = 0, max = 0;

	(void)state;
	assert_int_equal(observe_rounds(c, 8, 0, &d, &n, &max), 0);
	assert_int_equal(n, 2);
	assert_int_equal(max, 3);
	assert_true(d[0] == 300); /* 100 .. 400 */
	assert_true(d[1] == 200); /* 1000 .. 1200 */
	free(d);
	/* Stops inside a round are removed like a call's. */
	c[0] = (struct observe_call){
		.t_start = 0, .t_end = 100, .resumes_start = 0, .resumes_end = 2, .tid = 1
	};
	c[1] = (struct observe_call){ .t_start = 10,
				      .t_end = 50,
				      .stopped_start = 5,
				      .stopped_end = 25,
				      .resumes_start = 1,
				      .resumes_end = 2,
				      .tid = 2 };
	assert_int_equal(observe_rounds(c, 2, 10, &d, &n, &max), 0);
	assert_int_equal(n, 1);
	assert_true(d[0] == 100 - 0 - 2 * 10); /* first start .. last end */
	free(d);
	assert_int_equal(observe_rounds(c, 0, 0, &d, &n, &max), 0);
	assert_int_equal(n, 0);
	assert_null(d);
}

/* A median within OBSERVE_UNRESOLVED_FACTOR ± of zero is noise. */
static void test_unresolved(void **state)
{
	(void)state;
	assert_true(observe_unresolved(0, 500));
	assert_true(observe_unresolved(1400, 500));
	assert_true(observe_unresolved(OBSERVE_UNRESOLVED_FACTOR * 500.0, 500));
	assert_false(observe_unresolved(1600, 500));
	assert_false(observe_unresolved(4.5e6, 618));
	/* No ± (not calibrated): nothing is said. */
	assert_false(observe_unresolved(0, 0));
}

static void test_calibrate(void **state)
{
	double active[] = { 100, 110, 90, 400, 105 };
	double stopped[] = { 50, 50, 50, 100, 50 };
	uint64_t resumes[] = { 1, 1, 1, 4, 0 };
	struct observe_calibration c;

	(void)state;
	assert_int_equal(observe_calibrate(active, resumes, 5, stopped, &c), 0);
	/* Per resume: 100, 110, 90, 100 (a call with no resume is left out). */
	assert_int_equal(c.calls, 5);
	assert_true(c.latency == 100);
	assert_true(c.latency_p10 <= c.latency && c.latency <= c.latency_p90);
	/* Per resume stopped: 50, 50, 50, 25. */
	assert_true(c.stop_median == 50);
	assert_int_equal(observe_calibrate(active, resumes, 0, stopped, &c), -EINVAL);
}

static void test_maps(void **state)
{
	static const char text[] =
		"555555554000-555555555000 r--p 00000000 08:01 131 /usr/bin/prog\n"
		"555555555000-555555556000 r-xp 00001000 08:01 131 /usr/bin/prog\n"
		"555555557000-555555558000 rw-p 00002000 08:01 131 /usr/bin/prog\n"
		"555555558000-555555579000 rw-p 00000000 00:00 0   [heap]\n"
		"7ffff7d80000-7ffff7da8000 r--p 00000000 08:01 200 /usr/lib/libc.so.6\n"
		"7ffff7da8000-7ffff7f3d000 r-xp 00028000 08:01 200 /usr/lib/libc.so.6\n"
		"7ffff7f00000-7ffff7f01000 r--p 00010000 08:01 300 /usr/share/data.bin\n"
		"7ffff7f10000-7ffff7f11000 r-xp 00000000 08:01 301 /tmp/gone.so (deleted)\n"
		"7ffff7fc1000-7ffff7fc5000 r--p 00000000 00:00 0   [vvar]\n"
		"7ffff7fc5000-7ffff7fc7000 r-xp 00000000 00:00 0   [vdso]\n"
		"7ffff7fc7000-7ffff7fc8000 r--p 00000000 08:01 400 /lib/ld linux.so\n"
		"garbage line\n";
	struct observe_object *v;
	size_t n;

	(void)state;
	assert_int_equal(observe_parse_maps(text, &v, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[0].path, "/usr/bin/prog");
	assert_true(v[0].base == 0x555555554000 && v[0].lo == 0x555555554000 &&
		    v[0].hi == 0x555555558000 && v[0].exec);
	assert_string_equal(v[1].path, "/usr/lib/libc.so.6");
	assert_true(v[1].base == 0x7ffff7d80000 && v[1].exec);
	/* A path with a space; not executable. */
	assert_string_equal(v[2].path, "/lib/ld linux.so");
	assert_false(v[2].exec);
	observe_objects_free(v, n);
	assert_int_equal(observe_parse_maps("", &v, &n), 0);
	assert_int_equal(n, 0);
	observe_objects_free(v, n);
}

/* A profile's stack is cut at the observed function's outermost frame
 * (recursion kept), whatever called it; no frame of it: nothing. */
static void test_profile_cut(void **state)
{
	/* innermost first: spin, fib, fib, work, main; fib at 0x1000 */
	struct unwind_frame fr[5] = {
		{ .pc = 0x3010, .offset = 0x10, .func = "spin" },
		{ .pc = 0x1020, .offset = 0x20, .func = "fib" },
		{ .pc = 0x1030, .offset = 0x30, .func = "fib" },
		{ .pc = 0x2040, .offset = 0x40, .func = "work" },
		{ .pc = 0x5008, .offset = 0x8, .func = "main" },
	};

	(void)state;
	assert_int_equal(observe_profile_cut(fr, 5, 0x1000), 3);
	assert_int_equal(observe_profile_cut(fr, 5, 0x2000), 4);
	assert_int_equal(observe_profile_cut(fr, 5, 0x3000), 1);
	/* cut short above the function, or a frame without a symbol */
	assert_int_equal(observe_profile_cut(fr, 3, 0x2000), 0);
	fr[3].func[0] = '\0';
	assert_int_equal(observe_profile_cut(fr, 5, 0x2000), 0);
	assert_int_equal(observe_profile_cut(fr, 0, 0x1000), 0);
}

/* The samples' clock spends only the time the program ran inside calls
 * (from the resume plus its latency to the next stop); a due point passed
 * without a sample is dropped, never carried into the next stretch, where
 * it would be taken at once, where benchtrap left the thread. */
static void test_profile_spend(void **state)
{
	const int64_t period = 1000;

	(void)state;
	/* 300 of 1000 run: 700 left */
	assert_int_equal(observe_profile_spend(1000, 5000, 5300, period), 700);
	/* stopped before the latency was over: nothing ran */
	assert_int_equal(observe_profile_spend(700, 5000, 4990, period), 700);
	assert_int_equal(observe_profile_spend(700, 5000, 5000, period), 700);
	/* exactly due, or passed (the sample taken, or dropped): a whole
	 * period from the due point on */
	assert_int_equal(observe_profile_spend(700, 5000, 5700, period), 1000);
	assert_int_equal(observe_profile_spend(700, 5000, 5750, period), 950);
	/* a stretch over several points: the grid stays, none is owed */
	assert_int_equal(observe_profile_spend(700, 5000, 8000, period), 700);
}

/*
 * observe's results document is a results file: what it writes for a timed
 * function, a skipped one, one whose calls never returned and one that could
 * not be armed (failed, with why) reads back
 * through results_parse, with the statuses, the stats a reader needs, the
 * ± and the calls' durations in the order they returned.
 */
static void test_results_document(void **state)
{
	double ns[] = { 300, 100, 200 }, sorted[] = { 100, 200, 300 };
	struct observe_func_result funcs[4] = {
		{ .name = "timed",
		  .object = "prog",
		  .calls = 5, /* two of them made while their records were lost */
		  .timed = 3,
		  .ns = ns,
		  .uncertainty = 12.5,
		  .ci_low = 100,
		  .ci_high = 300 },
		{ .name = "skipped", .object = "prog", .skip = true, .calls = 2 },
		{ .name = "jumps", .object = "prog", .unmatched = 3 },
		{ .name = "probed",
		  .object = "prog",
		  .error = "not armed, none of its calls was observed: its code in memory "
			   "differs from the file (patched at run time)" },
	};
	struct observe_result res = { .funcs = funcs, .nfuncs = 4, .calibrated = true };
	char *argv[] = { "observe", "--symbol", "timed", "--", "./prog" };
	char *const target[] = { "./prog", NULL };
	struct report_observe rep = { .argv = argv, .argc = 5, .target_argv = target, .res = &res };
	struct results_file *f = NULL;
	char *text = NULL, *err = NULL;
	size_t len = 0;
	FILE *out;

	(void)state;
	rep.env.cores = 2;
	rep.env.aslr = 1;
	assert_int_equal(observe_summarize(sorted, 3, &funcs[0].sum), 0);
	out = open_memstream(&text, &len);
	assert_non_null(out);
	assert_int_equal(report_observe_json(&rep, out), 0);
	assert_int_equal(fclose(out), 0);
	assert_int_equal(results_parse(text, len, "obs.json", &f, &err), 0);
	assert_null(err);
	assert_true(results_file_observed(f));
	assert_int_equal(f->n, 4);
	assert_int_equal(f->benches[0].status, RESULTS_STATUS_OK);
	assert_true(f->benches[0].value == 200);
	assert_true(f->benches[0].stats.stddev == 100);
	assert_int_equal(f->benches[0].stats.samples, 3);
	assert_int_equal(f->benches[0].stats.iterations_per_sample, 1);
	assert_true(f->benches[0].stats.uncertainty == 12.5);
	assert_true(f->benches[0].stats.ci_low == 100 && f->benches[0].stats.ci_high == 300);
	assert_int_equal(f->benches[0].nraw, 3);
	assert_non_null(strstr(text, "\"calls\": 5"));
	assert_non_null(strstr(text, "\"timed_calls\": 3"));
	assert_true(f->benches[0].raw[0] == 300 && f->benches[0].raw[2] == 200);
	assert_false(f->benches[0].no_time);
	assert_int_equal(f->benches[1].status, RESULTS_STATUS_SKIPPED);
	assert_false(f->benches[1].has_stats);
	assert_int_equal(f->benches[1].nraw, 0);
	assert_string_equal(f->benches[1].diagnostics[0],
			    "skipped (--skip): its calls returned 0 at once and were not timed");
	assert_int_equal(f->benches[2].status, RESULTS_STATUS_NO_CALLS);
	assert_string_equal(f->benches[2].diagnostics[0],
			    "no call returned: 3 calls left it otherwise (longjmp, an exception, "
			    "or an exit inside it)");
	assert_int_equal(f->benches[3].status, RESULTS_STATUS_FAILED);
	assert_false(f->benches[3].has_stats);
	assert_string_equal(f->benches[3].error, funcs[3].error);
	assert_string_equal(f->benches[3].diagnostics[0], funcs[3].error);
	results_free(f);
	free(text);
}

/* ---- patching ---------------------------------------------------------------------- */

static int32_t rel32_at(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void test_patch_prologue(void **state)
{
	/* push rbp; mov rbp, rsp; sub rsp, 0x10; ... ret */
	static const uint8_t code[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x83,
					0xec, 0x10, 0x90, 0xc9, 0xc3 };
	const uint64_t addr = 0x401000, at = 0x501000;
	struct arch_patch pt;
	char why[160];

	(void)state;
	assert_int_equal(arch_patch_plan(code, sizeof(code), addr, at, &pt, why, sizeof(why)), 0);
	/* whole instructions: push (1) + mov (3) + sub (4) = 8 >= 5 */
	assert_int_equal(pt.displaced, 8);
	assert_memory_equal(pt.code, code, 8);
	/* then a jump back to addr + 8 */
	assert_int_equal(pt.code[8], 0xe9);
	assert_int_equal((int64_t)(at + AGENT_TRAMP_CODE + 13) + rel32_at(pt.code + 9),
			 (int64_t)addr + 8);
	assert_int_equal(pt.code_len, 13);
	/* the entry: a jump to the trampoline, int3 over the rest */
	assert_int_equal(pt.entry[0], 0xe9);
	assert_int_equal((int64_t)(addr + 5) + rel32_at(pt.entry + 1), (int64_t)at);
	assert_int_equal(pt.entry[5], 0xcc);
	assert_int_equal(pt.entry[7], 0xcc);
}

static void test_patch_rip_relative(void **state)
{
	/* mov rax, [rip + 0x100]; ret: the operand must still address
	 * addr + 7 + 0x100 from the trampoline */
	static const uint8_t code[] = { 0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00, 0xc3 };
	const uint64_t addr = 0x401000, at = 0x380000;
	struct arch_patch pt;
	char why[160];

	(void)state;
	assert_int_equal(arch_patch_plan(code, sizeof(code), addr, at, &pt, why, sizeof(why)), 0);
	assert_int_equal(pt.displaced, 7);
	assert_memory_equal(pt.code, code, 3);
	assert_int_equal((int64_t)(at + AGENT_TRAMP_CODE + 7) + rel32_at(pt.code + 3),
			 (int64_t)(addr + 7 + 0x100));
}

static void test_patch_branch(void **state)
{
	/* test rdi, rdi; je +0x10 (an early way out); xor eax, eax; ...; ret */
	static const uint8_t code[] = { 0x48, 0x85, 0xff, 0x74, 0x10, 0x31, 0xc0, 0x90,
					0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
					0x90, 0x90, 0x90, 0x90, 0x90, 0xc3 };
	const uint64_t addr = 0x401000, at = 0x480000;
	struct arch_patch pt;
	char why[160];

	(void)state;
	assert_int_equal(arch_patch_plan(code, sizeof(code), addr, at, &pt, why, sizeof(why)), 0);
	assert_int_equal(pt.displaced, 5);
	assert_memory_equal(pt.code, code, 3);
	/* je rel8 became je rel32 to the same target, addr + 5 + 0x10 */
	assert_int_equal(pt.code[3], 0x0f);
	assert_int_equal(pt.code[4], 0x84);
	assert_int_equal((int64_t)(at + AGENT_TRAMP_CODE + 9) + rel32_at(pt.code + 5),
			 (int64_t)(addr + 5 + 0x10));
	/* then back to addr + 5 */
	assert_int_equal(pt.code[9], 0xe9);
	assert_int_equal((int64_t)(at + AGENT_TRAMP_CODE + 14) + rel32_at(pt.code + 10),
			 (int64_t)(addr + 5));
}

static void test_patch_rip_prefixed(void **state)
{
	/* comisd xmm0, [rip + 0x1b4928] (66 0f 2f 05 disp32): a prefixed
	 * instruction whose displacement Capstone 4 reports as 2 bytes */
	static const uint8_t code[] = { 0x66, 0x0f, 0x2f, 0x05, 0x28, 0x49, 0x1b, 0x00, 0xc3 };
	const uint64_t addr = 0x5abdd0, at = 0x480000;
	struct arch_patch pt;
	char why[160];

	(void)state;
	assert_int_equal(arch_patch_plan(code, sizeof(code), addr, at, &pt, why, sizeof(why)), 0);
	assert_int_equal(pt.displaced, 8);
	assert_int_equal((int64_t)(at + AGENT_TRAMP_CODE + 8) + rel32_at(pt.code + 4),
			 (int64_t)(addr + 8 + 0x1b4928));
}

static void test_patch_last(void **state)
{
	/* mov rax, [rdi + 16]; ret: the whole function is moved, ret last */
	static const uint8_t getter[] = { 0x48, 0x8b, 0x47, 0x10, 0xc3 };
	/* sub rsp, 8; call +0x100: pushes the original return address */
	static const uint8_t caller[] = { 0x48, 0x83, 0xec, 0x08, 0xe8, 0x00, 0x01,
					  0x00, 0x00, 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	/* jmp [rdi + 0x30] at +3, after a 3-byte instruction */
	static const uint8_t thunk[] = { 0x48, 0x89, 0xf8, 0xff, 0x67, 0x30 };
	const uint64_t addr = 0x401000, at = 0x480000;
	struct arch_patch pt;
	uint8_t t[AGENT_TRAMP_LEN];
	uint64_t v;
	char why[160];

	(void)state;
	assert_int_equal(arch_patch_plan(getter, sizeof(getter), addr, at, &pt, why, sizeof(why)),
			 0);
	assert_int_equal(pt.displaced, 5);
	assert_memory_equal(pt.code, getter, 5);
	assert_int_equal(arch_patch_plan(thunk, sizeof(thunk), addr, at, &pt, why, sizeof(why)), 0);
	assert_int_equal(pt.displaced, 6);
	assert_memory_equal(pt.code, thunk, 6);
	assert_int_equal(arch_patch_plan(caller, sizeof(caller), addr, at, &pt, why, sizeof(why)),
			 0);
	assert_int_equal(pt.displaced, 9);
	assert_memory_equal(pt.code, caller, 4);
	/* push qword [rip + d]: the return address slot of the trampoline */
	assert_int_equal(pt.code[4], 0xff);
	assert_int_equal(pt.code[5], 0x35);
	assert_int_equal((int64_t)(at + AGENT_TRAMP_CODE + 10) + rel32_at(pt.code + 6),
			 (int64_t)(at + AGENT_TRAMP_RET));
	/* jmp to the call's target, addr + 9 + 0x100 */
	assert_int_equal(pt.code[10], 0xe9);
	assert_int_equal((int64_t)(at + AGENT_TRAMP_CODE + 15) + rel32_at(pt.code + 11),
			 (int64_t)(addr + 9 + 0x100));
	assert_int_equal(pt.call_return, addr + 9);
	arch_tramp_build(t, at, 0x7f0000001000ull, 3, &pt);
	memcpy(&v, t + AGENT_TRAMP_RET, 8);
	assert_int_equal(v, addr + 9);
}

static void test_patch_longest(void **state)
{
	/* endbr64; movq $-1, %fs:-8 (13 bytes): 17 bytes replaced */
	static const uint8_t code[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x64, 0x48, 0xc7, 0x04, 0x25,
					0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xc3 };
	struct arch_patch pt;
	char why[160];

	(void)state;
	assert_int_equal(
		arch_patch_plan(code, sizeof(code), 0x401000, 0x480000, &pt, why, sizeof(why)), 0);
	assert_int_equal(pt.displaced, 17);
	assert_true(pt.displaced <= sizeof(pt.entry));
	assert_int_equal(pt.entry[16], 0xcc);
	assert_memory_equal(pt.code, code, 17);
}

static void test_patch_foreign_jumps(void **state)
{
	/* a neighbour: mov rax, rdi; jmp +3 into the next function
	 * (at 0x1005: eb 0x0c lands at 0x1013 = 0x1010 + 3) */
	static const uint8_t neighbour[] = { 0x48, 0x89, 0xf8, 0x90, 0x90, 0xeb, 0x0c };
	/* somewhere: call 0x2010 (e8 rel32 at 0x2000), jmp 0x2013 (e9 at 0x2005), jne
	 * 0x2020 (0f 85 at 0x200a) */
	static const uint8_t code[] = { 0xe8, 0x0b, 0x00, 0x00, 0x00, 0xe9, 0x09, 0x00, 0x00,
					0x00, 0x0f, 0x85, 0x10, 0x00, 0x00, 0x00, 0x90, 0x90,
					0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
					0x90, 0x90, 0x90, 0x90, 0x90, 0x90 };
	uint64_t *v = NULL;
	size_t n = 0;

	(void)state;
	assert_true(arch_patch_jumps_into(neighbour, sizeof(neighbour), 0x1000, 0x1010, 0x1015));
	assert_false(arch_patch_jumps_into(neighbour, sizeof(neighbour), 0x1000, 0x1013, 0x1018));
	assert_int_equal(arch_jump_targets(code, sizeof(code), 0x2000, &v, &n), 0);
	/* every rel32 that lands inside the code: 0x2010, 0x2013, 0x2020 */
	assert_true(n >= 3);
	assert_true(arch_targets_into(v, n, 0x2010, 0x2015));  /* 0x2013 */
	assert_false(arch_targets_into(v, n, 0x2013, 0x2014)); /* (lo, hi) open */
	assert_true(arch_targets_into(v, n, 0x201c, 0x2021));  /* 0x2020 */
	assert_false(arch_targets_into(v, n, 0x2014, 0x201f));
	free(v);
}

static void test_patch_refused(void **state)
{
	static const uint8_t tiny[] = { 0x8d, 0x47, 0x01, 0xc3 }; /* lea eax,[rdi+1]; ret */
	static const uint8_t early_ret[] = { 0x31, 0xc0, 0xc3, 0x90, 0x90, 0x90 };
	/* call rax; then more moved after it: its return would land in them */
	static const uint8_t starts_with_call[] = { 0xff, 0xd0, 0x90, 0x90, 0x90, 0xc3 };
	/* xor eax,eax; nop; nop; nop; dec edi; jnz +1 (back into the entry's bytes); ret */
	static const uint8_t loop_in[] = { 0x31, 0xc0, 0x90, 0x90, 0x90,
					   0xff, 0xcf, 0x75, 0xf8, 0xc3 };
	static const uint8_t prologue[] = { 0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3 };
	static const uint8_t rip[] = { 0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00, 0xc3 };
	static const uint8_t junk[] = {
		0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3, 0x06, 0x06
	}; /* push es: none in 64-bit mode */
	struct arch_patch pt;
	char why[160];

	(void)state;
	assert_int_equal(arch_patch_plan(tiny, sizeof(tiny), 0x1000, 0x2000, &pt, why, sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "too short for a jump (4 bytes)"));
	assert_int_equal(arch_patch_plan(early_ret, sizeof(early_ret), 0x1000, 0x2000, &pt, why,
					 sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "a branch in its first 5 bytes that cannot be moved (ret"));
	assert_int_equal(arch_patch_plan(starts_with_call, sizeof(starts_with_call), 0x1000, 0x2000,
					 &pt, why, sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "(call"));
	assert_int_equal(
		arch_patch_plan(loop_in, sizeof(loop_in), 0x1000, 0x2000, &pt, why, sizeof(why)),
		-EINVAL);
	assert_non_null(strstr(why, "a jump into its first 5 bytes (to +1)"));
	/* a trampoline out of reach of the function */
	assert_int_equal(arch_patch_plan(prologue, sizeof(prologue), 0x1000, 0x1000 + (3ull << 30),
					 &pt, why, sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "within reach"));
	/* what a rip-relative operand addresses out of the trampoline's reach */
	assert_int_equal(arch_patch_plan(rip, sizeof(rip), 0x7f0000000000ull,
					 0x7f0000000000ull - 0x7ffffff0ull, &pt, why, sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "reach"));
	/* bytes that do not decode: no way to rule out a jump into the entry */
	assert_int_equal(arch_patch_plan(junk, sizeof(junk), 0x1000, 0x2000, &pt, why, sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "cannot be decoded"));
}

static void test_tramp_build(void **state)
{
	static const uint8_t code[] = { 0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3 };
	struct arch_patch pt;
	uint8_t t[AGENT_TRAMP_LEN];
	uint64_t at = 0x501000, stub = 0x7f0000001000ull, v;
	uint32_t fn;
	char why[160];

	(void)state;
	assert_int_equal(arch_patch_plan(code, sizeof(code), 0x401000, at, &pt, why, sizeof(why)),
			 0);
	arch_tramp_build(t, at, stub, 42, &pt);
	/* call [rip + 2]; .quad stub; .long 42 */
	(void)at;
	assert_memory_equal(t, ((const uint8_t[]){ 0xff, 0x15, 0x02, 0, 0, 0 }), 6);
	memcpy(&v, t + AGENT_TRAMP_STUB, 8);
	assert_int_equal(v, stub);
	memcpy(&fn, t + AGENT_TRAMP_FUNC, 4);
	assert_int_equal(fn, 42);
	assert_memory_equal(t + AGENT_TRAMP_CODE, pt.code, pt.code_len);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recursion),
		cmocka_unit_test(test_longjmp),
		cmocka_unit_test(test_other_stack),
		cmocka_unit_test(test_tail_call),
		cmocka_unit_test(test_corrected),
		cmocka_unit_test(test_hist),
		cmocka_unit_test(test_summarize),
		cmocka_unit_test(test_rounds),
		cmocka_unit_test(test_calibrate),
		cmocka_unit_test(test_unresolved),
		cmocka_unit_test(test_maps),
		cmocka_unit_test(test_profile_cut),
		cmocka_unit_test(test_profile_spend),
		cmocka_unit_test(test_results_document),
		cmocka_unit_test(test_patch_prologue),
		cmocka_unit_test(test_patch_rip_relative),
		cmocka_unit_test(test_patch_branch),
		cmocka_unit_test(test_patch_rip_prefixed),
		cmocka_unit_test(test_patch_last),
		cmocka_unit_test(test_patch_longest),
		cmocka_unit_test(test_patch_foreign_jumps),
		cmocka_unit_test(test_patch_refused),
		cmocka_unit_test(test_tramp_build),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
