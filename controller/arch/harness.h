/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_ARCH_HARNESS_H
#define BENCHTRAP_ARCH_HARNESS_H

/*
 * The timing harness `benchtrap run` writes into a child: machine code
 * that reads the clock, calls one function n times, reads the clock again,
 * calls another function n times, reads the clock a third time, and
 * returns (to the trace engine's trap). It is called through trace_call()
 * with six integer arguments:
 *
 *     harness(first, second, n, args, clock, out)
 *
 *   first  the function the first pass calls
 *   second the function the second pass calls
 *   n      iterations, at least 1
 *   args   address of six 64-bit words loaded into the argument registers
 *          before every call (unused ones are harmless)
 *   clock  clock_gettime(clockid, struct timespec *): the vDSO's, or the
 *          harness's own system-call stub at ARCH_HARNESS_SYSCLOCK
 *   out    address of three struct timespec (t0, t1, t2)
 *
 * and does, with CLOCK_MONOTONIC:
 *
 *     t0; n times first(args...); t1; n times second(args...); t2
 *
 * Both passes run one loop, the same instructions at the same addresses.
 * The caller passes the benchmark as one of first and second and an empty
 * function as the other, and swaps them from one sample to the next, so
 * that whatever favours a pass by its position (the first pass starts
 * after a trap, with cold predictors) falls on the empty function and on
 * the benchmark equally often; both functions as the same empty function
 * measure nothing, which shows the resolution. Whichever is which, the
 * difference of the two intervals is n calls of the benchmark less n
 * calls of an empty function, measured in the same child, and no trap
 * falls inside either interval.
 */

#include <stddef.h>
#include <stdint.h>

extern const uint8_t arch_harness_code[];
extern const size_t arch_harness_len;
/* Offset inside arch_harness_code of a clock_gettime that makes the
 * system call (the entry point is at 0). */
extern const size_t arch_harness_sysclock;
/* The instruction of a function that returns at once. It fits every
 * instruction boundary, so a page filled with copies of it is an empty
 * function at any (instruction-aligned) address: the empty function is
 * called at the benchmark's own address modulo the page size, where the
 * processor's predictors and caches treat it the way they treat the
 * benchmark's entry. */
extern const uint8_t arch_harness_empty_insn[];
extern const size_t arch_harness_empty_insn_len;
/* The alignment arch_harness_code needs at its start. */
#define ARCH_HARNESS_ALIGN 64

#endif
