/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_MEASURE_DRIVER_ENV_H
#define BENCHTRAP_MEASURE_DRIVER_ENV_H

/*
 * Running a target with benchtrap's driver library preloaded, as the
 * callgrind and perf instruments do (driven.h): the child's fixed
 * environment and where the driver library is.
 */

#include <stdbool.h>
#include <stddef.h>

#include "driver/driver-protocol.h"
#include "measure/measure.h"

/* PATH in the child's environment, and where programs are looked up when
 * the controller has no PATH. */
#define MEASURE_CHILD_PATH "/usr/local/bin:/usr/bin:/bin"

/* Append s (malloc'ed; NULL means out of memory) to the NULL-terminated
 * vector *v of *n entries; s is freed on failure. 0 or -ENOMEM. */
int measure_env_push(char ***v, size_t *n, char *s);

/* Free a NULL-terminated vector of malloc'ed strings (NULL is fine). */
void measure_env_free(char **env);

/*
 * The fixed environment of a driven child, NULL-terminated and malloc'ed
 * (free with measure_env_free): PATH, LC_ALL=C, LD_BIND_NOW=1 (lazy
 * binding would otherwise fall inside the first call), VALGRIND_LIB when
 * the controller has one, then 'extra' (NULL-terminated, may be NULL).
 * Nothing else of the controller's environment passes, so that the child's
 * stack starts at the same place in every run.
 */
char **measure_child_env(const char *const *extra);

/* The controller's environment with "NAME=VALUE" 'set' in place of its
 * NAME (clean: measure_child_env's with it); NULL: out of memory. */
char **measure_env_with(const char *set, bool clean);

/* The driver libraries: the one of callgrind and perf, and the memory
 * instrument's (its allocator wrapped). */
#define MEASURE_DRIVER "libbenchtrap-driver.so"
#define MEASURE_DRIVER_MEMORY "libbenchtrap-driver-memory.so"

/* Driver library 'name': beside $BENCHTRAP_DRIVER_LIB (the path of a
 * driver library), else in driver/ next to the benchtrap executable (a
 * build tree), else in the install directory. NULL when not readable. */
char *measure_find_driver(const char *name);

#endif
