/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_DRIVER_ALLOC_H
#define BENCHTRAP_DRIVER_ALLOC_H

/* The memory driver's allocator wrappers (alloc.c). */

#include <stdbool.h>

#include "memacct.h"

/* Map the table of live blocks (and, with stack_depth, the sites of
 * allocations, keeping that many frames), before anything is counted (in
 * a fork server: before the first fork). 0 or -errno. */
int alloc_prepare(unsigned stack_depth);
/* Say, with 'say', the sites of the counted call i, the most bytes first
 * (driver-protocol.h: site and frame lines). */
void alloc_sites(unsigned i, void (*say)(const char *fmt, ...));
/* The object whose malloc the program calls when it is not the wrappers'
 * (a program or library that defines its own, found before them); NULL
 * when the wrappers see the allocations. */
const char *alloc_foreign(void);
/* Count from now on, from zero. */
void alloc_start(void);
/*
 * The calling thread is thread k of a round (driver-protocol.h): while
 * 'in_call' it is counted, as thread k too; otherwise nothing it does is
 * counted (its warm-up calls, its exit). Every other thread (the one that
 * reached main, the program's own) is counted whenever counting is on.
 */
void alloc_thread(unsigned k, bool in_call);
/* Stop counting; what was counted in *out, and what threads 0..n of the
 * round did in their calls in threads[0..n) (n 0: no round, threads may be
 * NULL). */
void alloc_stop(struct memacct *out, struct memacct_thread *threads, unsigned n);

#endif
