/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_ARCH_HARNESS_H
#define BENCHTRAP_ARCH_HARNESS_H

/*
 * The timing harness `benchtrap run` writes into a child: machine code
 * that reads the clock, calls a function n times, reads the clock again,
 * and returns (to the trace engine's trap). It is called through
 * trace_call() with six integer arguments:
 *
 *     harness(fn, n, args, clock, out, empty)
 *
 *   fn     the benchmark function
 *   n      iterations, at least 1
 *   args   address of six 64-bit words loaded into the argument registers
 *          before every call (unused ones are harmless)
 *   clock  clock_gettime(clockid, struct timespec *): the vDSO's, or the
 *          harness's own system-call stub at ARCH_HARNESS_SYSCLOCK
 *   out    address of three struct timespec (t0, t1, t2)
 *   empty  a function that returns at once (ARCH_HARNESS_EMPTY)
 *
 * and does, with CLOCK_MONOTONIC:
 *
 *     t0; n times empty(args...); t1; n times fn(args...); t2
 *
 * Both passes run one loop, the same instructions at the same addresses,
 * so (t2 - t1) - (t1 - t0) is n calls of fn less the loop's own cost,
 * measured in the same child, in the same sample, and no trap falls inside
 * either interval.
 */

#include <stddef.h>
#include <stdint.h>

extern const uint8_t arch_harness_code[];
extern const size_t arch_harness_len;
/* Offsets inside arch_harness_code of the entry point (0), of the empty
 * function, and of a clock_gettime that makes the system call. */
extern const size_t arch_harness_empty;
extern const size_t arch_harness_sysclock;
/* The alignment arch_harness_code needs at its start. */
#define ARCH_HARNESS_ALIGN 64

#endif
