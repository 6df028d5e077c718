/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_MEASURE_PROFILE_H
#define BENCHTRAP_MEASURE_PROFILE_H
/*
 * --profile DIR: where a benchmark spends its time, by call stack, in a
 * pass of its own after it was measured (internal to measure/; docs/run.md,
 * "Profiles"). Each writes DIR/NNN-<name>.folded and DIR/NNN-<name>.svg
 * (NNN the benchmark's index in the run, <name> as
 * report_profile_basename() makes it) and names them in res->profile_folded
 * and res->profile_svg; when no stack could be recorded, res gets a
 * diagnostic saying why. Neither changes anything else of res.
 */
#include <stddef.h>

#include "measure/measure.h"
#include "util/folded.h"

/* Profiling pass parameters of the walltime instrument. */
#define PROFILE_PERIOD_US 1000	     /* between two stack samples */
#define PROFILE_MAX_SAMPLES 2000     /* stacks recorded at most */
#define PROFILE_BUDGET_NS 2000000000 /* the pass's time at most */
#define PROFILE_MAX_FRAMES 128	     /* frames of one stack */

/* walltime: a fresh traced child calls benchmark s in a loop while the
 * controller stops it every PROFILE_PERIOD_US and unwinds the calling
 * thread, keeping the frames from the benchmark's function inward. */
void measure_profile_walltime(const struct measure_target *t, const struct bench_spec *s,
			      const struct measure_plan *plan, const char *dir, size_t index,
			      struct bench_result *res);

/* Write f as DIR/NNN-<name>.folded and .svg (its counts called 'unit')
 * and name them in res; a file that cannot be written is a diagnostic. */
void measure_profile_write(struct folded *f, const char *dir, size_t index, const char *unit,
			   struct bench_result *res);

#endif
