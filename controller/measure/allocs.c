// SPDX-License-Identifier: MIT
/*
 * The memory instrument for a program that runs its own main
 * (measure/allocs.h): breakpoints at the batch functions, the clock
 * functions and the allocators; a return breakpoint where a call of one
 * returns, to know when it has.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/allocs.h"
#include "measure/own.h"
#include "measure/child.h"
#include "measure/failure.h"
#include "trace/trace.h"
#include "util/launch.h"
#include "util/strutil.h"

/* The allocator entry points stopped at, found in the child's libraries. */
static const struct {
	const char *name;
	enum alloc_kind kind;
} allocators[] = {
	{ "malloc", ALLOC_SIZE0 },	   { "calloc", ALLOC_CALLOC },
	{ "realloc", ALLOC_REALLOC },	   { "free", ALLOC_FREE },
	{ "memalign", ALLOC_SIZE1 },	   { "aligned_alloc", ALLOC_SIZE1 },
	{ "posix_memalign", ALLOC_SIZE2 },
};
#define NALLOCATORS (sizeof(allocators) / sizeof(allocators[0]))

void alloc_count(struct alloc_counts *c, enum alloc_kind kind, const uint64_t args[3])
{
	switch (kind) {
	case ALLOC_SIZE0:
	case ALLOC_SIZE1:
	case ALLOC_SIZE2:
		c->allocations++;
		c->bytes += args[kind - ALLOC_SIZE0];
		break;
	case ALLOC_CALLOC:
		c->allocations++;
		/* An overflowing product fails in calloc: nothing asked. */
		if (!args[1] || args[0] <= UINT64_MAX / args[1])
			c->bytes += args[0] * args[1];
		break;
	case ALLOC_REALLOC:
		if (args[1] == 0) {
			if (args[0])
				c->frees++;
			break;
		}
		c->allocations++;
		c->bytes += args[1];
		break;
	case ALLOC_FREE:
		if (args[0])
			c->frees++;
		break;
	}
}

void alloc_counts_field(const struct alloc_counts *c, size_t n, unsigned k, uint64_t *v)
{
	for (size_t i = 0; i < n; i++)
		v[i] = k == 0	? c[i].bytes
		       : k == 1 ? c[i].allocations
		       : k == 2 ? c[i].frees
		       : k == 3 ? c[i].peak
				: c[i].live;
}

/* A call being followed: where it returns to, and the stack pointer at its
 * entry (a deeper call returning to the same address is not its return). */
struct pending {
	bool on;
	uint64_t ret, sp;
};

/* A thread of the child, in a call of a batch function or of an allocator. */
#define MAX_THREADS 256
struct thread {
	pid_t tid;
	struct pending call;  /* in a batch function's call */
	struct pending alloc; /* in an allocator: the calls it makes are its own */
	struct pending start; /* in a RESUME function: the clock runs once it returns */
	struct pending pause; /* in a PAUSE function: a RESUME inside it starts nothing */
	bool timed;	      /* the framework's clock runs */
	bool window;	      /* between a TOGGLE's start and its stop */
	struct alloc_counts c;
	uint64_t gen;	       /* which call or window c is of (run.gen) */
	uint64_t asked;	       /* in a counted allocator: the bytes it was asked for */
	uint64_t out;	       /* ... posix_memalign's: where it writes the block */
	uint64_t old;	       /* ... realloc's: the block it replaces */
};

/* A block a counted call allocated: its address, size and whose it is (a
 * thread's call or window by its gen). */
struct block {
	uint64_t addr, size, gen;
	size_t th;
};

struct run {
	struct trace_proc *p;
	const struct alloc_fn *fns;
	size_t nfns;
	bool clocked; /* a RESUME among fns: counted while the clock runs */
	uint64_t alloc[NALLOCATORS];
	struct thread th[MAX_THREADS];
	size_t nth;
	struct alloc_counts *calls; /* one per returned call, in order */
	size_t ncalls, cap;
	uint64_t gen;
	/* The live blocks of counted calls: open addressing by address,
	 * addr 0 free; at most half full. */
	struct block *blocks;
	size_t nblocks, capblocks;
};

/* Where block addr is, or goes, in table v of cap slots. */
static size_t slot(const struct block *v, size_t cap, uint64_t addr)
{
	/* Mixed, so that page-aligned blocks (mmapped ones) spread too. */
	uint64_t h = (addr ^ (addr >> 33)) * 0xff51afd7ed558ccdull;
	size_t i = (size_t)(h ^ (h >> 29)) & (cap - 1);

	while (v[i].addr && v[i].addr != addr)
		i = (i + 1) & (cap - 1);
	return i;
}

static int block_add(struct run *m, struct block b)
{
	if (2 * (m->nblocks + 1) > m->capblocks) {
		size_t cap = m->capblocks ? 2 * m->capblocks : 1024;
		struct block *v = calloc(cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		for (size_t i = 0; i < m->capblocks; i++)
			if (m->blocks[i].addr)
				v[slot(v, cap, m->blocks[i].addr)] = m->blocks[i];
		free(m->blocks);
		m->blocks = v;
		m->capblocks = cap;
	}
	size_t i = slot(m->blocks, m->capblocks, b.addr);

	m->nblocks += !m->blocks[i].addr;
	m->blocks[i] = b;
	return 0;
}

/* Block addr freed (by any thread, counted or not): no longer live in the
 * call that allocated it, if that call still counts. */
static void block_free(struct run *m, uint64_t addr)
{
	size_t i, j;

	if (!addr || !m->nblocks)
		return;
	i = slot(m->blocks, m->capblocks, addr);
	if (!m->blocks[i].addr)
		return;
	struct thread *owner = &m->th[m->blocks[i].th];

	if (owner->gen == m->blocks[i].gen && owner->c.live >= m->blocks[i].size)
		owner->c.live -= m->blocks[i].size;
	m->nblocks--;
	/* Those after it in its run move back into the gap. */
	m->blocks[i].addr = 0;
	for (j = (i + 1) & (m->capblocks - 1); m->blocks[j].addr; j = (j + 1) & (m->capblocks - 1)) {
		struct block b = m->blocks[j];

		m->blocks[j].addr = 0;
		m->blocks[slot(m->blocks, m->capblocks, b.addr)] = b;
	}
}

/* A counted allocator of thread t returned with block addr: live. */
static int block_allocated(struct run *m, struct thread *t, uint64_t addr)
{
	int r;

	if (!addr || !t->asked)
		return 0;
	r = block_add(m, (struct block){ addr, t->asked, t->gen, (size_t)(t - m->th) });
	t->c.live += t->asked;
	if (t->c.live > t->c.peak)
		t->c.peak = t->c.live;
	t->asked = 0;
	return r;
}

static struct thread *thread_of(struct run *m, pid_t tid)
{
	for (size_t i = 0; i < m->nth; i++)
		if (m->th[i].tid == tid)
			return &m->th[i];
	if (m->nth == MAX_THREADS)
		return NULL;
	m->th[m->nth] = (struct thread){ .tid = tid };
	return &m->th[m->nth++];
}

/*
 * Follow the call whose entry thread is stopped at (sp its stack pointer):
 * a breakpoint at its return address, once. Return breakpoints stay until
 * the child ends: removing one while other threads run would race with a
 * thread that just hit it (its trap reported after the breakpoint is gone,
 * as a SIGTRAP of the program's own); the few return addresses of a
 * benchmark's calls are passed again only on such calls.
 */
static int follow(struct run *m, uint64_t sp, struct pending *c)
{
	uint64_t ret;
	int r = trace_read(m->p, sp, &ret, sizeof(ret));

	if (r == 0 && !trace_bp_present(m->p, ret))
		r = trace_bp_insert(m->p, ret);
	if (r == 0)
		*c = (struct pending){ .on = true, .ret = ret, .sp = sp };
	return r;
}

/* Whether a thread at addr with stack pointer sp returned from call c. */
static bool returned(struct pending *c, uint64_t addr, uint64_t sp)
{
	if (!c->on || addr != c->ret || sp <= c->sp)
		return false;
	c->on = false;
	return true;
}

static const struct alloc_fn *fn_at(const struct run *m, uint64_t addr)
{
	for (size_t i = 0; i < m->nfns; i++)
		if (m->fns[i].addr == addr)
			return &m->fns[i];
	return NULL;
}

static int call_returned(struct run *m, const struct thread *t)
{
	if (m->ncalls == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		struct alloc_counts *v = realloc(m->calls, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->calls = v;
		m->cap = cap;
	}
	m->calls[m->ncalls++] = t->c;
	return 0;
}

/* A breakpoint hit by 'tid' at 'addr': 0, or a negative error. */
static int breakpoint(struct run *m, pid_t tid, uint64_t addr)
{
	struct thread *t = thread_of(m, tid);
	const struct alloc_fn *fn = fn_at(m, addr);
	struct arch_regs regs;
	uint64_t sp;
	int r;

	if (!t)
		return -E2BIG;
	r = trace_get_regs(m->p, tid, &regs);
	/* A stale event (its thread no longer stopped there, or gone), as
	 * observe meets them too: nothing to count. */
	if (r == -ESRCH || r == -TRACE_E_STATE)
		return 0;
	if (r < 0)
		return r;
	sp = arch_sp(&regs);
	if (fn && fn->role == BRACKET_CALL && !t->call.on) {
		*t = (struct thread){ .tid = tid, .gen = ++m->gen };
		return follow(m, sp, &t->call);
	}
	/* A TOGGLE (divan's sync_impl): a window of its own, from a start's
	 * return to a stop's entry, counted as one call. */
	if (fn && fn->role == BRACKET_TOGGLE) {
		if (arch_arg(&regs, fn->arg) & 0xff) {
			*t = (struct thread){ .tid = tid, .window = true, .gen = ++m->gen };
			return follow(m, sp, &t->start);
		}
		if (!t->window || t->alloc.on)
			return 0;
		t->window = t->timed = false;
		return call_returned(m, t);
	}
	/* An allocator the function tail-called (a last `delete`) returns
	 * where the function does: both end at once. */
	if (returned(&t->alloc, addr, sp)) {
		uint64_t block = arch_retval(&regs);

		/* posix_memalign returns 0 and writes the block where it was
		 * told. */
		if (t->out && (block != 0 || trace_read(m->p, t->out, &block, sizeof(block)) < 0))
			block = 0;
		t->out = 0;
		if (block && t->old)
			block_free(m, t->old);
		t->old = 0;
		r = block_allocated(m, t, block);
		if (r < 0 || !(t->call.on && addr == t->call.ret))
			return r;
	}
	if (returned(&t->call, addr, sp))
		return call_returned(m, t);
	if (returned(&t->start, addr, sp)) {
		t->timed = true;
		return 0;
	}
	returned(&t->pause, addr, sp);
	if (fn && t->call.on && !t->alloc.on) {
		if (fn->role == BRACKET_PAUSE || fn->role == BRACKET_FINISH) {
			t->timed = false;
			return fn->role == BRACKET_PAUSE && !t->pause.on ? follow(m, sp, &t->pause)
									 : 0;
		}
		/* A RESUME inside another (StartKeepRunning calls ResumeTiming)
		 * or inside a PAUSE (Instant::elapsed reads Instant::now):
		 * nothing starts. */
		if (fn->role == BRACKET_RESUME && !t->start.on && !t->timed && !t->pause.on)
			return follow(m, sp, &t->start);
		return 0;
	}
	for (size_t k = 0; k < NALLOCATORS; k++) {
		enum alloc_kind kind = allocators[k].kind;
		uint64_t args[3];

		if (addr != m->alloc[k] || t->alloc.on)
			continue;
		for (unsigned i = 0; i < 3; i++)
			args[i] = arch_arg(&regs, i);
		bool counted = (t->call.on || t->window) && !(m->clocked && !t->timed);

		/* Whoever frees a block, wherever: it is no longer live; a
		 * counted realloc's old block once it returned a new one (a
		 * failed one leaves it as it was). */
		if (kind == ALLOC_FREE || (kind == ALLOC_REALLOC && (!counted || !args[1])))
			block_free(m, args[0]);
		if (!counted)
			continue;
		t->asked = t->c.bytes;
		alloc_count(&t->c, kind, args);
		t->asked = t->c.bytes - t->asked;
		t->out = kind == ALLOC_SIZE2 ? args[0] : 0;
		t->old = kind == ALLOC_REALLOC && args[1] ? args[0] : 0;
		/* Until it returns, what it calls (realloc's malloc) is part
		 * of this one call. */
		return follow(m, sp, &t->alloc);
	}
	return 0;
}

int alloc_count_run(struct trace_proc *p, const struct alloc_fn *fns, size_t n, uint64_t deadline_ns,
		    uint64_t timeout_ns, const char *stderr_path, char *(*said)(const char *path),
		    struct bench_result *res, struct alloc_counts **ret_calls, size_t *ret_ncalls)
{
	struct run *m = calloc(1, sizeof(*m));
	struct own_watch w;
	int r = own_watch_init(&w, deadline_ns, timeout_ns, stderr_path, said);

	if (r == 0 && !m)
		r = -ENOMEM;
	if (r < 0)
		goto out;
	m->p = p;
	m->fns = fns;
	m->nfns = n;
	for (size_t i = 0; r == 0 && i < n; i++) {
		m->clocked |= fns[i].role == BRACKET_RESUME || fns[i].role == BRACKET_TOGGLE;
		if (!trace_bp_present(p, fns[i].addr))
			r = trace_bp_insert(p, fns[i].addr);
	}
	for (size_t k = 0; r == 0 && k < NALLOCATORS; k++) {
		m->alloc[k] = measure_child_symbol(trace_pid(p), allocators[k].name);
		if (m->alloc[k] && !trace_bp_present(p, m->alloc[k]))
			r = trace_bp_insert(p, m->alloc[k]);
	}
	if (r < 0) {
		bench_result_fail(res, str_fmt("cannot stop the child at its allocator: %s",
					       trace_strerror(r)));
		r = 0;
		goto out;
	}
	for (;;) {
		struct trace_event ev;

		r = own_next(p, &w, res, &ev);
		if (r <= 0)
			break;
		if (ev.kind != TRACE_EV_BREAKPOINT)
			continue;
		r = breakpoint(m, ev.tid, ev.addr);
		if (r < 0) {
			bench_result_fail(res, str_fmt("cannot follow the calls in the child: %s",
						       trace_strerror(r)));
			r = r == -ENOMEM ? r : 0;
			goto out;
		}
	}
	if (r < 0 || res->status == BENCH_FAILED)
		goto out;
	*ret_calls = m->calls;
	*ret_ncalls = m->ncalls;
	m->calls = NULL;
	r = 1;
out:
	if (m) {
		free(m->calls);
		free(m->blocks);
	}
	free(m);
	own_watch_clear(&w);
	return r;
}

int own_alloc_child(const struct own_run *run, char *const *argv, char *const *envp,
		    const struct alloc_fn *fns, size_t n, char *(*said)(const char *path),
		    struct bench_result *res, struct alloc_counts **ret_calls, size_t *ret_n)
{
	const struct measure_plan *plan = run->plan;
	struct alloc_fn *at = calloc(n + 1, sizeof(*at));
	struct trace_proc *p = NULL;
	char path[PATH_MAX + 16], *why = NULL;
	uint64_t bias = 0;
	int r = at ? own_start_traced(run, argv, envp, run->t->quiet_stdio ? run->devnull : -1, &p,
				      &bias, &res->pid, &why)
		   : -ENOMEM;

	if (!p) {
		if (r == 0)
			bench_result_fail(res, why);
		else
			free(why);
		free(at);
		return r;
	}
	for (size_t i = 0; i < n; i++) {
		at[i] = fns[i];
		at[i].addr += bias;
	}
	snprintf(path, sizeof(path), "%s/stderr", run->dir);
	r = alloc_count_run(p, at, n, res->t_start_ns + plan->timeout_ns, plan->timeout_ns, path,
			    said, res, ret_calls, ret_n);
	trace_proc_free(p);
	launch_sweep();
	free(at);
	return r;
}
