/* SPDX-License-Identifier: MIT */
/*
 * The stand-alone runner of target-stub: what a program linked with
 * libbenchtrap-stub.a does when it is started without the controller, or by
 * a tool that cannot drive it from outside (valgrind, through
 * BENCHTRAP_RUN). It never times anything.
 */

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchtrap.h"

/*
 * Defined by the linker when at least one record exists; weak, so that a
 * program without registrations still links (both are then NULL). Hidden,
 * so that each executable or library sees its own section.
 */
extern const struct benchtrap_entry __start_benchtrap_registry[]
	__attribute__((weak, visibility("hidden")));
extern const struct benchtrap_entry __stop_benchtrap_registry[]
	__attribute__((weak, visibility("hidden")));

/* Whether 'want' is the display name of benchmark 'e' with argument index 'i'
 * ("fib[20]"), or of 'e' itself when it takes no argument ("empty"). */
static bool display_name_is(const char *want, const struct benchtrap_entry *e, uint32_t i)
{
	size_t len = strlen(e->name);
	char suffix[32];

	if (strncmp(want, e->name, len) != 0)
		return false;
	if (e->nargs == 0)
		return want[len] == '\0';
	snprintf(suffix, sizeof(suffix), "[%" PRId64 "]", e->args[i]);
	return strcmp(want + len, suffix) == 0;
}

static void run_one(const struct benchtrap_entry *e, uint32_t i)
{
	if (e->nargs == 0)
		e->fn();
	else
		((void (*)(int64_t))e->fn)(e->args[i]);
}

int benchtrap_main(int argc, char **argv)
{
	const struct benchtrap_entry *e;
	const char *only = getenv("BENCHTRAP_RUN");
	size_t count = 0;

	(void)argc;
	(void)argv;

	for (e = __start_benchtrap_registry; e < __stop_benchtrap_registry; e++) {
		uint32_t n = e->nargs ? e->nargs : 1;

		if (e->magic != BENCHTRAP_MAGIC) {
			fprintf(stderr,
				"benchtrap: record %zu of section benchtrap_registry is not a "
				"benchmark (was something else placed in that section?)\n",
				(size_t)(e - __start_benchtrap_registry));
			return 2;
		}
		for (uint32_t i = 0; i < n; i++) {
			count++;
			if (only) {
				if (!display_name_is(only, e, i))
					continue;
				run_one(e, i);
				return 0;
			}
			/* Name first, so a benchmark that crashes is the last line. */
			if (e->nargs == 0)
				printf("%s\n", e->name);
			else
				printf("%s[%" PRId64 "]\n", e->name, e->args[i]);
			fflush(stdout);
			run_one(e, i);
		}
	}

	if (only) {
		fprintf(stderr,
			"benchtrap: no benchmark named '%s' (run without BENCHTRAP_RUN to list "
			"them)\n",
			only);
		return 2;
	}
	if (count == 0)
		fprintf(stderr, "benchtrap: this program registers no benchmarks (see BENCHTRAP() "
				"in benchtrap.h)\n");
	return 0;
}

/* Weak, so that a program's own main() wins and may call benchtrap_main(). */
__attribute__((weak)) int main(int argc, char **argv)
{
	return benchtrap_main(argc, argv);
}
