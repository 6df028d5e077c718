/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_DIVAN_H
#define BENCHTRAP_DIVAN_H

/*
 * Rust divan suites, unmodified (docs/divan.md). A binary built with the
 * divan crate is recognized by divan's sample barrier,
 * divan::benchmark::BenchContext::sample_recorder::...::sync_impl, an
 * #[inline(never)] function called as sync_impl(barrier, true) just before
 * a sample's loop and sync_impl(barrier, false) just after it, on every
 * thread of the sample. Its benchmarks are the paths divan lists
 * ("crate::module::fn", "crate::fn::ARG"), one instance per thread count
 * of a `threads = [...]` benchmark ("crate::fn/threads:2"); each runs
 * alone in a fresh process, selected with --exact, its samples of a fixed
 * size (--sample-size) bounded by benchtrap at sync_impl (BRACKET_TOGGLE).
 * The parsing below is pure, for the unit tests.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "measure/own.h"

struct elf_file;
struct suite_ctx;

/* The sample barrier's symbol in 'ef': its link-time address and size,
 * and valgrind's name for it (malloc'ed, the legacy hash cut); false
 * when 'ef' has none (not a divan binary). */
bool divan_sync_fn(const struct elf_file *ef, uint64_t *ret_addr, uint64_t *ret_size,
		   char **ret_name);
bool divan_detect(struct elf_file *ef);

/* The paths --list --format terse printed in text[0..len) ("PATH:
 * benchmark" lines): *ret_names (NULL-terminated, str_free_n) and *ret_n;
 * -EINVAL for a path with a control character, -ENOMEM. */
int divan_parse_terse(const char *text, size_t len, char ***ret_names, size_t *ret_n);

/* The thread counts of one benchmark's --test tree in text[0..len): its
 * rows "t=N" (none when it runs on one count alone), into ret[0..max).
 * Returns how many. */
size_t divan_thread_counts(const char *text, size_t len, unsigned *ret, size_t max);

/* Instance 'name': its divan path (malloc'ed) and thread count (0: as the
 * benchmark says; N for "PATH/threads:N"). NULL: out of memory. */
char *divan_instance_path(const char *name, unsigned *ret_threads);

/*
 * The row of one benchmark in divan's table (text[0..len), its --bench
 * output): its median time per iteration in ns, its samples and its
 * iterations (the last two columns). -EINVAL when there is no such row.
 */
int divan_parse_row(const char *text, size_t len, double *ret_median_ns, uint64_t *ret_samples,
		    uint64_t *ret_iters);

/* The arguments after '--' that would change what benchtrap selects or
 * reads (NULL-terminated). */
extern const char *const divan_reserved[];
extern const char *const divan_valued[];

int divan_list(const struct suite_ctx *c, char ***ret_names, size_t *ret_n, char **ret_error);
int divan_spec(const struct suite_ctx *c, const char *name, struct bench_spec *ret);

extern const struct own_cell divan_walltime_cell;
extern const struct own_cell divan_callgrind_cell;
extern const struct own_cell divan_memory_cell;

#endif
