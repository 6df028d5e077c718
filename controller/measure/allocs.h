/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_MEASURE_ALLOCS_H
#define BENCHTRAP_MEASURE_ALLOCS_H
/*
 * The memory instrument for a program that runs its own main (allocs.c):
 * the child traced, stopped at the entries of the kind's batch functions,
 * of the framework's clock functions and of the C allocators, each call of
 * a batch function given what its thread allocated inside it. Where the
 * kind's clock functions are given, only what was allocated while the
 * framework's clock ran (from a RESUME's return to a PAUSE's or FINISH's
 * entry, measure/bracket.h's roles): what a benchmark does before its
 * loop is out, as it is out of the framework's timing.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "measure/bracket.h"
#include "measure/own.h"

struct trace_proc;

/* What one call counts: the allocations (malloc, calloc, realloc to a size,
 * memalign, aligned_alloc, posix_memalign; operator new and Rust's
 * allocator through malloc), the frees (free of a block, realloc to size
 * 0) and the bytes asked for; of the blocks it allocated, the most bytes
 * live at once (peak) and those still live when it returned (live). */
struct alloc_counts {
	uint64_t allocations, frees, bytes, peak, live;
};

/* How an allocator's call is counted: ALLOC_SIZE0..2 ask for argument
 * 0..2's bytes, ALLOC_CALLOC for arg0 * arg1, ALLOC_REALLOC for arg1 (0: a
 * free of arg0), ALLOC_FREE frees arg0 (NULL: nothing). */
enum alloc_kind {
	ALLOC_SIZE0,
	ALLOC_SIZE1,
	ALLOC_SIZE2,
	ALLOC_CALLOC,
	ALLOC_REALLOC,
	ALLOC_FREE,
};

/* Count one call of an allocator of 'kind' with arguments args[0..3). */
void alloc_count(struct alloc_counts *c, enum alloc_kind kind, const uint64_t args[3]);

/* A function stopped at, by its address in the child: a batch function
 * (BRACKET_CALL) or one of the framework's clock (BRACKET_RESUME, _PAUSE,
 * _FINISH), or a TOGGLE (its argument 'arg' says: a start, from its
 * return, or a stop, at its entry), whose windows are counted as calls. */
struct alloc_fn {
	uint64_t addr;
	enum bracket_role role;
	unsigned arg;
};

/*
 * Run the traced child p (at main, nothing else stopped at yet) to its end
 * under the memory instrument: fns[0..n) and the allocators found in it
 * stopped at, each returned call of a batch function counted, in the order
 * they returned. Returns 1 with *ret_calls (free it) and *ret_ncalls when
 * the child exited with status 0; 0 with res failed as for any child that
 * died, exited with a failure (its last words from said(stderr_path), or
 * its last lines), did not end by deadline_ns (timeout_ns said) or could
 * not be followed; -ENOMEM.
 */
int alloc_count_run(struct trace_proc *p, const struct alloc_fn *fns, size_t n, uint64_t deadline_ns,
		    uint64_t timeout_ns, const char *stderr_path, char *(*said)(const char *path),
		    struct bench_result *res, struct alloc_counts **ret_calls, size_t *ret_ncalls);

/* Field k (0 bytes, 1 allocations, 2 frees, 3 peak, 4 live) of calls
 * c[0..n) into v[0..n). */
void alloc_counts_field(const struct alloc_counts *c, size_t n, unsigned k, uint64_t *v);

/* ---- one child of a kind that runs its own main (measure/own.h) --------- */

/*
 * The memory instrument's run of one child of run->t with argv and envp
 * (NULL: the controller's): traced to main (own_start_traced), then
 * alloc_count_run with fns[0..n), each
 * given as a link-time address of the binary. 1 with *ret_calls and
 * *ret_n; 0 with res failed; -ENOMEM.
 */
int own_alloc_child(const struct own_run *run, char *const *argv, char *const *envp,
		    const struct alloc_fn *fns, size_t n, char *(*said)(const char *path),
		    struct bench_result *res, struct alloc_counts **ret_calls, size_t *ret_n);

/* res's memory figures from calls[0..n), 'threads' a batch (in order) of
 * iters[0..nb) iterations each per thread: each field's slope
 * (own_per_iteration, its errors too, res untouched), and the most live at
 * once in a call of the last batch, a batch's. 0, or -errno. */
int own_result_allocs(struct bench_result *res, const struct alloc_counts *calls, size_t n,
		      const uint64_t *iters, size_t nb, unsigned threads, bool *ret_with_setup);

#endif
