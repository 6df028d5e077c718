/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_MEASURE_SIDES_H
#define BENCHTRAP_MEASURE_SIDES_H
/*
 * Walltime for a kind that runs its own main, bracketed (sides.c): one
 * instance in a fresh traced child whose framework's batches are bounded
 * by benchtrap's clock (measure/bracket.h), or, for compare BASE HEAD, a
 * child of each build advanced in turn one batch at a time (base, head;
 * head, base; ...), both on one CPU, in up to a few pairs of processes
 * whose binaries are read into the page cache afresh. A kind gives its
 * child's command line and how a process's batches become samples.
 */
#include <stddef.h>

#include "measure/bracket.h"
#include "measure/own.h"

/* One process's batches, for a kind's samples hook. */
struct own_batches {
	const struct bracket_call *calls; /* calls[0..n), in the order they ended */
	size_t n;
	const struct bracket_fn *fns; /* what was timed: fns[calls[i].fn] */
	double counter;		      /* out: this process's figure of k->counter */
};

struct own_bracketed {
	/* The command line of one process of instance s measuring for 'plan'
	 * (a pair's share of the time when paired): *ret_argv
	 * (measure_env_free). 0 or -ENOMEM. */
	int (*argv)(const struct own_run *run, const struct bench_spec *s,
		    const struct measure_plan *plan, void *ctx, char ***ret_argv);
	/* Optional: the child's environment (measure_env_free), NULL when out
	 * of memory; without it, the controller's (or a clean one). */
	char **(*env)(const struct own_run *run, void *ctx);
	/* What the child said when it exited with a failure (DIR/stderr), as
	 * "\n  LINE", or NULL. */
	char *(*said)(const char *stderr_path);
	/* Optional: when fns[0..n) cannot be timed (bracket_start: -ENOTSUP,
	 * saying why), the functions to time instead, said in res: *ret
	 * (malloc'ed) and *ret_n; 0 with *ret NULL when none; -ENOMEM. */
	int (*fallback)(const struct bracket_fn *fns, size_t n, const char *why,
			struct bench_result *res, struct bracket_fn **ret, size_t *ret_n);
	/* A process's batches b that exited well made into samples, ns per
	 * iteration: *ret (malloc'ed) and *ret_n; 0 with res failed (saying
	 * why) when they cannot be; -ENOMEM. */
	int (*samples)(const struct own_run *run, const struct bench_spec *s, void *ctx,
		       struct own_batches *b, struct bench_result *res, double **ret,
		       size_t *ret_n);
	/* Optional: the name of a counter each process gives one figure of
	 * (b->counter), reported as the median of the processes' figures. */
	const char *counter;
	size_t pair_processes; /* at most this many pairs of processes ... */
	size_t pair_samples;   /* ... with this many samples each at least */
};

/* Instance s of run->t, its batches fns[0..nfns): res filled; ctx is
 * given to k's hooks. 0, or -ENOMEM. */
int own_bracket_one(const struct own_bracketed *k, const struct own_run *run,
		    const struct bench_spec *s, const struct bracket_fn *fns, size_t nfns,
		    void *ctx, struct bench_result *res);

/* Instance s[0] of base (run[0]) against s[1] of head: both filled, head's
 * pair ratios sample j of each build in each pair of processes. 0, or
 * -ENOMEM. */
int own_bracket_pair(const struct own_bracketed *k, const struct own_run *const run[2],
		     const struct bench_spec *const s[2], const struct bracket_fn *const fns[2],
		     const size_t nfns[2], void *ctx, struct bench_result *const res[2]);

/* A process's samples v[0..n) (taken, freed) appended to a pair's *all of
 * *nall. 0 or -ENOMEM (v freed too). */
int own_samples_append(double **all, size_t *nall, double *v, size_t n);

#endif
