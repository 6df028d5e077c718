/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_UTIL_ATOMIC_H
#define BENCHTRAP_UTIL_ATOMIC_H

#include <stdio.h>

/*
 * Writing an output file without destroying what is at its path.
 *
 * What the path names decides how it is written. Symbolic links are followed
 * to the file they name; the link itself always stays.
 *
 *   a regular file, or     replaced atomically: the contents go to a temporary
 *   nothing yet            file "<file>.XXXXXX" in the directory of the file
 *                          (the link's target, for a link), which is fsync'ed
 *                          and renamed over it, and the directory fsync'ed. A
 *                          reader sees the old contents or the new, never half.
 *                          A new file gets 0666 less the umask, a replaced file
 *                          keeps its mode.
 *   a character device     written straight through, never replaced:
 *   (/dev/null, a tty),    /dev/full fails with -ENOSPC; /dev/stdout is a link
 *   a FIFO or a pipe       to /proc/self/fd/1 and so writes to whatever stdout
 *                          is. A FIFO must have a reader when it is opened
 *                          (-ENXIO otherwise): opening it never blocks.
 *   a directory            -EISDIR
 *   a socket, a block      -EOPNOTSUPP
 *   device
 *
 * Every function returns 0 or a negative errno.
 */

/*
 * Check, before any work is done, that 'path' can be written as above: the
 * directory of a new or regular file exists and a file can be created in it
 * (-ENOENT, -EACCES, -EROFS, ...); a device or FIFO opens for writing. A
 * device or FIFO is opened here and kept open until the atomic_write() or
 * atomic_open_stream() of the same path string uses it: a FIFO's reader is
 * attached from the start and sees end-of-file only after the document.
 */
int atomic_check(const char *path);

/* A file of another user in a sticky directory (/tmp): it cannot be renamed
 * over, though a file can be created beside it. */
#define ATOMIC_E_STICKY 0x40000

/*
 * Write 'path' as above with what 'fill' writes to its stream. 'fill' writes
 * into memory first: it returns 0 or a negative errno, and when it fails
 * nothing is written. On any failure a regular file at 'path' is untouched
 * and no temporary file is left.
 */
int atomic_write(const char *path, int (*fill)(FILE *f, void *ctx), void *ctx);

/*
 * Open 'path' for a file written as it goes (markers), after the same checks
 * as atomic_check(): a regular file is created or truncated in place (it is
 * not replaced), a device or FIFO is opened without blocking. The stream is
 * close-on-exec; the caller fcloses it.
 */
int atomic_open_stream(const char *path, FILE **ret_f);

/*
 * Remove the temporary file of an atomic_write() under way, if there is one.
 * Async-signal-safe (one unlink): for fatal-signal handlers, before the
 * process dies. The temporary file is created and renamed with SIGINT,
 * SIGTERM, SIGHUP and SIGQUIT blocked, so a handler of those never misses it
 * nor removes a file already renamed into place.
 */
void atomic_cleanup(void);

/* A lowercase description of an error of the functions above, with the way
 * out where there is one ("is a directory (name a file)"). */
const char *atomic_strerror(int err);

#endif
