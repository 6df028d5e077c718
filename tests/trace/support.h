/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_TESTS_TRACE_SUPPORT_H
#define BENCHTRAP_TESTS_TRACE_SUPPORT_H

#include <stdint.h>
#include <sys/types.h>

/* The link-time address of function 'name' in 'path' (.symtab), or 0. */
uint64_t support_symbol(const char *path, const char *name);
/* ... and its size (st_size) in *ret_size, when not NULL. */
uint64_t support_symbol_sized(const char *path, const char *name, uint64_t *ret_size);
/* The ELF entry point of 'path', or 0. */
uint64_t support_entry(const char *path);
/* Number of processes whose parent is this process (zombies included). */
int support_children(void);
/* SIGKILL and reap them. */
void support_kill_children(void);
/* Make this process the reaper of its orphaned descendants, so that
 * support_children() sees every process a test left behind. */
void support_subreaper(void);

#endif
