/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_REPORT_PROGRESS_H
#define BENCHTRAP_REPORT_PROGRESS_H

/*
 * The line said on stderr when a benchmark has finished and stderr is not
 * a terminal (a CI log, a file), one per benchmark as they finish
 * (docs/run.md, "Progress"):
 *
 *   [12/1000] fib[20]  8.203 µs ± 0.8%
 *   [13/1000] parse  21,891 instructions
 *   [14/1000] parse_alloc  4.00 KiB allocated
 *   [15/1000] crash  failed: SIGSEGV (Segmentation fault) at address 0x10, pc ...
 *
 * The figure is the result's headline in its unit; "± P%" is half the
 * width of the 95% confidence interval of the median, relative to the
 * median, shown when there are at least five samples and a time was
 * measured. A failed benchmark shows the first line of its error.
 */

#include <stddef.h>
#include <stdint.h>

#include "measure/measure.h"

/*
 * The line of result 'r', the k-th of n to finish, into *ret_line (to
 * free; no newline at its end). 'side' is NULL, or the build it ran in
 * ("base", "head"), said after the name. 0 or -ENOMEM (*ret_line untouched).
 */
int report_progress_line(const struct bench_result *r, size_t k, size_t n, const char *side,
			 char **ret_line);

/*
 * The line observe keeps rewritten on a terminal while it observes
 * (docs/observe.md, "Progress"):
 *
 *   observing: 12,345 calls of 3 functions, 4.2 s
 *   observing: 1 call of 1 function, 12 min 05 s
 *
 * 'calls' returned (or skipped) so far, 'funcs' armed now, 'elapsed_ns'
 * since observing began: tenths of a second below a minute (truncated, so
 * that it never shows a second not yet reached), then minutes and seconds,
 * then hours and minutes. Into buf: 0, or -ENOBUFS when 'size' is too small
 * (buf then untouched); 128 bytes always suffice.
 */
int report_observe_progress(uint64_t calls, size_t funcs, int64_t elapsed_ns, char *buf,
			    size_t size);

#endif
