/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_MEASURE_CHILD_H
#define BENCHTRAP_MEASURE_CHILD_H

/* What is read of a running child's address space by its mappings. */

#include <stdint.h>
#include <sys/types.h>

/*
 * Where process pid defines function 'name' (the first object mapped that
 * does: the program, then its libraries, in the loader's order; an IFUNC
 * resolver is not the function): 0 when none does.
 */
uint64_t measure_child_symbol(pid_t pid, const char *name);

#endif
