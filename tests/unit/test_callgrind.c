/* SPDX-License-Identifier: MIT */
/* The counting instruments' pure logic: callgrind profiles, the child's
 * fixed environment, perf error classification and per-call figures. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "measure/callgrind.h"
#include "measure/driver-env.h"
#include "measure/driven.h"
#include "measure/perf.h"

static FILE *text(const char *s)
{
	return fmemopen((void *)s, strlen(s), "r");
}

/* As callgrind writes it with name compression (a dump of the driver). */
static const char compressed[] = "# callgrind format\n"
				 "version: 1\n"
				 "creator: callgrind-3.19.0\n"
				 "positions: line\n"
				 "events: Ir Dr\n"
				 "summary: 1450 30\n"
				 "\n"
				 "ob=(5) /x/t\n"
				 "fl=(146) /x/t.c\n"
				 "fn=(538) benchtrap_driver_call\n"
				 "3 3 1\n"
				 "cfn=(542) fibw\n"
				 "calls=1 +3 \n"
				 "* 1440 28\n"
				 "\n"
				 "fn=(542)\n"
				 "6 2\n"
				 "cfn=(544) fibr\n"
				 "calls=1 -1 \n"
				 "* 1434 27\n"
				 "fn=(536) main\n"
				 "cfn=(538)\n"
				 "calls=1 3 \n"
				 "7 1443 29\n"
				 "totals: 1443 29\n";

static void test_parse_caller(void **state)
{
	struct callgrind_profile p;
	FILE *f = text(compressed);

	(void)state;
	assert_int_equal(callgrind_parse(f, "benchtrap_driver_call", NULL, &p), 0);
	fclose(f);
	assert_int_equal(p.nevents, 2);
	assert_string_equal(p.events[0], "Ir");
	assert_string_equal(p.events[1], "Dr");
	assert_int_equal(p.calls, 1);
	assert_int_equal(p.arcs, 1);
	assert_int_equal(p.inclusive[0], 1440);
	assert_int_equal(p.inclusive[1], 28);
	/* totals: wins over summary:. */
	assert_int_equal(p.totals[0], 1443);
	assert_int_equal(callgrind_event_index(&p, "Dr"), 1);
	assert_int_equal(callgrind_event_index(&p, "D1mr"), -1);
}

static void test_parse_callee(void **state)
{
	struct callgrind_profile p;
	FILE *f = text(compressed);

	(void)state;
	/* "(538)" refers to the name defined earlier. */
	assert_int_equal(callgrind_parse(f, NULL, "benchtrap_driver_call", &p), 0);
	fclose(f);
	assert_int_equal(p.calls, 1);
	assert_int_equal(p.inclusive[0], 1443);
	f = text(compressed);
	assert_int_equal(callgrind_parse(f, "nobody", NULL, &p), 0);
	fclose(f);
	assert_int_equal(p.arcs, 0);
	assert_int_equal(p.calls, 0);
}

/* Arcs to one callee add up; a recursive "f'2" is not "f"; missing
 * trailing costs are zero; two position columns are skipped. */
static void test_parse_sums(void **state)
{
	static const char s[] = "events: Ir Dw\n"
				"positions: instr line\n"
				"fn=a\n"
				"cfn=f\n"
				"calls=2 0x10 4\n"
				"0x20 5 100 7\n"
				"cfn=f'2\n"
				"calls=9 0x10 4\n"
				"+3 * 999 1\n"
				"cfn=f\n"
				"calls=3 0x10 4\n"
				"+1 * 50\n"
				"fn=b\n"
				"cfn=f\n"
				"calls=1 0x10 4\n"
				"0x40 2 11 1\n";
	struct callgrind_profile p;
	FILE *f = text(s);

	(void)state;
	assert_int_equal(callgrind_parse(f, "a", "f", &p), 0);
	fclose(f);
	assert_int_equal(p.calls, 5);
	assert_int_equal(p.arcs, 2);
	assert_int_equal(p.inclusive[0], 150);
	assert_int_equal(p.inclusive[1], 7);
	f = text(s);
	assert_int_equal(callgrind_parse(f, NULL, "f", &p), 0);
	fclose(f);
	assert_int_equal(p.calls, 6);
	assert_int_equal(p.inclusive[0], 161);
}

static void test_parse_bad(void **state)
{
	struct callgrind_profile p = { .calls = 77 };
	FILE *f = text("hello world\n");

	(void)state;
	assert_int_equal(callgrind_parse(f, NULL, NULL, &p), -EINVAL);
	fclose(f);
	f = text("# callgrind format\nversion: 1\n");
	assert_int_equal(callgrind_parse(f, NULL, NULL, &p), -EINVAL);
	fclose(f);
	f = text("events: A B C D E F G H I J K L M N O P Q\n");
	assert_int_equal(callgrind_parse(f, NULL, NULL, &p), -EINVAL);
	fclose(f);
	/* Untouched on failure. */
	assert_int_equal(p.calls, 77);
	assert_int_equal(callgrind_parse_file("/nonexistent/x", NULL, NULL, &p), -ENOENT);
}

static size_t count(char **v)
{
	size_t n = 0;

	while (v[n])
		n++;
	return n;
}

static bool has(char **v, const char *s)
{
	for (size_t i = 0; v[i]; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

static void test_env_fixed(void **state)
{
	const char *extra[] = { "BENCHTRAP_RUN=fib[20]", NULL };
	char **a, **b;

	(void)state;
	setenv("HOME", "/somewhere", 1);
	unsetenv("VALGRIND_LIB");
	a = measure_child_env(extra);
	assert_non_null(a);
	assert_true(has(a, "LC_ALL=C"));
	assert_true(has(a, "LD_BIND_NOW=1"));
	assert_true(has(a, "BENCHTRAP_RUN=fib[20]"));
	assert_int_equal(count(a), 4); /* PATH, LC_ALL, LD_BIND_NOW, extra */
	for (size_t i = 0; a[i]; i++)
		assert_null(strstr(a[i], "HOME="));
	/* The controller's environment does not change it. */
	setenv("SOMETHING_ELSE", "1", 1);
	b = measure_child_env(extra);
	assert_int_equal(count(a), count(b));
	for (size_t i = 0; a[i]; i++)
		assert_string_equal(a[i], b[i]);
	measure_env_free(a);
	measure_env_free(b);
}

/* The list of functions for the driver: a header, then one line per
 * function of fixed width but for a library's path, every argument
 * written. */
static void test_driver_specs(void **state)
{
	struct bench_spec s1 = { .name = "f", .object = "/bin/x", .in_main = true,
				 .link_addr = 0x1139 };
	struct bench_spec s2 = { .name = "g(1,-2)[threads=64]", .object = "/lib/libz.so",
				 .in_main = false, .link_addr = 0xabc, .args = { 1, -2 }, .nargs = 2,
				 .threads = 64 };
	struct bench_spec bad = { .name = "h", .object = "/lib/a\nb.so", .in_main = false };
	struct bench_spec many = { .name = "k", .object = "/bin/x", .in_main = true,
				   .threads = DRIVER_MAX_THREADS + 1 };
	const struct bench_spec *specs[] = { &s1, &s2 }, *bads[] = { &bad }, *manys[] = { &many };
	char buf[1024] = "";
	FILE *f = tmpfile();

	(void)state;
	assert_non_null(f);
	assert_int_equal(driven_write_specs(fileno(f), DRIVEN_SERVE, specs, 2, 60000000000ull, 0, 0, 0),
			 0);
	rewind(f);
	assert_true(fread(buf, 1, sizeof(buf) - 1, f) > 0);
	assert_string_equal(
		buf, "benchtrap-driver/3 serve 2 60000 0 0 0\n"
		     "0000000000001139 0000000000000000 0000000000000000 0000000000000000 "
		     "0000000000000000 0000000000000000 0000000000000000 0000\n"
		     "0000000000000abc 0000000000000001 fffffffffffffffe 0000000000000000 "
		     "0000000000000000 0000000000000000 0000000000000000 0040 /lib/libz.so\n");
	fclose(f);
	f = tmpfile();
	assert_int_equal(driven_write_specs(fileno(f), DRIVEN_CALL, specs, 1, 1000000, 100, 3, 16), 0);
	memset(buf, 0, sizeof(buf));
	rewind(f);
	assert_true(fread(buf, 1, sizeof(buf) - 1, f) > 0);
	assert_memory_equal(buf, "benchtrap-driver/3 call 1 1 100 3 16\n", 37);
	/* A path the driver could not read back; more threads than it runs. */
	assert_int_equal(driven_write_specs(fileno(f), DRIVEN_CALL, bads, 1, 1000000, 0, 0, 0), -EINVAL);
	assert_int_equal(driven_write_specs(fileno(f), DRIVEN_CALL, manys, 1, 1000000, 0, 0, 0),
			 -EINVAL);
	fclose(f);
}

/* The driver's report, line by line (driver-protocol.h). */
static void test_driver_report(void **state)
{
	struct driven_line l;

	(void)state;
	assert_int_equal(driven_parse_line("server 1 4242", &l), 0);
	assert_int_equal(l.kind, DRIVEN_LINE_SERVER);
	assert_int_equal(l.threads, 1);
	assert_int_equal(l.pid, 4242);
	assert_int_equal(driven_parse_line("start 3 4300", &l), 0);
	assert_int_equal(l.kind, DRIVEN_LINE_START);
	assert_int_equal(l.i, 3);
	assert_int_equal(l.pid, 4300);
	assert_int_equal(driven_parse_line("done 3 4300", &l), 0);
	assert_int_equal(l.kind, DRIVEN_LINE_DONE);
	assert_int_equal(driven_parse_line("end 3 139 0", &l), 0);
	assert_int_equal(l.kind, DRIVEN_LINE_END);
	assert_int_equal(l.status, 139);
	assert_false(l.killed);
	assert_int_equal(driven_parse_line("end 4 9 1", &l), 0);
	assert_true(l.killed);
	assert_int_equal(l.end, DRIVEN_END_TIMEOUT);
	/* Killed by the server: it executed; no other reason is known. */
	assert_int_equal(driven_parse_line("end 4 9 2", &l), 0);
	assert_true(!l.killed && l.end == DRIVEN_END_EXEC);
	assert_int_equal(driven_parse_line("end 4 4991 3", &l), -EINVAL);
	/* What it executed: the rest of the line, spaces and all. */
	assert_int_equal(driven_parse_line("exec 4 4300 /usr/bin/my prog", &l), 0);
	assert_int_equal(l.kind, DRIVEN_LINE_EXEC);
	assert_true(l.i == 4 && l.pid == 4300);
	assert_string_equal(l.path, "/usr/bin/my prog");
	assert_int_equal(driven_parse_line("perf 0 10 20 310 420", &l), 0);
	assert_int_equal(l.kind, DRIVEN_LINE_PERF);
	assert_true(l.perf[0] == 10 && l.perf[1] == 20 && l.perf[2] == 310 && l.perf[3] == 420);
	assert_int_equal(driven_parse_line("mem 2 5 4 4096 3000 96 0 1", &l), 0);
	assert_int_equal(l.kind, DRIVEN_LINE_MEM);
	assert_int_equal(l.i, 2);
	assert_true(l.mem[0] == 5 && l.mem[1] == 4 && l.mem[2] == 4096 && l.mem[3] == 3000 &&
		    l.mem[4] == 96 && l.mem[5] == 0 && l.mem[6] == 1);
	assert_int_equal(driven_parse_line("site 3 1 4096 2 5", &l), 0);
	assert_int_equal(l.kind, DRIVEN_LINE_SITE);
	assert_true(l.i == 3 && l.rank == 1 && l.bytes == 4096 && l.count == 2 && l.n == 5);
	assert_int_equal(driven_parse_line("frame 3 1 140737351905280", &l), 0);
	assert_int_equal(l.kind, DRIVEN_LINE_FRAME);
	assert_true(l.rank == 1 && l.pc == 140737351905280ull);
	assert_int_equal(driven_parse_line("lost 7", &l), 0);
	assert_int_equal(l.kind, DRIVEN_LINE_LOST);
	assert_int_equal(l.i, 7);
	assert_int_equal(driven_parse_line("maps 4242", &l), 0);
	assert_int_equal(l.kind, DRIVEN_LINE_MAPS);
	assert_int_equal(l.pid, 4242);
	assert_int_equal(driven_parse_line("thread 5 1 4301 3 2 1000", &l), 0);
	assert_int_equal(l.kind, DRIVEN_LINE_THREAD);
	assert_true(l.i == 5 && l.k == 1 && l.pid == 4301);
	assert_true(l.thread_mem[0] == 3 && l.thread_mem[1] == 2 && l.thread_mem[2] == 1000);
	assert_int_equal(driven_parse_line("thread 0 63 7 0 0 0", &l), 0);
	assert_int_equal(l.k, 63);
	/* Anything else is not the driver's. */
	const char *bad[] = { "",	       "server",	 "server 1",	"start 1",
			      "done 1 2 3",    "end 1 2",	 "end 1 2 4",	"end 1 70000 0",
			      "exec 1 2",      "exec 1 2 ",	 "exec 1",	"exec x 2 /bin/true",
			      "exec 1 -2 /bin/true",
			      "perf 1 2 3 4",  "perf 1 2 3 4 5 6", "start -1 5", "hello 1 2",
			      "done x 2",      "start 1 2 junk", "start 1  2", "start 1 2 ",
			      "starts 1 2",    "perf 1 2 3 4 99999999999999999999",
			      "mem 1 2 3 4 5 6 0", "mem 1 2 3 4 5 6 2 0", "mem 1 2 3 4 5 6 0 7",
			      "mem 1 2 3 4 5 6 0 0 0", "site 1 64 2 3 4", "site 1 0 2 3 33",
			      "frame 1 2", "frame 1 64 5", "maps", "maps 1 2",
			      /* thread: a 65th thread, no tid, too few or many numbers */
			      "thread 1 64 7 0 0 0", "thread 1 0 0 0 0 0", "thread 1 0 7 0 0",
			      "thread 1 0 7 0 0 0 0", "thread 1 0 4294967296 0 0 0",
			      "thread 1 0 7 0 0 -1", "threads 1 0 7 0 0 0" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(driven_parse_line(bad[i], &l), -EINVAL);
}

/* A child its server killed is said in the trace engine's words. */
static void test_driver_end_words(void **state)
{
	struct driven_call c = { .execd = true };
	char *s;

	(void)state;
	s = driven_end_words(&c);
	assert_string_equal(s, "executed another program");
	free(s);
	snprintf(c.exec_path, sizeof(c.exec_path), "/usr/bin/sleep");
	s = driven_end_words(&c);
	assert_string_equal(s, "executed another program (/usr/bin/sleep)");
	free(s);
	c = (struct driven_call){ .killed = true };
	assert_null(driven_end_words(&c));
	/* And so is the failure of a native instrument. */
	c = (struct driven_call){ .execd = true };
	s = driven_failure(&c, 2000000000);
	assert_string_equal(s, "executed another program");
	free(s);
}

/* The names callgrind gives a process's profiles: a dump's number after
 * --dump-after, a thread's with --separate-threads=yes. */
static void test_part_names(void **state)
{
	unsigned dump = 9, thread = 9;

	(void)state;
	assert_true(callgrind_part_name("callgrind.out.4242", 4242, &dump, &thread));
	assert_true(dump == 0 && thread == 0);
	assert_true(callgrind_part_name("callgrind.out.4242.3", 4242, &dump, &thread));
	assert_true(dump == 3 && thread == 0);
	assert_true(callgrind_part_name("callgrind.out.4242-02", 4242, &dump, &thread));
	assert_true(dump == 0 && thread == 2);
	assert_true(callgrind_part_name("callgrind.out.4242.12-64", 4242, &dump, &thread));
	assert_true(dump == 12 && thread == 64);
	dump = thread = 9;
	const char *bad[] = { "callgrind.out.424", "callgrind.out.42421", "callgrind.out.4242.",
			      "callgrind.out.4242-", "callgrind.out.4242.0", "callgrind.out.4242-00",
			      "callgrind.out.4242.1.2", "callgrind.out.4242-1-2",
			      "callgrind.out.4242.x", "callgrind.out.4242 ", "callgrind.out.",
			      "xcallgrind.out.4242", "callgrind.out.+4242",
			      "callgrind.out.4242.12345678901" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(callgrind_part_name(bad[i], 4242, &dump, &thread));
	/* Nothing written when it is not one. */
	assert_true(dump == 9 && thread == 9);
}

static void test_perf_classify(void **state)
{
	(void)state;
	assert_int_equal(perf_classify_errno(0), PERF_AVAILABLE);
	assert_int_equal(perf_classify_errno(ENOENT), PERF_NO_PMU);
	assert_int_equal(perf_classify_errno(EOPNOTSUPP), PERF_NO_PMU);
	assert_int_equal(perf_classify_errno(ENODEV), PERF_NO_PMU);
	assert_int_equal(perf_classify_errno(EACCES), PERF_NO_PERMISSION);
	assert_int_equal(perf_classify_errno(EPERM), PERF_NO_PERMISSION);
	assert_int_equal(perf_classify_errno(EMFILE), PERF_OTHER);
}

static void test_perf_per_call(void **state)
{
	(void)state;
	assert_true(perf_per_call(200200, 200, 100) == 2000.0);
	assert_true(perf_per_call(250, 200, 100) == 0.5);
	assert_true(perf_per_call(100, 200, 100) == 0.0);
	assert_true(perf_per_call(100, 0, 0) == 0.0);
}

/* --profile: contexts named by their callers become folded stacks from
 * the benchmark's function inward, with their own costs (a call's line,
 * its inclusive cost, is not the caller's own). */
static void test_folded(void **state)
{
	static const char text[] = "# callgrind format\n"
				   "version: 1\n"
				   "positions: line\n"
				   "events: Ir Dr\n"
				   "fn=(1) benchtrap_driver_call'main'__libc_start_main\n"
				   "10 7 1\n"
				   "cfn=(2) bench'benchtrap_driver_call'main\n"
				   "calls=1 20\n"
				   "10 4003 0\n"
				   "fn=(2)\n"
				   "20 3\n"
				   "cfn=(3) heavy'bench'benchtrap_driver_call\n"
				   "calls=1 30\n"
				   "+1 3000\n"
				   "fn=(3)\n"
				   "30 2000\n"
				   "+1 1000 5\n"
				   "fn=(4) light'bench'benchtrap_driver_call\n"
				   "40 1000\n"
				   "fn=(5) a'b'c'd\n"
				   "1 50\n"
				   "fn=(6) <std::vector<int>>'x'y'z'w\n"
				   "1 9\n";
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");
	struct folded out = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	assert_non_null(f);
	assert_int_equal(callgrind_folded(f, "bench", 4, &out), 0);
	fclose(f);
	m = open_memstream(&buf, &len);
	assert_int_equal(folded_write(&out, m), 0);
	fclose(m);
	/* The driver's own 7 and the short chain a'b'c'd left out; a chain
	 * as long as callgrind keeps (4 callers) that does not reach bench is
	 * kept as deeper. */
	assert_string_equal(buf, "[deeper];w;z;y;x;<std::vector<int>> 9\n"
				 "bench 3\n"
				 "bench;heavy 3000\n"
				 "bench;light 1000\n");
	free(buf);
	folded_free(&out);

	f = fmemopen((void *)"events: Dr\nfn=x\n1 2\n", 21, "r");
	assert_int_equal(callgrind_folded(f, "x", 4, &out), -EINVAL);
	fclose(f);
	folded_free(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_parse_caller),  cmocka_unit_test(test_parse_callee),
		cmocka_unit_test(test_parse_sums),    cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_env_fixed),     cmocka_unit_test(test_driver_specs),
		cmocka_unit_test(test_driver_report), cmocka_unit_test(test_part_names),
		cmocka_unit_test(test_driver_end_words),
		cmocka_unit_test(test_perf_classify), cmocka_unit_test(test_perf_per_call),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
