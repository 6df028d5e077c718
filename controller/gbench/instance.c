/* SPDX-License-Identifier: MIT */
/*
 * What every run of one instance of a Google Benchmark binary shares,
 * whatever measures it: its command line (the selection and the JSON
 * output last) and the reading of that output.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gbench/gbench.h"
#include "gbench/internal.h"
#include "measure/driver-env.h"
#include "measure/failure.h"
#include "util/strutil.h"

/* Under callgrind, batches grow until one lasts this long (under
 * valgrind, tens of times slower than natively): two batches at least,
 * whose difference is the figure. */
#define GBENCH_CALLGRIND_MIN_TIME "0.05"

/* The arguments every instance is run with: the binary, benchtrap's
 * defaults the user did not give, the user's, then the selection and the
 * output (last, so that nothing overrides them). */
int gbench_instance_argv(const struct measure_target *t, const struct bench_spec *s,
			 const struct measure_plan *plan, bool callgrind, const char *dir,
			 char ***argv, size_t *na)
{
	char *re = gbench_filter_regex(s->name);
	int r = 0;

	if (!re)
		return -ENOMEM;
	r |= measure_env_push(argv, na, strdup(t->argv[0]));
	if (callgrind) {
		if (!own_has_arg(t->argv, "--benchmark_min_time"))
			r |= measure_env_push(
				argv, na,
				strdup("--benchmark_min_time=" GBENCH_CALLGRIND_MIN_TIME));
	} else {
		size_t reps = plan->min_samples ? plan->min_samples : 1;

		if (!own_has_arg(t->argv, "--benchmark_repetitions"))
			r |= measure_env_push(argv, na,
					      str_fmt("--benchmark_repetitions=%zu", reps));
		if (!own_has_arg(t->argv, "--benchmark_min_time"))
			r |= measure_env_push(argv, na,
					      str_fmt("--benchmark_min_time=%g",
						      (double)plan->time_ns / 1e9 / (double)reps));
	}
	for (size_t i = 1; t->argv[i]; i++)
		r |= measure_env_push(argv, na, strdup(t->argv[i]));
	if (callgrind) {
		/* One batch sequence, its counts in the log. */
		r |= measure_env_push(argv, na, strdup("--benchmark_repetitions=1"));
		r |= measure_env_push(argv, na, strdup("--v=2"));
	}
	r |= measure_env_push(argv, na, str_fmt("--benchmark_filter=%s", re));
	r |= measure_env_push(argv, na, str_fmt("--benchmark_out=%s/out.json", dir));
	r |= measure_env_push(argv, na, strdup("--benchmark_out_format=json"));
	free(re);
	return r ? -ENOMEM : 0;
}

/* Read DIR/out.json into res (walltime). */
int gbench_read_results(const char *dir, const struct bench_spec *s, struct gbench_run **runs,
			size_t *nruns, struct bench_result *res)
{
	char path[PATH_MAX + 16], *text, *err = NULL;
	size_t len = 0;
	int r;

	snprintf(path, sizeof(path), "%s/out.json", dir);
	text = str_read_file(path, &len);
	if (!text) {
		bench_result_fail(res, strdup("the binary wrote no JSON output (--benchmark_out)"));
		return -ENOENT;
	}
	r = gbench_parse_json(text, len, s->name, runs, nruns, &err);
	free(text);
	if (r == -EINVAL) {
		bench_result_fail(
			res, str_fmt("cannot read the binary's JSON output: %s", err ? err : "?"));
		free(err);
		return r;
	}
	if (r == 0 && *nruns == 0) {
		char *re = gbench_filter_regex(s->name);

		own_fail_unrun(res, s->name, "--benchmark_filter", re ? re : "?");
		free(re);
		gbench_runs_free(*runs, 0);
		*runs = NULL;
		return -ENOENT;
	}
	return r;
}
