/* SPDX-License-Identifier: MIT */
/*
 * One instance of a Google Benchmark binary under callgrind (gbench.h says
 * how it measures):
 *
 *   callgrind: valgrind --toggle-collect=F --dump-after=F ─ a profile per
 *              thread's call of F per batch, the batches' iteration counts
 *              in its log (--v=2); on one thread, also
 *              --dump-after=State::StartKeepRunning()
 *              --dump-before=State::FinishKeepRunning(), so that a profile
 *              holds the batch's loop alone, as the library's clock does
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "measure/callgrind.h"
#include "measure/driver-env.h"
#include "measure/valgrind.h"
#include "util/launch.h"
#include "gbench/gbench.h"
#include "util/strutil.h"
#include "measure/failure.h"
#include "gbench/internal.h"

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
	const struct measure_target *t = run->t;
	const struct measure_plan *plan = run->plan;
	const char *valgrind = run->valgrind, *dir = run->dir;
	int input = run->input, devnull = run->devnull;
	char **argv = NULL, **env = NULL, path[PATH_MAX + 32], *log = NULL;
	size_t na = 0, ninst = 0, nruns = 0, nbatches = 0, ndumps = 0;
	struct gbench_run *runs = NULL;
	uint64_t *ends = NULL, *loops = NULL, iters[GBENCH_MAX_BATCHES];
	struct valgrind_dump *dumps = NULL;
	size_t nends = 0, nloops = 0;
	int r = 0;
	bool with_setup = false, loop = false;
	char **inst = NULL;
	double per;
	struct bench_spec found = { 0 };

	r = gbench_spec_resolve(t, s, plan, dir, input, devnull, "callgrind", res, &found);
	if (r <= 0)
		return r;
	s = &found;
	launch_temp_dir_empty(dir);
	r = valgrind_callgrind_argv(&argv, &na, valgrind, dir, (const char *const[]){ s->symbol },
				    1, true);
	if (r)
		goto nomem;
	/*
	 * On one thread the loop's own profile: the library's clock starts
	 * in StartKeepRunning and stops in FinishKeepRunning. (Threads'
	 * loops overlap, and a profile holds every thread's cost since the
	 * last one: there, the slope of F's counts.)
	 */
	if (gbench_name_threads(s->name) == 1) {
		struct gbench_clock clock;

		r = gbench_clock_find(t->binary, &clock);
		if (r == -ENOMEM)
			goto nomem;
		gbench_clock_free(&clock);
		loop = r == 0;
		r = 0;
		if (loop &&
		    (measure_env_push(&argv, &na, strdup("--dump-after=" LOOP_START)) < 0 ||
		     measure_env_push(&argv, &na, strdup("--dump-before=" LOOP_FINISH)) < 0))
			goto nomem;
	}
	r = gbench_instance_argv(t, s, plan, true, dir, &inst, &ninst);
	for (size_t i = 0; r == 0 && inst[i]; i++)
		r = measure_env_push(&argv, &na, strdup(inst[i]));
	env = r ? NULL : measure_child_env(NULL);
	if (r || !env)
		goto nomem;
	r = valgrind_run(argv, env, t->cpu, input, devnull, dir, res->t_start_ns + plan->timeout_ns,
			 plan->timeout_ns, NULL, res);
	if (r < 0)
		goto nomem;
	if (r == 0)
		goto out;
	r = 0;
	if (gbench_read_results(dir, s, &runs, &nruns, res) < 0)
		goto out;
	if (runs[0].error) {
		r = gbench_result_from_runs(runs, nruns, res);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/stderr", dir);
	log = str_read_file(path, NULL);
	gbench_parse_batches(log ? log : "", s->name, iters, GBENCH_MAX_BATCHES, &nbatches);
	dumps = calloc(GBENCH_MAX_DUMPS, sizeof(*dumps));
	ends = calloc(GBENCH_MAX_DUMPS, sizeof(*ends));
	loops = calloc(GBENCH_MAX_DUMPS, sizeof(*loops));
	if (!dumps || !ends || !loops)
		goto nomem;
	r = valgrind_read_dumps(dir, res->pid, dump_kind_of, dumps, GBENCH_MAX_DUMPS, &ndumps);
	if (r < 0 || nbatches == 0 || nbatches > GBENCH_MAX_BATCHES) {
		bench_result_fail(
			res,
			str_fmt("cannot read callgrind's profiles or the batches' iteration counts "
				"(%zu profiles, %zu batches)",
				ndumps, nbatches));
		r = 0;
		goto out;
	}
	dump_counts(dumps, ndumps, ends, &nends, loops, &nloops);
	/* The loop's counts where every batch had one, else F's. */
	loop = loop && nloops == nbatches;
	r = loop ? gbench_per_iteration(loops, nloops, iters, nbatches, 1, &per, &with_setup)
		 : gbench_per_iteration(ends, nends, iters, nbatches, runs[0].threads, &per,
					&with_setup);
	with_setup &= !loop;
	if (r < 0) {
		bench_result_fail(
			res,
			str_fmt("callgrind's profiles (%zu) are not %u per batch (%zu batches): "
				"does '%s' call itself, or run on threads of its own?",
				nends, runs[0].threads, nbatches, s->symbol));
		r = 0;
		goto out;
	}
	measure_result_count(res, per);
	res->iterations = iters[nbatches - 1] * runs[0].threads;
	res->calls = res->iterations;
	res->counters[0] = (struct measure_counter){ .name = "Ir", .value = per };
	res->ncounters = 1;
	if (with_setup)
		bench_result_diagnose(res,
				      "ran in one batch of %" PRIu64 " iterations (its "
				      "->Iterations(), or a first batch that lasted "
				      "--benchmark_min_time): the count includes what the "
				      "function does once, around its loop",
				      iters[0]);
	else if (res->status == BENCH_OK && per < MEASURE_MIN_INSTRUCTIONS)
		res->no_time = true;
	r = 0;
	goto out;
nomem:
	r = -ENOMEM;
out:
	free(log);
	free(dumps);
	free(ends);
	free(loops);
	gbench_runs_free(runs, nruns);
	free(found.symbol);
	measure_env_free(argv);
	measure_env_free(inst);
	measure_env_free(env);
	return r;
}
