/* SPDX-License-Identifier: MIT */
/*
 * Running a criterion binary: its list, and what every run of one of its
 * benchmarks shares (the arguments, a CRITERION_HOME of its own, a plain
 * child's end). walltime.c and counted.c measure one benchmark.
 *
 * Every child gets CRITERION_HOME in a temporary directory of benchtrap's:
 * criterion writes its reports under it (target/criterion in the current
 * directory otherwise), and benchtrap writes nowhere it did not create.
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

#include "measure/driver-env.h"
#include "util/launch.h"
#include "util/strutil.h"
#include "measure/failure.h"
#include "measure/own.h"
#include "criterion/internal.h"

/* The list is asked without the target arguments: none of criterion's
 * options changes which benchmarks a binary has, and one that cannot go
 * with --list (a reserved one, said by the command line once the list is
 * read) would fail it. */
static const char *const list_post[] = { "--list", NULL };

const char *const criterion_reserved[] = {
	"--bench",
	"--test",
	"--list",
	"--profile-time",
	"--save-baseline",
	"-s",
	"--baseline",
	"-b",
	"--load-baseline",
	"--output-format",
	"--plotting-backend",
	"--noplot",
	"-n",
	NULL,
};

/* criterion 0.3's options that take a value (its configure_from_args). */
const char *const criterion_valued[] = {
	"--color",	      "--colour",	   "-c",		   "--save-baseline",	 "-s",
	"--baseline",	      "-b",		   "--load-baseline",	 "--sample-size",
	"--warm-up-time",     "--measurement-time", "--nresamples",	 "--noise-threshold",
	"--confidence-level", "--significance-level", "--profile-time", "--output-format",
	"--plotting-backend", NULL,
};

char **criterion_env(const char *home, bool clean)
{
	char *set = str_fmt("CRITERION_HOME=%s", home);
	char **env = set ? measure_env_with(set, clean) : NULL;

	free(set);
	return env;
}

int criterion_argv(const struct measure_target *t, const char *const *pre, const char *const *post,
		   char ***argv, size_t *na)
{
	int r = 0;

	r |= measure_env_push(argv, na, strdup(t->argv[0]));
	r |= measure_env_push(argv, na, strdup("--bench"));
	for (size_t i = 0; pre && pre[i]; i++)
		r |= measure_env_push(argv, na, strdup(pre[i]));
	for (size_t i = 1; post != list_post && t->argv[i]; i++)
		r |= measure_env_push(argv, na, strdup(t->argv[i]));
	/* No gnuplot started, no plot drawn. */
	r |= measure_env_push(argv, na, strdup("--noplot"));
	r |= measure_env_push(argv, na, strdup("--plotting-backend"));
	r |= measure_env_push(argv, na, strdup("plotters"));
	for (size_t i = 0; post && post[i]; i++)
		r |= measure_env_push(argv, na, strdup(post[i]));
	return r ? -ENOMEM : 0;
}

/* ---- the list ------------------------------------------------------------ */

/* What criterion said when it refused: its own error line, else stdout's last. */
static char *list_said(const char *errpath, const char *outpath)
{
	char *said = own_said_rust(errpath);

	return said ? said : str_tail_lines(outpath, 1);
}

static int list_argv(const struct suite_ctx *c, const char *dir, char ***argv, char ***envp)
{
	size_t na = 0;
	int r = criterion_argv(c->t, NULL, list_post, argv, &na);

	*envp = r ? NULL : criterion_env(dir, c->t->clean_env);
	return *envp ? 0 : -ENOMEM;
}

int criterion_list(const struct suite_ctx *c, char ***ret_names, size_t *ret_n, char **ret_error)
{
	static const struct own_lister l = { .tag = "criterion",
					     .asked = "--bench --list",
					     .noun = "benchmark id",
					     .argv = list_argv,
					     .said = list_said,
					     .parse = criterion_parse_list };

	return own_list(&l, c, ret_names, ret_n, ret_error);
}
