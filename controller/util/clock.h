/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_UTIL_CLOCK_H
#define BENCHTRAP_UTIL_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC now, in nanoseconds: the one clock the controller times
 * with (deadlines, observed calls, sample windows). */
int64_t clock_now_ns(void);

#endif
