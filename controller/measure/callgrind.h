/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_MEASURE_CALLGRIND_H
#define BENCHTRAP_MEASURE_CALLGRIND_H

/*
 * Pieces of the callgrind instrument that are pure logic, declared for
 * the unit tests: reading callgrind's profile format, and finding
 * valgrind. The instrument itself is measure_callgrind() in measure.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "measure/measure.h"
#include "util/folded.h"

#define CALLGRIND_MAX_EVENTS 16

/*
 * What one callgrind profile (one dump) says about the calls of interest:
 * every call arc whose caller is named 'caller' (NULL: any) and whose
 * callee is named 'callee' (NULL: any). Callgrind writes, inside the block
 * of the calling function,
 *
 *	cfn=<callee>
 *	calls=<count> <target position>
 *	<call-site position> <inclusive cost of those calls, per event>
 *
 * so 'calls' sums the counts and 'inclusive' the costs of the matching
 * arcs. 'totals' is the profile's own total (the "totals:" or "summary:"
 * line) of everything collected.
 */
struct callgrind_profile {
	size_t nevents;
	char events[CALLGRIND_MAX_EVENTS][16]; /* "Ir", "Dr", "D1mr"... */
	uint64_t totals[CALLGRIND_MAX_EVENTS];
	uint64_t inclusive[CALLGRIND_MAX_EVENTS];
	uint64_t calls;
	size_t arcs; /* matching arcs found */
	char trigger[160]; /* its "desc: Trigger:", e.g. "--dump-before=f()" */
};

/*
 * Parse a profile in callgrind's format (name compression "(id) name" and
 * "(id)" and position compression "+n", "-n", "*" are understood; the
 * format is documented with valgrind: "Callgrind Format Specification").
 * Names compare exactly: a recursive call named "f'2" is not "f".
 * Returns 0, -EINVAL (not a callgrind profile, no "events:" line, more
 * than CALLGRIND_MAX_EVENTS events), -ENOMEM, or -errno of a read error.
 * *ret is written only on success.
 */
int callgrind_parse(FILE *f, const char *caller, const char *callee,
		    struct callgrind_profile *ret);
int callgrind_parse_file(const char *path, const char *caller, const char *callee,
			 struct callgrind_profile *ret);

/*
 * Whether 'name', a file of the profile directory, is a profile of process
 * pid as callgrind names them with --callgrind-out-file=callgrind.out.%p:
 * "callgrind.out.<pid>[.<dump>][-<thread>]", a dump's number after
 * --dump-after, valgrind's thread number with --separate-threads=yes (each
 * thread's costs in a file of its own). *ret_dump and *ret_thread are 0
 * when the name has none.
 */
bool callgrind_part_name(const char *name, pid_t pid, unsigned *ret_dump, unsigned *ret_thread);
/*
 * --profile: run with --separate-callers=CALLGRIND_PROFILE_CALLERS, each
 * function context is named by its chain of callers, "f'g'h" (f called by
 * g called by h), and its self cost (Ir) is the cost of that call path.
 * Each context whose chain reaches 'root' (the benchmark's function)
 * becomes a folded stack from root inward with its self cost; a chain of
 * max_callers callers that does not reach it is kept under "[deeper]";
 * the others (outside the benchmark) are left out. 0, -EINVAL (no
 * Ir event), -ENOMEM or -EIO.
 */
#define CALLGRIND_PROFILE_CALLERS 40
int callgrind_folded(FILE *f, const char *root, size_t max_callers, struct folded *out);


/* The index of event 'name' in p, or -1. */
int callgrind_event_index(const struct callgrind_profile *p, const char *name);

/* 'prog' found in the controller's PATH (malloc'ed), or NULL. */
char *callgrind_find_program(const char *prog);

#endif
