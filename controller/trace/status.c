// SPDX-License-Identifier: MIT
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "trace/trace.h"

void trace_status_classify(int status, struct trace_status *ret)
{
	struct trace_status st = { .kind = TRACE_ST_UNKNOWN };

	if (WIFEXITED(status)) {
		st.kind = TRACE_ST_EXITED;
		st.code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		st.kind = TRACE_ST_KILLED;
		st.code = WTERMSIG(status);
		st.core_dumped = WCOREDUMP(status);
	} else if (WIFSTOPPED(status)) {
		int sig = WSTOPSIG(status);
		unsigned event = (unsigned)status >> 16;

		st.code = sig;
		switch (event) {
		case 0:
			st.kind = sig == (SIGTRAP | 0x80) ? TRACE_ST_SYSCALL : TRACE_ST_SIGNAL;
			if (st.kind == TRACE_ST_SYSCALL)
				st.code = SIGTRAP;
			break;
		case PTRACE_EVENT_STOP:
			/* Under PTRACE_SEIZE a group-stop carries the stopping
			 * signal; an interrupt or new-thread stop carries SIGTRAP. */
			if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
				st.kind = TRACE_ST_GROUP_STOP;
			else
				st.kind = TRACE_ST_INTERRUPT;
			break;
		case PTRACE_EVENT_CLONE:
			st.kind = TRACE_ST_CLONE;
			break;
		case PTRACE_EVENT_FORK:
			st.kind = TRACE_ST_FORK;
			break;
		case PTRACE_EVENT_VFORK:
			st.kind = TRACE_ST_VFORK;
			break;
		case PTRACE_EVENT_VFORK_DONE:
			st.kind = TRACE_ST_VFORK_DONE;
			break;
		case PTRACE_EVENT_EXEC:
			st.kind = TRACE_ST_EXEC;
			break;
		case PTRACE_EVENT_EXIT:
			st.kind = TRACE_ST_EXIT;
			break;
		case PTRACE_EVENT_SECCOMP:
			st.kind = TRACE_ST_SECCOMP;
			break;
		default:
			st.kind = TRACE_ST_UNKNOWN;
			break;
		}
	}
	*ret = st;
}

const char *trace_status_kind_name(enum trace_status_kind kind)
{
	switch (kind) {
	case TRACE_ST_EXITED:
		return "exited";
	case TRACE_ST_KILLED:
		return "killed";
	case TRACE_ST_SIGNAL:
		return "signal-delivery-stop";
	case TRACE_ST_GROUP_STOP:
		return "group-stop";
	case TRACE_ST_INTERRUPT:
		return "interrupt-stop";
	case TRACE_ST_CLONE:
		return "clone-event";
	case TRACE_ST_FORK:
		return "fork-event";
	case TRACE_ST_VFORK:
		return "vfork-event";
	case TRACE_ST_VFORK_DONE:
		return "vfork-done-event";
	case TRACE_ST_EXEC:
		return "exec-event";
	case TRACE_ST_EXIT:
		return "exit-event";
	case TRACE_ST_SECCOMP:
		return "seccomp-event";
	case TRACE_ST_SYSCALL:
		return "syscall-stop";
	case TRACE_ST_UNKNOWN:
		break;
	}
	return "unknown";
}
