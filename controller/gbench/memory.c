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

/* The per-iteration figure of one counter over the calls. */
static int mem_slope(const struct alloc_counts *calls, size_t ncalls, unsigned field,
		     const uint64_t *iters, size_t nb, unsigned threads, double *ret, bool *ret_setup)
{
	uint64_t *v = calloc(ncalls + 1, sizeof(*v));
	int r;

	if (!v)
		return -ENOMEM;
	alloc_counts_field(calls, ncalls, field, v);
	r = gbench_per_iteration(v, ncalls, iters, nb, threads, ret, ret_setup);
	free(v);
	return r;
}

/* The largest peak of the last batch's calls (one per thread). */
static double peak_of(const struct alloc_counts *calls, size_t n, unsigned threads)
{
	uint64_t peak = 0;

	for (size_t i = n - (threads && threads <= n ? threads : 1); i < n; i++)
		peak = calls[i].peak > peak ? calls[i].peak : peak;
	return (double)peak;
}

int gbench_memory_one(const struct own_run *run, const struct bench_spec *s,
		      struct bench_result *res)
{
	const struct measure_target *t = run->t;
	const struct measure_plan *plan = run->plan;
	const char *dir = run->dir;
	int input = run->input, devnull = run->devnull;
	char path[PATH_MAX + 16], *log = NULL, *why = NULL;
	size_t nruns = 0, nbatches = 0, ncalls = 0, nfns = 0;
	struct trace_proc *p = NULL;
	struct alloc_counts *calls = NULL;
	struct alloc_fn fns[1 + GBENCH_CLOCK_FNS];
	struct gbench_run *runs = NULL;
	uint64_t bias = 0, iters[GBENCH_MAX_BATCHES];
	int r;
	bool setup = false, loop = true;
	double v[3];
	struct bench_spec found = { 0 };

	r = gbench_spec_resolve(t, s, plan, dir, input, devnull, "the memory instrument", res,
				&found);
	if (r <= 0)
		return r;
	s = &found;
	r = gbench_start_traced(t, s, plan, dir, input, t->quiet_stdio ? devnull : -1, devnull, &p,
				&bias, &res->pid, &why);
	if (!p) {
		if (r == 0)
			bench_result_fail(res, why);
		else
			free(why);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/stderr", dir);
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
	r = alloc_count_run(p, fns, nfns, res->t_start_ns + plan->timeout_ns, plan->timeout_ns,
			    path, NULL, res, &calls, &ncalls);
	if (r <= 0)
		goto out;
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
		r = mem_slope(calls, ncalls, (unsigned)k, iters, nbatches, runs[0].threads, &v[k],
			      &setup);
	if (r == -ENOMEM)
		goto out;
	if (r < 0) {
		bench_result_fail(
			res, str_fmt("the calls of '%s' (%zu) are not %u per batch (%zu batches)",
				     s->symbol, ncalls, runs[0].threads, nbatches));
		r = 0;
		goto out;
	}
	measure_result_count(res, v[0]);
	res->iterations = iters[nbatches - 1] * runs[0].threads;
	res->calls = res->iterations;
	res->counters[0] = (struct measure_counter){ .name = "bytes", .value = v[0] };
	res->counters[1] = (struct measure_counter){ .name = "allocations", .value = v[1] };
	res->counters[2] = (struct measure_counter){ .name = "frees", .value = v[2] };
	/* The most live at once in a call of the last batch: a batch's, not
	 * an iteration's (no slope makes it one). */
	res->counters[3] = (struct measure_counter){ .name = "peak_bytes",
						     .value = peak_of(calls, ncalls, runs[0].threads) };
	res->ncounters = 4;
	if (setup && !loop)
		bench_result_diagnose(res,
				      "ran in one batch of %" PRIu64 " iterations (its "
				      "->Iterations(), or a first batch that lasted "
				      "--benchmark_min_time): the figures include what the "
				      "function does once, around its loop",
				      iters[0]);
	r = 0;
out:
	trace_proc_free(p);
	launch_sweep();
	free(log);
	free(calls);
	gbench_runs_free(runs, nruns);
	free(found.symbol);
	return r;
}
