/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_DRIVER_PROTOCOL_H
#define BENCHTRAP_DRIVER_PROTOCOL_H

/*
 * The contract between the controller and the driver library it preloads
 * (driver.c): what the driver reads, what it reports, and its exit status
 * on error. Both sides include this header, so that neither can change it
 * alone.
 *
 * The environment says only which program to drive, so that it is the same
 * whatever is selected and however it is run (its size moves the stack, and
 * with it the counts of stack-sensitive code):
 *
 *	LD_PRELOAD=<the driver>  BENCHTRAP_DRIVER_EXE=<real path of the target>
 *
 * What to call is a regular file on DRIVER_SPEC_FD, read with pread:
 *
 *	benchtrap-driver/3 <serve|call> <n> <timeout ms> <perf calls> <warm-up calls> <frames>
 *	<link address> <argument> x6 <threads> [<object>]
 *	... n lines: numbers in hex, fixed width (16 digits, <threads> 4);
 *	<object> only for a function of a shared library
 *
 *   call   the functions are called in order, each once, in this process
 *          (perf calls > 0: in counted batches, see perf_run)
 *   serve  the fork server: at main the driver reports its thread count;
 *          with one thread it forks one child per function, which calls it
 *          and _exits, and waits for each (killing it after <timeout ms>,
 *          0: never) before forking the next, so that every child starts
 *          from the same state; with more threads a fork would not have
 *          them, and only the first function is called, in this process.
 *          A call's profile is then the one callgrind writes when the
 *          process ends (no --dump-after needed)
 *
 * <threads> 0 or 1: the function is called by the thread that reached main.
 * k, 2 to DRIVER_MAX_THREADS: by k threads at once, a round, made by the
 * process that would have called it once:
 *
 *	driver: create k ─ wait ─ count ─ release ─────────── wait ─ stop ─ join
 *	thread:          warm-up calls ─ wait ─ counted call ─ wait ─ exit
 *	                           (start barrier)       (end barrier)
 *
 * Each thread makes its <warm-up calls>, then waits at the start barrier
 * with the driver, which starts counting (memory) before it releases them
 * together; each makes its one counted call through DRIVER_FUNCTION, then
 * waits at the end barrier, so that nothing of its exit (thread-specific
 * data freed) is counted; the driver stops counting, then joins them. A
 * thread that forks returns twice: its copy _exits at once. Under
 * callgrind, with --separate-threads=yes, each thread's call is in its own
 * part of the profile; the threads are created one after the other before
 * any is released, so that valgrind numbers them in the order created:
 * thread k's part is the k-th, by thread number, of those that hold a call
 * of DRIVER_FUNCTION.
 *
 * The driver reports on DRIVER_REPORT_FD (a pipe), one line per event, each
 * shorter than PIPE_BUF and written at once:
 *
 *	server <threads> <pid>           serve: at main
 *	start <i> <pid>                  serve: child <pid> forked for function i
 *	thread <i> <k> <tid> <allocations> <frees> <bytes>
 *	                                 a round of function i: its thread k
 *	                                 (0 first, in the order created) is
 *	                                 kernel thread <tid>; memory: what its
 *	                                 own counted call asked for (0 else);
 *	                                 one line per thread, before done
 *	done <i> <pid>                   function i returned in process <pid>
 *	perf <i> <ie> <ce> <ib> <cb>     perf: instructions and cycles of n
 *	                                 empty calls, then of n calls of i
 *	mem <i> <allocations> <frees> <bytes> <peak> <live> <overflow> <unseen>
 *	                                 memory (libbenchtrap-driver-memory.so):
 *	                                 one call of i after <warm-up calls>;
 *	                                 <unseen> 1: the program's malloc is not
 *	                                 the wrappers' (it defines its own)
 *	maps <pid>                       memory with <frames>: at main, before
 *	                                 anything else; then it waits on
 *	                                 DRIVER_ACK_FD
 *	site <i> <rank> <bytes> <count> <n>  memory with <frames>: the call's
 *	frame <i> <rank> <pc>            allocation sites, the most bytes first,
 *	                                 each with the n pcs of its stack
 *	                                 (innermost first), before its mem line
 *	lost <i>                         more distinct stacks than the driver
 *	                                 holds: sites of call i are missing
 *	exec <i> <pid> <path>            serve: child <pid> of i executed
 *	                                 <path> (the rest of the line); it is
 *	                                 killed, then ended with 2
 *	end <i> <wait status> <0..2>     serve: child of i reaped: 0 it ended
 *	                                 by itself; killed 1 after the
 *	                                 timeout, 2 when it executed another
 *	                                 program (its end of a close-on-exec
 *	                                 pipe closed while it had a memory
 *	                                 that no longer holds the driver's
 *	                                 mark), 3 when it stopped (SIGSTOP,
 *	                                 SIGTSTP...: nothing would continue
 *	                                 it), the wait status then the stop's
 */

#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DRIVER_ENV_EXE "BENCHTRAP_DRIVER_EXE"
#define DRIVER_SPEC_MAGIC "benchtrap-driver/3"

/* Where the list of functions is, and where the driver reports. */
#define DRIVER_SPEC_FD 3
#define DRIVER_REPORT_FD 4
/* With <frames>: the driver says "maps <pid>" at main and waits for one
 * byte here, so that benchtrap reads its mappings (which name the stacks
 * of its calls, and of its children's) while it is surely alive. */
#define DRIVER_ACK_FD 5

/* The one function callgrind counts: its call of the benchmark. */
#define DRIVER_FUNCTION "benchtrap_driver_call"

/* Arguments per call, at most. */
#define DRIVER_MAX_ARGS 6

/* Threads of a round, at most (the spec line's <threads>). */
#define DRIVER_MAX_THREADS 64

/* --alloc-stacks: frames kept per allocation, and sites reported. */
#define DRIVER_STACK_MAX 32
#define DRIVER_SITES_MAX 64

/* A line of the spec file, at most: 8 numbers and a path. */
#define DRIVER_SPEC_LINE_MAX (8 * 17 + 4096 + 2)

/* The driver's exit status when it cannot call a function. */
#define DRIVER_EXIT_ERROR 125

/*
 * A hardware counter of this process's user-space events, disabled until
 * enabled around a batch, in 'group' (-1: a new group): the counter the
 * driver counts with, and the one the controller's probe opens before
 * choosing the perf instrument, so that the probe cannot pass where the
 * driver would fail. Returns the descriptor, or -1 with errno set.
 */
static inline int driver_perf_open(uint64_t config, int group, uint64_t read_format)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = config;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.read_format = read_format;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, group, 0);
}

#endif
