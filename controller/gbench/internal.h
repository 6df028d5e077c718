/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_GBENCH_INTERNAL_H
#define BENCHTRAP_GBENCH_INTERNAL_H

/*
 * What run.c, callgrind.c and memory.c share to run one instance of a
 * Google Benchmark binary; not the module's interface (gbench.h is).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/trace.h"
#include "gbench/gbench.h"

/* Batches one callgrind or memory run of an instance may have. */
#define GBENCH_MAX_BATCHES 64

/* measure_env_push: append s (malloc'ed; NULL: out of memory) to *v of *n. */
int gbench_push(char ***v, size_t *n, char *s);
/* A string formatted as by printf (malloc'ed), or NULL. */
char *gbench_fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
/* The signal's abbreviation ("SEGV"), or "?". */
const char *gbench_sig_name(int sig);
/* The whole of file 'path' (malloc'ed, NUL-terminated), or NULL. */
char *gbench_read_file(const char *path, size_t *ret_len);
/* The last 'max' non-empty lines of file 'path', each after "\n  ", or NULL. */
char *gbench_tail_lines(const char *path, size_t max);
/* Wait for an untraced process until 'deadline' (CLOCK_MONOTONIC ns), then kill it. */
int gbench_wait_plain(pid_t pid, uint64_t deadline, int *ret_status, bool *ret_killed);
/* Whether a signal the child gets is a crash of its own. */
bool gbench_fatal_signal(int sig);
/* res failed, its error the failure with its backtrace. */
void gbench_failure_text(struct bench_result *res, const struct trace_failure *f);
/* res failed, its error msg (taken; NULL: "failed"). */
void gbench_fail(struct bench_result *res, char *msg);
/* res failed for a child still running at its deadline, with where it was. */
void gbench_timed_out(struct trace_proc *p, uint64_t timeout_ns, struct trace_failure *f,
		      struct bench_result *res);
/* The arguments every instance is run with (callgrind: as valgrind's program). */
int gbench_instance_argv(const struct measure_target *t, const struct bench_spec *s,
			 const struct measure_plan *plan, bool callgrind, const char *dir,
			 char ***argv, size_t *na);
/* Read DIR/out.json into *runs, *nruns; res failed when there is none to read. */
int gbench_read_results(const char *dir, const struct bench_spec *s, struct gbench_run **runs,
			size_t *nruns, struct bench_result *res);

/*
 * The function of instance s (its demangled name, malloc'ed, and link-time
 * address): s->symbol when set, else by the binary's symbols
 * (gbench_lookup), else the one a run of s enters first (entered.c), with
 * *ret_note saying so. *ret_function NULL and *ret_why (malloc'ed) when
 * none can be told. 0, or -ENOMEM.
 */
int gbench_spec_function(const struct measure_target *t, const struct bench_spec *s,
			 const struct measure_plan *plan, const char *dir, int input, int devnull,
			 char **ret_function, uint64_t *ret_addr, char **ret_note, char **ret_why);
/* The function a fresh traced run of instance s enters first of those of
 * its binary gbench_batch_candidate() allows: *ret_function (malloc'ed)
 * and *ret_addr, or *ret_function untouched and *ret_why. 0, or -ENOMEM. */
int gbench_entered(const struct measure_target *t, const struct bench_spec *s,
		   const struct measure_plan *plan, const char *dir, int input, int devnull,
		   char **ret_function, uint64_t *ret_addr, char **ret_why);

/* One instance under valgrind's callgrind: res filled; 0, or a negative errno. */
int gbench_callgrind_one(const struct measure_target *t, const char *valgrind,
			 const struct bench_spec *s, const struct measure_plan *plan,
			 const char *dir, int input, int devnull, struct bench_result *res);
/* One instance traced, its allocations counted: res filled; 0, or a negative errno. */
int gbench_memory_one(const struct measure_target *t, const struct bench_spec *s,
		      const struct measure_plan *plan, const char *dir, int input, int devnull,
		      struct bench_result *res);

#endif
