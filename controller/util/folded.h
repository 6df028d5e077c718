/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_UTIL_FOLDED_H
#define BENCHTRAP_UTIL_FOLDED_H

/*
 * Folded stacks: a set of call paths, each with a count, written one a
 * line as "outer;middle;inner count" (the format of Brendan Gregg's
 * stackcollapse scripts, which flamegraph tools read). Frames are kept as
 * given but for the characters the format cannot carry: ';' becomes ':',
 * and control characters (a newline, a tab) become '_'; spaces stay, as
 * flamegraph.pl and speedscope read them (the count follows the last
 * space of a line). Nothing prints.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct folded_stack {
	char *path; /* "a;b;c", outermost first */
	uint64_t count;
};

struct folded {
	struct folded_stack *v;
	size_t n, cap;
	uint64_t total; /* the sum of the counts */
	int sorted;	/* v is sorted by path and has no two equal paths */
};

/* Add 'count' to the path frames[0..n) (outermost first; n > 0).
 * 0 or -ENOMEM (nothing added then). */
int folded_add(struct folded *f, const char *const *frames, size_t n, uint64_t count);
/* Add one line "a;b;c count". -EINVAL for a line that is not one (no
 * count, or no frame), -ENOMEM. */
int folded_add_line(struct folded *f, const char *line);
/* Sort the paths and merge equal ones: done by folded_write and by the
 * flamegraph writer, and whenever a caller wants it. */
void folded_merge(struct folded *f);
/* Every path, sorted, one a line. 0 or -EIO. */
int folded_write(struct folded *f, FILE *out);
void folded_free(struct folded *f);

#endif
