/* SPDX-License-Identifier: MIT */
/*
 * Finding the shared libraries a binary needs. The binary's own loader is
 * asked first (loader.c); when it cannot be (its interpreter is not
 * glibc's), they are searched for in the dynamic loader's order
 * (ld.so(8)), which misses what that order leaves out (glibc-hwcaps/
 * subdirectories, the hardware-capability directories, LD_PRELOAD):
 *
 *   1. a name with a slash is a path, used as is;
 *   2. DT_RPATH of the object that needs it, then of the executable, when
 *      the object has no DT_RUNPATH;
 *   3. LD_LIBRARY_PATH;
 *   4. DT_RUNPATH of the object that needs it;
 *   5. the directories ldconfig caches: /etc/ld.so.conf and its includes;
 *   6. the default directories.
 *
 * Step 5 reads the configuration ldconfig builds its cache from rather
 * than the binary cache file: the directories are the same and the text
 * format is stable. Every candidate must be an ELF file of our class and
 * machine, as the loader demands, so a 32-bit library of the same name in
 * an earlier directory is skipped, not taken.
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/array.h"
#include "elf/elf-internal.h"
#include "util/strutil.h"

#if defined(__x86_64__)
#define LIB_MULTIARCH "x86_64-linux-gnu"
#define PLATFORM "x86_64"
#elif defined(__aarch64__)
#define LIB_MULTIARCH "aarch64-linux-gnu"
#define PLATFORM "aarch64"
#endif

static const char *const default_dirs[] = {
	"/lib/" LIB_MULTIARCH, "/usr/lib/" LIB_MULTIARCH, "/lib64", "/usr/lib64", "/lib", "/usr/lib",
};

/* Append the directories listed in an ld.so.conf-style file. */
static void read_ld_conf(const char *path, struct strv *dirs, int depth)
{
	FILE *f;
	char line[PATH_MAX + 16];

	if (depth > 8)
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *hash = strchr(line, '#');

		if (hash)
			*hash = '\0';
		p += strspn(p, " \t");
		p[strcspn(p, "\r\n")] = '\0';
		for (char *e = p + strlen(p); e > p && (e[-1] == ' ' || e[-1] == '\t');)
			*--e = '\0';
		if (!*p)
			continue;
		if (strncmp(p, "include", 7) == 0 && (p[7] == ' ' || p[7] == '\t')) {
			glob_t g;
			char *pat = p + 8 + strspn(p + 8, " \t");
			char full[PATH_MAX];

			if (pat[0] != '/') {
				/* Relative to the including file's directory. */
				const char *base = str_basename(path);

				snprintf(full, sizeof(full), "%.*s%s", (int)(base - path), path, pat);
				pat = full;
			}
			if (glob(pat, 0, NULL, &g) == 0) {
				for (size_t i = 0; i < g.gl_pathc; i++)
					read_ld_conf(g.gl_pathv[i], dirs, depth + 1);
				globfree(&g);
			}
			continue;
		}
		if (p[0] == '/' && !strv_contains(dirs, p)) {
			char *d = strdup(p);

			if (d && strv_push(dirs, d) < 0)
				free(d);
		}
	}
	fclose(f);
}

/* Expand $ORIGIN, $LIB and $PLATFORM (also in ${} form) in one path. */
static char *expand_tokens(const char *dir, const char *origin)
{
	char out[PATH_MAX];
	size_t n = 0;

	for (const char *p = dir; *p && n < sizeof(out) - 1;) {
		static const struct {
			const char *name;
			size_t len;
		} tokens[] = { { "ORIGIN", 6 }, { "LIB", 3 }, { "PLATFORM", 8 } };
		const char *value = NULL;
		size_t skip = 0;

		if (*p == '$') {
			bool brace = p[1] == '{';

			for (size_t t = 0; t < sizeof(tokens) / sizeof(tokens[0]); t++) {
				const char *q = p + 1 + brace;

				if (strncmp(q, tokens[t].name, tokens[t].len) != 0)
					continue;
				if (brace && q[tokens[t].len] != '}')
					continue;
				skip = 1 + brace + tokens[t].len + brace;
				value = t == 0 ? origin : t == 1 ? "lib/" LIB_MULTIARCH : PLATFORM;
				break;
			}
		}
		if (value) {
			n += (size_t)snprintf(out + n, sizeof(out) - n, "%s", value);
			if (n >= sizeof(out))
				return NULL;
			p += skip;
		} else {
			out[n++] = *p++;
		}
	}
	out[n] = '\0';
	return strdup(out);
}

/* Append the colon-separated directories of 'list', expanding tokens. */
static void add_path_list(struct strv *dirs, const char *list, const char *origin)
{
	const char *p = list;

	while (p && *p) {
		size_t len = strcspn(p, ":;");
		char *one = strndup(p, len);
		char *dir = one ? expand_tokens(*one ? one : ".", origin) : NULL;

		free(one);
		if (dir && strv_push(dirs, dir) < 0)
			free(dir);
		p += len;
		if (*p)
			p++;
	}
}

static char *origin_of(const char *path)
{
	char real[PATH_MAX];
	const char *base;

	if (!realpath(path, real))
		return strdup(".");
	base = str_basename(real);
	return base == real + 1 ? strdup("/") : strndup(real, (size_t)(base - real - 1));
}

/* Try 'name' in each of 'dirs'; on success *ret holds the opened library. */
static bool try_dirs(const struct strv *dirs, const char *name, struct elf_file **ret)
{
	for (size_t i = 0; i < dirs->n; i++) {
		char path[PATH_MAX];

		if (snprintf(path, sizeof(path), "%s/%s", dirs->v[i], name) >= (int)sizeof(path))
			continue;
		if (access(path, F_OK) == 0 && elf_open(path, ret, NULL) == 0)
			return true;
	}
	return false;
}

static int find_library(const struct elf_file *needer, const struct elf_file *exe,
			const char *name, const struct strv *system_dirs, struct elf_file **ret)
{
	struct strv dirs = { 0 };
	char *origin = NULL;
	bool found;

	if (strchr(name, '/'))
		return elf_open(name, ret, NULL) == 0 ? 0 : -ENOENT;

	origin = origin_of(needer->path);
	if (!origin)
		return -ENOMEM;
	if (!needer->runpath) {
		if (needer->rpath)
			add_path_list(&dirs, needer->rpath, origin);
		if (exe != needer && exe->rpath && !exe->runpath) {
			char *exe_origin = origin_of(exe->path);

			add_path_list(&dirs, exe->rpath, exe_origin ? exe_origin : ".");
			free(exe_origin);
		}
	}
	add_path_list(&dirs, getenv("LD_LIBRARY_PATH"), origin);
	if (needer->runpath)
		add_path_list(&dirs, needer->runpath, origin);
	free(origin);

	found = try_dirs(&dirs, name, ret) || try_dirs(system_dirs, name, ret);
	strv_clear(&dirs);
	return found ? 0 : -ENOENT;
}

int elf_search_needed(const struct elf_file *ef, struct elf_file ***ret_libs, size_t *ret_n,
		      char ***ret_missing)
{
	struct strv system_dirs = { 0 }, seen = { 0 }, missing = { 0 };
	struct elf_file **libs = NULL;
	size_t n = 0, cap = 0;
	int r = 0;

	read_ld_conf("/etc/ld.so.conf", &system_dirs, 0);
	for (size_t i = 0; i < sizeof(default_dirs) / sizeof(default_dirs[0]); i++) {
		char *d = strv_contains(&system_dirs, default_dirs[i]) ? NULL :
									  strdup(default_dirs[i]);

		if (d && strv_push(&system_dirs, d) < 0)
			free(d);
	}

	/* Breadth first over the dependency graph: the executable's needs
	 * first, then each library's, as the loader orders its search list. */
	const struct elf_file *needer = ef;

	for (size_t at = 0;; at++) {
		for (size_t i = 0; i < needer->nneeded; i++) {
			const char *name = needer->needed[i];
			struct elf_file *lib;
			char *copy;

			if (strv_contains(&seen, name))
				continue;
			copy = strdup(name);
			if (!copy || strv_push(&seen, copy) < 0) {
				free(copy);
				r = -ENOMEM;
				goto fail;
			}
			if (find_library(needer, ef, name, &system_dirs, &lib) < 0) {
				copy = strdup(name);
				if (!copy || strv_push(&missing, copy) < 0) {
					free(copy);
					r = -ENOMEM;
					goto fail;
				}
				continue;
			}
			if (array_grow((void **)&libs, &cap, n + 1, sizeof(*libs)) < 0) {
				elf_close(lib);
				r = -ENOMEM;
				goto fail;
			}
			libs[n++] = lib;
		}
		if (at >= n)
			break;
		needer = libs[at];
	}

	strv_clear(&system_dirs);
	strv_clear(&seen);
	if (!missing.v && strv_push(&missing, NULL) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	*ret_libs = libs;
	*ret_n = n;
	*ret_missing = missing.v;
	return 0;
fail:
	for (size_t i = 0; i < n; i++)
		elf_close(libs[i]);
	free(libs);
	strv_clear(&system_dirs);
	strv_clear(&seen);
	strv_clear(&missing);
	return r;
}

int elf_resolve_needed(const struct elf_file *ef, struct elf_file ***ret_libs, size_t *ret_n,
		       char ***ret_missing, enum elf_libs_how *ret_how)
{
	enum elf_libs_how how = ELF_LIBS_LOADER;
	int r;

	if (!ef->interp) {
		/* Static: nothing to load. */
		how = ELF_LIBS_STATIC;
		r = elf_search_needed(ef, ret_libs, ret_n, ret_missing);
	} else {
		r = elf_loader_needed(ef, ret_libs, ret_n, ret_missing);
		if (r == -ENOENT) {
			/* No loader here: the program cannot run, and no
			 * library it names would be loaded. */
			struct elf_file **none = calloc(1, sizeof(*none));
			char **missing = calloc(1, sizeof(*missing));

			how = ELF_LIBS_NO_INTERP;
			r = none && missing ? 0 : -ENOMEM;
			if (r == 0) {
				*ret_libs = none;
				*ret_n = 0;
				*ret_missing = missing;
			} else {
				free(none);
				free(missing);
			}
		} else if (r < 0 && r != -ENOMEM) {
			how = ELF_LIBS_SEARCHED;
			r = elf_search_needed(ef, ret_libs, ret_n, ret_missing);
		}
	}
	if (r == 0 && ret_how)
		*ret_how = how;
	return r;
}

void elf_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

int elf_scope_open(struct elf_file *binary, bool libs, struct elf_scope *ret)
{
	enum elf_libs_how how = ELF_LIBS_NONE;
	struct elf_file **found = NULL;
	char **missing = NULL;
	size_t n = 0;
	int r;

	if (libs) {
		r = elf_resolve_needed(binary, &found, &n, &missing, &how);
		if (r < 0)
			return r;
	} else {
		missing = calloc(1, sizeof(*missing));
		if (!missing)
			return -ENOMEM;
	}
	struct elf_file **objs = calloc(n + 1, sizeof(*objs));

	if (!objs) {
		for (size_t i = 0; i < n; i++)
			elf_close(found[i]);
		free(found);
		elf_strv_free(missing);
		return -ENOMEM;
	}
	objs[0] = binary;
	if (n)
		memcpy(objs + 1, found, n * sizeof(*found));
	free(found);
	*ret = (struct elf_scope){ .objs = objs, .n = n + 1, .missing = missing, .how = how };
	return 0;
}

void elf_scope_close(struct elf_scope *s)
{
	for (size_t i = 1; i < s->n; i++)
		elf_close(s->objs[i]);
	free(s->objs);
	elf_strv_free(s->missing);
	*s = (struct elf_scope){ 0 };
}

const char **elf_scope_names(const struct elf_scope *s, size_t *ret_n)
{
	size_t total = 0, m = 0;
	const char **names;

	for (size_t j = 0; j < s->n; j++)
		total += elf_symbol_count(s->objs[j]);
	names = calloc(total ? total : 1, sizeof(*names));
	if (!names)
		return NULL;
	for (size_t j = 0; j < s->n; j++)
		for (size_t i = 0; i < elf_symbol_count(s->objs[j]); i++)
			names[m++] = elf_symbol(s->objs[j], i)->demangled;
	*ret_n = m;
	return names;
}
