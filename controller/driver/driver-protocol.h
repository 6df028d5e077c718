/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_DRIVER_PROTOCOL_H
#define BENCHTRAP_DRIVER_PROTOCOL_H

/*
 * The contract between the controller and the driver library it preloads
 * (driver.c): the environment that says what to call, the descriptors the
 * driver reports on, and its exit status on error. Both sides include this
 * header, so that neither can change it alone.
 *
 *	BENCHTRAP_DRIVER_EXE=<real path of the target>   other programs run their main
 *	BENCHTRAP_DRIVER=<count>
 *	BENCHTRAP_DRIVER_<i>=<link address, 16 hex digits> [<argument, 16 hex digits>]...
 *	BENCHTRAP_DRIVER_<i>_OBJECT=<path>     only for a function of a shared library
 *	BENCHTRAP_DRIVER_PERF_FD=<fd>          perf: count batches, report on fd
 *	BENCHTRAP_DRIVER_PERF_CALLS=<n>        perf: calls per counted batch
 *
 * Numbers are fixed-width so that the environment's size, and thus the
 * child's stack layout, does not depend on the addresses.
 */

#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DRIVER_ENV_EXE "BENCHTRAP_DRIVER_EXE"
#define DRIVER_ENV_COUNT "BENCHTRAP_DRIVER"
#define DRIVER_ENV_ENTRY "BENCHTRAP_DRIVER_" /* followed by <i> */
#define DRIVER_ENV_OBJECT "_OBJECT"	     /* follows BENCHTRAP_DRIVER_<i> */
#define DRIVER_ENV_PERF_FD "BENCHTRAP_DRIVER_PERF_FD"
#define DRIVER_ENV_PERF_CALLS "BENCHTRAP_DRIVER_PERF_CALLS"

/* The one function callgrind counts: its call of the benchmark. */
#define DRIVER_FUNCTION "benchtrap_driver_call"

/* Arguments per call, at most. */
#define DRIVER_MAX_ARGS 6

/* The driver's exit status when it cannot call a function. */
#define DRIVER_EXIT_ERROR 125

/* One byte written here after each call that returned. */
#define DRIVER_DONE_FD 3

/* Where the perf instrument asks for its counts. */
#define DRIVER_PERF_FD 4

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
