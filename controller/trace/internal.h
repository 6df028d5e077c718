/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_TRACE_INTERNAL_H
#define BENCHTRAP_TRACE_INTERNAL_H

/*
 * Shared between the trace engine's files; not for other modules.
 */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h"
#include "trace/bptable.h"
#include "trace/trace.h"

/* ---- ptrace wrappers (ptrace.c) ----
 * Each clears errno, calls ptrace and returns 0 or -errno. -ESRCH means the
 * tracee is gone (killed, or exited under us); callers treat it as such and
 * wait for its exit status rather than fail. */
int trace_pt_seize(pid_t pid, unsigned long options);
int trace_pt_cont(pid_t tid, int sig);
int trace_pt_step(pid_t tid, int sig);
/* PTRACE_SYSCALL: resume to the next syscall-entry or -exit stop. */
int trace_pt_syscall(pid_t tid, int sig);
struct __ptrace_syscall_info;
int trace_pt_syscall_info(pid_t tid, struct __ptrace_syscall_info *ret);
int trace_pt_interrupt(pid_t tid);
int trace_pt_detach(pid_t tid, int sig);
int trace_pt_getregs(pid_t tid, struct arch_regs *ret);
int trace_pt_setregs(pid_t tid, const struct arch_regs *regs);
/* The floating-point and vector control state (NT_PRFPREG: on x86-64 the
 * FXSAVE area with MXCSR and the x87 control word), opaque. */
struct trace_fpregs {
	unsigned char buf[1024];
	size_t len;
};
int trace_pt_getfpregs(pid_t tid, struct trace_fpregs *ret);
int trace_pt_setfpregs(pid_t tid, const struct trace_fpregs *f);
int trace_pt_getsiginfo(pid_t tid, siginfo_t *ret);
int trace_pt_geteventmsg(pid_t tid, unsigned long *ret);

/* ---- raw remote memory (mem.c) ---- */
struct trace_mem {
	pid_t pid;
	int fd; /* /proc/PID/mem, or -1 until first needed */
};
int trace_mem_read(void *mem, uint64_t addr, void *buf, size_t len);
int trace_mem_write(void *mem, uint64_t addr, const void *buf, size_t len);
void trace_mem_close(struct trace_mem *m);
extern const struct trace_mem_ops trace_mem_ops;

/* ---- processes (proc.c) and threads (threads.c) ---- */
enum thread_state {
	TH_NEW,	    /* announced by a clone event, first stop not seen yet */
	TH_RUNNING, /* resumed; a status will come */
	TH_STOPPED, /* in a ptrace stop, ready for requests */
	TH_EXITING, /* let go from its exit stop; only its death is left */
	TH_GONE,    /* reaped */
};

struct trace_thread {
	pid_t tid;
	enum thread_state state;
	bool held;	       /* stays stopped on trace_resume() (injected calls) */
	bool has_event;	       /* 'ev' is an event not yet reported */
	bool at_bp;	       /* stopped at a breakpoint (pc rewound onto it) */
	bool vforking;	       /* its vfork child shares the memory: traps out (wait.c) */
	bool interrupted;      /* PTRACE_INTERRUPT sent, its stop not yet seen */
	enum trace_status_kind stop; /* what its last stop was (trace_dispatch) */
	int deliver;	       /* signal delivered when resumed */
	int exit_code;	       /* from its exit event */
	uint64_t stepped_to;   /* its pc after its last step over a breakpoint (or
				  where it stood on one taken out meanwhile)
				  (the step's SIGTRAP address), or 0 */
	/* Resumed with PTRACE_SYSCALL, its syscall-entry stops counted in
	 * the trace_proc's 'syscalls' (trace_call_opts.syscalls). */
	bool count_syscalls;
	struct trace_event ev; /* pending event */
};

struct trace_proc {
	pid_t pid;
	bool dead;	      /* every thread reaped */
	bool stopping;	      /* collecting stops for all-stop */
	pid_t report_exit;    /* report this thread's exit event (injected calls) */
	const pid_t *watch_exit; /* and these threads' (trace_call_opts.blame), each */
	size_t nwatch_exit;	 /* once */
	bool exit_reported;   /* ... and it came: 'exit_tid' stopped at exit */
	struct trace_thread **threads; /* each allocated alone: pointers stay valid */
	size_t nthreads, cap;
	size_t rr;	      /* round-robin start for pending events */
	pid_t cur;	      /* thread of the last event */
	struct trace_mem mem;
	struct trace_bpt bpt;
	uint64_t stub;	      /* scratch page with the code templates, or 0 */
	size_t stub_size;
	struct trace_event final; /* EXITED/KILLED, once dead */
	bool final_reported;
	bool spawned;	      /* started by us (registered with the launcher), not attached */
	bool group;	      /* leads its own process group, killed with it */
	/* Events handled inside trace_wait(), counted for
	 * trace_call_opts.counts: threads and processes created. */
	unsigned long clones, forks;
	unsigned long signals;		       /* delivered to the program during injected calls */
	void (*fork_hook)(void *userdata, pid_t child); /* trace_set_fork_hook() */
	void *fork_userdata;
	struct trace_syscall_counts *syscalls; /* during an injected call that counts them */
};

struct trace_thread *trace_thread_find(struct trace_proc *p, pid_t tid);
/* Thread 'tid' when it is stopped: -ESRCH when there is no such thread,
 * -TRACE_E_STATE when it is not stopped. */
int trace_thread_stopped(struct trace_proc *p, pid_t tid, struct trace_thread **ret);
/* Free 'p', its threads, breakpoint table and memory handle; no system
 * call reaches the process. */
void trace_proc_release(struct trace_proc *p);
/* The next status of thread or process 'tid' alone: one waiting in the
 * queue of statuses waitpid(-1) met first, else waitpid(tid). */
int trace_wait_tid(pid_t tid, int *ret_status);
/* A new thread entry (TH_NEW), in a reaped thread's slot when there is one;
 * NULL when out of memory. */
struct trace_thread *trace_thread_add(struct trace_proc *p, pid_t tid);
/* ---- the wait loop (wait.c) ---- */
/* Next status of one of p's threads (from the queue, else waitpid(-1)),
 * with an absolute CLOCK_MONOTONIC deadline in ns (-1: none). */
int trace_take_status(struct trace_proc *p, int64_t deadline, struct trace_thread **ret_t,
		      int *ret_status);
/* The same while p dies (killed): statuses of its threads not announced
 * yet are let go on to their end, not queued. */
int trace_take_status_dying(struct trace_proc *p, struct trace_thread **ret_t, int *ret_status);
/* Act on one status of thread t, following the restart rules of
 * enum trace_status_kind. While p->stopping, threads stay stopped. */
void trace_dispatch(struct trace_proc *p, struct trace_thread *t, int status);
/* Stop threads tids[0..n) of p (those running), the others left as they
 * are, within timeout_ms: 0, -ETIMEDOUT or -ESRCH (the process is gone). */
int trace_stop_threads(struct trace_proc *p, const pid_t *tids, size_t n, int timeout_ms);
/* Every thread is reaped: the process ended as 'st' says. */
void trace_process_gone(struct trace_proc *p, const struct trace_status *st);

/* ---- remote execution (call.c) ---- */
int trace_fill_backtrace(struct trace_proc *p, pid_t tid, struct trace_failure *f);

#endif
