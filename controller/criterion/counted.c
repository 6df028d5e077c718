/* SPDX-License-Identifier: MIT */
/*
 * A criterion benchmark under the exact instruments (criterion.h says how
 * they measure), both on criterion's warm-up alone:
 *
 *   BINARY --bench ... --profile-time 1 '^ID$'
 *     └─ each batch function called with 1, 2, 4, ... iterations for a
 *        second; no analysis, no file of criterion's written
 *
 *   callgrind  under valgrind --dump-before=ITER --dump-after=ITER, ITER
 *              each of Bencher<M>::iter* by valgrind's name for it (every
 *              instance of one function has the same): a profile when each
 *              call begins and when it ends, the second holding the call's
 *              cost. Not --toggle-collect: callgrind heeds the first of
 *              several (a suite with both iter and iter_batched counted 0
 *              for the other's benchmarks).
 *   memory     traced (measure/allocs.h): what its thread allocates while
 *              criterion's clock runs (Instant::now's return to
 *              Instant::elapsed's entry), counted per call
 *
 * Per iteration: the slope between the last two calls (own_per_iteration),
 * which cancels what a call does once.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/allocs.h"
#include "measure/driver-env.h"
#include "measure/failure.h"
#include "measure/valgrind.h"
#include "util/strutil.h"
#include "criterion/internal.h"

/* Calls one run may have: 2^63 iterations are more than any run. */
#define MAX_CALLS 64

/* Instance s's warm-up alone: its command line and environment, and the
 * FILTER that selects it (to free each). 0 or -ENOMEM. */
static int warmup_argv(const struct own_run *run, const struct bench_spec *s, bool clean,
		       char ***argv, char ***env, char **filter)
{
	char home[PATH_MAX + 16];
	size_t na = 0;
	int r;

	*filter = criterion_filter_regex(s->name);
	r = *filter ? criterion_argv(run->t, NULL,
				     (const char *const[]){ "--profile-time", "1", *filter, NULL },
				     argv, &na)
		    : -ENOMEM;
	snprintf(home, sizeof(home), "%s/home", run->dir);
	*env = r ? NULL : criterion_env(home, clean);
	return *env ? 0 : -ENOMEM;
}

static void no_slope(struct bench_result *res, size_t n)
{
	bench_result_fail(res, str_fmt("cannot make a count per iteration of the %zu calls of "
				       "criterion's batch function (two at least, their counts "
				       "growing)",
				       n));
}

/* The calls' iteration counts: call k ran 2^k (criterion's warm-up doubles
 * from 1); said on res, and false, when there are not two at least. */
static bool doubling(struct bench_result *res, const struct bench_spec *s, const char *filter,
		     size_t n, uint64_t *iters)
{
	for (size_t k = 0; k < n && k < MAX_CALLS; k++)
		iters[k] = 1ull << k;
	if (n == 0)
		own_fail_unrun(res, s->name, "FILTER", filter);
	else if (n < 2 || n > MAX_CALLS)
		no_slope(res, n);
	return n >= 2 && n <= MAX_CALLS;
}

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
	char **argv = NULL, **env = NULL, *filter = NULL;
	struct valgrind_dump v[MAX_CALLS];
	uint64_t counts[MAX_CALLS], iters[MAX_CALLS];
	size_t n = 0;
	bool setup = false;
	double per;
	int r = warmup_argv(run, s, true, &argv, &env, &filter);

	if (r == 0)
		r = own_callgrind(run,
				  &(struct own_valgrind){ .argv = argv,
							  .envp = env,
							  .fns = (const char *const *)fns->names,
							  .nfns = fns->nnames,
							  .kind = call_dump,
							  .said = own_said_rust },
				  res, v, MAX_CALLS, &n);
	for (size_t k = 0; r == 1 && k < n; k++)
		counts[k] = v[k].ir;
	if (r == 1 && doubling(res, s, filter, n, iters)) {
		if (own_per_iteration(counts, n, iters, n, 1, &per, &setup) == 0)
			own_result_ir(res, per, iters[n - 1]);
		else
			no_slope(res, n);
	}
	free(filter);
	measure_env_free(argv);
	measure_env_free(env);
	return r < 0 ? r : 0;
}

static int memory_one(const struct own_run *run, const struct bench_spec *s,
		      struct bench_result *res)
{
	const struct criterion_followed *fol = run->data;
	char **argv = NULL, **env = NULL, *filter = NULL;
	struct alloc_fn *fns = calloc(fol->n + 1, sizeof(*fns));
	struct alloc_counts *calls = NULL;
	uint64_t iters[MAX_CALLS];
	size_t n = 0;
	bool setup = false;
	int r = fns ? warmup_argv(run, s, run->t->clean_env, &argv, &env, &filter) : -ENOMEM;

	for (size_t i = 0; fns && i < fol->n; i++)
		fns[i] = (struct alloc_fn){ fol->b[i].link_addr, fol->b[i].role };
	if (r == 0)
		r = own_alloc_child(run, argv, env, fns, fol->n, own_said_rust, res, &calls, &n);
	if (r == 1 && doubling(res, s, filter, n, iters)) {
		r = own_result_allocs(res, calls, n, iters, n, 1, &setup);
		if (r < 0 && r != -ENOMEM) {
			no_slope(res, n);
			r = 0;
		} else if (r == 0 && (fol->n < 2 || fol->b[fol->n - 1].role != BRACKET_PAUSE))
			r = bench_result_diagnose(res, "criterion's clock (std::time::Instant) is "
						       "not among the symbols: what a batch does "
						       "around its loop is counted, and cancels in "
						       "the slope");
	}
	free(calls);
	free(fns);
	free(filter);
	measure_env_free(argv);
	measure_env_free(env);
	return r < 0 ? r : 0;
}

const struct own_cell criterion_callgrind_cell = { CRITERION_CELL, .valgrind = true,
						   .one = callgrind_one };
const struct own_cell criterion_memory_cell = { CRITERION_CELL, .one = memory_one };
