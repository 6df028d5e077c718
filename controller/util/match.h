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
/* The same, each name said with where[i] after it when that is not NULL:
 * "'lzma_code' (liblzma.so.5)" ('where' may be NULL), and at most
 * 'max_edits' edits away when not 0 (a substring then counts by its
 * distance too). */
bool match_suggest_in(const char *pattern, const char *const *names, const char *const *where,
		      size_t n, size_t max, size_t max_edits, char *buf, size_t size);

/*
 * The parts of a demangled function name, as offsets into it:
 *
 *   long num::unroll<8>(long) const [clone .constprop.0]
 *   |   |              |    ||     |
 *   |   name_start     |    ||     tail: a compiler's clone suffix
 *   ret (0..ret_end)   |    |quals_start..quals_end: const, volatile, &, &&,
 *                      |    |                        noexcept
 *                      params_open .. params_close: the parameter list
 *
 * A name without a parameter list (C, Rust) has has_params false and
 * name_end == quals_end == tail; a name without a return type (all but
 * function templates) has name_start 0. A C name's clone suffix is its
 * ".cold", ".part.N", ".constprop.N" or ".isra.N".
 */
struct match_sig {
	size_t ret_end, name_start, name_end;
	bool has_params;
	size_t params_open, params_close; /* the '(' and the ')' */
	size_t quals_start, quals_end;
	size_t tail;
};

void match_split(const char *demangled, struct match_sig *ret);

/* Where the name of demangled function name 'demangled' ends (before its
 * parameter list), or with 'template_name', before the template arguments
 * of a function template's name ("twice" of "int twice<int>(int)"). */
size_t match_name_end(const char *demangled, bool template_name);

/* Where the "::h<16 hex digits>" that ends the demangled name of a Rust
 * function mangled the legacy way starts, when the name keeps it
 * ("crate::f::h0123456789abcdef"), else strlen(demangled). */
size_t match_rust_hash(const char *demangled);

/* How 'pattern' selects a function. */
enum match_how {
	MATCH_NONE,
	/* by a part of its demangled name: without the return type of a
	 * function template, the qualifiers of a member function, a clone
	 * suffix, or the parameter list ("num::scale", "num::scale(long)",
	 * "Grid<int>::sum()"; a name without parameters also as "f()"), or
	 * by the name of its template ("twice" selects "int twice<int>(int)";
	 * in Rust "crate::f" selects "crate::f::<u32>" and, mangled the legacy
	 * way, "crate::f::h0123456789abcdef") */
	MATCH_BASE,
	/* by its whole raw or demangled name */
	MATCH_FULL,
};

/*
 * How 'pattern' (a glob or an exact name) selects a function by its raw
 * name, its demangled name, or a part of the demangled name as above.
 * Blanks count only between two letters or digits ("f(long,long)" is
 * "f(long, long)").
 */
enum match_how match_function_how(const char *pattern, const char *raw, const char *demangled);

/* match_function_how() != MATCH_NONE */
bool match_function(const char *pattern, const char *raw, const char *demangled);

/* The position (0-based) of the first floating-point parameter (float,
 * double, long double...) among the first 'n' of demangled name
 * 'demangled', or -1 when none is or it has no parameter list. */
int match_floating_param(const char *demangled, unsigned n);

/* A demangled name without its trailing parameter list:
 * "ns::f<int>(int, char)" -> "ns::f<int>". A malloc'ed copy of the whole
 * name when it has none; NULL only when out of memory. */
char *match_strip_params(const char *demangled);

/*
 * Read "NAME" or "NAME(1, -2, 0x10)": *ret_name gets NAME (malloc'ed), args
 * up to 'max' integers (decimal, or hex with 0x), *ret_nargs their count.
 * A last parenthesized list that does not start with a digit or a sign is
 * a parameter-type list and part of NAME ("num::scale(long)", and
 * "num::scale(long)(7)" is that with one argument); so is an empty one
 * ("g()"). -EDOM for arguments that are not integers ("f(2.5)",
 * "f(1,x)", and a list after a parameter-type list, "f(long)(abc)");
 * -EINVAL for unbalanced parentheses, a malformed argument list, an empty
 * name, or more than 'max' arguments; -ERANGE for an integer out of range.
 */
int match_parse_call(const char *text, char **ret_name, int64_t *args, unsigned max,
		     unsigned *ret_nargs);

#endif
