/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_UTIL_STRUTIL_H
#define BENCHTRAP_UTIL_STRUTIL_H

#include <stdbool.h>
#include <stddef.h>

/* Edit distance between a and b (insertions, deletions, substitutions),
 * saturating at 'cap' so long unrelated names cost little to compare. */
size_t str_distance(const char *a, const char *b, size_t cap);

/* true when s holds a control character (names never may). */
bool str_has_control(const char *s);

/*
 * A printable copy of 's' when it needs one: control characters and bytes
 * that are not valid UTF-8 become \xNN. NULL when 's'
 * prints as it is (or when out of memory: then print 's' anyway).
 */
char *str_escape(const char *s);

/* true when 's' is well-formed UTF-8 without control characters. */
bool str_is_printable(const char *s);

/* true when 'path' is a regular file this process may execute (a directory
 * of the same name earlier in PATH is not a program). */
bool str_is_executable_file(const char *path);

/*
 * Where exec would find program 'name': 'name' itself when it holds a '/',
 * else the first executable regular file "DIR/name" over the directories of
 * $PATH (unset or empty: /usr/local/bin:/usr/bin:/bin; an empty entry is the
 * current directory, written as the bare name). The path goes to 'buf';
 * -ENOENT when no directory has it ('buf' is then undefined).
 */
int str_find_in_path(const char *name, char *buf, size_t size);

/*
 * strerror(errnum) in the words of benchtrap's messages where they differ:
 * ENOSPC is "no space left on the device (free some space, or write
 * elsewhere)", EDQUOT likewise. A static string.
 */
const char *str_errno(int errnum);

/* The last path component of 'path' (a pointer into it). */
const char *str_basename(const char *path);

/* A string formatted as by printf (malloc'ed), or NULL. */
char *str_fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
/* The signal's abbreviation ("SEGV"), or "?". */
const char *str_signal_abbrev(int sig);
/* The whole of file 'path' (malloc'ed, NUL-terminated; its length in
 * *ret_len when not NULL), or NULL. */
char *str_read_file(const char *path, size_t *ret_len);
/* The last 'max' (16 at most) non-empty lines of file 'path' without
 * control characters, each after "\n  " (malloc'ed), or NULL when none. */
char *str_tail_lines(const char *path, size_t max);

/*
 * The names a program listed, one a line (CR LF read as LF, empty lines
 * skipped): with 'suffix', only the lines ending in it, cut off ("ID:
 * bench"). Returns 0 with a NULL-terminated array (never NULL, each name
 * and the array to free), -EINVAL for a name holding a NUL or a control
 * character (it could not be selected exactly), -ENOMEM.
 */
int str_list_lines(const char *text, size_t len, const char *suffix, char ***ret_names,
		   size_t *ret_n);
/* "^S$" with a backslash before each character of S in 'meta': a regex
 * that matches S alone (malloc'ed), or NULL. */
char *str_regex_exact(const char *s, const char *meta);

/*
 * A growable array of pointers, NULL-terminated. The usual C idiom, kept
 * here once: strv_push returns 0 or -ENOMEM and takes ownership of 's' only
 * on success.
 */
struct strv {
	char **v;
	size_t n;
	size_t cap;
};
int strv_push(struct strv *sv, char *s);
bool strv_contains(const struct strv *sv, const char *s);
void strv_clear(struct strv *sv);
/* Free the strings v[0..n) and the array v itself. */
void str_free_n(char **v, size_t n);

#endif
