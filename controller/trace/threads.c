// SPDX-License-Identifier: MIT
/* The thread table of a trace_proc, and the registers of its threads. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "trace/internal.h"

struct trace_thread *trace_thread_find(struct trace_proc *p, pid_t tid)
{
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i]->tid == tid && p->threads[i]->state != TH_GONE)
			return p->threads[i];
	return NULL;
}

int trace_thread_stopped(struct trace_proc *p, pid_t tid, struct trace_thread **ret)
{
	struct trace_thread *t = trace_thread_find(p, tid);

	if (!t)
		return -ESRCH;
	if (t->state != TH_STOPPED)
		return -TRACE_E_STATE;
	*ret = t;
	return 0;
}

void trace_proc_release(struct trace_proc *p)
{
	for (size_t i = 0; i < p->nthreads; i++)
		free(p->threads[i]);
	free(p->threads);
	trace_bpt_fini(&p->bpt);
	trace_mem_close(&p->mem);
	free(p);
}

struct trace_thread *trace_thread_add(struct trace_proc *p, pid_t tid)
{
	struct trace_thread *t;

	/* Reuse the slot of a reaped thread. */
	for (size_t i = 0; i < p->nthreads; i++) {
		if (p->threads[i]->state == TH_GONE) {
			t = p->threads[i];
			goto init;
		}
	}
	if (array_grow((void **)&p->threads, &p->cap, p->nthreads + 1, sizeof(*p->threads)) < 0)
		return NULL;
	t = malloc(sizeof(*t));
	if (!t)
		return NULL;
	p->threads[p->nthreads++] = t;
init:
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->state = TH_NEW;
	return t;
}

size_t trace_thread_count(const struct trace_proc *p)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nthreads; i++)
		n += p->threads[i]->state != TH_GONE;
	return n;
}

pid_t trace_thread_tid(const struct trace_proc *p, size_t i)
{
	for (size_t k = 0; k < p->nthreads; k++) {
		if (p->threads[k]->state == TH_GONE)
			continue;
		if (i-- == 0)
			return p->threads[k]->tid;
	}
	return -1;
}

int trace_get_regs(struct trace_proc *p, pid_t tid, struct arch_regs *ret)
{
	struct trace_thread *t;
	int r = trace_thread_stopped(p, tid, &t);

	return r < 0 ? r : trace_pt_getregs(tid, ret);
}

/* Stopped where the kernel resumes it through its signal code. */
static bool borrowable_as_is(const struct trace_thread *t)
{
	return t->state == TH_STOPPED &&
	       (t->stop == TRACE_ST_SIGNAL || t->stop == TRACE_ST_GROUP_STOP ||
		t->stop == TRACE_ST_INTERRUPT);
}

/* Stopped at an event whose system call's result is known. Not at a vfork
 * event: the child, let go, runs on this thread's stack. */
static bool borrowable_fixed(const struct trace_thread *t)
{
	return t->state == TH_STOPPED &&
	       (t->stop == TRACE_ST_CLONE || t->stop == TRACE_ST_FORK ||
		t->stop == TRACE_ST_VFORK_DONE || t->stop == TRACE_ST_EXEC);
}

/* The current thread when 'ok' takes it, else the first that 'ok' takes,
 * else 0. */
static pid_t first_tid(struct trace_proc *p, bool (*ok)(const struct trace_thread *t))
{
	struct trace_thread *cur = trace_thread_find(p, p->cur);

	if (cur && ok(cur))
		return cur->tid;
	for (size_t i = 0; i < p->nthreads; i++)
		if (ok(p->threads[i]))
			return p->threads[i]->tid;
	return 0;
}

pid_t trace_syscall_tid(struct trace_proc *p)
{
	return first_tid(p, borrowable_as_is);
}

pid_t trace_inject_tid(struct trace_proc *p)
{
	pid_t tid = first_tid(p, borrowable_as_is);

	return tid ? tid : first_tid(p, borrowable_fixed);
}

int trace_borrow_regs(struct trace_proc *p, pid_t tid, struct arch_regs *ret)
{
	struct trace_thread *t;
	unsigned long msg = 0;
	int r = trace_thread_stopped(p, tid, &t);

	if (r < 0)
		return r;
	if (!borrowable_as_is(t) && !borrowable_fixed(t))
		return -TRACE_E_STATE;
	r = trace_pt_getregs(tid, ret);
	if (r < 0 || borrowable_as_is(t))
		return r;
	if (t->stop != TRACE_ST_EXEC) {
		r = trace_pt_geteventmsg(tid, &msg);
		if (r < 0)
			return r;
	}
	arch_set_syscall_result(ret, msg);
	return 0;
}

int trace_set_regs(struct trace_proc *p, pid_t tid, const struct arch_regs *regs)
{
	struct trace_thread *t;
	int r = trace_thread_stopped(p, tid, &t);

	return r < 0 ? r : trace_pt_setregs(tid, regs);
}
