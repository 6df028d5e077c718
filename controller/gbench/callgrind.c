/* SPDX-License-Identifier: MIT */
/*
 * One instance of a Google Benchmark binary under callgrind (gbench.h says
 * how it measures):
 *
 *   callgrind: valgrind --toggle-collect=F --dump-after=F ─ a profile per
 *              thread's call of F per batch, the batches' iteration counts
 *              in its log (--v=2)
 */
#include <dirent.h>
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
#include "gbench/internal.h"

/* Profiles one callgrind run of an instance may have. */
#define GBENCH_MAX_DUMPS 1024

struct dump {
	unsigned n;
	uint64_t ir;
};

static int cmp_dump(const void *a, const void *b)
{
	const struct dump *x = a, *y = b;

	return x->n < y->n ? -1 : x->n > y->n;
}

/* The Ir total of each numbered profile of process pid, in dump order. */
static int read_dumps(const char *dir, pid_t pid, uint64_t *ret, size_t max, size_t *ret_n)
{
	DIR *d = opendir(dir);
	struct dump *v = calloc(max, sizeof(*v));
	struct dirent *e;
	size_t n = 0;
	int r = 0;

	if (!d || !v) {
		r = d ? -ENOMEM : -errno;
		goto out;
	}
	while ((e = readdir(d))) {
		unsigned dump, thread;
		char path[PATH_MAX + 300];
		struct callgrind_profile prof;
		int ir;

		if (!callgrind_part_name(e->d_name, pid, &dump, &thread) || dump == 0)
			continue;
		if (n == max) {
			r = -E2BIG;
			goto out;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		r = callgrind_parse_file(path, NULL, NULL, &prof);
		if (r < 0)
			goto out;
		ir = callgrind_event_index(&prof, "Ir");
		if (ir < 0) {
			r = -EINVAL;
			goto out;
		}
		v[n++] = (struct dump){ dump, prof.totals[ir] };
	}
	qsort(v, n, sizeof(*v), cmp_dump);
	for (size_t i = 0; i < n; i++)
		ret[i] = v[i].ir;
	*ret_n = n;
out:
	if (d)
		closedir(d);
	free(v);
	return r;
}

int gbench_callgrind_one(const struct measure_target *t, const char *valgrind,
			 const struct bench_spec *s, const struct measure_plan *plan,
			 const char *dir, int input, int devnull, struct bench_result *res)
{
	char **argv = NULL, **env = NULL, path[PATH_MAX + 32], *log = NULL;
	size_t na = 0, ninst = 0, nruns = 0, nbatches = 0, ndumps = 0;
	struct gbench_run *runs = NULL;
	uint64_t *dumps = NULL, iters[GBENCH_MAX_BATCHES];
	struct launch l;
	struct launch_opts lo;
	int errfd = -1, exec_errno = 0, st = 0, r = 0;
	bool killed = false, with_setup = false;
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
	r = gbench_instance_argv(t, s, plan, true, dir, &inst, &ninst);
	for (size_t i = 0; r == 0 && inst[i]; i++)
		r = gbench_push(&argv, &na, strdup(inst[i]));
	env = r ? NULL : measure_child_env(NULL);
	if (r || !env)
		goto nomem;
	snprintf(path, sizeof(path), "%s/stderr", dir);
	errfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (errfd < 0) {
		gbench_fail(res, gbench_fmt("cannot create %s: %s", path, strerror(errno)));
		goto out;
	}
	launch_opts_init(&lo, valgrind, argv);
	lo.envp = env;
	lo.stdio[0] = input;
	lo.stdio[1] = devnull;
	lo.stdio[2] = errfd;
	lo.process_group = true;
	lo.cpu = t->cpu;
	r = launch_start(&lo, &l, &exec_errno);
	if (r < 0) {
		gbench_fail(res, gbench_fmt("cannot execute %s: %s", valgrind,
					    strerror(r == -LAUNCH_E_EXEC ? exec_errno : -r)));
		r = 0;
		goto out;
	}
	res->pid = l.pid;
	r = gbench_wait_plain(l.pid, res->t_start_ns + plan->timeout_ns, &st, &killed);
	if (r < 0) {
		gbench_fail(res, gbench_fmt("lost valgrind's process: %s", strerror(-r)));
		r = 0;
		goto out;
	}
	if (killed) {
		gbench_fail(res, valgrind_timeout_words(plan->timeout_ns));
		goto out;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char *acc = NULL, logpath[PATH_MAX + 16];

		snprintf(logpath, sizeof(logpath), "%s/valgrind.log", dir);
		valgrind_log_append(&acc, logpath, 0, 0, 0);
		if (WIFSIGNALED(st)) {
			char *words = valgrind_signal_words(WTERMSIG(st));

			gbench_fail(res, words ? gbench_fmt("%s%s", words, acc ? acc : "") : NULL);
			free(words);
		} else {
			char *said = gbench_tail_lines(path, 3);

			gbench_fail(res,
				    gbench_fmt("exited with status %d under valgrind%s%s%s",
					       WEXITSTATUS(st), acc ? acc : "",
					       said ? "; its last words:" : "", said ? said : ""));
			free(said);
		}
		free(acc);
		goto out;
	}
	if (gbench_read_results(dir, s, &runs, &nruns, res) < 0)
		goto out;
	if (runs[0].error) {
		r = gbench_result_from_runs(runs, nruns, res);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/stderr", dir);
	log = gbench_read_file(path, NULL);
	gbench_parse_batches(log ? log : "", s->name, iters, GBENCH_MAX_BATCHES, &nbatches);
	dumps = calloc(GBENCH_MAX_DUMPS, sizeof(*dumps));
	if (!dumps)
		goto nomem;
	r = read_dumps(dir, l.pid, dumps, GBENCH_MAX_DUMPS, &ndumps);
	if (r < 0 || nbatches == 0 || nbatches > GBENCH_MAX_BATCHES) {
		gbench_fail(
			res,
			gbench_fmt(
				"cannot read callgrind's profiles or the batches' iteration counts "
				"(%zu profiles, %zu batches)",
				ndumps, nbatches));
		r = 0;
		goto out;
	}
	r = gbench_per_iteration(dumps, ndumps, iters, nbatches, runs[0].threads, &per,
				 &with_setup);
	if (r < 0) {
		gbench_fail(
			res,
			gbench_fmt("callgrind's profiles (%zu) are not %u per batch (%zu batches): "
				   "does '%s' call itself, or run on threads of its own?",
				   ndumps, runs[0].threads, nbatches, s->symbol));
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
	if (errfd >= 0)
		close(errfd);
	free(log);
	free(dumps);
	gbench_runs_free(runs, nruns);
	free(found.symbol);
	measure_env_free(argv);
	measure_env_free(inst);
	measure_env_free(env);
	return r;
}
