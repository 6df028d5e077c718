// SPDX-License-Identifier: MIT
/*
 * Attaching to a running process and detaching from it, and the few
 * queries an observer of a live program needs (trace.h, "attaching").
 *
 * Attaching races with the process creating threads: the task list is read
 * again until a pass seizes nothing new. A thread created by an already
 * seized thread is auto-attached by the kernel (PTRACE_O_TRACECLONE): its
 * PTRACE_SEIZE fails with EPERM and its clone event names it.
 *
 *   list /proc/PID/task --> SEIZE + INTERRUPT each new tid --> list again
 *        ... until nothing new --> collect one stop per thread
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "trace/internal.h"

/* Passes over the task list before giving up on a process that creates
 * threads faster than they can be seized. */
#define MAX_PASSES 1000

static struct trace_thread *add_thread(struct trace_proc *p, pid_t tid, enum thread_state state)
{
	struct trace_thread *t = trace_thread_add(p, tid);

	if (t)
		t->state = state;
	return t;
}

static struct trace_thread *find_any(struct trace_proc *p, pid_t tid)
{
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i]->tid == tid)
			return p->threads[i];
	return NULL;
}

/* Seize every thread of the task list not seized yet; *ret_new counts them. */
static int seize_pass(struct trace_proc *p, unsigned long options, size_t *ret_new)
{
	char path[64];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)p->pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)strtol(de->d_name, NULL, 10);
		struct trace_thread *t;
		int r;

		if (tid <= 0 || find_any(p, tid))
			continue;
		r = trace_pt_seize(tid, options);
		if (r == -EPERM && p->nthreads > 0)
			continue; /* auto-attached through a clone event, or exiting */
		if (r == -ESRCH && p->nthreads > 0)
			continue; /* exited meanwhile */
		if (r < 0) {
			closedir(d);
			return r;
		}
		t = add_thread(p, tid, TH_RUNNING);
		if (!t) {
			trace_pt_detach(tid, 0);
			closedir(d);
			return -ENOMEM;
		}
		trace_pt_interrupt(tid);
		n++;
	}
	closedir(d);
	*ret_new = n;
	return 0;
}

/*
 * The next status of thread t, classified into *ret. True when that was its
 * end, already acted on: reaped (TH_GONE; the process is dead with its
 * leader) or let go from its exit stop (TH_EXITING).
 */
static bool next_status_ended(struct trace_proc *p, struct trace_thread *t,
			      struct trace_status *ret)
{
	int status;

	if (trace_wait_tid(t->tid, &status) < 0) {
		t->state = TH_GONE;
		return true;
	}
	trace_status_classify(status, ret);
	switch (ret->kind) {
	case TRACE_ST_EXITED:
	case TRACE_ST_KILLED:
		t->state = TH_GONE;
		if (t->tid == p->pid)
			p->dead = true;
		return true;
	case TRACE_ST_EXIT:
		trace_pt_cont(t->tid, 0);
		t->state = TH_EXITING;
		return true;
	default:
		return false;
	}
}

/* Collect the first stop of thread t (seized and interrupted, or new). */
static void first_stop(struct trace_proc *p, struct trace_thread *t)
{
	struct trace_status st;
	unsigned long msg;

	if (next_status_ended(p, t, &st))
		return;
	t->stop = st.kind;
	switch (st.kind) {
	case TRACE_ST_SIGNAL:
		/* A signal arrived first: delivered on resume. */
		t->deliver = st.code;
		t->state = TH_STOPPED;
		return;
	case TRACE_ST_CLONE:
		if (trace_pt_geteventmsg(t->tid, &msg) == 0 && !find_any(p, (pid_t)msg))
			add_thread(p, (pid_t)msg, TH_NEW);
		t->state = TH_STOPPED;
		return;
	case TRACE_ST_FORK:
	case TRACE_ST_VFORK:
		/* The new process was auto-attached: let it go (no
		 * breakpoints exist yet). */
		if (trace_pt_geteventmsg(t->tid, &msg) == 0) {
			int cs;

			trace_wait_tid((pid_t)msg, &cs);
			trace_pt_detach((pid_t)msg, 0);
		}
		t->state = TH_STOPPED;
		return;
	default:
		/* Interrupt, group stop, exec and other event stops. */
		t->state = TH_STOPPED;
		return;
	}
}

int trace_attach(pid_t pid, struct trace_proc **ret)
{
	const unsigned long options = PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
				      PTRACE_O_TRACEVFORK | PTRACE_O_TRACEVFORKDONE |
				      PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT |
				      PTRACE_O_TRACESYSGOOD;
	struct trace_proc *p;
	bool more = true;
	int r = 0;

	if (pid <= 0)
		return -ESRCH;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->pid = pid;
	p->mem.pid = pid;
	p->mem.fd = -1;
	trace_bpt_init(&p->bpt, &trace_mem_ops, &p->mem);

	for (int pass = 0; more && pass < MAX_PASSES; pass++) {
		size_t n = 0;

		r = seize_pass(p, options, &n);
		if (r < 0)
			goto fail;
		more = n > 0;
	}
	/* Every seized or announced thread reports one stop; clone events
	 * met on the way add threads whose first stop is collected too. */
	for (size_t i = 0; i < p->nthreads; i++) {
		struct trace_thread *t = p->threads[i];

		if (t->state == TH_RUNNING || t->state == TH_NEW)
			first_stop(p, t);
	}
	if (p->dead) {
		r = -ESRCH;
		goto fail;
	}
	p->cur = 0;
	for (size_t i = 0; i < p->nthreads && !p->cur; i++)
		if (p->threads[i]->state == TH_STOPPED)
			p->cur = p->threads[i]->tid;
	if (!p->cur) {
		r = -ESRCH;
		goto fail;
	}
	*ret = p;
	return 0;

fail:
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i]->state == TH_STOPPED)
			trace_pt_detach(p->threads[i]->tid, p->threads[i]->deliver);
	trace_proc_release(p);
	return r;
}

int trace_detach(struct trace_proc *p)
{
	int r = 0;

	if (p->spawned)
		return -TRACE_E_STATE;
	if (!p->dead) {
		r = trace_stop(p);
		if (r == 0)
			r = trace_settle(p);
		/* Original code back, lowest address first. */
		for (size_t i = 0; !p->dead && i < p->bpt.n; i++) {
			const struct trace_bp *bp = &p->bpt.v[i];
			int w = trace_mem_write(&p->mem, bp->addr, bp->orig, p->bpt.trap_len);

			if (w < 0 && r == 0)
				r = w;
		}
		trace_bpt_forget(&p->bpt);
		for (size_t i = 0; !p->dead && i < p->nthreads; i++) {
			struct trace_thread *t = p->threads[i];

			/* A thread stopped at a breakpoint has its pc on the
			 * breakpoint's address: it runs the original
			 * instruction there. */
			if (t->state == TH_STOPPED)
				trace_pt_detach(t->tid, t->deliver);
			t->state = TH_GONE;
		}
		/* Nothing of it is traced any more: as far as the engine is
		 * concerned, it is gone. */
		p->dead = true;
		p->final_reported = true;
	}
	return r == -ESRCH ? 0 : r;
}

bool trace_has_pending(const struct trace_proc *p)
{
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i]->has_event && p->threads[i]->state != TH_GONE)
			return true;
	return false;
}

int trace_bp_forget(struct trace_proc *p, uint64_t addr)
{
	struct trace_bpt *t = &p->bpt;

	for (size_t i = 0; i < t->n; i++) {
		if (t->v[i].addr != addr)
			continue;
		memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof(*t->v));
		t->n--;
		return 0;
	}
	return -ENOENT;
}

/* SIGTRAP in the thread's own pending set (where a trap puts it). */
static bool trap_pending(pid_t pid, pid_t tid)
{
	char path[64], line[256];
	bool pending = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "SigPnd:", 7)) {
			unsigned long long mask = strtoull(line + 7, NULL, 16);

			pending = mask & (1ull << (SIGTRAP - 1));
			break;
		}
	}
	fclose(f);
	return pending;
}

/* Let thread t (stopped, trap pending) run into its signal stop. */
static void settle_thread(struct trace_proc *p, struct trace_thread *t)
{
	for (int tries = 0; tries < 8; tries++) {
		struct trace_status st;
		struct arch_regs regs;
		siginfo_t si;
		int sig = t->deliver;

		t->deliver = 0;
		if (trace_pt_cont(t->tid, sig) < 0)
			return;
		t->state = TH_RUNNING;
		if (next_status_ended(p, t, &st))
			return;
		switch (st.kind) {
		case TRACE_ST_SIGNAL:
			t->state = TH_STOPPED;
			if (st.code == SIGTRAP && trace_pt_getsiginfo(t->tid, &si) == 0 &&
			    arch_siginfo_is_trap_insn(&si) &&
			    trace_pt_getregs(t->tid, &regs) == 0 &&
			    trace_bpt_find(&p->bpt, arch_trap_addr(arch_pc(&regs)))) {
				arch_set_pc(&regs, arch_trap_addr(arch_pc(&regs)));
				trace_pt_setregs(t->tid, &regs);
				t->at_bp = true;
				return;
			}
			t->deliver = st.code;
			return;
		default:
			/* An interrupt stop that was due first: again. */
			t->state = TH_STOPPED;
			break;
		}
	}
}

int trace_settle(struct trace_proc *p)
{
	if (p->dead)
		return -ESRCH;
	for (size_t i = 0; i < p->nthreads; i++) {
		struct trace_thread *t = p->threads[i];

		if (t->state == TH_STOPPED && !t->has_event && !t->at_bp &&
		    trap_pending(p->pid, t->tid))
			settle_thread(p, t);
	}
	return 0;
}

bool trace_thread_unmoved(struct trace_proc *p, pid_t tid, uint64_t pc)
{
	struct trace_thread *t;

	return trace_thread_stopped(p, tid, &t) == 0 && t->stepped_to && t->stepped_to == pc;
}

int trace_thread_moved(struct trace_proc *p, pid_t tid)
{
	struct trace_thread *t;
	int r = trace_thread_stopped(p, tid, &t);

	if (r == 0)
		t->at_bp = false;
	return r;
}
