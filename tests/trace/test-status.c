// SPDX-License-Identifier: MIT
/* Wait-status classification over statuses built as the kernel encodes them. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ptrace.h>

#include <cmocka.h>

#include "trace/trace.h"

#define EXITED(code) (((code)&0xff) << 8)
#define KILLED(sig) (sig)
#define KILLED_CORE(sig) ((sig) | 0x80)
#define STOPPED(sig) ((((sig)&0xff) << 8) | 0x7f)
#define EVENT(ev) ((((SIGTRAP | ((ev) << 8)) & 0xffff) << 8) | 0x7f)
#define GROUP(sig) (((((sig) | (PTRACE_EVENT_STOP << 8)) & 0xffff) << 8) | 0x7f)

static struct trace_status classify(int status)
{
	struct trace_status st;

	trace_status_classify(status, &st);
	return st;
}

static void test_exit_and_kill(void **state)
{
	struct trace_status st = classify(EXITED(0));

	assert_int_equal(st.kind, TRACE_ST_EXITED);
	assert_int_equal(st.code, 0);
	st = classify(EXITED(255));
	assert_int_equal(st.kind, TRACE_ST_EXITED);
	assert_int_equal(st.code, 255);
	st = classify(KILLED(SIGKILL));
	assert_int_equal(st.kind, TRACE_ST_KILLED);
	assert_int_equal(st.code, SIGKILL);
	assert_false(st.core_dumped);
	st = classify(KILLED_CORE(SIGSEGV));
	assert_int_equal(st.kind, TRACE_ST_KILLED);
	assert_int_equal(st.code, SIGSEGV);
	assert_true(st.core_dumped);
}

static void test_signal_stops(void **state)
{
	struct trace_status st = classify(STOPPED(SIGTRAP));

	assert_int_equal(st.kind, TRACE_ST_SIGNAL);
	assert_int_equal(st.code, SIGTRAP);
	st = classify(STOPPED(SIGSEGV));
	assert_int_equal(st.kind, TRACE_ST_SIGNAL);
	assert_int_equal(st.code, SIGSEGV);
	/* A signal-delivery stop of SIGSTOP is not a group-stop yet. */
	st = classify(STOPPED(SIGSTOP));
	assert_int_equal(st.kind, TRACE_ST_SIGNAL);
	st = classify(STOPPED(SIGTRAP | 0x80));
	assert_int_equal(st.kind, TRACE_ST_SYSCALL);
	assert_int_equal(st.code, SIGTRAP);
}

static void test_event_stops(void **state)
{
	static const struct {
		int event;
		enum trace_status_kind kind;
	} cases[] = {
		{ PTRACE_EVENT_CLONE, TRACE_ST_CLONE },
		{ PTRACE_EVENT_FORK, TRACE_ST_FORK },
		{ PTRACE_EVENT_VFORK, TRACE_ST_VFORK },
		{ PTRACE_EVENT_VFORK_DONE, TRACE_ST_VFORK_DONE },
		{ PTRACE_EVENT_EXEC, TRACE_ST_EXEC },
		{ PTRACE_EVENT_EXIT, TRACE_ST_EXIT },
		{ PTRACE_EVENT_SECCOMP, TRACE_ST_SECCOMP },
		{ PTRACE_EVENT_STOP, TRACE_ST_INTERRUPT },
		{ 0x42, TRACE_ST_UNKNOWN },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct trace_status st = classify(EVENT(cases[i].event));

		assert_int_equal(st.kind, cases[i].kind);
		assert_string_not_equal(trace_status_kind_name(st.kind), "");
	}
}

static void test_group_stops(void **state)
{
	int sigs[] = { SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU };

	for (size_t i = 0; i < 4; i++) {
		struct trace_status st = classify(GROUP(sigs[i]));

		assert_int_equal(st.kind, TRACE_ST_GROUP_STOP);
		assert_int_equal(st.code, sigs[i]);
	}
	assert_int_equal(classify(GROUP(SIGTRAP)).kind, TRACE_ST_INTERRUPT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_and_kill),
		cmocka_unit_test(test_signal_stops),
		cmocka_unit_test(test_event_stops),
		cmocka_unit_test(test_group_stops),
	};

	return cmocka_run_group_tests_name("trace-status", tests, NULL, NULL);
}
