/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_UTIL_MATCH_H
#define BENCHTRAP_UTIL_MATCH_H

/* Selecting names by shell-style glob, and suggesting names for a pattern
 * that selects nothing. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* true when 'pattern' selects a function by its raw name, its demangled
 * name, or its demangled name without the parameter list. */
bool match_function(const char *pattern, const char *raw, const char *demangled);

/* A demangled name without its trailing parameter list:
 * "ns::f<int>(int, char)" -> "ns::f<int>". A malloc'ed copy of the whole
 * name when it has none; NULL only when out of memory. */
char *match_strip_params(const char *demangled);

/*
 * Read "NAME" or "NAME(1, -2, 0x10)": *ret_name gets NAME (malloc'ed), args
 * up to 'max' integers (decimal, or hex with 0x), *ret_nargs their count.
 * -EINVAL for a malformed list, an empty name, or more than 'max' arguments;
 * -ERANGE for an integer out of range.
 */
int match_parse_call(const char *text, char **ret_name, int64_t *args, unsigned max,
		     unsigned *ret_nargs);

#endif
