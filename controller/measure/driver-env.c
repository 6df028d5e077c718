/* SPDX-License-Identifier: MIT */
/*
 * The environment of a target run with benchtrap's driver library
 * preloaded (callgrind and perf instruments), and finding that library.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/measure-config.h"
#include "measure/driver-env.h"


int measure_env_push(char ***v, size_t *n, char *s)
{
	char **nv;

	if (!s)
		return -ENOMEM;
	nv = realloc(*v, (*n + 2) * sizeof(*nv));
	if (!nv) {
		free(s);
		return -ENOMEM;
	}
	nv[(*n)++] = s;
	nv[*n] = NULL;
	*v = nv;
	return 0;
}

void measure_env_free(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

char **measure_child_env(const char *const *extra)
{
	const char *vglib = getenv("VALGRIND_LIB");
	char **env = NULL;
	size_t n = 0;
	int r = 0;

	r |= measure_env_push(&env, &n, strdup("PATH=" MEASURE_CHILD_PATH));
	r |= measure_env_push(&env, &n, strdup("LC_ALL=C"));
	/* Bind every symbol before main: otherwise the first call of each
	 * library function inside a benchmark runs the lazy binder. */
	r |= measure_env_push(&env, &n, strdup("LD_BIND_NOW=1"));
	if (vglib) {
		char *s;

		if (asprintf(&s, "VALGRIND_LIB=%s", vglib) < 0)
			s = NULL;
		r |= measure_env_push(&env, &n, s);
	}
	for (size_t i = 0; extra && extra[i]; i++)
		r |= measure_env_push(&env, &n, strdup(extra[i]));
	if (r) {
		measure_env_free(env);
		return NULL;
	}
	return env;
}

static char *readable(char *p)
{
	if (p && access(p, R_OK) == 0)
		return p;
	free(p);
	return NULL;
}

/* Beside $BENCHTRAP_DRIVER_LIB (a driver library's path), else in driver/
 * next to the executable (a build tree), else in the install directory. */
char *measure_find_driver(const char *name)
{
	const char *env = getenv("BENCHTRAP_DRIVER_LIB"), *slash;
	char dir[PATH_MAX], *p;
	ssize_t len;

	if (env && *env) {
		slash = strrchr(env, '/');
		if (asprintf(&p, "%.*s%s", slash ? (int)(slash - env + 1) : 0, env, name) < 0)
			return NULL;
		return readable(p);
	}
	len = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (len > 0) {
		dir[len] = '\0';
		*strrchr(dir, '/') = '\0';
		if (asprintf(&p, "%s/driver/%s", dir, name) >= 0 && (p = readable(p)))
			return p;
	}
	if (asprintf(&p, "%s/%s", BENCHTRAP_DRIVER_INSTALL_DIR, name) < 0)
		return NULL;
	return readable(p);
}

char **measure_env_with(const char *set, bool clean)
{
	const char *extra[] = { set, NULL };
	size_t l = strcspn(set, "="), n = 0;
	char **env = NULL;
	int r = 0;

	if (clean)
		return measure_child_env(extra);
	for (size_t i = 0; environ[i] && r == 0; i++)
		if (strncmp(environ[i], set, l + 1))
			r = measure_env_push(&env, &n, strdup(environ[i]));
	if (r == 0)
		r = measure_env_push(&env, &n, strdup(set));
	if (r < 0) {
		measure_env_free(env);
		return NULL;
	}
	return env;
}
