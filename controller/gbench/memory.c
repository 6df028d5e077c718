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

#include "measure/allocs.h"
#include "measure/child.h"
#include "measure/failure.h"
#include "trace/trace.h"
#include "util/launch.h"
#include "gbench/gbench.h"
#include "util/strutil.h"
#include "gbench/internal.h"

int gbench_memory_one(const struct own_run *run, const struct bench_spec *s,
		      struct bench_result *res)
{
	char path[PATH_MAX + 16], *log = NULL, *why = NULL;
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
	r = gbench_read_results(run->dir, s, &runs, &nruns, res);
	if (r < 0 || runs[0].error) {
		r = r < 0 ? (r == -ENOMEM ? r : 0) : gbench_result_from_runs(runs, nruns, res);
		goto out;
	}
	log = str_read_file(path, NULL);
	gbench_parse_batches(log ? log : "", s->name, iters, GBENCH_MAX_BATCHES, &nbatches);
	r = nbatches && nbatches <= GBENCH_MAX_BATCHES
		    ? own_result_allocs(res, calls, ncalls, iters, nbatches, runs[0].threads, &setup)
		    : -EINVAL;
	if (r < 0 && r != -ENOMEM) {
		bench_result_fail(res, str_fmt("the calls of '%s' (%zu) are not %u per batch "
					       "(%zu batches), their counts growing",
					       s->symbol, ncalls, runs[0].threads, nbatches));
		r = 0;
	} else if (r == 0 && setup && !loop) {
		r = bench_result_diagnose(res,
					  "ran in one batch of %" PRIu64 " iterations (its "
					  "->Iterations(), or a first batch that lasted "
					  "--benchmark_min_time): the figures include what the "
					  "function does once, around its loop",
					  iters[0]);
	}
out:
	trace_proc_free(p);
	launch_sweep();
	free(log);
	free(calls);
	gbench_runs_free(runs, nruns);
	free(found.symbol);
	return r;
}
