/* SPDX-License-Identifier: MIT */
/*
 * A criterion benchmark under the memory instrument (criterion.h says how
 * it measures):
 *
 *   BINARY --bench ... --profile-time 1 '^ID$'   traced (measure/allocs.h)
 *     └─ criterion's warm-up alone: each batch function called with 1, 2,
 *        4, ... iterations; what its thread allocates while criterion's
 *        clock runs (Instant::now's return to Instant::elapsed's entry)
 *        counted per call
 *
 * Per iteration: the slope between the last two calls, as under callgrind
 * (own_per_iteration); with the clock, what a call does around
 * its loop is out, and the slope is each call's count over its iterations.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/allocs.h"
#include "measure/bracket.h"
#include "measure/driver-env.h"
#include "measure/failure.h"
#include "trace/trace.h"
#include "util/launch.h"
#include "util/strutil.h"
#include "criterion/internal.h"

static int memory_one(const struct own_run *run, const struct bench_spec *s,
		      struct bench_result *res)
{
	const struct criterion_followed *fol = run->data;
	char **argv = NULL, **env = NULL, *filter = criterion_filter_regex(s->name);
	char home[PATH_MAX + 16];
	const char *post[] = { "--profile-time", "1", filter, NULL };
	struct alloc_fn *fns = calloc(fol->n + 1, sizeof(*fns));
	struct alloc_counts *calls = NULL;
	uint64_t iters[64];
	size_t na = 0, n = 0;
	bool setup = false;
	int r;

	snprintf(home, sizeof(home), "%s/home", run->dir);
	r = filter && fns ? criterion_argv(run->t, NULL, post, &argv, &na) : -ENOMEM;
	env = r ? NULL : criterion_env(home, run->t->clean_env);
	for (size_t i = 0; fns && i < fol->n; i++)
		fns[i] = (struct alloc_fn){ fol->b[i].link_addr, fol->b[i].role };
	r = env ? own_alloc_child(run, argv, env, fns, fol->n, own_said_rust, res, &calls, &n)
		: -ENOMEM;
	if (r <= 0)
		goto out;
	/* Call k ran 2^k iterations: criterion's warm-up doubles from 1. */
	for (size_t k = 0; k < n && k < 64; k++)
		iters[k] = 1ull << k;
	r = n >= 2 && n <= 64 ? own_result_allocs(res, calls, n, iters, n, 1, &setup) : -EINVAL;
	if (r < 0 && r != -ENOMEM) {
		if (n == 0)
			own_fail_unrun(res, s->name, "FILTER", filter);
		else
			bench_result_fail(res, str_fmt("cannot make a count per iteration of the "
						       "%zu calls of criterion's batch function "
						       "(two at least, their counts growing)",
						       n));
		r = 0;
	} else if (r == 0 && (fol->n < 2 || fol->b[fol->n - 1].role != BRACKET_PAUSE)) {
		r = bench_result_diagnose(res, "criterion's clock (std::time::Instant) is not "
					       "among the symbols: what a batch does around its "
					       "loop is counted, and cancels in the slope");
	}
out:
	free(calls);
	free(fns);
	free(filter);
	measure_env_free(argv);
	measure_env_free(env);
	return r;
}

const struct own_cell criterion_memory_cell = { CRITERION_CELL, .one = memory_one };
