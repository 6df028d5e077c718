/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_UTIL_ATOMIC_H
#define BENCHTRAP_UTIL_ATOMIC_H

#include <stdio.h>

/*
 * Write a file so that a reader sees the old contents or the new, never
 * half: 'fill' writes into a temporary file in the same directory, which is
 * flushed, fsync'ed and renamed over 'path' (and the directory fsync'ed).
 * The new file gets the mode an ordinary creation would (0666 less the
 * umask), or the replaced file's mode. 'fill' returns 0 or a negative
 * errno; so does atomic_write, and on failure 'path' is untouched.
 */
int atomic_write(const char *path, int (*fill)(FILE *f, void *ctx), void *ctx);

#endif
