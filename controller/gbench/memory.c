/* SPDX-License-Identifier: MIT */
/*
 * One instance of a Google Benchmark binary under the memory instrument
 * (gbench.h says how it measures): traced, stopped at the benchmark's
 * function and at the allocators, its calls' allocations counted. Where
 * the library's clock functions are found, only while its clock runs:
 * from StartKeepRunning's or ResumeTiming's return to PauseTiming's or
 * FinishKeepRunning's entry, as the library times the loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/auxv.h>

#include "elf/elf.h"
#include "measure/child.h"
#include "measure/driver-env.h"
#include "measure/failure.h"
#include "trace/trace.h"
#include "unwind/unwind.h"
#include "util/launch.h"
#include "util/procmaps.h"
#include "gbench/gbench.h"
#include "util/strutil.h"
#include "gbench/internal.h"

/* The allocator entry points stopped at, found in the child's libraries. */
static const struct {
	const char *name;
	enum gbench_alloc_kind kind;
} allocators[] = {
	{ "malloc", GBENCH_ALLOC_SIZE0 },	  { "calloc", GBENCH_ALLOC_CALLOC },
	{ "realloc", GBENCH_ALLOC_REALLOC },	  { "free", GBENCH_ALLOC_FREE },
	{ "memalign", GBENCH_ALLOC_SIZE1 },	  { "aligned_alloc", GBENCH_ALLOC_SIZE1 },
	{ "posix_memalign", GBENCH_ALLOC_SIZE2 },
};
#define NALLOCATORS (sizeof(allocators) / sizeof(allocators[0]))

/* A thread of the child, in a call of the function or of an allocator. */
#define MEM_MAX_THREADS 256
struct mem_thread {
	pid_t tid;
	bool inside;	  /* in a call of the benchmark's function */
	uint64_t ret, sp; /* its return address, the stack pointer at entry */
	bool in_alloc;	  /* in an allocator: calls it makes are its own */
	uint64_t aret, asp;
	bool timed;	  /* the library's clock runs */
	bool in_start;	  /* in a function starting it, returning to sret */
	uint64_t sret, ssp;
	struct gbench_alloc_counts c;
};

struct mem_run {
	struct trace_proc *p;
	uint64_t fn, alloc[NALLOCATORS];
	uint64_t clock[GBENCH_CLOCK_FNS]; /* gbench_clock_fns' entries, 0 if absent */
	bool loop;			  /* the needed ones found: counted in the loop */
	struct mem_thread th[MEM_MAX_THREADS];
	size_t nth;
	/* One entry per call of the function that returned, in order. */
	struct gbench_alloc_counts *calls;
	size_t ncalls, cap;
};

static struct mem_thread *mem_thread(struct mem_run *m, pid_t tid)
{
	for (size_t i = 0; i < m->nth; i++)
		if (m->th[i].tid == tid)
			return &m->th[i];
	if (m->nth == MEM_MAX_THREADS)
		return NULL;
	m->th[m->nth] = (struct mem_thread){ .tid = tid };
	return &m->th[m->nth++];
}

/*
 * A breakpoint at return address 'ret', once: return breakpoints stay until
 * the child ends. Removing one while the threads of a ->Threads() batch run
 * would race with a thread that just hit it (its trap reported after the
 * breakpoint is gone, as a SIGTRAP of the program's own); the few return
 * addresses of a benchmark's calls are passed again only on such calls.
 */
static int return_breakpoint(struct mem_run *m, uint64_t ret)
{
	return trace_bp_present(m->p, ret) ? 0 : trace_bp_insert(m->p, ret);
}

/* A breakpoint hit by 'tid' at 'addr': 0, or a negative error. */
static int mem_breakpoint(struct mem_run *m, pid_t tid, uint64_t addr)
{
	struct mem_thread *t = mem_thread(m, tid);
	struct arch_regs regs;
	uint64_t ret = 0, sp;
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
	if (addr == m->fn && !t->inside) {
		/* At the entry, the return address is the word at sp. */
		r = trace_read(m->p, sp, &ret, sizeof(ret));
		if (r == 0)
			r = return_breakpoint(m, ret);
		if (r < 0)
			return r;
		*t = (struct mem_thread){ .tid = tid, .inside = true, .ret = ret, .sp = sp };
		return 0;
	}
	/* An allocator the function tail-called (a last `delete`) returns
	 * where the function does: both end at once. */
	if (t->in_alloc && addr == t->aret && sp > t->asp) {
		t->in_alloc = false;
		if (!(t->inside && addr == t->ret && sp > t->sp))
			return 0;
	}
	if (t->inside && addr == t->ret && sp > t->sp) {
		t->inside = false;
		if (m->ncalls == m->cap) {
			size_t cap = m->cap ? 2 * m->cap : 64;
			struct gbench_alloc_counts *v = realloc(m->calls, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			m->calls = v;
			m->cap = cap;
		}
		m->calls[m->ncalls++] = t->c;
		return 0;
	}
	if (t->in_start && addr == t->sret && sp > t->ssp) {
		t->in_start = false;
		t->timed = true;
		return 0;
	}
	for (size_t k = 0; m->loop && t->inside && !t->in_alloc && k < GBENCH_CLOCK_FNS; k++) {
		if (addr != m->clock[k])
			continue;
		if (gbench_clock_fns[k].role != BRACKET_RESUME) {
			t->timed = false;
			return 0;
		}
		/* StartKeepRunning calls ResumeTiming: the outer one's return. */
		if (t->in_start || t->timed)
			return 0;
		r = trace_read(m->p, sp, &ret, sizeof(ret));
		if (r == 0)
			r = return_breakpoint(m, ret);
		if (r < 0)
			return r;
		t->in_start = true;
		t->sret = ret;
		t->ssp = sp;
		return 0;
	}
	for (size_t k = 0; k < NALLOCATORS; k++) {
		uint64_t args[3];

		if (addr != m->alloc[k] || !t->inside || t->in_alloc || (m->loop && !t->timed))
			continue;
		for (unsigned i = 0; i < 3; i++)
			args[i] = arch_arg(&regs, i);
		gbench_alloc_count(&t->c, allocators[k].kind, args);
		/* Until it returns, what it calls (realloc's malloc) is part
		 * of this one call. */
		r = trace_read(m->p, sp, &ret, sizeof(ret));
		if (r == 0)
			r = return_breakpoint(m, ret);
		if (r < 0)
			return r;
		t->in_alloc = true;
		t->aret = ret;
		t->asp = sp;
		return 0;
	}
	return 0;
}

/* The per-iteration figure of one counter over the calls. */
static int mem_slope(const struct mem_run *m, size_t field, const uint64_t *iters, size_t nb,
		     unsigned threads, double *ret, bool *ret_setup)
{
	uint64_t *v = calloc(m->ncalls + 1, sizeof(*v));
	int r;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < m->ncalls; i++)
		v[i] = field == 0   ? m->calls[i].bytes
		       : field == 1 ? m->calls[i].allocations
				    : m->calls[i].frees;
	r = gbench_per_iteration(v, m->ncalls, iters, nb, threads, ret, ret_setup);
	free(v);
	return r;
}

int gbench_memory_one(const struct own_run *run, const struct bench_spec *s,
		      struct bench_result *res)
{
	const struct measure_target *t = run->t;
	const struct measure_plan *plan = run->plan;
	const char *dir = run->dir;
	int input = run->input, devnull = run->devnull;
	char path[PATH_MAX + 16], *log = NULL, *why = NULL;
	size_t nruns = 0, nbatches = 0;
	struct mem_run *m = NULL;
	struct trace_failure *f = NULL;
	struct gbench_run *runs = NULL;
	uint64_t deadline = res->t_start_ns + plan->timeout_ns, bias = 0;
	uint64_t iters[GBENCH_MAX_BATCHES];
	int r;
	bool have_pending = false, setup = false;
	double v[3];
	struct bench_spec found = { 0 };

	r = gbench_spec_resolve(t, s, plan, dir, input, devnull, "the memory instrument", res,
				&found);
	if (r <= 0)
		return r;
	s = &found;
	m = calloc(1, sizeof(*m));
	f = calloc(1, sizeof(*f));
	if (!m || !f) {
		r = -ENOMEM;
		goto out;
	}
	r = gbench_start_traced(t, s, plan, dir, input, t->quiet_stdio ? devnull : -1, devnull,
				&m->p, &bias, &res->pid, &why);
	if (!m->p) {
		if (r == 0)
			bench_result_fail(res, why);
		else
			free(why);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/stderr", dir);
	m->fn = bias + s->link_addr;
	r = trace_bp_insert(m->p, m->fn);
	for (size_t k = 0; r == 0 && k < NALLOCATORS; k++) {
		m->alloc[k] = measure_child_symbol(trace_pid(m->p), allocators[k].name);
		if (m->alloc[k])
			r = trace_bp_insert(m->p, m->alloc[k]);
	}
	m->loop = true;
	for (size_t k = 0; r == 0 && k < GBENCH_CLOCK_FNS; k++) {
		m->clock[k] = measure_child_symbol(trace_pid(m->p), gbench_clock_fns[k].name);
		m->loop &= m->clock[k] || !gbench_clock_fns[k].needed;
	}
	for (size_t k = 0; r == 0 && m->loop && k < GBENCH_CLOCK_FNS; k++)
		if (m->clock[k])
			r = trace_bp_insert(m->p, m->clock[k]);
	if (r < 0) {
		bench_result_fail(res, str_fmt("cannot stop the child at its allocator: %s",
					       trace_strerror(r)));
		r = 0;
		goto out;
	}
	for (;;) {
		struct trace_event ev;
		uint64_t now = measure_now_ns();
		int ms = now >= deadline ? 0 : (int)((deadline - now) / 1000000 + 1);

		r = trace_resume(m->p);
		if (r == 0)
			r = ms > 0 ? trace_wait(m->p, ms, &ev) : -ETIMEDOUT;
		if (r == -ETIMEDOUT) {
			gbench_timed_out(m->p, plan->timeout_ns, f, res);
			r = 0;
			goto out;
		}
		if (r < 0) {
			bench_result_fail(res, str_fmt("lost the child: %s", trace_strerror(r)));
			r = 0;
			goto out;
		}
		if (ev.kind == TRACE_EV_BREAKPOINT) {
			r = mem_breakpoint(m, ev.tid, ev.addr);
			if (r < 0) {
				bench_result_fail(
					res, str_fmt("cannot follow the calls in the child: %s",
						     trace_strerror(r)));
				r = r == -ENOMEM ? r : 0;
				goto out;
			}
			continue;
		}
		if (ev.kind == TRACE_EV_SIGNAL && measure_fatal_signal(ev.sig)) {
			measure_failure_signal(m->p, &ev, f);
			have_pending = true;
			continue;
		}
		if (ev.kind == TRACE_EV_KILLED) {
			if (!have_pending || f->sig != ev.sig) {
				memset(f, 0, sizeof(*f));
				f->kind = TRACE_FAIL_KILLED;
				f->sig = ev.sig;
			}
			bench_result_fail_with(res, f);
			r = 0;
			goto out;
		}
		if (ev.kind == TRACE_EV_EXITED) {
			if (ev.code != 0) {
				char *said = str_tail_lines(path, 3);

				bench_result_fail(res, str_fmt("exited with status %d%s%s", ev.code,
							       said ? "; its last words:" : "",
							       said ? said : ""));
				free(said);
				r = 0;
				goto out;
			}
			break;
		}
	}
	r = gbench_read_results(dir, s, &runs, &nruns, res);
	if (r < 0) {
		r = r == -ENOMEM ? r : 0;
		goto out;
	}
	if (runs[0].error) {
		r = gbench_result_from_runs(runs, nruns, res);
		goto out;
	}
	log = str_read_file(path, NULL);
	gbench_parse_batches(log ? log : "", s->name, iters, GBENCH_MAX_BATCHES, &nbatches);
	r = nbatches && nbatches <= GBENCH_MAX_BATCHES ? 0 : -EINVAL;
	for (size_t k = 0; r == 0 && k < 3; k++)
		r = mem_slope(m, k, iters, nbatches, runs[0].threads, &v[k], &setup);
	if (r == -ENOMEM)
		goto out;
	if (r < 0) {
		bench_result_fail(
			res, str_fmt("the calls of '%s' (%zu) are not %u per batch (%zu batches)",
				     s->symbol, m->ncalls, runs[0].threads, nbatches));
		r = 0;
		goto out;
	}
	measure_result_count(res, v[0]);
	res->iterations = iters[nbatches - 1] * runs[0].threads;
	res->calls = res->iterations;
	res->counters[0] = (struct measure_counter){ .name = "bytes", .value = v[0] };
	res->counters[1] = (struct measure_counter){ .name = "allocations", .value = v[1] };
	res->counters[2] = (struct measure_counter){ .name = "frees", .value = v[2] };
	res->ncounters = 3;
	if (setup && !m->loop)
		bench_result_diagnose(res,
				      "ran in one batch of %" PRIu64 " iterations (its "
				      "->Iterations(), or a first batch that lasted "
				      "--benchmark_min_time): the figures include what the "
				      "function does once, around its loop",
				      iters[0]);
	r = 0;
out:
	if (m)
		trace_proc_free(m->p);
	launch_sweep();
	free(log);
	if (m)
		free(m->calls);
	free(m);
	free(f);
	gbench_runs_free(runs, nruns);
	free(found.symbol);
	return r;
}
