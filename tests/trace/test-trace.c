// SPDX-License-Identifier: MIT
/*
 * Integration tests of the trace engine against the compiled fixture
 * tracee.c (argv[1]) and its stripped copy (argv[2]). After every test, no
 * process of the test may remain: the test process is the subreaper of
 * everything it starts, so support_children() sees any leftover.
 */
#include <errno.h>
#include <fenv.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "trace/trace.h"
#include "support.h"

static const char *tracee;
static const char *tracee_stripped;

static int check_no_children(void **state)
{
	size_t live = trace_live_count();
	int children = support_children();

	(void)state;
	if (live == 0 && children == 0)
		return 0;
	/* Clean up for the next test, and fail this one. */
	trace_kill_all();
	support_kill_children();
	fail_msg("%zu tracees and %d children left behind", live, children);
	return -1;
}

static uint64_t bias_of(struct trace_proc *p, const char *path)
{
	uint64_t entry = 0;

	assert_int_equal(trace_auxv(p, AT_ENTRY, &entry), 0);
	return entry - support_entry(path);
}

static uint64_t sym(struct trace_proc *p, const char *name)
{
	uint64_t a = support_symbol(tracee, name);

	assert_true(a != 0);
	return a + bias_of(p, tracee);
}

/* Spawn the fixture with 'args' (NULL-terminated) and run it to main. */
static struct trace_proc *start(const char *path, const char *arg, ...)
{
	char *argv[8] = { (char *)path };
	struct trace_spawn_opts o;
	struct trace_failure f;
	struct trace_proc *p = NULL;
	uint64_t main_addr = 0;
	va_list ap;
	int n = 1;

	va_start(ap, arg);
	for (const char *a = arg; a && n < 7; a = va_arg(ap, const char *))
		argv[n++] = (char *)a;
	va_end(ap);
	trace_spawn_opts_init(&o, argv);
	assert_int_equal(trace_spawn(&o, &p, NULL), 0);
	assert_int_equal(trace_run_to_main(p, support_symbol(path, "main"), support_entry(path),
					   -1, &main_addr, &f),
			 0);
	return p;
}

static void expect_exit(struct trace_proc *p, int code)
{
	struct trace_event ev;

	assert_int_equal(trace_resume(p), 0);
	assert_int_equal(trace_wait(p, -1, &ev), 0);
	assert_int_equal(ev.kind, TRACE_EV_EXITED);
	assert_int_equal(ev.code, code);
	assert_false(trace_alive(p));
}

static void test_exec_errors(void **state)
{
	char *missing[] = { "/nonexistent/benchtrap-fixture", NULL };
	char path[] = "/tmp/benchtrap-trace-XXXXXX";
	char *noexec[] = { path, NULL };
	struct trace_spawn_opts o;
	struct trace_proc *p = NULL;
	int e = 0, fd;

	trace_spawn_opts_init(&o, missing);
	assert_int_equal(trace_spawn(&o, &p, &e), -TRACE_E_EXEC);
	assert_int_equal(e, ENOENT);
	assert_null(p);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "#!/bin/sh\n", 10), 10);
	close(fd);
	trace_spawn_opts_init(&o, noexec);
	e = 0;
	assert_int_equal(trace_spawn(&o, &p, &e), -TRACE_E_EXEC);
	assert_int_equal(e, EACCES);
	unlink(path);
}

static void test_spawn_and_free(void **state)
{
	char *argv[] = { (char *)tracee, NULL };
	struct trace_spawn_opts o;
	struct trace_proc *p = NULL;

	trace_spawn_opts_init(&o, argv);
	o.clean_env = true;
	o.cpu = 0;
	assert_int_equal(trace_spawn(&o, &p, NULL), 0);
	assert_true(trace_alive(p));
	assert_int_equal(trace_live_count(), 1);
	trace_proc_free(p);
}

static void test_run_to_main(void **state)
{
	struct trace_proc *p = start(tracee, NULL);
	struct arch_regs regs;

	assert_int_equal(trace_get_regs(p, trace_pid(p), &regs), 0);
	assert_int_equal(arch_pc(&regs), sym(p, "main"));
	assert_int_equal(arch_arg(&regs, 0), 1); /* argc */
	expect_exit(p, 41);
	trace_proc_free(p);
}

static void test_run_to_main_stripped(void **state)
{
	char *argv[] = { (char *)tracee_stripped, NULL };
	struct trace_spawn_opts o;
	struct trace_proc *p = NULL;
	uint64_t main_addr = 0;

	assert_int_equal(support_symbol(tracee_stripped, "main"), 0);
	trace_spawn_opts_init(&o, argv);
	assert_int_equal(trace_spawn(&o, &p, NULL), 0);
	assert_int_equal(trace_run_to_main(p, 0, 0, -1, &main_addr, NULL), 0);
	/* Same code layout as the unstripped build, same (unrandomized) bias. */
	assert_int_equal(main_addr, sym(p, "main"));
	expect_exit(p, 41);
	trace_proc_free(p);
}

static void test_aslr_off(void **state)
{
	struct trace_proc *a = start(tracee, NULL);
	struct trace_proc *b = start(tracee, NULL);
	uint64_t sa, sb;

	assert_int_equal(trace_auxv(a, AT_RANDOM, &sa), 0);
	assert_int_equal(trace_auxv(b, AT_RANDOM, &sb), 0);
	/* The stack (where AT_RANDOM points) is not randomized either. */
	assert_int_equal(sa, sb);
	assert_int_equal(sym(a, "hit"), sym(b, "hit"));
	trace_proc_free(a);
	trace_proc_free(b);
}

static void test_memory_hides_breakpoints(void **state)
{
	struct trace_proc *p = start(tracee, NULL);
	uint64_t hit = sym(p, "hit");
	uint8_t before[16], after[16], raw;
	char path[64];
	int fd;

	assert_int_equal(trace_read(p, hit, before, sizeof(before)), 0);
	assert_int_equal(trace_bp_insert(p, hit), 0);
	assert_int_equal(trace_bp_insert(p, hit), 0);
	assert_int_equal(trace_read(p, hit - 3, after, sizeof(after)), 0);
	assert_memory_equal(before, after + 3, sizeof(before) - 3);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)trace_pid(p));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &raw, 1, (off_t)hit), 1);
	assert_int_equal(raw, arch_trap_insn[0]);
	/* Reference counted: one remove keeps it. */
	assert_int_equal(trace_bp_remove(p, hit), 0);
	assert_true(trace_bp_present(p, hit));
	assert_int_equal(trace_bp_remove(p, hit), 0);
	assert_false(trace_bp_present(p, hit));
	assert_int_equal(trace_bp_remove(p, hit), -ENOENT);
	assert_int_equal(pread(fd, &raw, 1, (off_t)hit), 1);
	assert_int_equal(raw, before[0]);
	close(fd);
	expect_exit(p, 41);
	trace_proc_free(p);
}

#define THREADS 8
#define PER_THREAD 10000

static void test_threads_breakpoint(void **state)
{
	struct trace_proc *p = start(tracee, "threads", "8", "10000", NULL);
	uint64_t hit = sym(p, "hit");
	struct {
		pid_t tid;
		long n;
	} per[THREADS + 1] = { 0 };
	long total = 0;
	struct trace_event ev;

	assert_int_equal(trace_bp_insert(p, hit), 0);
	for (;;) {
		assert_int_equal(trace_resume(p), 0);
		assert_int_equal(trace_wait(p, -1, &ev), 0);
		if (ev.kind != TRACE_EV_BREAKPOINT)
			break;
		assert_int_equal(ev.addr, hit);
		total++;
		for (int i = 0; i <= THREADS; i++) {
			if (per[i].tid == ev.tid || per[i].tid == 0) {
				per[i].tid = ev.tid;
				per[i].n++;
				break;
			}
		}
	}
	if (ev.kind == TRACE_EV_SIGNAL)
		fail_msg("stray signal %d (si_code %d) at 0x%llx", ev.sig, ev.code,
			 (unsigned long long)ev.pc);
	assert_int_equal(ev.kind, TRACE_EV_EXITED);
	assert_int_equal(ev.code, 0); /* the fixture counted exactly too */
	assert_int_equal(total, THREADS * PER_THREAD);
	for (int i = 0; i < THREADS; i++) {
		assert_true(per[i].tid != trace_pid(p));
		assert_int_equal(per[i].n, PER_THREAD);
	}
	assert_int_equal(per[THREADS].tid, 0);
	trace_proc_free(p);
}

static void test_fork_with_breakpoints(void **state)
{
	struct trace_proc *p = start(tracee, "fork", NULL);
	uint64_t hit = sym(p, "hit");
	struct trace_event ev;
	int hits = 0;

	assert_int_equal(trace_bp_insert(p, hit), 0);
	for (;;) {
		assert_int_equal(trace_resume(p), 0);
		assert_int_equal(trace_wait(p, -1, &ev), 0);
		if (ev.kind == TRACE_EV_SIGNAL && ev.sig == SIGCHLD)
			continue; /* the child's exit: delivered on resume */
		if (ev.kind != TRACE_EV_BREAKPOINT)
			break;
		assert_int_equal(ev.tid, trace_pid(p));
		hits++;
	}
	assert_int_equal(ev.kind, TRACE_EV_EXITED);
	/* 0: the child ran hit() three times untraced, without a trap. */
	assert_int_equal(ev.code, 0);
	assert_int_equal(hits, 1);
	trace_proc_free(p);
}

static void test_call_args_and_restore(void **state)
{
	struct trace_proc *p = start(tracee, NULL);
	uint64_t args[6] = { 1, 2, 3, 4, 5, 6 }, v = 0;
	struct trace_call_opts o = { .timeout_ms = -1 };
	struct arch_regs before, after;

	assert_int_equal(trace_get_regs(p, trace_pid(p), &before), 0);
	assert_int_equal(trace_call(p, sym(p, "add6"), args, 6, &o, &v, NULL), 0);
	assert_int_equal(v, 1 + 4 + 9 + 16 + 25 + 36);
	assert_int_equal(trace_call(p, sym(p, "hit"), NULL, 0, &o, NULL, NULL), 0);
	assert_int_equal(trace_call(p, sym(p, "hit_count"), NULL, 0, &o, &v, NULL), 0);
	assert_int_equal(v, 1);
	assert_int_equal(trace_get_regs(p, trace_pid(p), &after), 0);
	assert_memory_equal(&before, &after, sizeof(before));
	/* A call that changes the rounding mode leaves it as it was. */
	assert_int_equal(trace_call(p, sym(p, "rounding"), NULL, 0, &o, &v, NULL), 0);
	assert_int_equal(v, FE_TONEAREST);
	assert_int_equal(trace_call(p, sym(p, "round_down"), NULL, 0, &o, NULL, NULL), 0);
	assert_int_equal(trace_call(p, sym(p, "rounding"), NULL, 0, &o, &v, NULL), 0);
	assert_int_equal(v, FE_TONEAREST);
	/* main still returns argc + 40. */
	expect_exit(p, 41);
	trace_proc_free(p);
}

/* What a call made the engine handle, and its system calls when asked. */
static void test_call_counts(void **state)
{
	struct trace_proc *p = start(tracee, NULL);
	struct trace_syscall_counts *sc = calloc(1, sizeof(*sc));
	struct trace_call_counts n;
	struct trace_call_opts o = { .timeout_ms = -1, .counts = &n };
	char name[64];

	(void)state;
	assert_non_null(sc);
	assert_int_equal(trace_call(p, sym(p, "make_thread"), NULL, 0, &o, NULL, NULL), 0);
	assert_int_equal(n.clones, 1);
	assert_int_equal(n.forks, 0);
	assert_int_equal(trace_call(p, sym(p, "fork_child"), NULL, 0, &o, NULL, NULL), 0);
	assert_int_equal(n.clones, 0);
	assert_int_equal(n.forks, 1);
	assert_int_equal(trace_call(p, sym(p, "handled_signal"), NULL, 0, &o, NULL, NULL), 0);
	assert_int_equal(n.signals, 1);
	assert_int_equal(trace_call(p, sym(p, "empty"), NULL, 0, &o, NULL, NULL), 0);
	assert_int_equal(n.clones + n.forks + n.signals, 0);

	/* Counted twice over: counts are added to. */
	o.syscalls = sc;
	for (int i = 0; i < 2; i++)
		assert_int_equal(trace_call(p, sym(p, "three_syscalls"), NULL, 0, &o, NULL, NULL),
				 0);
	assert_int_equal(sc->total, 6);
	assert_int_equal(sc->count[SYS_getppid], 4);
	assert_int_equal(sc->count[SYS_getpid], 2);
	assert_string_equal(trace_syscall_name(sc->arch, SYS_getppid, name, sizeof(name)),
			    "getppid");
	assert_string_equal(trace_syscall_name(sc->arch, 100000, name, sizeof(name)),
			    "syscall_100000");
	/* Not counted without asking, and the calls still return. */
	o.syscalls = NULL;
	assert_int_equal(trace_call(p, sym(p, "three_syscalls"), NULL, 0, &o, NULL, NULL), 0);
	assert_int_equal(sc->total, 6);
	expect_exit(p, 41);
	trace_proc_free(p);
	free(sc);
}

static void test_call_with_breakpoint(void **state)
{
	struct trace_proc *p = start(tracee, NULL);
	uint64_t v = 0;

	/* A breakpoint inside the called function is stepped over. */
	assert_int_equal(trace_bp_insert(p, sym(p, "hit")), 0);
	assert_int_equal(trace_call(p, sym(p, "hit"), NULL, 0, NULL, NULL, NULL), 0);
	assert_int_equal(trace_call(p, sym(p, "hit_count"), NULL, 0, NULL, &v, NULL), 0);
	assert_int_equal(v, 1);
	expect_exit(p, 41);
	trace_proc_free(p);
}

static bool has_frame(const struct trace_failure *f, const char *func)
{
	for (size_t i = 0; i < f->nframes; i++)
		if (strcmp(f->frames[i].func, func) == 0)
			return true;
	return false;
}

static void print_failure(const struct trace_failure *f)
{
	char buf[4096];

	printf("%s", trace_failure_format(f, buf, sizeof(buf)));
}

static void test_call_crash(void **state)
{
	struct trace_proc *p = start(tracee, NULL);
	uint64_t hit = sym(p, "hit");
	struct trace_failure f;

	assert_int_equal(trace_call(p, sym(p, "crash_null"), NULL, 0, NULL, NULL, &f),
			 -TRACE_E_FAILED);
	print_failure(&f);
	assert_int_equal(f.kind, TRACE_FAIL_SIGNAL);
	assert_int_equal(f.sig, SIGSEGV);
	assert_int_equal(f.addr, 16);
	assert_true(f.nframes >= 1);
	assert_string_equal(f.frames[0].func, "crash_null");
	assert_true(f.frames[0].line > 0);
	assert_false(trace_alive(p));
	assert_int_equal(trace_call(p, hit, NULL, 0, NULL, NULL, NULL), -ESRCH);
	trace_proc_free(p);
}

static void test_call_abort(void **state)
{
	struct trace_proc *p = start(tracee, NULL);
	struct trace_failure f;

	assert_int_equal(trace_call(p, sym(p, "do_abort"), NULL, 0, NULL, NULL, &f),
			 -TRACE_E_FAILED);
	print_failure(&f);
	assert_int_equal(f.kind, TRACE_FAIL_SIGNAL);
	assert_int_equal(f.sig, SIGABRT);
	assert_true(has_frame(&f, "do_abort"));
	assert_true(has_frame(&f, "[injected call]"));
	assert_false(trace_alive(p));
	trace_proc_free(p);
}

static void test_call_exit(void **state)
{
	struct trace_proc *p = start(tracee, NULL);
	struct trace_failure f;

	assert_int_equal(trace_call(p, sym(p, "do_exit"), NULL, 0, NULL, NULL, &f),
			 -TRACE_E_FAILED);
	print_failure(&f);
	assert_int_equal(f.kind, TRACE_FAIL_EXIT);
	assert_int_equal(f.code, 7);
	assert_true(has_frame(&f, "do_exit"));
	assert_false(trace_alive(p));
	trace_proc_free(p);
}

static void test_call_timeout(void **state)
{
	struct trace_proc *p = start(tracee, NULL);
	struct trace_call_opts o = { .timeout_ms = 200 };
	struct trace_failure f;

	assert_int_equal(trace_call(p, sym(p, "hang"), NULL, 0, &o, NULL, &f), -TRACE_E_FAILED);
	print_failure(&f);
	assert_int_equal(f.kind, TRACE_FAIL_TIMEOUT);
	assert_int_equal(f.timeout_ms, 200);
	assert_true(has_frame(&f, "hang"));
	assert_false(trace_alive(p));
	trace_proc_free(p);
}

static void test_crash_in_program(void **state)
{
	struct trace_proc *p = start(tracee, "crash", NULL);
	struct trace_event ev;

	assert_int_equal(trace_resume(p), 0);
	assert_int_equal(trace_wait(p, -1, &ev), 0);
	assert_int_equal(ev.kind, TRACE_EV_SIGNAL);
	assert_int_equal(ev.sig, SIGSEGV);
	assert_int_equal(ev.addr, 16);
	/* Delivered: the program dies of it. */
	assert_int_equal(trace_resume(p), 0);
	assert_int_equal(trace_wait(p, -1, &ev), 0);
	assert_int_equal(ev.kind, TRACE_EV_KILLED);
	assert_int_equal(ev.sig, SIGSEGV);
	assert_int_equal(trace_wait(p, -1, &ev), -ESRCH);
	trace_proc_free(p);
}

static void test_remote_syscall_and_page(void **state)
{
	struct trace_proc *p = start(tracee, NULL);
	uint64_t none[6] = { 0 }, page = 0;
	uint8_t code[64], back[64];
	int64_t res = 0;
	bool writable = false;

	assert_int_equal(trace_syscall(p, SYS_getpid, none, &res), 0);
	assert_int_equal(res, trace_pid(p));
	assert_int_equal(trace_map_exec(p, 4096, &page, &writable), 0);
	assert_true(page != 0);
	for (size_t i = 0; i < sizeof(code); i++)
		code[i] = (uint8_t)i;
	assert_int_equal(trace_write(p, page, code, sizeof(code)), 0);
	assert_int_equal(trace_read(p, page, back, sizeof(back)), 0);
	assert_memory_equal(code, back, sizeof(code));
	assert_int_equal(trace_read(p, 0, back, 1), -EFAULT);
	expect_exit(p, 41);
	trace_proc_free(p);
}

static void test_kill_all(void **state)
{
	struct trace_proc *a = start(tracee, "sleep", NULL);
	struct trace_proc *b = start(tracee, "sleep", NULL);
	struct trace_event ev;

	assert_int_equal(trace_resume(a), 0);
	assert_int_equal(trace_resume(b), 0);
	assert_int_equal(trace_wait(a, 50, &ev), -ETIMEDOUT);
	trace_kill_all();
	assert_int_equal(trace_wait(b, -1, &ev), 0);
	assert_int_equal(ev.kind, TRACE_EV_KILLED);
	assert_int_equal(ev.sig, SIGKILL);
	assert_int_equal(trace_wait(a, -1, &ev), 0);
	assert_int_equal(ev.kind, TRACE_EV_KILLED);
	trace_proc_free(a);
	trace_proc_free(b);
}

static void test_stop_running(void **state)
{
	struct trace_proc *p = start(tracee, "sleep", NULL);
	uint64_t none[6] = { 0 };
	int64_t res = 0;

	assert_int_equal(trace_resume(p), 0);
	assert_int_equal(trace_stop(p), 0);
	/* Stopped inside pause(): a remote system call still works, and
	 * the interrupted pause() is restarted afterwards. */
	assert_int_equal(trace_syscall(p, SYS_getppid, none, &res), 0);
	assert_int_equal(res, getpid());
	assert_int_equal(trace_resume(p), 0);
	trace_proc_free(p);
}

/* trace_proc_free() lets an attached process go: detached, not killed, with
 * the original code back where a breakpoint was. */
static void test_free_attached_detaches(void **state)
{
	char exe[PATH_MAX], want[PATH_MAX], link[64];
	struct trace_proc *p = NULL;
	uint8_t orig = 0, now = 0;
	uint64_t addr;
	int status, fd;
	pid_t pid;

	(void)state;
	assert_non_null(realpath(tracee, want));
	pid = fork();
	if (pid == 0) {
		execl(tracee, tracee, "sleep", (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	/* Until it runs the fixture (bounded; judged by what it runs). */
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	for (int i = 0; i < 6000; i++) {
		ssize_t n = readlink(link, exe, sizeof(exe) - 1);

		if (n > 0) {
			exe[n] = '\0';
			if (!strcmp(exe, want))
				break;
		}
		usleep(5000);
	}
	assert_int_equal(trace_attach(pid, &p), 0);
	addr = sym(p, "main");
	assert_int_equal(trace_read(p, addr, &orig, 1), 0);
	assert_int_equal(trace_bp_insert(p, addr), 0);
	trace_proc_free(p);

	assert_int_equal(waitpid(pid, &status, WNOHANG), 0); /* it runs on */
	snprintf(link, sizeof(link), "/proc/%d/mem", (int)pid);
	fd = open(link, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &now, 1, (off_t)addr), 1);
	close(fd);
	assert_int_equal(now, orig);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
}

int main(int argc, char **argv)
{
#define T(fn) cmocka_unit_test_teardown(fn, check_no_children)
	const struct CMUnitTest tests[] = {
		T(test_exec_errors),
		T(test_spawn_and_free),
		T(test_run_to_main),
		T(test_run_to_main_stripped),
		T(test_aslr_off),
		T(test_memory_hides_breakpoints),
		T(test_threads_breakpoint),
		T(test_fork_with_breakpoints),
		T(test_call_args_and_restore),
		T(test_call_counts),
		T(test_call_with_breakpoint),
		T(test_call_crash),
		T(test_call_abort),
		T(test_call_exit),
		T(test_call_timeout),
		T(test_crash_in_program),
		T(test_remote_syscall_and_page),
		T(test_kill_all),
		T(test_stop_running),
		T(test_free_attached_detaches),
	};

	if (argc < 3) {
		fprintf(stderr, "usage: %s TRACEE TRACEE_STRIPPED\n", argv[0]);
		return 2;
	}
	tracee = argv[1];
	tracee_stripped = argv[2];
	support_subreaper();
	if (getenv("TRACE_TEST_FILTER"))
		cmocka_set_test_filter(getenv("TRACE_TEST_FILTER"));
	return cmocka_run_group_tests_name("trace", tests, NULL, NULL);
}
