/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_CRITERION_INTERNAL_H
#define BENCHTRAP_CRITERION_INTERNAL_H

/*
 * What run.c, walltime.c and counted.c share to run one benchmark of a
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
 * What a run of one benchmark is followed at, found once for every
 * benchmark of a run (own_cell's find, run->data): b[0..n) every batch
 * function, then, where criterion's clock is among the symbols,
 * Instant::now (RESUME) and Instant::elapsed (PAUSE), the batch functions
 * timed by it (measure/bracket.h); names[0..nnames) the batch functions'
 * names as valgrind gives them.
 */
struct criterion_followed {
	struct bracket_fn *b;
	size_t n;
	char **names;
	size_t nnames;
};
int criterion_find(const struct elf_file *ef, const char *object, void **ret);
void criterion_followed_free(void *data);
/* Every cell of the row starts so. */
#define CRITERION_CELL                                                                       \
	.tag = "criterion", .find = criterion_find, .release = criterion_followed_free,      \
	.sought = "criterion's batch functions (criterion::bencher::Bencher<M>::iter)"

#endif
