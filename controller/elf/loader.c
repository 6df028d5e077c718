/* SPDX-License-Identifier: MIT */
/*
 * The libraries a binary loads, as its own dynamic loader resolves them.
 *
 * The loader's search has more to it than a search path: the
 * glibc-hwcaps/ subdirectories it prefers on a capable CPU, the legacy
 * hardware-capability directories, the ld.so.cache, $ORIGIN, DT_RPATH
 * inherited or not, LD_LIBRARY_PATH and LD_PRELOAD. Rather than follow it,
 * benchtrap asks it: the binary's PT_INTERP is started on the binary with
 * LD_TRACE_LOADED_OBJECTS=1, as ldd(1) does. In that mode glibc's loader
 * maps the libraries, prints one line for each and exits before it
 * relocates anything or runs any initializer, so no code of the program or
 * of its libraries runs:
 *
 *	linux-vdso.so.1 (0x00007ffc...)
 *	libfoo.so.1 => /opt/foo/lib/glibc-hwcaps/x86-64-v2/libfoo.so.1 (0x...)
 *	libbar.so.2 => not found
 *	/lib64/ld-linux-x86-64.so.2 (0x...)
 *
 * `ld.so --list PROG` prints the same list but stops at the first library
 * it cannot find; the variable lists them all.
 *
 * Only glibc's loader behaves so. Another one (musl's) started on the
 * program would run it, and a binary may name any file as its
 * interpreter: only a glibc loader owned by root is started, anything
 * else not at all (-ENOEXEC: the caller searches as the loader would).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/array.h"
#include "util/fd.h"
#include "util/launch.h"
#include "util/strutil.h"
#include "elf/elf-internal.h"

/* How long the loader may take to list the libraries: it maps a few files
 * and exits, in milliseconds; this only bounds a loader that hangs. */
#define LOADER_TIMEOUT_MS 20000

/* Whether 'path' is a glibc dynamic loader that the system installed: an
 * ELF object of our class and machine that defines _dl_catch_exception
 * (glibc's own), owned by root and writable by no one else. A binary
 * names any file it likes as its interpreter; only such a one is
 * started. */
static bool is_system_glibc_loader(const char *path)
{
	struct elf_file *ld;
	struct stat st;
	bool yes;

	if (stat(path, &st) < 0 || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return false;
	if (elf_open(path, &ld, NULL) < 0)
		return false;
	yes = elf_symbol_by_name(ld, "_dl_catch_exception") != NULL ||
	      elf_symbol_by_name(ld, "_dl_mcount") != NULL;
	elf_close(ld);
	return yes;
}

/* The controller's environment for the loader: in trace mode, and without
 * the variables that would make it relocate (and so run IFUNC resolvers)
 * or print more than the list. */
static char **loader_env(void)
{
	static const char *const drop[] = { "LD_TRACE_LOADED_OBJECTS=", "LD_WARN=", "LD_BIND_NOW=",
					    "LD_VERBOSE=", "LD_TRACE_PRELINKING=" };
	size_t n = 0, m = 0;
	char **env;

	while (environ && environ[n])
		n++;
	env = calloc(n + 2, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		bool keep = true;

		for (size_t d = 0; d < sizeof(drop) / sizeof(drop[0]) && keep; d++)
			keep = strncmp(environ[i], drop[d], strlen(drop[d])) != 0;
		if (keep)
			env[m++] = environ[i];
	}
	env[m++] = (char *)"LD_TRACE_LOADED_OBJECTS=1";
	env[m] = NULL;
	return env;
}

/* Run 'interp' on 'prog' in trace mode; *ret_text is what it printed. */
static int run_loader(const char *interp, const char *prog, char **ret_text)
{
	char *argv[] = { (char *)interp, (char *)prog, NULL };
	char **env = loader_env();
	int r;

	if (!env)
		return -ENOMEM;
	r = launch_capture(interp, argv, env, LOADER_TIMEOUT_MS, ret_text);
	free(env);
	/* Nothing said: the loader could not trace it. */
	if (r == 0 && !**ret_text) {
		free(*ret_text);
		r = -ENOEXEC;
	}
	return r;
}

/* Push a copy of 's' (its first 'len' bytes) onto 'v'. */
static int push_copy(struct strv *v, const char *s, size_t len)
{
	char *c = strndup(s, len);

	if (!c || strv_push(v, c) < 0) {
		free(c);
		return -ENOMEM;
	}
	return 0;
}

/*
 * One line of the list into 'paths' (a library's file) or 'missing' (a
 * name not found). The vDSO ("linux-vdso.so.1 (0x...)", no slash) has no
 * file and is passed over, as are lines of any other form.
 */
static int parse_line(const char *line, struct strv *paths, struct strv *missing)
{
	const char *arrow, *addr, *what;
	size_t len;

	line += strspn(line, " \t");
	arrow = strstr(line, " => ");
	if (arrow) {
		what = arrow + 4;
		if (!strcmp(what, "not found"))
			return push_copy(missing, line, (size_t)(arrow - line));
	} else {
		what = line;
	}
	addr = strstr(what, " (0x");
	for (const char *p = addr; p; p = strstr(p + 1, " (0x"))
		addr = p; /* the last one: a path may hold " (0x" */
	len = addr ? (size_t)(addr - what) : strlen(what);
	if (!len || !memchr(what, '/', len))
		return 0;
	return push_copy(paths, what, len);
}

int elf_loader_needed(const struct elf_file *ef, struct elf_file ***ret_libs, size_t *ret_n,
		      char ***ret_missing)
{
	struct strv paths = { 0 }, missing = { 0 };
	struct elf_file **libs = NULL;
	size_t n = 0, cap = 0;
	char *text = NULL, *prog = NULL, *line, *save = NULL;
	int r;

	if (!ef->interp || ef->fd < 0)
		return -EINVAL;
	if (access(ef->interp, F_OK) < 0)
		return -ENOENT;
	if (!is_system_glibc_loader(ef->interp))
		return -ENOEXEC;
	/* The real path, as the loader finds $ORIGIN of a program through
	 * /proc/self/exe; and a name without a slash would be searched for
	 * as a library, one that starts with '-' read as an option. */
	prog = realpath(ef->path, NULL);
	if (!prog && asprintf(&prog, "%s%s", ef->path[0] == '/' ? "" : "./", ef->path) < 0)
		return -ENOMEM;
	r = run_loader(ef->interp, prog, &text);
	free(prog);
	if (r < 0)
		return r == -ENOENT ? -ENOEXEC : r;
	for (line = strtok_r(text, "\n", &save); line && r == 0; line = strtok_r(NULL, "\n", &save))
		r = parse_line(line, &paths, &missing);
	free(text);
	for (size_t i = 0; i < paths.n && r == 0; i++) {
		char real[PATH_MAX];
		struct elf_file *lib;

		/* The loader's name for it ("/lib/x86_64-linux-gnu/libz.so.1"),
		 * made absolute when a relative DT_RUNPATH left it relative. */
		const char *path =
			paths.v[i][0] == '/' || !realpath(paths.v[i], real) ? paths.v[i] : real;

		if (elf_open(path, &lib, NULL) < 0)
			continue;
		if (array_grow((void **)&libs, &cap, n + 1, sizeof(*libs)) < 0) {
			elf_close(lib);
			r = -ENOMEM;
			break;
		}
		libs[n++] = lib;
	}
	strv_clear(&paths);
	if (r == 0 && !missing.v && strv_push(&missing, NULL) < 0)
		r = -ENOMEM;
	if (r < 0) {
		for (size_t i = 0; i < n; i++)
			elf_close(libs[i]);
		free(libs);
		strv_clear(&missing);
		return r;
	}
	*ret_libs = libs;
	*ret_n = n;
	*ret_missing = missing.v;
	return 0;
}
