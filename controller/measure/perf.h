/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_MEASURE_PERF_H
#define BENCHTRAP_MEASURE_PERF_H

/*
 * Pieces of the perf instrument that are pure logic, declared for the unit
 * tests. The instrument itself is measure_perf() in measure.h.
 */

#include <stdint.h>

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
