/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_CRITERION_INTERNAL_H
#define BENCHTRAP_CRITERION_INTERNAL_H

/*
 * What run.c, callgrind.c and walltime.c share to run one benchmark of a
 * criterion binary; not the module's interface (criterion.h is). The
 * plain-child helpers every kind uses are util/strutil.h's (str_fmt,
 * str_tail_lines), util/launch.h's (launch_wait_until) and
 * measure/failure.h's (bench_result_fail).
 */
#include <stdbool.h>
#include <stddef.h>

#include "criterion/criterion.h"

/* The child's environment: the controller's (or, clean, the fixed one of
 * measure_child_env) with CRITERION_HOME=home; NULL: out of memory. */
char **criterion_env(const char *home, bool clean);
/* The binary, "--bench", pre[], the user's target arguments, "--noplot
 * --plotting-backend plotters", then post[] (last: the selection). */
int criterion_argv(const struct measure_target *t, const char *const *pre, const char *const *post,
		   char ***argv, size_t *na);

/*
 * The functions of spec's binary that a run of one benchmark is followed
 * at: every batch function, then, where criterion's clock is among the
 * symbols, Instant::now (RESUME) and Instant::elapsed (PAUSE), the batch
 * functions timed by it (measure/bracket.h). *ret_b (free it) and *ret_n;
 * -errno with *ret_error.
 */
struct bracket_fn;
int criterion_bracket_fns(const struct bench_spec *spec, struct bracket_fn **ret_b, size_t *ret_n,
			  char **ret_error);

/* ... found once for every benchmark of a run: own_cell's prepare and
 * release, run->data a struct criterion_followed. */
struct criterion_followed {
	struct bracket_fn *b;
	size_t n;
};
int criterion_followed_make(const struct own_run *run, const struct bench_spec *first, void **ret,
			    char **ret_error);
void criterion_followed_free(void *data);

#endif
