/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_MEASURE_CALLGRIND_H
#define BENCHTRAP_MEASURE_CALLGRIND_H

/*
 * Pieces of the counting instruments that are pure logic, declared for
 * the unit tests: reading callgrind's profile format, building the child's
 * fixed environment, and classifying perf_event_open errors. The
 * instruments themselves are measure_callgrind() and measure_perf() in
 * measure.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "measure/measure.h"

#define CALLGRIND_MAX_EVENTS 16

/*
 * What one callgrind profile (one dump) says about the calls of interest:
 * every call arc whose caller is named 'caller' (NULL: any) and whose
 * callee is named 'callee' (NULL: any). Callgrind writes, inside the block
 * of the calling function,
 *
 *	cfn=<callee>
 *	calls=<count> <target position>
 *	<call-site position> <inclusive cost of those calls, per event>
 *
 * so 'calls' sums the counts and 'inclusive' the costs of the matching
 * arcs. 'totals' is the profile's own total (the "totals:" or "summary:"
 * line) of everything collected.
 */
struct callgrind_profile {
	size_t nevents;
	char events[CALLGRIND_MAX_EVENTS][16]; /* "Ir", "Dr", "D1mr"... */
	uint64_t totals[CALLGRIND_MAX_EVENTS];
	uint64_t inclusive[CALLGRIND_MAX_EVENTS];
	uint64_t calls;
	size_t arcs; /* matching arcs found */
};

/*
 * Parse a profile in callgrind's format (name compression "(id) name" and
 * "(id)" and position compression "+n", "-n", "*" are understood; the
 * format is documented with valgrind: "Callgrind Format Specification").
 * Names compare exactly: a recursive call named "f'2" is not "f".
 * Returns 0, -EINVAL (not a callgrind profile, no "events:" line, more
 * than CALLGRIND_MAX_EVENTS events), -ENOMEM, or -errno of a read error.
 * *ret is written only on success.
 */
int callgrind_parse(FILE *f, const char *caller, const char *callee,
		    struct callgrind_profile *ret);
int callgrind_parse_file(const char *path, const char *caller, const char *callee,
			 struct callgrind_profile *ret);

/* The index of event 'name' in p, or -1. */
int callgrind_event_index(const struct callgrind_profile *p, const char *name);

/*
 * The fixed environment of a child under valgrind, NULL-terminated and
 * malloc'ed (free with callgrind_env_free): PATH, LC_ALL=C, LD_BIND_NOW=1
 * (lazy binding would otherwise fall inside the first call), VALGRIND_LIB
 * when the controller has one, then 'extra' (NULL-terminated, may be
 * NULL). Nothing else of the controller's environment passes, so that the
 * child's stack starts at the same place in every run.
 */
char **callgrind_env(const char *const *extra);
void callgrind_env_free(char **env);

/*
 * The environment entries that tell the driver library what to call:
 * BENCHTRAP_DRIVER=<n>, BENCHTRAP_DRIVER_<i>=<addr> [<arg>]..., and
 * BENCHTRAP_DRIVER_<i>_OBJECT for library functions. Numbers are 16 hex
 * digits so that the environment's size does not depend on them.
 * NULL-terminated, malloc'ed; NULL when out of memory.
 */
char **callgrind_driver_env(const struct bench_spec *const *specs, size_t n);

/* 'prog' found in the controller's PATH (malloc'ed), or NULL. */
char *callgrind_find_program(const char *prog);

/* The driver library: $BENCHTRAP_DRIVER_LIB, else driver/ next to the
 * benchtrap executable (a build tree), else its install path. NULL when
 * none of them is readable. */
char *callgrind_find_driver(void);

/* "measured no execution time" under a counting instrument: fewer
 * instructions per call than this do no more than return (a `ret`, an
 * `endbr64; ret`, a register move and a `ret`). */
#define MEASURE_MIN_INSTRUCTIONS 4.0

/*
 * perf: whether an errno from perf_event_open() for a hardware event means
 * that the machine has no usable counters (no PMU, or a VM that does not
 * expose one: ENOENT, EOPNOTSUPP, ENODEV, EINVAL) rather than a permission
 * problem (EACCES, EPERM: perf_event_paranoid).
 */
enum perf_unavailable {
	PERF_AVAILABLE,
	PERF_NO_PMU,
	PERF_NO_PERMISSION,
	PERF_OTHER,
};
enum perf_unavailable perf_classify_errno(int err);

/* Instructions per call from two counted batches of n calls each: one of
 * the empty function (the loop's own cost) and one of the benchmark.
 * Negative differences (not possible with exact counts) clamp to 0. */
double perf_per_call(uint64_t bench_count, uint64_t empty_count, uint64_t n);

#endif
