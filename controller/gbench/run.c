/* SPDX-License-Identifier: MIT */
/*
 * Running a Google Benchmark binary: its list, and each instance alone in
 * a fresh process (gbench.h says how each instrument measures; counted.c
 * runs one under callgrind and memory).
 *
 *   walltime:  spawn (traced) ─ runs its own main ─ JSON to DIR/out.json
 *                  └─ a fatal signal: backtrace of its thread, then the
 *                     signal is delivered; the process dies of it: failed
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "measure/callgrind.h"
#include "measure/driver-env.h"
#include "measure/failure.h"
#include "measure/own.h"
#include "trace/trace.h"
#include "unwind/unwind.h"
#include "util/launch.h"
#include "util/strutil.h"
#include "gbench/gbench.h"
#include "gbench/internal.h"

/* ---- the list ------------------------------------------------------------ */

/* Flags after '--' that would change what benchtrap selects or reads. */
const char *const gbench_reserved[] = {
	"--benchmark_filter", "--benchmark_out",    "--benchmark_out_format",
	"--benchmark_list_tests", "--benchmark_format", "--v", NULL,
};

static int list_argv(const struct suite_ctx *c, const char *dir, char ***argv, char ***envp)
{
	size_t na = 0;
	int r = 0;

	(void)dir;
	(void)envp;
	for (size_t i = 0; c->t->argv[i]; i++)
		r |= measure_env_push(argv, &na, strdup(c->t->argv[i]));
	r |= measure_env_push(argv, &na, strdup("--benchmark_list_tests=true"));
	return r ? -ENOMEM : 0;
}

int gbench_list(const struct suite_ctx *c, char ***ret_names, size_t *ret_n, char **ret_error)
{
	static const struct own_lister l = { .tag = "gbench",
					     .asked = "--benchmark_list_tests=true",
					     .noun = "benchmark name",
					     .argv = list_argv,
					     .parse = gbench_parse_list };

	return own_list(&l, c, ret_names, ret_n, ret_error);
}

int gbench_spec(const struct suite_ctx *c, const char *name, struct bench_spec *ret)
{
	uint64_t addr = 0;
	char *fn = gbench_function(c->ef, name, &addr);

	return own_spec(c, name, fn, addr, ret);
}

/* ---- one instance, walltime ------------------------------------------------ */

/* One instance in a fresh traced child: res filled (failed, or from its
 * runs); with ret_runs, an instance that ran leaves res as it was and hands
 * its runs over instead (*ret_runs, *ret_nruns: gbench_runs_free). */
static int walltime_one(const struct own_run *run, const struct bench_spec *s,
			struct bench_result *res, struct gbench_run **ret_runs, size_t *ret_nruns)
{
	const struct measure_target *t = run->t;
	const struct measure_plan *plan = run->plan;
	const char *dir = run->dir;
	int input = run->input, devnull = run->devnull;
	char **argv = NULL, path[PATH_MAX + 16], errpath[PATH_MAX + 16];
	size_t na = 0, nruns = 0;
	int errfd = -1;
	struct trace_spawn_opts so;
	struct trace_proc *p = NULL;
	struct own_watch w = { 0 };
	struct trace_event ev;
	struct gbench_run *runs = NULL;
	uint64_t deadline = res->t_start_ns + plan->timeout_ns;
	int exec_errno = 0, r;

	/* Its function known, by its symbols or by the one a run of it
	 * enters first: timed by benchtrap around each batch. */
	if (!ret_runs) {
		struct bench_spec found;

		r = gbench_spec_resolve(run, s, NULL, res, &found);
		if (r == 1) {
			r = gbench_bracket_one(run, &found, res);
			free(found.symbol);
			return r;
		}
		if (r < 0)
			return r;
	}
	if (!ret_runs && bench_result_diagnose(res, "%s", GBENCH_NO_FUNCTION) < 0)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/out.json", dir);
	unlink(path);
	r = gbench_instance_argv(t, s, plan, false, dir, &argv, &na);
	if (r < 0)
		return r;
	trace_spawn_opts_init(&so, argv);
	so.clean_env = t->clean_env;
	so.aslr = t->aslr;
	so.cpu = t->cpu;
	/* Its stderr is kept, to say what it said when it fails. */
	snprintf(errpath, sizeof(errpath), "%s/stderr", dir);
	errfd = t->quiet_stdio ? open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
	so.stdio[0] = input;
	so.stdio[1] = t->quiet_stdio ? devnull : -1;
	so.stdio[2] = t->quiet_stdio ? (errfd >= 0 ? errfd : devnull) : -1;
	so.process_group = true;
	r = trace_spawn(&so, &p, &exec_errno);
	if (r < 0) {
		bench_result_fail(res, str_fmt("cannot execute %s: %s", t->binary,
					       r == -TRACE_E_EXEC ? strerror(exec_errno)
								  : trace_strerror(r)));
		r = r == -ENOMEM ? r : 0;
		goto out;
	}
	res->pid = trace_pid(p);
	r = own_watch_init(&w, deadline, plan->timeout_ns, errfd >= 0 ? errpath : NULL, NULL);
	while (r == 0 && (r = own_next(p, &w, res, &ev)) > 0)
		r = 0;
	if (r < 0 || res->status == BENCH_FAILED)
		goto out;
	r = gbench_read_results(dir, s, &runs, &nruns, res);
	if (r == 0 && ret_runs) {
		*ret_runs = runs;
		*ret_nruns = nruns;
		runs = NULL;
		nruns = 0;
	} else if (r == 0) {
		r = gbench_result_from_runs(runs, nruns, res);
	} else {
		r = r == -ENOMEM ? r : 0;
	}
out:
	if (errfd >= 0)
		close(errfd);
	trace_proc_free(p);
	launch_sweep();
	own_watch_clear(&w);
	gbench_runs_free(runs, nruns);
	measure_env_free(argv);
	return r;
}

/* ---- the cells (measure/own.h) --------------------------------------------- */

static int walltime_run(const struct own_run *run, const struct bench_spec *s,
			struct bench_result *res)
{
	return walltime_one(run, s, res, NULL, NULL);
}

/* Append runs[0..n) (moved) to *all. */
static int take_runs(struct gbench_run **all, size_t *nall, struct gbench_run *runs, size_t n)
{
	struct gbench_run *v = realloc(*all, (*nall + n + 1) * sizeof(*v));

	if (!v) {
		gbench_runs_free(runs, n);
		return -ENOMEM;
	}
	memcpy(v + *nall, runs, n * sizeof(*v));
	*all = v;
	*nall += n;
	free(runs);
	return 0;
}

/*
 * compare BASE HEAD, one instance of each build. With both functions
 * known, two live children alternating batch by batch, each batch timed by
 * benchtrap (bracket.c); otherwise rounds of one repetition of each build,
 * each in a fresh process, the order alternating from round to round
 * (base, head; head, base; ...): plan->min_samples rounds of plan->time_ns
 * over them each, a pair ratio per round. A build that fails is failed
 * there; the other goes on alone.
 */
static int walltime_pair(const struct own_run *const run[2], const struct bench_spec *const spec0[2],
			 struct bench_result *const res[2])
{
	const struct measure_plan *plan = run[1]->plan;
	size_t rounds = plan->min_samples ? plan->min_samples : 1;
	/* Each round: one repetition of each build, of --time over the rounds. */
	struct measure_plan one = *plan;
	struct own_run once[2] = { *run[0], *run[1] };
	const struct bench_spec *spec[2] = { spec0[0], spec0[1] };
	struct bench_spec found[2];
	char *fns[2] = { NULL, NULL };
	struct gbench_run *all[2] = { NULL, NULL };
	size_t nall[2] = { 0, 0 }, npairs = 0;
	double *ratios = calloc(rounds + 1, sizeof(*ratios));
	int r = 0;

	if (!ratios)
		return -ENOMEM;
	one.min_samples = 1;
	one.time_ns = plan->time_ns / rounds;
	/* A function its symbols do not tell: the one a run of the instance
	 * enters first. */
	for (int k = 0; r == 0 && k < 2; k++) {
		once[k].plan = &one;
		if (spec[k]->link_addr)
			continue;
		r = gbench_spec_resolve(run[k], spec[k], NULL, res[k], &found[k]);
		if (r == 1) {
			fns[k] = found[k].symbol;
			spec[k] = &found[k];
			r = 0;
		}
	}
	/* Both functions known: the two children alternate batch by batch,
	 * each timed by benchtrap (bracket.c). */
	if (r == 0 && spec[0]->link_addr && spec[1]->link_addr) {
		r = gbench_bracket_paired(run, spec, res);
		goto out;
	}
	for (int k = 0; k < 2; k++)
		if (bench_result_diagnose(res[k], "%s", GBENCH_NO_FUNCTION) < 0)
			r = -ENOMEM;
	/* base, head; head, base; ...: whatever favours a position favours
	 * each build alike. */
	for (size_t round = 0; r == 0 && round < rounds; round++) {
		double v[2] = { NAN, NAN };

		for (int j = 0; r == 0 && j < 2; j++) {
			int k = (round % 2) ? 1 - j : j;
			struct gbench_run *runs = NULL;
			size_t nruns = 0;

			if (res[k]->status == BENCH_FAILED)
				continue;
			/* The timeout bounds each process. */
			res[k]->t_start_ns = measure_now_ns();
			r = walltime_one(&once[k], spec[k], res[k], &runs, &nruns);
			launch_temp_dir_empty(run[k]->dir);
			if (r < 0 || !runs)
				continue;
			if (nruns && !runs[0].error)
				v[k] = runs[0].real_ns;
			r = take_runs(&all[k], &nall[k], runs, nruns);
		}
		if (r == 0 && v[0] > 0 && v[1] > 0)
			ratios[npairs++] = v[1] / v[0];
	}
	for (int k = 0; r == 0 && k < 2; k++)
		if (res[k]->status != BENCH_FAILED)
			r = gbench_result_from_runs(all[k], nall[k], res[k]);
	/* Head's pair ratios before its end is said: its progress line gives
	 * the change. */
	if (r == 0 && res[1]->status == BENCH_OK && res[0]->status == BENCH_OK && npairs) {
		res[1]->pair_ratios = ratios;
		res[1]->npairs = npairs;
		ratios = NULL;
	}
out:
	for (int k = 0; k < 2; k++) {
		gbench_runs_free(all[k], nall[k]);
		free(fns[k]);
	}
	free(ratios);
	return r;
}

const struct own_cell gbench_walltime_cell = { .tag = "gbench",
					       .one = walltime_run,
					       .pair = walltime_pair };

const struct own_cell gbench_callgrind_cell = { .tag = "gbench",
						.valgrind = true,
						.one = gbench_callgrind_one };

const struct own_cell gbench_memory_cell = { .tag = "gbench", .one = gbench_memory_one };
