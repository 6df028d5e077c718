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
 * (criterion_callgrind_slope); with the clock, what a call does around
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

static const char *const counter_names[3] = { "bytes", "allocations", "frees" };

static int memory_one(const struct own_run *run, const struct bench_spec *s,
		      struct bench_result *res)
{
	const struct criterion_followed *fol = run->data;
	const struct measure_target *t = run->t;
	char **argv = NULL, **env = NULL, *filter = criterion_filter_regex(s->name);
	char home[PATH_MAX + 16];
	const char *post[] = { "--profile-time", "1", filter, NULL };
	struct alloc_fn *fns = calloc(fol->n + 1, sizeof(*fns));
	struct alloc_counts *calls = NULL;
	uint64_t *v = NULL;
	size_t na = 0, ncalls = 0;
	double per[3];
	int r;

	snprintf(home, sizeof(home), "%s/home", run->dir);
	r = filter && fns ? criterion_argv(t, NULL, post, &argv, &na) : -ENOMEM;
	env = r ? NULL : criterion_env(home, t->clean_env);
	if (r || !env) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < fol->n; i++)
		fns[i] = (struct alloc_fn){ fol->b[i].link_addr, fol->b[i].role };
	r = own_alloc_child(run, argv, env, fns, fol->n, own_said_rust, res, &calls, &ncalls);
	if (r <= 0)
		goto out;
	r = 0;
	if (ncalls == 0) {
		bench_result_fail(res, str_fmt("the binary ran no benchmark named '%s' (FILTER %s)",
					       s->name, filter));
		goto out;
	}
	v = calloc(ncalls, sizeof(*v));
	if (!v) {
		r = -ENOMEM;
		goto out;
	}
	for (unsigned k = 0; k < 3; k++) {
		alloc_counts_field(calls, ncalls, k, v);
		if (criterion_callgrind_slope(v, ncalls, &per[k]) < 0) {
			bench_result_fail(res, str_fmt("cannot make a count per iteration of the "
						       "%zu calls of criterion's batch function "
						       "(two at least, their counts growing)",
						       ncalls));
			goto out;
		}
	}
	measure_result_count(res, per[0]);
	res->iterations = 1ull << (ncalls - 1);
	res->calls = res->iterations;
	for (unsigned k = 0; k < 3; k++)
		res->counters[k] = (struct measure_counter){ .name = counter_names[k],
							     .value = per[k] };
	/* The most live at once in the longest call: a call's, not an
	 * iteration's (no slope makes it one). */
	res->counters[3] = (struct measure_counter){ .name = "peak_bytes",
						     .value = (double)calls[ncalls - 1].peak };
	res->ncounters = 4;
	if (fol->n < 2 || fol->b[fol->n - 1].role != BRACKET_PAUSE)
		r = bench_result_diagnose(res, "criterion's clock (std::time::Instant) is not "
					       "among the symbols: what a batch does around its "
					       "loop is counted, and cancels in the slope");
out:
	free(v);
	free(calls);
	free(fns);
	free(filter);
	measure_env_free(argv);
	measure_env_free(env);
	return r;
}

const struct own_cell criterion_memory_cell = {
	.tag = "criterion",
	.prepare = criterion_followed_make,
	.release = criterion_followed_free,
	.one = memory_one,
};
