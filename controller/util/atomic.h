/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_UTIL_ATOMIC_H
#define BENCHTRAP_UTIL_ATOMIC_H

#include <stdio.h>

/*
 * Writing an output file without destroying what is at its path.
 *
 * What the path names decides how it is written. Symbolic links are followed
 * to the file they name; the link itself always stays. A link in a sticky
 * world-writable directory (/tmp) is followed only when it belongs to the user
 * running benchtrap or to the directory's owner, the rule of the kernel's
 * fs.protected_symlinks: another user's link there is refused
 * (ATOMIC_E_LINK), whoever runs benchtrap, root too. The rule applies to
 * every link met on the way from the path's last component to the file.
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

/* A symbolic link of another user in a sticky world-writable directory: it
 * is not followed. */
#define ATOMIC_E_LINK 0x40001

/* Something other than a regular file (a link, a directory) has the name a
 * file is to be written under in an output directory: it is left alone. */
#define ATOMIC_E_IN_WAY 0x40002

/*
 * Write 'path' as above with what 'fill' writes to its stream: for a
 * regular file the temporary file itself (a large document is never held in
 * memory), for a device or FIFO memory first. 'fill' returns 0 or a
 * negative errno (its write's own, such as -ENOSPC), and when it fails
 * nothing is written. On any failure a regular file at 'path' is untouched
 * and no temporary file is left.
 */
int atomic_write(const char *path, int (*fill)(FILE *f, void *ctx), void *ctx);

/*
 * Open 'path' for a file written as it goes (markers), after the same checks
 * as atomic_check(): a regular file is created or truncated in place (it is
 * not replaced), opened under the name the links lead to with O_NOFOLLOW, so
 * that a link planted there after the check is not followed; a device or
 * FIFO is opened without blocking. The stream is
 * close-on-exec; the caller fcloses it.
 */
int atomic_open_stream(const char *path, FILE **ret_f);

/*
 * Check a directory given for output files (--profile DIR): it is a
 * directory (-ENOTDIR), reached by no link of another user in a sticky
 * world-writable directory (ATOMIC_E_LINK), and a file can be created in it
 * (-EACCES, -EROFS, ...).
 */
int atomic_check_dir(const char *dir);

/*
 * Write the file 'name' (one component, no slash) in the directory 'dir'
 * with what 'fill' writes to its stream, into memory first as atomic_write()
 * does. The file is made under a temporary name "<name>.XXXXXX" created in
 * the directory with O_EXCL and O_NOFOLLOW (relative to the directory's open
 * descriptor, so no link is followed) and renamed over 'name'. What has that
 * name must be nothing or a regular file: anything else, a link above all,
 * is neither followed nor replaced (ATOMIC_E_IN_WAY). In a sticky
 * world-writable directory a file of a user other than the one running
 * benchtrap and the directory's owner is not replaced (ATOMIC_E_STICKY). On
 * any failure (the fill's, a full file system's -ENOSPC) nothing is left
 * under either name and what was at 'name' is untouched.
 */
int atomic_write_in(const char *dir, const char *name, int (*fill)(FILE *f, void *ctx), void *ctx);

/*
 * Remove the temporary file of an atomic_write() or atomic_write_in() under
 * way, if there is one.
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
