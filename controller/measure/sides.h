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
	const struct bracket_fn *fns; /* what was timed: fns[calls[i].fn], of nfns */
	size_t nfns;
	double counter; /* out: this process's figure of k->counter */
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
	 * "\n  LINE", or NULL; the hook NULL: its last three lines. */
	char *(*said)(const char *stderr_path);
	/* Optional: when fns[0..n) cannot be timed (bracket_start: -ENOTSUP,
	 * saying why), the functions to time instead, said in res: *ret
	 * (malloc'ed) and *ret_n; 0 with *ret NULL when none; -ENOMEM. */
	int (*fallback)(void *ctx, const struct bracket_fn *fns, size_t n, const char *why,
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
	uint64_t sample_ns;    /* a sample's length, for how many: 0, the plan's */
	size_t pair_skip;      /* the first this many pairs of a process left out
				  (when it has more than twice as many) */
	bool discard_stdout;   /* quiet: its stdout to /dev/null, not DIR/stderr */

	/* Optional: the calls that end one batch of instance s, one per
	 * thread; NULL: one. Paired, one on several threads is not pinned to
	 * one CPU, where its threads would take turns. */
	unsigned (*threads)(const struct bench_spec *s);
	/* Optional: before each process of a side starts. 0 or -ENOMEM. */
	int (*start)(const struct own_run *run, void *ctx);
	/* Optional: after each batch of a process, b its calls so far: 1
	 * once its batches are alike from here on, 0 not yet, -ENOMEM. NULL:
	 * alike from the first. Paired, a side whose batches still change
	 * runs alone until they do not, so that the pairs are of alike. */
	int (*batch)(void *ctx, const struct own_batches *b);
	/* Optional, paired: whether head's batches can be given base's
	 * iteration count (both processes started), and giving it to head
	 * once base's batches are alike; base runs alone until then. */
	bool (*can_lead)(void *const ctx[2], const struct own_batches *const b[2]);
	void (*lead)(void *const ctx[2], struct bracket_run *head);
	/* Optional: res filled from what the kind read of its processes
	 * (ctx), before its samples v[0..n) (NULL: none) are taken. 0 or
	 * -ENOMEM. A process that exited well and gave no samples (k->samples
	 * left res ok) gives the side none at all. */
	int (*finish)(const struct bench_spec *s, void *ctx, struct bench_result *res,
		      const double *v, size_t n);
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
		     const size_t nfns[2], void *const ctx[2], struct bench_result *const res[2]);

/* A process's samples v[0..n) (taken, freed) appended to a pair's *all of
 * *nall. 0 or -ENOMEM (v freed too). */
int own_samples_append(double **all, size_t *nall, double *v, size_t n);

#endif
