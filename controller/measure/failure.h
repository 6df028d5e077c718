/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_MEASURE_FAILURE_H
#define BENCHTRAP_MEASURE_FAILURE_H

/*
 * A traced child's failure (trace.h's struct trace_failure) built from
 * what the engine reported, and put in words, for every instrument and
 * suite kind that follows a child of its own (walltime's harness, the
 * memory instrument, Google Benchmark's instances).
 */

#include <stdbool.h>
#include <stdint.h>

struct trace_proc;
struct trace_event;
struct trace_failure;

/* A signal that is a crash of the program's own: SEGV, BUS, ILL, FPE,
 * ABRT, SYS, TRAP. */
bool measure_fatal_signal(int sig);

/* *f: the fatal signal event ev of p, with its thread's backtrace, taken
 * now, while the thread is where the fault happened. */
void measure_failure_signal(struct trace_proc *p, const struct trace_event *ev,
			    struct trace_failure *f);

/* *f: p still running at its deadline (timeout_ns), stopped, with where the
 * thread the engine stops at was. p is left to its owner to kill. */
void measure_failure_timeout(struct trace_proc *p, uint64_t timeout_ns, struct trace_failure *f);

/* f in the engine's words (trace_failure_format; malloc'ed, NULL when out
 * of memory); a timeout stated as timeout_ns, the configured one, not as
 * what was left of it when the last call started (0: as f says). */
char *measure_failure_words(const struct trace_failure *f, uint64_t timeout_ns);

struct bench_result;

/* The failure in words, its last newline left out (malloc'ed), or NULL. */
char *measure_failure_line(const struct trace_failure *f);
/* res failed, its error the failure with its backtrace. */
void bench_result_fail_with(struct bench_result *res, const struct trace_failure *f);
/* res failed, its error msg (taken; NULL: "failed"). */
void bench_result_fail(struct bench_result *res, char *msg);
/* res failed for a child that exited with status 'code', with its last
 * words: said(stderr_path) ("\n  LINE"...; said NULL: its last three
 * lines; stderr_path NULL: none). */
void bench_result_fail_exit(struct bench_result *res, int code, const char *stderr_path,
			    char *(*said)(const char *path));

#endif
