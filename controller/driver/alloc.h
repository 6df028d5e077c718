/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_DRIVER_ALLOC_H
#define BENCHTRAP_DRIVER_ALLOC_H

/* The memory driver's allocator wrappers (alloc.c). */

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
/* Stop counting; what was counted in *out. */
void alloc_stop(struct memacct *out);

#endif
