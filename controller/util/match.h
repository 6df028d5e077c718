/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_UTIL_MATCH_H
#define BENCHTRAP_UTIL_MATCH_H

/* Selecting names by shell-style glob, and suggesting names for a pattern
 * that selects nothing. */

#include <stdbool.h>
#include <stddef.h>

/* true when 'pattern' selects 'name': an exact match (so "fib[20]" selects
 * itself although [20] is a bracket expression to fnmatch), or a glob. */
bool match_glob(const char *pattern, const char *name);

/*
 * Up to 'max' names from 'names' closest to 'pattern' (edit distance on the
 * pattern with its glob characters dropped, substring matches first), as
 * "'a', 'b' or 'c'" in 'buf'. Returns false when nothing is close.
 */
bool match_suggest(const char *pattern, const char *const *names, size_t n, size_t max, char *buf,
		 size_t size);

#endif
