/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_UTIL_PROCMAPS_H
#define BENCHTRAP_UTIL_PROCMAPS_H

/*
 * Reading /proc/PID/maps: one reader for every module that asks where
 * something is mapped in a process.
 *
 *     char *text;
 *     struct procmaps_iter it;
 *     struct procmaps_entry e;
 *
 *     procmaps_read(pid, &text);
 *     procmaps_iter_init(&it, text);
 *     while (procmaps_next(&it, &e))
 *             ... e.lo, e.hi, e.off, e.perms, e.path ...
 *     free(text);
 */

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The whole text of /proc/PID/maps, NUL-terminated and malloc'ed. */
int procmaps_read(pid_t pid, char **ret_text);

/* One mapping. */
struct procmaps_entry {
	uint64_t lo, hi;  /* [lo, hi) */
	uint64_t off;	  /* file offset of lo */
	char perms[8];	  /* "r-xp" */
	const char *path; /* "/usr/lib/libc.so.6", "[vdso]", "" when anonymous;
			     valid until the next procmaps_next() */
};

struct procmaps_iter {
	const char *next;
	char line[PATH_MAX + 256];
};

void procmaps_iter_init(struct procmaps_iter *it, const char *text);

/* The next mapping of the text; lines that do not parse (or longer than a
 * path can be) are passed over. false at the end. */
bool procmaps_next(struct procmaps_iter *it, struct procmaps_entry *ret);

/* Two questions asked of a live process. */

/* The size of the mapping that starts at address 'lo' in process 'pid'; 0
 * when there is none (or the maps cannot be read). */
size_t procmaps_size_at(pid_t pid, uint64_t lo);

/* Where file 'path' (any name of it: compared by its real path) is mapped
 * at file offset 0 in process 'pid', which for a shared library is its load
 * bias. -ENOENT when it is not mapped. */
int procmaps_file_base(pid_t pid, const char *path, uint64_t *ret);

/* A free range of 'size' bytes (page-aligned) in process 'pid' within
 * 'reach' bytes of [lo, hi), a page away from its neighbours, nearest
 * first: where code that jumps to or from [lo, hi) with a 32-bit
 * displacement can be mapped. -ENOSPC when there is none. */
int procmaps_free_near(pid_t pid, uint64_t lo, uint64_t hi, size_t size, uint64_t reach,
		       uint64_t *ret);

#endif
