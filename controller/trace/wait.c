// SPDX-License-Identifier: MIT
/*
 * The wait loop and all-stop: statuses from waitpid(), events, resuming.
 *
 * All-stop: the moment one thread reports something the caller must see
 * (a breakpoint, a signal), every other running thread is interrupted and
 * its stop collected before trace_wait() returns. Stops collected on the way
 * that are themselves events (a second thread at the same breakpoint) are
 * kept in that thread's 'ev' and reported by the next trace_wait() without
 * resuming anything:
 *
 *   thread A  --run--> bp hit ...............(reported)...step..--run-->
 *   thread B  --run--> INTERRUPT stop ........(stopped)..............--run-->
 *   thread C  --run--> bp hit (pending) ......(stopped)....(reported next)
 *
 * Stepping over a breakpoint (original bytes back, one single step, trap
 * again) therefore always happens while every other thread is stopped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/launch.h"
#include "trace/internal.h"

/* ---- statuses waiting for their owner ---------------------------------------
 * waitpid(-1) may return the status of another trace_proc's thread, or of a
 * new thread or process whose clone/fork event has not been seen yet. Such
 * statuses wait here. */
#define MAX_QUEUED 1024
static struct {
	pid_t pid;
	int status;
} queued[MAX_QUEUED];
static size_t nqueued;

static void queue_push(pid_t pid, int status)
{
	if (nqueued == MAX_QUEUED) {
		/* Drop the oldest: statuses of processes nobody claims. */
		memmove(&queued[0], &queued[1], (MAX_QUEUED - 1) * sizeof(queued[0]));
		nqueued--;
	}
	queued[nqueued].pid = pid;
	queued[nqueued].status = status;
	nqueued++;
}

static bool queue_take(pid_t pid, int *ret_status)
{
	for (size_t i = 0; i < nqueued; i++) {
		if (queued[i].pid == pid) {
			*ret_status = queued[i].status;
			memmove(&queued[i], &queued[i + 1], (nqueued - i - 1) * sizeof(queued[0]));
			nqueued--;
			return true;
		}
	}
	return false;
}

static int64_t deadline_after(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : clock_now_ns() + (int64_t)timeout_ms * 1000000;
}

/* waitpid(which) with a deadline (which -1: any child): SIGCHLD is blocked
 * while waiting so that one arriving between the WNOHANG check and
 * sigtimedwait() is not lost. */
static int wait_raw_pid(pid_t which, int64_t deadline, pid_t *ret_pid, int *ret_status)
{
	sigset_t set, old;
	int status, r = 0;
	pid_t pid;

	if (deadline < 0) {
		do
			pid = waitpid(which, &status, __WALL);
		while (pid < 0 && errno == EINTR);
		if (pid < 0)
			return -errno;
		*ret_pid = pid;
		*ret_status = status;
		return 0;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	for (;;) {
		int64_t left;
		struct timespec ts;

		pid = waitpid(which, &status, __WALL | WNOHANG);
		if (pid > 0) {
			*ret_pid = pid;
			*ret_status = status;
			break;
		}
		if (pid < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
		left = deadline - clock_now_ns();
		if (left <= 0) {
			r = -ETIMEDOUT;
			break;
		}
		ts.tv_sec = left / 1000000000;
		ts.tv_nsec = left % 1000000000;
		sigtimedwait(&set, NULL, &ts);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

static int wait_raw(int64_t deadline, pid_t *ret_pid, int *ret_status)
{
	return wait_raw_pid(-1, deadline, ret_pid, ret_status);
}

/* Next status of one of p's threads. */
int trace_take_status(struct trace_proc *p, int64_t deadline, struct trace_thread **ret_t,
		      int *ret_status)
{
	pid_t pid;
	int status, r;

	for (size_t i = 0; i < nqueued; i++) {
		struct trace_thread *t = trace_thread_find(p, queued[i].pid);

		if (t && queue_take(t->tid, &status)) {
			*ret_t = t;
			*ret_status = status;
			return 0;
		}
	}
	for (;;) {
		struct trace_thread *t;

		r = wait_raw(deadline, &pid, &status);
		if (r < 0)
			return r;
		t = trace_thread_find(p, pid);
		if (t) {
			*ret_t = t;
			*ret_status = status;
			return 0;
		}
		queue_push(pid, status);
	}
}

/* Whether tid is a thread of process pid (or was: a zombie's is still
 * there). */
static bool of_process(pid_t pid, pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
	return access(path, F_OK) == 0;
}

/*
 * While p dies (killed): the next status of one of its threads. A thread
 * it never announced (its clone event was not collected yet, the status
 * of its first stop queued) stops on its way out and waits for a
 * PTRACE_CONT no one else would give: it is given here, or the leader
 * could never be reaped.
 */
int trace_take_status_dying(struct trace_proc *p, struct trace_thread **ret_t, int *ret_status)
{
	for (size_t i = 0; i < nqueued;) {
		pid_t pid = queued[i].pid;
		int status = queued[i].status;
		struct trace_thread *t = trace_thread_find(p, pid);

		if (!t && !of_process(p->pid, pid)) {
			i++;
			continue;
		}
		memmove(&queued[i], &queued[i + 1], (nqueued - i - 1) * sizeof(queued[0]));
		nqueued--;
		if (t) {
			*ret_t = t;
			*ret_status = status;
			return 0;
		}
		if (WIFSTOPPED(status))
			trace_pt_cont(pid, 0);
	}
	for (;;) {
		struct trace_thread *t;
		pid_t pid;
		int status, r = wait_raw(-1, &pid, &status);

		if (r < 0)
			return r;
		t = trace_thread_find(p, pid);
		if (t) {
			*ret_t = t;
			*ret_status = status;
			return 0;
		}
		if (of_process(p->pid, pid)) {
			if (WIFSTOPPED(status))
				trace_pt_cont(pid, 0);
			continue;
		}
		queue_push(pid, status);
	}
}

void trace_process_gone(struct trace_proc *p, const struct trace_status *st)
{
	for (size_t i = 0; i < p->nthreads; i++)
		p->threads[i]->state = TH_GONE;
	p->dead = true;
	memset(&p->final, 0, sizeof(p->final));
	p->final.tid = p->pid;
	if (st->kind == TRACE_ST_EXITED) {
		p->final.kind = TRACE_EV_EXITED;
		p->final.code = st->code;
	} else {
		p->final.kind = TRACE_EV_KILLED;
		p->final.sig = st->code;
	}
	trace_mem_close(&p->mem);
	if (p->spawned)
		launch_forget(p->pid);
}

static void set_event(struct trace_thread *t, const struct trace_event *ev)
{
	t->ev = *ev;
	t->has_event = true;
}

static void on_signal(struct trace_proc *p, struct trace_thread *t, int sig)
{
	struct trace_event ev = { .kind = TRACE_EV_SIGNAL, .tid = t->tid, .sig = sig };
	struct arch_regs regs;
	siginfo_t si;

	if (trace_pt_getsiginfo(t->tid, &si) == 0) {
		ev.code = si.si_code;
		ev.addr = (uint64_t)(uintptr_t)si.si_addr;
	} else {
		memset(&si, 0, sizeof(si));
	}
	if (trace_pt_getregs(t->tid, &regs) == 0) {
		ev.pc = arch_pc(&regs);
		if (sig == SIGTRAP && arch_siginfo_is_trap_insn(&si)) {
			uint64_t at = arch_trap_addr(ev.pc);

			if (trace_bpt_find(&p->bpt, at)) {
				arch_set_pc(&regs, at);
				trace_pt_setregs(t->tid, &regs);
				ev.kind = TRACE_EV_BREAKPOINT;
				ev.addr = at;
				ev.pc = at;
				ev.sig = 0;
				t->at_bp = true;
				set_event(t, &ev);
				return;
			}
		}
	}
	t->deliver = sig;
	set_event(t, &ev);
}

int trace_wait_tid(pid_t tid, int *ret_status)
{
	int status;

	if (queue_take(tid, ret_status))
		return 0;
	while (waitpid(tid, &status, __WALL) < 0)
		if (errno != EINTR)
			return -errno;
	*ret_status = status;
	return 0;
}

static void wait_initial_stop(pid_t pid, int *ret_status)
{
	if (trace_wait_tid(pid, ret_status) < 0)
		*ret_status = 0; /* gone and reaped elsewhere: exit 0 */
}

/* Whether tid is one of the threads whose exit an injected call watches. */
static bool watched_exit(const struct trace_proc *p, pid_t tid)
{
	for (size_t i = 0; i < p->nwatch_exit; i++)
		if (p->watch_exit[i] == tid)
			return true;
	return false;
}

/* A forked child: take our breakpoints out of its copy of the memory and let
 * it go. A vfork child shares our memory until it execs or exits: every
 * trap is taken out of it until PTRACE_EVENT_VFORK_DONE (on_vfork_done),
 * as debuggers do, for a trap there would kill it; calls other threads
 * make meanwhile are not stopped at. */
static void on_fork(struct trace_proc *p, struct trace_thread *t, bool vfork)
{
	unsigned long msg;
	struct trace_status st;
	int status;

	if (trace_pt_geteventmsg(t->tid, &msg) < 0)
		return;
	wait_initial_stop((pid_t)msg, &status);
	trace_status_classify(status, &st);
	if (st.kind == TRACE_ST_EXITED || st.kind == TRACE_ST_KILLED)
		return;
	if (!vfork) {
		struct trace_mem child = { .pid = (pid_t)msg, .fd = -1 };

		trace_bpt_strip_copy(&p->bpt, &trace_mem_ops, &child);
		trace_mem_close(&child);
		if (p->fork_hook)
			p->fork_hook(p->fork_userdata, (pid_t)msg);
	} else {
		trace_bpt_suspend(&p->bpt);
		t->vforking = true;
	}
	trace_pt_detach((pid_t)msg, 0);
}

/* The vfork child of t has exec'd or exited: its traps back, when no other
 * vfork child shares the memory. */
static void on_vfork_done(struct trace_proc *p, struct trace_thread *t)
{
	if (!t->vforking)
		return;
	t->vforking = false;
	trace_bpt_resume(&p->bpt);
}

void trace_dispatch(struct trace_proc *p, struct trace_thread *t, int status);

void trace_set_fork_hook(struct trace_proc *p, void (*fn)(void *userdata, pid_t child),
			 void *userdata)
{
	p->fork_hook = fn;
	p->fork_userdata = userdata;
}

/* A syscall stop of a thread whose system calls are counted: its entries
 * by number (the exit stops that follow each are not counted). */
static void count_syscall(struct trace_syscall_counts *c, pid_t tid)
{
	struct __ptrace_syscall_info info;

	if (trace_pt_syscall_info(tid, &info) < 0 || info.op != PTRACE_SYSCALL_INFO_ENTRY)
		return;
	c->arch = info.arch;
	c->total++;
	if (info.entry.nr < TRACE_SYSCALL_NR_MAX)
		c->count[info.entry.nr]++;
}

static void on_clone(struct trace_proc *p, struct trace_thread *t)
{
	unsigned long msg;
	struct trace_thread *nt;
	int status;

	if (trace_pt_geteventmsg(t->tid, &msg) < 0)
		return;
	nt = trace_thread_add(p, (pid_t)msg);
	if (!nt) {
		/* Out of memory: the thread cannot be followed, let it go. */
		wait_initial_stop((pid_t)msg, &status);
		trace_pt_detach((pid_t)msg, 0);
		return;
	}
	if (queue_take(nt->tid, &status))
		trace_dispatch(p, nt, status);
}

static void on_exec(struct trace_proc *p, struct trace_thread *t)
{
	struct trace_event ev = { .kind = TRACE_EV_EXEC, .tid = p->pid };
	struct trace_thread *leader;

	/* Every other thread is gone; the exec'ing thread now has the
	 * leader's tid. The old image's breakpoints and pages went with it. */
	for (size_t i = 0; i < p->nthreads; i++)
		p->threads[i]->state = TH_GONE;
	leader = p->threads[0];
	memset(leader, 0, sizeof(*leader));
	leader->tid = p->pid;
	leader->state = TH_STOPPED;
	leader->stop = TRACE_ST_EXEC;
	trace_bpt_forget(&p->bpt);
	trace_mem_close(&p->mem);
	p->stub = 0;
	set_event(leader, &ev);
	(void)t;
}

static void resume_thread(struct trace_thread *t, int sig)
{
	/* On -ESRCH the thread is gone and its death status will come:
	 * running, as far as waiting is concerned. */
	if (t->count_syscalls)
		trace_pt_syscall(t->tid, sig);
	else
		trace_pt_cont(t->tid, sig);
	t->state = TH_RUNNING;
}

/* Act on one status of thread t, following the restart rules of
 * enum trace_status_kind. While p->stopping, threads stay stopped. */
void trace_dispatch(struct trace_proc *p, struct trace_thread *t, int status)
{
	struct trace_status st;
	unsigned long msg;

	trace_status_classify(status, &st);
	t->stop = st.kind;
	switch (st.kind) {
	case TRACE_ST_EXITED:
	case TRACE_ST_KILLED:
		t->state = TH_GONE;
		if (t->tid == p->pid)
			trace_process_gone(p, &st);
		return;
	case TRACE_ST_SIGNAL:
		t->state = TH_STOPPED;
		on_signal(p, t, st.code);
		return;
	case TRACE_ST_EXEC:
		on_exec(p, t);
		return;
	case TRACE_ST_EXIT:
		t->state = TH_STOPPED;
		if (trace_pt_geteventmsg(t->tid, &msg) == 0)
			t->exit_code = (int)msg;
		if (p->report_exit == t->tid || watched_exit(p, t->tid)) {
			struct trace_event ev = { .kind = TRACE_EV_EXITING, .tid = t->tid };

			ev.code = WIFEXITED(t->exit_code) ? WEXITSTATUS(t->exit_code) : 0;
			ev.sig = WIFSIGNALED(t->exit_code) ? WTERMSIG(t->exit_code) : 0;
			if (p->report_exit == t->tid)
				p->report_exit = 0;
			set_event(t, &ev);
			return;
		}
		trace_pt_cont(t->tid, 0);
		t->state = TH_EXITING;
		return;
	case TRACE_ST_CLONE:
		t->state = TH_STOPPED;
		p->clones++;
		on_clone(p, t);
		break;
	case TRACE_ST_FORK:
	case TRACE_ST_VFORK:
		t->state = TH_STOPPED;
		p->forks++;
		on_fork(p, t, st.kind == TRACE_ST_VFORK);
		break;
	case TRACE_ST_SYSCALL:
		t->state = TH_STOPPED;
		if (t->count_syscalls && p->syscalls)
			count_syscall(p->syscalls, t->tid);
		break;
	case TRACE_ST_VFORK_DONE:
		t->state = TH_STOPPED;
		on_vfork_done(p, t);
		break;
	case TRACE_ST_GROUP_STOP:
	case TRACE_ST_INTERRUPT:
	case TRACE_ST_SECCOMP:
	case TRACE_ST_UNKNOWN:
		t->state = TH_STOPPED;
		break;
	}
	if (!p->stopping && !t->held)
		resume_thread(t, 0);
}

static bool any_pending(const struct trace_proc *p)
{
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i]->has_event && p->threads[i]->state != TH_GONE)
			return true;
	return false;
}

static bool any_running(const struct trace_proc *p, bool count_exiting)
{
	for (size_t i = 0; i < p->nthreads; i++) {
		enum thread_state s = p->threads[i]->state;

		if (s == TH_RUNNING || s == TH_NEW || (count_exiting && s == TH_EXITING))
			return true;
	}
	return false;
}

/* Time allowed for interrupted threads to stop; they always do unless the
 * machine is in trouble. */
#define STOP_TIMEOUT_MS 30000

static int stop_all(struct trace_proc *p)
{
	int64_t deadline = deadline_after(STOP_TIMEOUT_MS);
	int r = 0;

	p->stopping = true;
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i]->state == TH_RUNNING)
			trace_pt_interrupt(p->threads[i]->tid);
	while (!p->dead && any_running(p, false)) {
		struct trace_thread *t;
		int status;

		r = trace_take_status(p, deadline, &t, &status);
		if (r < 0)
			break;
		trace_dispatch(p, t, status);
	}
	p->stopping = false;
	return r;
}

/*
 * Only the threads tids[0..n) are interrupted, and each one's stop is
 * collected by waiting for that thread alone: waitpid(-1) goes through
 * every traced thread in the kernel, so that stopping each of thousands
 * costs a pass over all of them, seconds for 10,000 threads, where a
 * failure needs the registers and stack of one or a few.
 */
int trace_stop_threads(struct trace_proc *p, const pid_t *tids, size_t n, int timeout_ms)
{
	int64_t deadline = deadline_after(timeout_ms);
	int r = 0;

	if (p->dead)
		return -ESRCH;
	p->stopping = true;
	for (size_t i = 0; i < n; i++) {
		struct trace_thread *t = trace_thread_find(p, tids[i]);

		if (t && t->state == TH_RUNNING)
			trace_pt_interrupt(t->tid);
	}
	for (size_t i = 0; i < n && !p->dead; i++) {
		struct trace_thread *t = trace_thread_find(p, tids[i]);

		while (t && !p->dead && (t->state == TH_RUNNING || t->state == TH_NEW)) {
			pid_t pid;
			int status;

			if (!queue_take(t->tid, &status)) {
				r = wait_raw_pid(t->tid, deadline, &pid, &status);
				if (r < 0)
					goto out;
			}
			trace_dispatch(p, t, status);
		}
	}
out:
	p->stopping = false;
	return r;
}

int trace_stop(struct trace_proc *p)
{
	if (p->dead)
		return -ESRCH;
	return stop_all(p);
}

/* Single-step t over the breakpoint it is stopped at; every other thread
 * is stopped. */
static int step_over(struct trace_proc *p, struct trace_thread *t)
{
	struct arch_regs regs;
	const struct trace_bp *bp;
	uint64_t addr, later = 0;
	int r;

	t->at_bp = false;
	r = trace_pt_getregs(t->tid, &regs);
	if (r < 0)
		return r;
	addr = arch_pc(&regs);
	bp = trace_bpt_find(&p->bpt, addr);
	if (!bp) {
		/* Taken out meanwhile: it runs on from here, where benchtrap
		 * left it (trace_thread_unmoved). */
		t->stepped_to = addr;
		return 0;
	}
	r = trace_mem_write(&p->mem, addr, bp->orig, p->bpt.trap_len);
	if (r < 0)
		return r;
	p->stopping = true;
	for (;;) {
		struct trace_status st;
		siginfo_t si;
		int status;

		r = trace_pt_step(t->tid, 0);
		if (r < 0)
			break;
		r = trace_wait_tid(t->tid, &status);
		if (r < 0)
			goto out;
		trace_status_classify(status, &st);
		if (st.kind != TRACE_ST_SIGNAL) {
			trace_dispatch(p, t, status);
			if (t->state == TH_STOPPED && !t->has_event)
				continue; /* an event on the way: step on */
			break;
		}
		if (trace_pt_getsiginfo(t->tid, &si) < 0)
			break;
		if (st.code == SIGTRAP && si.si_code > 0) {
			t->stepped_to = (uint64_t)(uintptr_t)si.si_addr;
			break; /* the step is done */
		}
		if (si.si_code > 0 && (st.code == SIGSEGV || st.code == SIGBUS ||
				       st.code == SIGILL || st.code == SIGFPE)) {
			/* The instruction itself faulted: report it. */
			on_signal(p, t, st.code);
			break;
		}
		/* An asynchronous signal: deliver it after the step. A second
		 * one waits too: sent again now, it would stop the step again
		 * at once, and a storm of signals (a timer every 200 µs) kept
		 * the step from ever running. The same signal twice is
		 * delivered once, as the kernel merges a standard signal. */
		if (t->deliver == 0)
			t->deliver = st.code;
		else if (st.code != t->deliver && st.code > 0 && st.code <= 64)
			later |= 1ull << (st.code - 1);
	}
out:
	/* The other signals that came during the step, sent again now that it
	 * is over. */
	for (int sig = 1; later && sig <= 64; sig++)
		if (later & 1ull << (sig - 1)) {
			later &= ~(1ull << (sig - 1));
			syscall(SYS_tgkill, p->pid, t->tid, sig);
		}
	p->stopping = false;
	if (trace_bpt_find(&p->bpt, addr) && !p->dead && !p->bpt.suspended)
		trace_mem_write(&p->mem, addr, p->bpt.trap, p->bpt.trap_len);
	return r == -ESRCH ? 0 : r;
}

int trace_resume(struct trace_proc *p)
{
	if (p->dead)
		return -ESRCH;
	for (size_t i = 0; i < p->nthreads && !p->dead; i++) {
		struct trace_thread *t = p->threads[i];

		if (t->state == TH_STOPPED && t->at_bp && !t->has_event && !t->held) {
			int r = step_over(p, t);

			if (r < 0)
				return r;
		}
	}
	if (p->dead || any_pending(p))
		return 0;
	for (size_t i = 0; i < p->nthreads; i++) {
		struct trace_thread *t = p->threads[i];

		if (t->state == TH_STOPPED && !t->held) {
			int sig = t->deliver;

			t->deliver = 0;
			resume_thread(t, sig);
		}
	}
	return 0;
}

static struct trace_thread *pick_pending(struct trace_proc *p)
{
	for (size_t k = 0; k < p->nthreads; k++) {
		size_t i = (p->rr + k) % p->nthreads;
		struct trace_thread *t = p->threads[i];

		if (!t->has_event || t->state == TH_GONE)
			continue;
		t->has_event = false;
		if (t->ev.kind == TRACE_EV_BREAKPOINT && !trace_bpt_find(&p->bpt, t->ev.addr)) {
			/* Removed since: the thread will run the original code. */
			t->at_bp = false;
			continue;
		}
		p->rr = i + 1;
		return t;
	}
	return NULL;
}

int trace_wait_until(struct trace_proc *p, int64_t deadline, struct trace_event *ret)
{
	/* Statuses the engine handles itself (a clone event, an exiting
	 * thread) come without pause from a program that starts thousands
	 * of threads: the deadline is looked at between them, not only when
	 * none is ready, or it would pass unseen until the stream ends. The
	 * first status is always taken, so that a deadline already past
	 * polls. */
	bool took = false;

	for (;;) {
		struct trace_thread *t;
		int status, r;

		if (p->dead) {
			if (p->final_reported)
				return -ESRCH;
			p->final_reported = true;
			*ret = p->final;
			return 0;
		}
		t = pick_pending(p);
		if (t) {
			p->cur = t->tid;
			*ret = t->ev;
			return 0;
		}
		if (!any_running(p, true))
			return -TRACE_E_STATE;
		if (took && deadline >= 0 && clock_now_ns() >= deadline)
			return -ETIMEDOUT;
		r = trace_take_status(p, deadline, &t, &status);
		if (r < 0)
			return r;
		took = true;
		trace_dispatch(p, t, status);
		if (!p->dead && any_pending(p)) {
			r = stop_all(p);
			if (r < 0 && r != -ESRCH)
				return r;
		}
	}
}

int trace_wait(struct trace_proc *p, int timeout_ms, struct trace_event *ret)
{
	return trace_wait_until(p, deadline_after(timeout_ms), ret);
}

int trace_set_signal(struct trace_proc *p, pid_t tid, int sig)
{
	struct trace_thread *t;
	int r = trace_thread_stopped(p, tid, &t);

	if (r == 0)
		t->deliver = sig;
	return r;
}
