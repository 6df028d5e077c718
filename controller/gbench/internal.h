/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_GBENCH_INTERNAL_H
#define BENCHTRAP_GBENCH_INTERNAL_H

/*
 * What the files of the module share to run one instance of a
 * Google Benchmark binary; not the module's interface (gbench.h is).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/trace.h"
#include "measure/bracket.h"
#include "measure/own.h"
#include "gbench/gbench.h"

/* Batches one callgrind or memory run of an instance may have. */
#define GBENCH_MAX_BATCHES 64

/* The arguments every instance is run with (callgrind: as valgrind's
 * program), instance.c. */
int gbench_instance_argv(const struct measure_target *t, const struct bench_spec *s,
			 const struct measure_plan *plan, bool callgrind, const char *dir,
			 char ***argv, size_t *na);
/* Read DIR/out.json into *runs, *nruns; res failed when there is none to read. */
int gbench_read_results(const char *dir, const struct bench_spec *s, struct gbench_run **runs,
			size_t *nruns, struct bench_result *res);

/*
 * The function of instance s: s->symbol when set, else by the binary's
 * symbols (gbench_lookup), else the one a run of s enters first
 * (gbench_entered), said in res's diagnostics. 1 with *found a copy of *s
 * with that function's demangled name (found->symbol, malloc'ed: to free)
 * and link_addr; 0 when none can be told, res failed saying why and that
 * 'instrument' ("callgrind") counts inside that function only (NULL: res
 * left as it was, for the caller to do without); -ENOMEM.
 */
int gbench_spec_resolve(const struct own_run *run, const struct bench_spec *s,
			const char *instrument, struct bench_result *res, struct bench_spec *found);
/* Instance s spawned traced (its arguments as under callgrind, stdout
 * 'out') and run to main, as own_start_traced. */
int gbench_start_traced(const struct own_run *run, const struct bench_spec *s, int out,
			struct trace_proc **ret, uint64_t *ret_bias, pid_t *ret_pid, char **ret_why);
/* The function a fresh traced run of instance s enters first of those of
 * its binary gbench_batch_candidate() allows: *ret_function (malloc'ed)
 * and *ret_addr, or *ret_function untouched and *ret_why. 0, or -ENOMEM. */
int gbench_entered(const struct own_run *run, const struct bench_spec *s, char **ret_function,
		   uint64_t *ret_addr, char **ret_why);

/* One instance under valgrind's callgrind: res filled; 0, or a negative errno. */
int gbench_callgrind_one(const struct own_run *run, const struct bench_spec *s,
			 struct bench_result *res);
/* One instance traced, its allocations counted: res filled; 0, or a negative errno. */
int gbench_memory_one(const struct own_run *run, const struct bench_spec *s,
		      struct bench_result *res);

/*
 * Walltime timed by benchtrap around each batch (bracket.c): the length a
 * repetition aims at, so that --time holds time/GBENCH_BATCH_NS of them
 * (docs/gbench.md says why this length).
 */
#define GBENCH_BATCH_NS 1000000
/* A paired compare's repetitions run in up to this many pairs of
 * processes, at least this many repetitions in each (gbench/bracket.c). */
#define GBENCH_PAIR_PROCESSES 6
#define GBENCH_PAIR_REPS 25
/* Said when an instance's function is not known and Google Benchmark's own
 * timing is read instead. */
#define GBENCH_NO_FUNCTION                                                                    \
	"its function was not found in the binary: the figures are Google Benchmark's own "  \
	"timing, one sample per repetition, and a paired comparison alternates whole "       \
	"processes"
/*
 * The functions of benchmark::State that start and stop Google Benchmark's
 * own clock, in the binary (a static library) or a library it loads, with
 * their roles (measure/bracket.h): ret->fns[0..n). -ENOENT when the
 * library's loop functions are not among the symbols.
 */
#define GBENCH_CLOCK_FNS 4
struct gbench_clock_fn {
	const char *name; /* its symbol */
	enum bracket_role role;
	bool needed; /* without it the loop cannot be timed */
};
extern const struct gbench_clock_fn gbench_clock_fns[GBENCH_CLOCK_FNS];
/*
 * ... and, where its symbol is found, benchmark::State's constructor, whose
 * argument sized (the iteration count a batch runs) is rewritten to make
 * two builds' batches alike (BRACKET_SIZE): its fns[] entry is size,
 * or NULL. gbench_clock_find() fails only for the loop functions.
 */
struct gbench_clock {
	struct bracket_fn fns[GBENCH_CLOCK_FNS + 1];
	char *paths[GBENCH_CLOCK_FNS + 1];
	size_t n;
	const struct bracket_fn *size;
};
int gbench_clock_find(const char *binary, struct gbench_clock *ret);
/* Which integer argument of the demangled constructor 'ctor' is the
 * iteration count (the first IterationCount, a 64-bit integer, 'this'
 * being 0), or -1: none in the first six. */
int gbench_count_arg(const char *ctor);
void gbench_clock_free(struct gbench_clock *c);
/* One instance in a fresh child, timed by its own loop (or its function
 * bracketed where the loop cannot be), on the engine's sides
 * (measure/sides.h): res filled. */
int gbench_bracket_one(const struct own_run *run, const struct bench_spec *spec,
		       struct bench_result *res);
/* An instance of base (0) and of head (1), their children alternating
 * batch by batch: res[] filled, res[1]'s pair ratios from aligned final
 * batches. */
int gbench_bracket_paired(const struct own_run *const run[2], const struct bench_spec *const spec[2],
			  struct bench_result *const res[2]);

#endif
