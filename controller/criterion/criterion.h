/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_CRITERION_H
#define BENCHTRAP_CRITERION_H

/*
 * Rust criterion suites, unmodified (docs/criterion.md). A binary built
 * with the criterion crate (0.3) is recognized by its symbols; its
 * benchmarks are what the binary lists (--bench --list: "ID: bench"
 * lines), under the ids it gives them ("fib/20", "group/chase"); each is
 * run alone in a fresh process of the binary, selected by an anchored
 * FILTER (criterion's filter is a regex).
 *
 * The function that runs one batch is criterion's own: every instance of
 * criterion::bencher::Bencher<M>::iter (and iter_custom, iter_batched,
 * iter_batched_ref), #[inline(never)] generic functions each call of which
 * runs the routine b.iters times. A process that runs one benchmark calls
 * only that benchmark's instances.
 *
 *   callgrind  the binary under valgrind with --profile-time 1: warm-up
 *              only, batches of 1, 2, 4, ... iterations; counted inside
 *              the iter instances alone (--toggle-collect), a profile per
 *              call (--dump-after); instructions per iteration are the
 *              slope between the last two calls
 *   memory     the binary traced with --profile-time 1 (the batches as
 *              under callgrind), stopped at the iter instances, criterion's
 *              clock and the C allocators (measure/allocs.h): what each
 *              call allocates while the clock runs; per iteration the
 *              slope between the last two calls
 *   walltime   each call of an iter instance bounded by benchtrap's clock
 *              in the child (measure/bracket.h); the iteration count of
 *              each call from criterion's own sample.json (the measured
 *              samples are the last calls, warm-up before them); a
 *              sample is a call's time over its iterations, the figure
 *              their median, the least-squares slope a counter
 *
 * The parsing and arithmetic below are pure, for the unit tests; nothing
 * here prints.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "measure/measure.h"
#include "measure/own.h"

struct elf_file;
struct suite_ctx;

/* ---- recognizing a binary, its batch functions (detect.c) ---------------- */

/* true when 'ef' has an instance of criterion::bencher::Bencher<M>::iter*
 * (legacy or v0 mangling). */
bool criterion_detect(struct elf_file *ef);

/* One batch function: an instance of Bencher<M>::iter*. */
struct criterion_fn {
	uint64_t link_addr;
	char *name; /* its demangled name without the legacy hash, as valgrind
		       names it: "criterion::bencher::Bencher<M>::iter" */
};

/*
 * The batch functions of 'ef' (every instance, in symbol order; the names
 * of instances of one function repeat): *ret (criterion_fns_free) and
 * *ret_n, 0 when there is none. 0 or -ENOMEM.
 */
int criterion_batch_fns(const struct elf_file *ef, struct criterion_fn **ret, size_t *ret_n);
void criterion_fns_free(struct criterion_fn *v, size_t n);

/*
 * The clock criterion's WallTime reads around a batch's loop, inside the
 * batch function: std::time::Instant::now, whose return starts it, and
 * Instant::elapsed, whose entry stops it (measure/bracket.h's RESUME and
 * PAUSE). 0 with both filled, -ENOENT when either is not among the symbols.
 */
struct criterion_clock {
	uint64_t now, elapsed;		 /* link-time addresses */
	uint64_t now_size, elapsed_size; /* their code's sizes */
};
int criterion_clock_fns(const struct elf_file *ef, struct criterion_clock *ret);

/* Whether a demangled name is one of Bencher's batch functions (the
 * function itself, not a closure inside it): "criterion::bencher::
 * Bencher<M>::iter" (legacy, its "::h<hash>" after it or not) or
 * "<criterion::bencher::Bencher<...>>::iter_batched::<...>" (v0). */
bool criterion_is_batch_fn(const char *demangled);

/* ---- the binary's own words, and the figures (parse.c) ------------------ */

/*
 * The ids --bench --list printed in text[0..len): each line "ID: bench";
 * other lines (criterion's warnings, blank lines) are skipped. -EINVAL for
 * an id with a control character; -ENOMEM. On success *ret_names
 * (NULL-terminated, str_free_n) and *ret_n.
 */
int criterion_parse_list(const char *text, size_t len, char ***ret_names, size_t *ret_n);

/* "^" + id with every regex metacharacter of Rust's regex crate escaped +
 * "$": a FILTER that selects exactly benchmark 'id' (malloc'ed; NULL: out
 * of memory). */
char *criterion_filter_regex(const char *id);

/*
 * A benchmark's sample.json (CRITERION_HOME/<id>/new/sample.json) in
 * text[0..len): its "iters" and "times" (ns per sample, criterion's own
 * clock), *ret_n of each, both malloc'ed (free both). -EINVAL when it is
 * not such a document (the arrays missing, of unequal lengths, empty, an
 * iteration count not a positive whole number), -ENOMEM.
 */
int criterion_parse_sample(const char *text, size_t len, uint64_t **ret_iters, double **ret_times,
			   size_t *ret_n);

/*
 * The least-squares slope of times over iters (n samples): the time per
 * iteration, what a call costs once in the intercept. When every count is
 * the same (criterion's flat sampling), the total time over the total
 * iterations. -EINVAL when n is 0.
 */
int criterion_slope(const uint64_t *iters, const double *times, size_t n, double *ret);

/* ---- running (run.c, walltime.c, counted.c) ------------------------------ */

/* The ids the binary lists (--bench --list) in a fresh child, with t's
 * target arguments, killed with its process group at the timeout. 0, or a
 * negative errno with *ret_error (to free). */
int criterion_list(const struct suite_ctx *c, char ***ret_names, size_t *ret_n, char **ret_error);

/* Fill *ret for benchmark 'name' of c->ef: the first batch function as its
 * symbol (the process of one benchmark calls only that benchmark's
 * instances). 0 or -ENOMEM. */
int criterion_spec(const struct suite_ctx *c, const char *name, struct bench_spec *ret);

/* The target arguments after "--" that would change what benchtrap selects
 * or reads (NULL-terminated). */
extern const char *const criterion_reserved[];
extern const char *const criterion_valued[];

/* The cells of the row (measure/own.h). */
extern const struct own_cell criterion_callgrind_cell;
extern const struct own_cell criterion_walltime_cell;
extern const struct own_cell criterion_memory_cell;

#endif
