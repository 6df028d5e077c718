/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_MEASURE_OWN_H
#define BENCHTRAP_MEASURE_OWN_H

/*
 * What every kind of suite that runs its own main (a Google Benchmark
 * binary, a Rust bench) shares before a benchmark is
 * measured: the suite asked for its list by running it, as a plain child
 * in a group of its own, with a deadline, its stdout kept and its failure
 * put in one line. A kind gives the command line, the environment and how
 * to find what the program said when it refused.
 */

#include <stddef.h>
#include <stdint.h>

struct measure_target;

struct own_list {
	const struct measure_target *t; /* binary, aslr */
	char *const *argv;		/* the whole command line that lists */
	char *const *envp;		/* its environment; NULL: benchtrap's own */
	const char *dir;		/* a temporary directory for its output */
	const char *asked;		/* the option that lists, as said in errors:
					   "--benchmark_list_tests=true" */
	const char *noun;		/* what a listed line names: "benchmark name" */
	uint64_t timeout_ns;
	/* What the program said when it exited with a failure, as "\n  LINE"
	 * (str_tail_lines' form; only the first line is said), or NULL;
	 * the hook NULL: the last line of its stderr. */
	char *(*said)(const char *stderr_path, const char *stdout_path);
	/* Its stdout made into names; -EINVAL for a name with a control
	 * character. */
	int (*parse)(const char *text, size_t len, char ***ret_names, size_t *ret_n);
};

/*
 * Run q's command line and parse what it printed. Returns 0 with the names
 * (*ret_names of *ret_n, free each and the array), or -errno with
 * *ret_error (free it) saying in one line what happened: the program could
 * not be executed, died, exited with a failure (and what it said), did not
 * end within the timeout, or listed a name benchtrap cannot take.
 */
int own_list_run(const struct own_list *q, char ***ret_names, size_t *ret_n, char **ret_error);

#endif
