/* SPDX-License-Identifier: MIT */
/*
 * One instance of a Google Benchmark binary under the exact instruments
 * (gbench.h says how they measure), its function F known
 * (gbench_spec_resolve); the batches' iteration counts from the library's
 * log (--v=2), the runs from its JSON output:
 *
 *   callgrind  valgrind --toggle-collect=F --dump-after=F: a profile per
 *              thread's call of F per batch; on one thread, also
 *              --dump-after=State::StartKeepRunning()
 *              --dump-before=State::FinishKeepRunning(), so that a profile
 *              holds the batch's loop alone, as the library's clock does
 *   memory     traced, stopped at F and at the allocators, its calls'
 *              allocations counted; where the library's clock functions
 *              are found, only while its clock runs: from StartKeepRunning's
 *              or ResumeTiming's return to PauseTiming's or
 *              FinishKeepRunning's entry, as the library times the loop
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/allocs.h"
#include "measure/child.h"
#include "measure/driver-env.h"
#include "measure/failure.h"
#include "measure/valgrind.h"
#include "trace/trace.h"
#include "util/launch.h"
#include "util/strutil.h"
#include "gbench/internal.h"

/*
 * What a run of instance s that exited left in run->dir: its runs
 * (*runs[0..*nruns)) and its batches' iteration counts per thread
 * (iters[0..*nb), GBENCH_MAX_BATCHES at most). 1 with both; 0 with res
 * failed or made from a run that failed (SkipWithError); -ENOMEM.
 */
static int read_batches(const struct own_run *run, const struct bench_spec *s,
			struct bench_result *res, struct gbench_run **runs, size_t *nruns,
			uint64_t *iters, size_t *nb)
{
	char path[PATH_MAX + 16], *log;
	int r = gbench_read_results(run->dir, s, runs, nruns, res);

	if (r < 0 || (*runs)[0].error)
		return r < 0 ? (r == -ENOMEM ? r : 0) : gbench_result_from_runs(*runs, *nruns, res);
	snprintf(path, sizeof(path), "%s/stderr", run->dir);
	log = str_read_file(path, NULL);
	gbench_parse_batches(log ? log : "", s->name, iters, GBENCH_MAX_BATCHES, nb);
	free(log);
	if (*nb && *nb <= GBENCH_MAX_BATCHES)
		return 1;
	bench_result_fail(res, str_fmt("cannot read the batches' iteration counts from the "
				       "library's log (%zu batches)",
				       *nb));
	return 0;
}

/* Said when one batch was all there is to count. */
#define ONE_BATCH                                                                             \
	"ran in one batch of %" PRIu64 " iterations (its ->Iterations(), or a first batch that " \
	"lasted --benchmark_min_time): the %s what the function does once, around its loop"

/* Profiles one callgrind run of an instance may have. */
#define GBENCH_MAX_DUMPS 1024

/* What ended a profile. */
enum dump_kind {
	DUMP_SETUP, /* the loop's start: what F did before it */
	DUMP_LOOP,  /* the loop's finish: the loop alone */
	DUMP_END,   /* F's return (or anything else) */
};

#define LOOP_START "benchmark::State::StartKeepRunning()"
#define LOOP_FINISH "benchmark::State::FinishKeepRunning()"

static int dump_kind_of(const char *trigger)
{
	if (!strcmp(trigger, "--dump-after=" LOOP_START))
		return DUMP_SETUP;
	if (!strcmp(trigger, "--dump-before=" LOOP_FINISH))
		return DUMP_LOOP;
	return DUMP_END;
}

/*
 * The profiles v[0..n) as counts: *ends, one per call of F (what F did
 * from one return to the next, the profiles between summed), and *loops,
 * one per loop (its finish's profile). Each array holds n.
 */
static void dump_counts(const struct valgrind_dump *v, size_t n, uint64_t *ends, size_t *ret_nends,
			uint64_t *loops, size_t *ret_nloops)
{
	uint64_t acc = 0;
	size_t ne = 0, nl = 0;

	for (size_t i = 0; i < n; i++) {
		acc += v[i].ir;
		if (v[i].kind == DUMP_LOOP)
			loops[nl++] = v[i].ir;
		if (v[i].kind == DUMP_END) {
			ends[ne++] = acc;
			acc = 0;
		}
	}
	*ret_nends = ne;
	*ret_nloops = nl;
}

int gbench_callgrind_one(const struct own_run *run, const struct bench_spec *s,
			 struct bench_result *res)
{
	static const char *const loop_dumps[] = { "--dump-after=" LOOP_START,
						  "--dump-before=" LOOP_FINISH, NULL };
	char **inst = NULL, **env = NULL;
	size_t ninst = 0, nruns = 0, nbatches = 0, ndumps = 0, nends = 0, nloops = 0;
	struct gbench_run *runs = NULL;
	uint64_t *ends = NULL, *loops = NULL, iters[GBENCH_MAX_BATCHES];
	struct valgrind_dump *dumps = calloc(GBENCH_MAX_DUMPS, sizeof(*dumps));
	bool with_setup = false, loop = false;
	struct bench_spec found = { 0 };
	double per;
	int r = gbench_spec_resolve(run, s, "callgrind", res, &found);

	if (r <= 0 || !dumps)
		goto out;
	s = &found;
	/*
	 * On one thread the loop's own profile: the library's clock starts
	 * in StartKeepRunning and stops in FinishKeepRunning. (Threads'
	 * loops overlap, and a profile holds every thread's cost since the
	 * last one: there, the slope of F's counts.)
	 */
	if (gbench_name_threads(s->name) == 1) {
		struct gbench_clock clock;

		r = gbench_clock_find(run->t->binary, &clock);
		gbench_clock_free(&clock);
		loop = r == 0;
	}
	r = gbench_instance_argv(run->t, s, run->plan, true, run->dir, &inst, &ninst);
	env = r ? NULL : measure_child_env(NULL);
	r = env ? own_callgrind(run,
				&(struct own_valgrind){ .argv = inst,
							.envp = env,
							.fns = (const char *const[]){ s->symbol },
							.nfns = 1,
							.toggle = true,
							.more = loop ? loop_dumps : NULL,
							.kind = dump_kind_of },
				res, dumps, GBENCH_MAX_DUMPS, &ndumps)
		: -ENOMEM;
	if (r > 0)
		r = read_batches(run, s, res, &runs, &nruns, iters, &nbatches);
	ends = calloc(GBENCH_MAX_DUMPS, sizeof(*ends));
	loops = calloc(GBENCH_MAX_DUMPS, sizeof(*loops));
	if (r <= 0 || !ends || !loops) {
		r = r < 0 || !ends || !loops ? -ENOMEM : 0;
		goto out;
	}
	r = 0;
	dump_counts(dumps, ndumps, ends, &nends, loops, &nloops);
	/* The loop's counts where every batch had one, else F's. */
	loop = loop && nloops == nbatches;
	if ((loop ? own_per_iteration(loops, nloops, iters, nbatches, 1, &per, &with_setup)
		  : own_per_iteration(ends, nends, iters, nbatches, runs[0].threads, &per,
				      &with_setup)) < 0) {
		bench_result_fail(
			res,
			str_fmt("callgrind's profiles (%zu) are not %u per batch (%zu batches), "
				"their counts growing: does '%s' call itself, or run on threads of "
				"its own?",
				nends, runs[0].threads, nbatches, s->symbol));
		goto out;
	}
	own_result_ir(res, per, iters[nbatches - 1] * runs[0].threads);
	if (with_setup && !loop)
		r = bench_result_diagnose(res, ONE_BATCH, iters[0], "count includes");
out:
	if (!dumps)
		r = -ENOMEM;
	free(dumps);
	free(ends);
	free(loops);
	gbench_runs_free(runs, nruns);
	free(found.symbol);
	measure_env_free(inst);
	measure_env_free(env);
	return r < 0 ? r : 0;
}

int gbench_memory_one(const struct own_run *run, const struct bench_spec *s,
		      struct bench_result *res)
{
	char path[PATH_MAX + 16], *why = NULL;
	size_t nruns = 0, nbatches = 0, ncalls = 0, nfns = 0;
	struct trace_proc *p = NULL;
	struct alloc_counts *calls = NULL;
	struct alloc_fn fns[1 + GBENCH_CLOCK_FNS];
	struct gbench_run *runs = NULL;
	uint64_t bias = 0, iters[GBENCH_MAX_BATCHES];
	bool setup = false, loop = true;
	struct bench_spec found = { 0 };
	int r = gbench_spec_resolve(run, s, "the memory instrument", res, &found);

	if (r <= 0)
		return r;
	s = &found;
	r = gbench_start_traced(run, s, run->t->quiet_stdio ? run->devnull : -1, &p, &bias,
				&res->pid, &why);
	if (!p) {
		if (r == 0)
			bench_result_fail(res, why);
		else
			free(why);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/stderr", run->dir);
	fns[nfns++] = (struct alloc_fn){ bias + s->link_addr, BRACKET_CALL };
	/* Counted while the library's clock runs, when its functions are
	 * found. */
	for (size_t k = 0; k < GBENCH_CLOCK_FNS; k++) {
		uint64_t at = measure_child_symbol(trace_pid(p), gbench_clock_fns[k].name);

		loop &= at || !gbench_clock_fns[k].needed;
		if (at)
			fns[nfns++] = (struct alloc_fn){ at, gbench_clock_fns[k].role };
	}
	if (!loop)
		nfns = 1;
	r = alloc_count_run(p, fns, nfns, res->t_start_ns + run->plan->timeout_ns,
			    run->plan->timeout_ns, path, NULL, res, &calls, &ncalls);
	if (r <= 0)
		goto out;
	r = read_batches(run, s, res, &runs, &nruns, iters, &nbatches);
	if (r <= 0)
		goto out;
	r = own_result_allocs(res, calls, ncalls, iters, nbatches, runs[0].threads, &setup);
	if (r < 0 && r != -ENOMEM) {
		bench_result_fail(res, str_fmt("the calls of '%s' (%zu) are not %u per batch "
					       "(%zu batches), their counts growing",
					       s->symbol, ncalls, runs[0].threads, nbatches));
		r = 0;
	} else if (r == 0 && setup && !loop) {
		r = bench_result_diagnose(res, ONE_BATCH, iters[0], "figures include");
	}
out:
	trace_proc_free(p);
	launch_sweep();
	free(calls);
	gbench_runs_free(runs, nruns);
	free(found.symbol);
	return r;
}
