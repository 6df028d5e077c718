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
#define MAX_DUMPS 64

/* A call's profile: the one dumped when it returned (the one dumped when
 * it began holds what ran between two calls). */
static int call_dump(const char *trigger)
{
	return strncmp(trigger, "--dump-after=", 13) ? -1 : 0;
}

static int callgrind_one(const struct own_run *run, const struct bench_spec *s,
			 struct bench_result *res)
{
	const struct criterion_followed *fns = run->data;
	char **argv = NULL, **env = NULL, *filter = criterion_filter_regex(s->name);
	char home[PATH_MAX + 16];
	const char *post[] = { "--profile-time", "1", filter, NULL };
	struct valgrind_dump v[MAX_DUMPS];
	uint64_t counts[MAX_DUMPS], iters[MAX_DUMPS];
	size_t na = 0, n = 0;
	bool setup = false;
	double per;
	int r = filter ? criterion_argv(run->t, NULL, post, &argv, &na) : -ENOMEM;

	snprintf(home, sizeof(home), "%s/home", run->dir);
	env = r ? NULL : criterion_env(home, true);
	r = env ? own_callgrind(run,
				&(struct own_valgrind){ .argv = argv,
							.envp = env,
							.fns = (const char *const *)fns->names,
							.nfns = fns->nnames,
							.kind = call_dump,
							.said = own_said_rust },
				res, v, MAX_DUMPS, &n)
		: -ENOMEM;
	if (r <= 0)
		goto out;
	r = 0;
	/* Call k ran 2^k iterations: criterion's warm-up doubles from 1. */
	for (size_t k = 0; k < n; k++) {
		counts[k] = v[k].ir;
		iters[k] = 1ull << k;
	}
	if (n == 0)
		own_fail_unrun(res, s->name, "FILTER", filter);
	else if (n < 2 || own_per_iteration(counts, n, iters, n, 1, &per, &setup) < 0)
		bench_result_fail(res, str_fmt("cannot make a count per iteration of callgrind's "
					       "%zu profiles (one per call of criterion's batch "
					       "function, two at least, their counts growing)",
					       n));
	else
		own_result_ir(res, per, iters[n - 1]);
out:
	free(filter);
	measure_env_free(argv);
	measure_env_free(env);
	return r;
}

const struct own_cell criterion_callgrind_cell = { CRITERION_CELL, .valgrind = true,
						   .one = callgrind_one };
