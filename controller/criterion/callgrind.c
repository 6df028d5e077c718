/* SPDX-License-Identifier: MIT */
/*
 * A criterion benchmark under callgrind (criterion.h says how it
 * measures):
 *
 *   valgrind --dump-before=ITER --dump-after=ITER ...
 *       BINARY --bench ... --profile-time 1 '^ID$'
 *     └─ criterion's warm-up alone: ITER called with 1, 2, 4, ... iterations
 *        for a second, a profile dumped when each call begins and when it
 *        ends, the second holding the call's cost; no analysis, no file of
 *        criterion's written
 *
 * ITER is each of Bencher<M>::iter* by valgrind's name for it (every
 * instance of one function has the same). Not --toggle-collect: callgrind
 * heeds the first of several (a suite with both iter and iter_batched
 * counted 0 for the other's benchmarks). valgrind's command line and the
 * reading of its log are measure/valgrind.h's, as for every callgrind run;
 * the profiles are read with measure/callgrind.h.
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

#include "elf/elf.h"
#include "measure/callgrind.h"
#include "measure/driver-env.h"
#include "measure/valgrind.h"
#include "measure/failure.h"
#include "util/launch.h"
#include "util/strutil.h"
#include "criterion/internal.h"

/* Calls one run may have: 2^63 iterations are more than any run. */
#define MAX_DUMPS 128

/* A call's profile: the one dumped when it returned (the one dumped when
 * it began holds what ran between two calls). */
static int call_dump(const char *trigger)
{
	return strncmp(trigger, "--dump-after=", 13) ? -1 : 0;
}

/* The Ir total of each call's profile of process pid, in order. */
static int read_dumps(const char *dir, pid_t pid, uint64_t *ret, size_t max, size_t *ret_n)
{
	struct valgrind_dump v[MAX_DUMPS];
	int r = valgrind_read_dumps(dir, pid, call_dump, v, max < MAX_DUMPS ? max : MAX_DUMPS,
				    ret_n);

	for (size_t i = 0; r == 0 && i < *ret_n; i++)
		ret[i] = v[i].ir;
	return r;
}

/* Criterion's batch functions, found once for every benchmark of a run. */
struct fns {
	struct criterion_fn *v;
	size_t n;
};

static int callgrind_one(const struct own_run *run, const struct bench_spec *s,
			 struct bench_result *res)
{
	const struct measure_target *t = run->t;
	const struct measure_plan *plan = run->plan;
	const struct fns *fns = run->data;
	const char *dir = run->dir;
	char **argv = NULL, **env = NULL, *filter = criterion_filter_regex(s->name);
	char home[PATH_MAX + 16];
	const char *post[] = { "--profile-time", "1", filter, NULL };
	uint64_t dumps[MAX_DUMPS];
	size_t na = 0, ndumps = 0;
	int r;
	double per;

	snprintf(home, sizeof(home), "%s/home", dir);
	const char **names = calloc(fns->n + 1, sizeof(*names));

	for (size_t i = 0; names && i < fns->n; i++)
		names[i] = fns->v[i].name;
	r = filter && names ? valgrind_dumps_argv(&argv, &na, run->valgrind, dir, names, fns->n)
			    : -ENOMEM;
	free(names);
	if (r == 0)
		r = criterion_argv(t, NULL, post, &argv, &na);
	env = r ? NULL : criterion_env(home, true);
	if (r || !env) {
		r = -ENOMEM;
		goto out;
	}
	r = valgrind_run(argv, env, t->cpu, run->input, run->devnull, dir, res->t_start_ns + plan->timeout_ns,
			 plan->timeout_ns, own_said_rust, res);
	if (r <= 0)
		goto out;
	r = read_dumps(dir, res->pid, dumps, MAX_DUMPS, &ndumps);
	if (r == 0 && ndumps == 0) {
		bench_result_fail(res, str_fmt("the binary ran no benchmark named '%s' (FILTER %s)",
					       s->name, filter));
		goto out;
	}
	if (r < 0 || criterion_callgrind_slope(dumps, ndumps, &per) < 0) {
		bench_result_fail(res,
				  str_fmt("cannot make a count per iteration of callgrind's %zu "
					  "profiles (one per call of criterion's batch "
					  "function, two at least): %s",
					  ndumps, r < 0 ? strerror(-r) : "the counts do not grow"));
		r = 0;
		goto out;
	}
	r = 0;
	measure_result_count(res, per);
	res->iterations = 1ull << (ndumps - 1);
	res->calls = res->iterations;
	res->counters[0] = (struct measure_counter){ .name = "Ir", .value = per };
	res->ncounters = 1;
	if (res->status == BENCH_OK && per < MEASURE_MIN_INSTRUCTIONS)
		res->no_time = true;
out:
	free(filter);
	measure_env_free(argv);
	measure_env_free(env);
	return r;
}

static int find_fns(const struct own_run *run, const struct bench_spec *first, void **ret,
		    char **ret_error)
{
	struct fns *fns = calloc(1, sizeof(*fns));
	struct elf_file *ef = NULL;
	const char *what = NULL;
	int r = fns ? elf_open(first->object, &ef, &what) : -ENOMEM;

	(void)run;
	if (r == 0)
		r = criterion_batch_fns(ef, &fns->v, &fns->n);
	if (r == 0 && fns->n == 0)
		r = -ENOENT;
	elf_close(ef);
	if (r < 0) {
		*ret_error = str_fmt("%s: cannot find criterion's batch functions "
				     "(criterion::bencher::Bencher<M>::iter): %s",
				     first->object, what ? what : strerror(-r));
		if (fns)
			criterion_fns_free(fns->v, fns->n);
		free(fns);
		return r;
	}
	*ret = fns;
	return 0;
}

static void free_fns(void *data)
{
	struct fns *fns = data;

	criterion_fns_free(fns->v, fns->n);
	free(fns);
}

const struct own_cell criterion_callgrind_cell = {
	.tag = "criterion",
	.valgrind = true,
	.prepare = find_fns,
	.release = free_fns,
	.one = callgrind_one,
};
