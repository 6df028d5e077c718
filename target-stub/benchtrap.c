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

/* Whether the thread count 'i' of threaded benchmark 'e' repeats an
 * earlier one: it is run once. */
static bool count_repeated(const struct benchtrap_entry *e, uint32_t i)
{
	for (uint32_t j = 0; j < i; j++)
		if (e->args[j] == e->args[i])
			return true;
	return false;
}

/* The display name's suffix for argument or thread count 'i' of 'e':
 * "[20]", "[threads=2]", or "" (no argument; a threaded benchmark on one
 * thread alone). */
static void display_suffix(const struct benchtrap_entry *e, uint32_t i, char *buf, size_t size)
{
	buf[0] = '\0';
	if (e->magic == BENCHTRAP_MAGIC_THREADS) {
		if (e->nargs > 1 || e->args[0] != 1)
			snprintf(buf, size, "[threads=%" PRId64 "]", e->args[i]);
	} else if (e->nargs) {
		snprintf(buf, size, "[%" PRId64 "]", e->args[i]);
	}
}

/* Whether 'want' is the display name of benchmark 'e' with argument or
 * thread count index 'i' ("fib[20]", "counter[threads=2]"), or of 'e'
 * itself when it takes no argument ("empty"). */
static bool display_name_is(const char *want, const struct benchtrap_entry *e, uint32_t i)
{
	size_t len = strlen(e->name);
	char suffix[48];

	if (strncmp(want, e->name, len) != 0)
		return false;
	display_suffix(e, i, suffix, sizeof(suffix));
	return strcmp(want + len, suffix) == 0;
}

/* A threaded benchmark runs on this thread alone: the threads are
 * benchtrap's to create. */
static void run_one(const struct benchtrap_entry *e, uint32_t i)
{
	if (e->nargs == 0 || e->magic == BENCHTRAP_MAGIC_THREADS)
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

		if (e->magic != BENCHTRAP_MAGIC &&
		    (e->magic != BENCHTRAP_MAGIC_THREADS || e->nargs == 0)) {
			fprintf(stderr,
				"benchtrap: record %zu of section benchtrap_registry is not a "
				"benchmark (was something else placed in that section?)\n",
				(size_t)(e - __start_benchtrap_registry));
			return 2;
		}
		for (uint32_t i = 0; i < n; i++) {
			char suffix[48];

			if (e->magic == BENCHTRAP_MAGIC_THREADS && count_repeated(e, i))
				continue;
			count++;
			if (only) {
				if (!display_name_is(only, e, i))
					continue;
				run_one(e, i);
				return 0;
			}
			/* Name first, so a benchmark that crashes is the last line. */
			display_suffix(e, i, suffix, sizeof(suffix));
			printf("%s%s\n", e->name, suffix);
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
