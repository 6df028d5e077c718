/* SPDX-License-Identifier: MIT */
/*
 * The environment of a target run with benchtrap's driver library
 * preloaded (callgrind and perf instruments), and finding that library.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/measure-config.h"
#include "measure/driver-env.h"

/* A --symbol call's arguments all reach the driver. */
_Static_assert(MEASURE_MAX_ARGS <= DRIVER_MAX_ARGS, "the driver takes fewer arguments");

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

char **measure_driver_env(const struct bench_spec *const *specs, size_t n, const char *driver,
			  const char *exe)
{
	char **env = NULL;
	size_t m = 0;
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++) {
		const struct bench_spec *s = specs[i];
		char buf[64 + 17 * MEASURE_MAX_ARGS];
		int len = snprintf(buf, sizeof(buf), DRIVER_ENV_ENTRY "%zu=%016" PRIx64, i,
				   s->link_addr);

		for (unsigned a = 0; a < s->nargs && a < MEASURE_MAX_ARGS; a++)
			len += snprintf(buf + len, sizeof(buf) - (size_t)len, " %016" PRIx64,
					(uint64_t)s->args[a]);
		r = measure_env_push(&env, &m, strdup(buf));
		if (r == 0 && !s->in_main) {
			char *o;

			if (asprintf(&o, DRIVER_ENV_ENTRY "%zu" DRIVER_ENV_OBJECT "=%s", i,
				     s->object) < 0)
				o = NULL;
			r = measure_env_push(&env, &m, o);
		}
	}
	if (r == 0) {
		char *c;

		if (asprintf(&c, DRIVER_ENV_COUNT "=%zu", n) < 0)
			c = NULL;
		r = measure_env_push(&env, &m, c);
	}
	if (r == 0 && driver) {
		char *p;

		if (asprintf(&p, "LD_PRELOAD=%s", driver) < 0)
			p = NULL;
		r = measure_env_push(&env, &m, p);
	}
	if (r == 0 && exe) {
		char *e;

		if (asprintf(&e, DRIVER_ENV_EXE "=%s", exe) < 0)
			e = NULL;
		r = measure_env_push(&env, &m, e);
	}
	if (r) {
		measure_env_free(env);
		return NULL;
	}
	return env;
}

/* BENCHTRAP_DRIVER_LIB, else driver/ next to the executable (a build
 * tree), else the install path. */
char *measure_find_driver(void)
{
	const char *env = getenv("BENCHTRAP_DRIVER_LIB");
	char exe[PATH_MAX], *p;
	ssize_t len;

	if (env && *env)
		return access(env, R_OK) == 0 ? strdup(env) : NULL;
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0) {
		exe[len] = '\0';
		*strrchr(exe, '/') = '\0';
		if (asprintf(&p, "%s/driver/libbenchtrap-driver.so", exe) >= 0) {
			if (access(p, R_OK) == 0)
				return p;
			free(p);
		}
	}
	return access(BENCHTRAP_DRIVER_INSTALL_PATH, R_OK) == 0 ?
		       strdup(BENCHTRAP_DRIVER_INSTALL_PATH) :
		       NULL;
}
