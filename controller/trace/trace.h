/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_TRACE_H
#define BENCHTRAP_TRACE_H

/*
 * The trace engine: creates, steers and cleans up a traced child.
 *
 * A trace_proc is one traced process: its threads, its address space (and
 * the breakpoints in it), and a scratch page the engine maps on demand.
 * The engine works in all-stop mode: when one thread reports an event, every
 * other thread is stopped before trace_wait() returns, and stays stopped
 * until trace_resume(). This is what makes stepping over a breakpoint safe
 * while many threads run the same code, and what makes remote system calls
 * and injected calls possible from any event.
 *
 *     trace_spawn()          fork + exec, stopped after exec
 *     trace_run_to_main()    loader and constructors have run, stopped in main
 *     trace_call()           call a function of the child with integer args
 *     trace_bp_insert()      then: trace_resume(); trace_wait(); ...
 *     trace_proc_free()      kill and reap, whatever state the child is in
 *                            (an attached process is detached instead)
 *
 * Every function returns 0 or a negative error: a negated errno, or one of
 * TRACE_E_* below (trace_strerror() says either in words). -ESRCH means the
 * tracee is gone. Output parameters are named ret_* and are left untouched
 * on failure. Nothing here prints.
 *
 * The engine reaps children with waitpid(-1): while a trace_proc exists it
 * owns every child of the controller process. Not thread safe: one thread
 * of the controller drives all tracees.
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch/arch.h"
#include "unwind/unwind.h"

enum {
	TRACE_E_FAILED = 0x20000, /* the child failed; a trace_failure says how */
	TRACE_E_STATE,		  /* the process is not in a state allowing this */
	TRACE_E_NOMAIN,		  /* main could not be located */
	TRACE_E_EXEC,		  /* the child could not be executed (errno in the failure) */
};

const char *trace_strerror(int err);

/* ---- wait statuses ---------------------------------------------------- */

/*
 * Every status waitpid() returns for a tracee becomes one of these before
 * anything acts on it. Each comment says how the tracee is restarted.
 */
enum trace_status_kind {
	TRACE_ST_EXITED,      /* exited normally; gone, nothing to restart */
	TRACE_ST_KILLED,      /* terminated by a signal; gone, nothing to restart */
	TRACE_ST_SIGNAL,      /* signal-delivery stop; PTRACE_CONT(sig) delivers the
				 signal, PTRACE_CONT(0) suppresses it */
	TRACE_ST_GROUP_STOP,  /* group-stop (SIGSTOP & co.) of a seized tracee;
				 PTRACE_CONT(0) resumes it (job control is not honoured) */
	TRACE_ST_INTERRUPT,   /* PTRACE_EVENT_STOP after PTRACE_INTERRUPT, or the first
				 stop of a new auto-attached thread; PTRACE_CONT(0) */
	TRACE_ST_CLONE,	      /* PTRACE_EVENT_CLONE: a new thread; PTRACE_CONT(0) */
	TRACE_ST_FORK,	      /* PTRACE_EVENT_FORK: a new process; PTRACE_CONT(0) */
	TRACE_ST_VFORK,	      /* PTRACE_EVENT_VFORK; PTRACE_CONT(0) */
	TRACE_ST_VFORK_DONE,  /* PTRACE_EVENT_VFORK_DONE; PTRACE_CONT(0) */
	TRACE_ST_EXEC,	      /* PTRACE_EVENT_EXEC: a new program image; PTRACE_CONT(0) */
	TRACE_ST_EXIT,	      /* PTRACE_EVENT_EXIT: about to exit; PTRACE_CONT(0) lets it */
	TRACE_ST_SECCOMP,     /* PTRACE_EVENT_SECCOMP; PTRACE_CONT(0) */
	TRACE_ST_SYSCALL,     /* syscall-stop (PTRACE_O_TRACESYSGOOD); PTRACE_CONT(0) */
	TRACE_ST_UNKNOWN,     /* anything else (a future ptrace event); PTRACE_CONT(0) */
};

struct trace_status {
	enum trace_status_kind kind;
	int code; /* EXITED: exit code; KILLED, SIGNAL, GROUP_STOP: signal number */
	bool core_dumped; /* KILLED */
};

/* Classify a status from waitpid(). Pure: no system call. */
void trace_status_classify(int status, struct trace_status *ret);
const char *trace_status_kind_name(enum trace_status_kind kind);

/* ---- lifecycle -------------------------------------------------------- */

struct trace_spawn_opts {
	char *const *argv; /* argv[0] is the program (searched in PATH without a '/') */
	char *const *envp; /* environment; NULL: the controller's (or a clean one) */
	bool clean_env;	   /* with envp NULL: PATH=/usr/local/bin:/usr/bin:/bin, LC_ALL=C */
	bool aslr;	   /* keep address-space randomisation (off by default) */
	int cpu;	   /* pin the child to this CPU; -1: no pinning */
	int stdio[3];	   /* dup2'ed onto 0, 1, 2 in the child; -1: inherited */
	/* The child leads a process group of its own, and killing it kills
	 * the group: processes it forks (which run on untraced) die with it,
	 * unless they left the group (setsid). Off by default: a program in
	 * its own group is not in the terminal's foreground group, so one
	 * that reads the terminal would stop (SIGTTIN). */
	bool process_group;
};

/* Defaults: no ASLR, no pinning, inherited environment and stdio. */
void trace_spawn_opts_init(struct trace_spawn_opts *o, char *const *argv);

struct trace_proc;

/*
 * Fork and exec a traced child (PTRACE_SEIZE with EXITKILL and the
 * clone/fork/vfork/exec/exit events). On return it is stopped right after
 * exec, before the dynamic loader ran. An exec failure comes back as
 * -TRACE_E_EXEC with the child's errno in *ret_errno (when not NULL), so the
 * caller can say "cannot execute ./bench: Permission denied".
 */
int trace_spawn(const struct trace_spawn_opts *o, struct trace_proc **ret, int *ret_errno);

/*
 * The one way to let go of a trace_proc, whoever made it. A spawned child is
 * killed (SIGKILL) and every thread reaped; an attached process is detached
 * as by trace_detach() (every breakpoint's original bytes back), so it runs
 * on. Then frees. Accepts NULL and a process that is already gone or
 * detached.
 */
void trace_proc_free(struct trace_proc *p);

/* Kill and reap now; the trace_proc stays valid (and dead). The engine
 * does so only when a call or system call it injected failed. */
int trace_kill(struct trace_proc *p);

pid_t trace_pid(const struct trace_proc *p);
bool trace_alive(const struct trace_proc *p);
/* The thread that reported the last event (the leader at first). */
pid_t trace_current_tid(const struct trace_proc *p);

/*
 * Borrowing a stopped thread for injected code, then putting its registers
 * back (trace_syscall, trace_call, observe's calibration). A thread can be
 * borrowed as it is when its stop is one the kernel leaves through its
 * signal code (a signal, group or interrupt stop): a system call it was in
 * then restarts as it would have. At an event stop it is inside a call
 * that has done its work and not yet returned: its registers are put back
 * as just after that return (clone, fork, vfork: the new pid; exec: 0), or
 * a clone3 put back unreturned reads -ENOSYS and glibc makes a second
 * thread. At an exit or system-call stop it cannot be borrowed.
 *
 * (Not at a vfork event: the child runs on the thread's stack.)
 *
 * trace_inject_tid(): the thread to borrow for a call, the current one when
 * it can be borrowed as it is, else another that can, else the current one
 * when its registers can be put back, else 0. trace_syscall_tid(): the
 * same for a system call, as it is only: resumed from an event stop, the
 * kernel writes the call's result over the number of the one injected.
 * trace_borrow_regs(): the registers to put back after borrowing tid;
 * -TRACE_E_STATE when it cannot be borrowed.
 */
pid_t trace_inject_tid(struct trace_proc *p);
pid_t trace_syscall_tid(struct trace_proc *p);
int trace_borrow_regs(struct trace_proc *p, pid_t tid, struct arch_regs *ret);

/* An auxiliary vector entry (AT_ENTRY, AT_SYSINFO_EHDR for the vDSO...). */
int trace_auxv(struct trace_proc *p, unsigned long type, uint64_t *ret);

/*
 * Run a freshly spawned child to the first instruction of main, so that the
 * loader and the constructors have run. 'main_link' and 'entry_link' are the
 * link-time addresses of main and of the ELF entry point (the run-time load
 * bias is AT_ENTRY - entry_link). With main_link == 0 (a stripped binary),
 * main is found as the first argument of the entry point's first call,
 * which in glibc's _start is __libc_start_main(main, ...). On success the
 * whole process is stopped with the current thread at main.
 * Returns -TRACE_E_FAILED (and fills 'failure' when not NULL) when the child
 * dies or crashes on the way; the child is then reaped.
 */
struct trace_failure;
int trace_run_to_main(struct trace_proc *p, uint64_t main_link, uint64_t entry_link,
		      int timeout_ms, uint64_t *ret_main, struct trace_failure *failure);
/* (timeout_ms <= 0: no timeout) */

/*
 * SIGINT/SIGTERM: the command line's signal handler calls this to SIGKILL
 * every live tracee. Async-signal-safe (it reads a fixed array of pids).
 * PTRACE_O_EXITKILL covers the controller dying by other means.
 */
void trace_kill_all(void);
/* Number of live tracees (for tests). */
size_t trace_live_count(void);

/* ---- threads and registers --------------------------------------------- */

size_t trace_thread_count(const struct trace_proc *p);
pid_t trace_thread_tid(const struct trace_proc *p, size_t i);
/* Registers of a stopped thread. */
int trace_get_regs(struct trace_proc *p, pid_t tid, struct arch_regs *ret);
int trace_set_regs(struct trace_proc *p, pid_t tid, const struct arch_regs *regs);

/* ---- memory ------------------------------------------------------------ */

/*
 * Read and write the child's memory (process_vm_readv/writev, falling back
 * to /proc/PID/mem for unreadable or read-only pages). Reads never show the
 * trap bytes of breakpoints: they see the original code. Writes over a
 * breakpoint update the saved original and keep the trap. -EFAULT when the
 * range is not (fully) mapped.
 */
int trace_read(struct trace_proc *p, uint64_t addr, void *buf, size_t len);
int trace_write(struct trace_proc *p, uint64_t addr, const void *buf, size_t len);

/* ---- breakpoints --------------------------------------------------------- */

/* Reference counted: n inserts need n removes. Allowed while the process
 * runs (the trap is written atomically) or is stopped. */
int trace_bp_insert(struct trace_proc *p, uint64_t addr);
int trace_bp_remove(struct trace_proc *p, uint64_t addr);
bool trace_bp_present(const struct trace_proc *p, uint64_t addr);

/* ---- events -------------------------------------------------------------- */

enum trace_event_kind {
	TRACE_EV_BREAKPOINT, /* 'tid' is at breakpoint 'addr' (its pc is addr);
				resuming steps it over the breakpoint */
	TRACE_EV_SIGNAL,     /* 'tid' received 'sig' (si_code, si_addr in
				'code', 'addr'); resuming delivers it unless
				trace_set_signal() changed that */
	TRACE_EV_EXEC,	     /* the process executed a new program: breakpoints
				are gone */
	TRACE_EV_EXITED,     /* the process exited with 'code'; it is reaped */
	TRACE_EV_KILLED,     /* the process was killed by 'sig'; it is reaped */
	TRACE_EV_EXITING,    /* 'tid' is about to exit with 'code' (or by 'sig'):
				reported to injected calls only */
};

struct trace_event {
	enum trace_event_kind kind;
	pid_t tid;
	int sig;
	int code;	/* EXITED: exit code; SIGNAL: si_code */
	uint64_t addr;	/* BREAKPOINT: its address; SIGNAL: si_addr */
	uint64_t pc;	/* BREAKPOINT, SIGNAL: the thread's pc */
};

/*
 * Resume every stopped thread. A thread stopped at a breakpoint first
 * steps over it while all others stay stopped. When a thread has an event
 * not yet reported (several hit breakpoints at once), nothing is resumed
 * and the next trace_wait() returns it at once.
 */
int trace_resume(struct trace_proc *p);

/*
 * Wait up to 'timeout_ms' (-1: forever) for the next event; when it comes,
 * the whole process is stopped. Thread creation and exit, forks (the child
 * gets its copies of the breakpoints removed and is detached), group stops
 * and other bookkeeping are handled inside. -ETIMEDOUT when nothing came
 * (the process keeps running), -ESRCH when the process is already gone.
 */
int trace_wait(struct trace_proc *p, int timeout_ms, struct trace_event *ret);
/* The same with an absolute CLOCK_MONOTONIC deadline in ns (-1: none). */
int trace_wait_until(struct trace_proc *p, int64_t deadline_ns, struct trace_event *ret);

/*
 * Called for every child the process forks (not vforks), while the child
 * is stopped, after its copies of the breakpoints are removed and before
 * it is let go untraced: code of the caller's in the process (observe's
 * agent) gets to tell the copy it is a copy. NULL: none.
 */
void trace_set_fork_hook(struct trace_proc *p, void (*fn)(void *userdata, pid_t child),
			 void *userdata);

/* Stop every thread (as if an event had come), e.g. to sample or detach. */
int trace_stop(struct trace_proc *p);

/* Change the signal delivered to stopped thread 'tid' on resume (0: none). */
int trace_set_signal(struct trace_proc *p, pid_t tid, int sig);

/* ---- remote execution (process stopped) ---------------------------------- */

/*
 * Run system call 'nr' with 'args' in the current thread and return its raw
 * result (a negative errno on failure, as the kernel returns it). The
 * thread's registers are restored afterwards.
 */
int trace_syscall(struct trace_proc *p, long nr, const uint64_t args[6], int64_t *ret_result);

/*
 * Map 'size' bytes of private anonymous memory in the child, readable and
 * executable, and writable too when the system allows it (*ret_writable
 * says; trace_write() can fill a non-writable executable page anyway).
 */
int trace_map_exec(struct trace_proc *p, size_t size, uint64_t *ret_addr, bool *ret_writable);

/*
 * Map 'size' bytes, readable and executable, in the child within 'reach'
 * of every byte of [lo, hi) (a free range found in its mappings, mapped
 * MAP_FIXED_NOREPLACE, a mapping the kernel put elsewhere undone): for code
 * a rel32 jump from [lo, hi) must reach. 0 with *ret_addr, -ENOSPC when no
 * free range is near, or the call's negative errno.
 */
int trace_map_near(struct trace_proc *p, uint64_t lo, uint64_t hi, size_t size, uint64_t reach,
		   uint64_t *ret_addr);

/*
 * What an injected call made the engine handle besides the call itself
 * (trace_call_opts.counts): each is a ptrace stop, tens of microseconds on
 * a VM, inside the call.
 */
struct trace_call_counts {
	unsigned long clones;  /* threads created */
	unsigned long forks;   /* processes created (fork, vfork) */
	unsigned long signals; /* signals delivered to the program, which handles them */
};

/*
 * The system calls a call made (trace_call_opts.syscalls): its calling
 * thread is resumed with PTRACE_SYSCALL and each syscall-entry stop counted
 * by number. Costs two ptrace stops per system call: for a pass of its own,
 * never inside a timed interval.
 */
#define TRACE_SYSCALL_NR_MAX 1024
struct trace_syscall_counts {
	uint32_t arch;	/* AUDIT_ARCH_* of the last one counted (0: none yet) */
	uint64_t total; /* entries counted, numbers out of range included */
	uint64_t count[TRACE_SYSCALL_NR_MAX]; /* by number; added to, never cleared */
};

/* The name of system call 'nr' on 'arch' (AUDIT_ARCH_*), as libseccomp's
 * resolver gives it, else "syscall_NR"; into buf, which is returned. */
const char *trace_syscall_name(uint32_t arch, long nr, char *buf, size_t size);

struct trace_call_opts {
	int timeout_ms;	  /* 0 or -1: no timeout */
	bool all_threads; /* let the other threads run during the call */
	/* On timeout, the failure shows the stack of the first of blame[]
	 * whose pc is outside [idle_lo, idle_hi) (code where a thread waits
	 * for work, not stuck), else of the first of them still there, else
	 * of the calling thread. When one of them ends the process, the
	 * failure is its exit, with its stack; when one of them ends alone,
	 * the call fails (TRACE_FAIL_THREAD_EXIT) rather than wait for it. */
	const pid_t *blame;
	size_t nblame;
	uint64_t idle_lo, idle_hi;
	/* When set, filled on success with the events of the call. */
	struct trace_call_counts *counts;
	/* When set, the calling thread's system calls are added to it. */
	struct trace_syscall_counts *syscalls;
};

/* How a child failed. Filled when a function returns -TRACE_E_FAILED. */
enum trace_failure_kind {
	TRACE_FAIL_SIGNAL,  /* a fatal signal: sig, code, addr, frames */
	TRACE_FAIL_EXIT,    /* the child exited: status; frames where exit was called */
	TRACE_FAIL_KILLED,  /* killed by a signal from outside: sig */
	TRACE_FAIL_TIMEOUT, /* it ran longer than allowed and was killed; frames where */
	TRACE_FAIL_EXEC,    /* it executed another program */
	TRACE_FAIL_THREAD_EXIT, /* a thread of trace_call_opts.blame ended alone: tid,
				   frames where */
};

struct trace_failure {
	enum trace_failure_kind kind;
	pid_t tid;
	int sig;	     /* SIGNAL, KILLED */
	int code;	     /* SIGNAL: si_code; EXIT: exit status */
	uint64_t addr;	     /* SIGNAL: si_addr (the faulting address) */
	uint64_t pc;	     /* SIGNAL, TIMEOUT: where the thread was */
	int timeout_ms;	     /* TIMEOUT */
	size_t nframes;	     /* backtrace of 'tid', innermost first */
	struct unwind_frame frames[UNWIND_MAX_FRAMES];
};

/*
 * Call 'fn' in the current thread with up to six integer arguments; it
 * returns to a trap in the engine's scratch page, and the thread's registers
 * are restored as they were. Other threads stay stopped unless
 * o->all_threads; threads the call creates run. Breakpoints hit during the
 * call are stepped over. On a fatal signal, exit, exec or timeout, the child
 * is killed and reaped and -TRACE_E_FAILED returned with 'failure' (when
 * not NULL) saying what happened, with a symbolized backtrace.
 */
int trace_call(struct trace_proc *p, uint64_t fn, const uint64_t *args, unsigned nargs,
	       const struct trace_call_opts *o, uint64_t *ret_value, struct trace_failure *failure);

/* One line per fact, for humans:
 *   "SIGSEGV (Segmentation fault) at address 0x10\n  #0 0x401136 crash_null+6 (tracee.c:30)\n"
 * Truncates to 'size'; returns 'buf'. */
char *trace_failure_format(const struct trace_failure *f, char *buf, size_t size);

/* ---- attaching to a running process (attach.c) ------------------------------ */

/*
 * Seize every thread of running process 'pid' (PTRACE_SEIZE with the clone,
 * fork, vfork, exec and exit events, without EXITKILL: the process survives
 * the controller) and stop them all. The thread list is re-read until no
 * new thread appears; threads created later are followed through clone
 * events. On return the whole process is stopped, as after trace_wait().
 * The process is not one of the controller's children and is never killed:
 * trace_kill_all() does not see it. -ESRCH: no such process; -EPERM: not
 * allowed to trace it (or another tracer has it).
 */
int trace_attach(pid_t pid, struct trace_proc **ret);

/*
 * Attached process 'p': stop every thread, put back the original bytes of
 * every breakpoint and detach each thread (delivering a signal it was
 * stopped with): the process runs on untraced. 'p' stays valid, as a
 * process that is gone, until trace_proc_free(). Returns 0, or the first
 * error met (the process is detached either way); -TRACE_E_STATE for a
 * spawned child.
 */
int trace_detach(struct trace_proc *p);

/* true when a thread holds an event not yet reported: the next
 * trace_resume() then resumes nothing and trace_wait() returns at once. */
bool trace_has_pending(const struct trace_proc *p);

/* Drop breakpoint 'addr' (every reference) without writing memory: the
 * code it was in has been unmapped. -ENOENT when there is none. */
int trace_bp_forget(struct trace_proc *p, uint64_t addr);

/*
 * A thread stopped by all-stop right after executing a trap, before the
 * kernel reported it, keeps that SIGTRAP pending and reports it when it runs
 * again (the interrupt stop comes first); by then its breakpoint may be gone,
 * and the SIGTRAP would be delivered to the program. This makes every
 * stopped thread with such a trap report it now, alone: at a breakpoint, its
 * pc goes back to the breakpoint's address (removed later, the thread runs
 * the original instruction there); any other signal is kept for delivery.
 * The process stays stopped. Call before removing breakpoints that other
 * threads may have hit, and before detaching.
 */
int trace_settle(struct trace_proc *p);

/* Stopped thread 'tid' was moved off the breakpoint it stopped at (its
 * registers were replaced): resuming it must run from its pc, executing a
 * trap found there, instead of stepping over one. */
int trace_thread_moved(struct trace_proc *p, pid_t tid);

/* Stopped thread 'tid', its pc now at 'pc', stands where trace_resume()
 * left it after stepping it over a breakpoint: stopped again before it ran
 * on (a stop that came before the resumed thread was back in its code). */
bool trace_thread_unmoved(struct trace_proc *p, pid_t tid, uint64_t pc);

#endif
