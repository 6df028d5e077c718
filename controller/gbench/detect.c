/* SPDX-License-Identifier: MIT */
/*
 * Recognizing a Google Benchmark binary by its symbols, and finding the
 * function of one of its benchmarks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf.h"
#include "gbench/gbench.h"

/* Mangled prefixes of the library's entry points (every overload). */
static const char *const entry_points[] = {
	"_ZN9benchmark22RunSpecifiedBenchmarks",
	"_ZN9benchmark8internal25RegisterBenchmarkInternal",
	NULL,
};

static bool defines_entry_point(const struct elf_file *ef)
{
	for (size_t i = 0; i < elf_symbol_count(ef); i++) {
		const char *name = elf_symbol(ef, i)->name;

		for (size_t k = 0; entry_points[k]; k++)
			if (!strncmp(name, entry_points[k], strlen(entry_points[k])))
				return true;
	}
	return false;
}

bool gbench_detect(struct elf_file *ef)
{
	struct elf_scope scope;
	bool found = false, needs = false;

	if (defines_entry_point(ef))
		return true;
	/* Only a binary that needs a library named like Google Benchmark's
	 * has its libraries read: this runs before every `run` and `list`. */
	for (size_t i = 0; i < elf_needed_count(ef); i++)
		if (strstr(elf_needed(ef, i), "benchmark"))
			needs = true;
	if (!needs || elf_scope_open(ef, true, &scope) < 0)
		return false;
	for (size_t i = 1; i < scope.n && !found; i++)
		found = defines_entry_point(scope.objs[i]);
	elf_scope_close(&scope);
	return found;
}

int gbench_function_candidates(const char *name, char *ret[GBENCH_MAX_CANDIDATES])
{
	const char *slash = strchr(name, '/');
	size_t l0 = slash ? (size_t)(slash - name) : strlen(name);
	int n = 0;

	/* BENCHMARK_F(Fix, Foo) and BENCHMARK_DEFINE_F register "Fix/Foo"
	 * and define Fix_Foo_Benchmark::BenchmarkCase. */
	if (slash) {
		const char *s2 = slash + 1;
		size_t l1 = strcspn(s2, "/");

		if (l1 && asprintf(&ret[n], "%.*s_%.*s_Benchmark::BenchmarkCase(benchmark::State&)",
				   (int)l0, name, (int)l1, s2) >= 0)
			n++;
		else if (l1)
			goto nomem;
	}
	if (asprintf(&ret[n], "%.*s(benchmark::State&)", (int)l0, name) < 0)
		goto nomem;
	n++;
	/* A template instance, BENCHMARK_TEMPLATE(BM_t, int): "BM_t<int>",
	 * demangled with its return type. */
	if (asprintf(&ret[n], "void %.*s(benchmark::State&)", (int)l0, name) < 0)
		goto nomem;
	n++;
	return n;
nomem:
	while (n > 0)
		free(ret[--n]);
	return -ENOMEM;
}

char *gbench_function(const struct elf_file *ef, const char *name, uint64_t *ret_addr)
{
	char *cand[GBENCH_MAX_CANDIDATES];
	char *found = NULL;
	int n = gbench_function_candidates(name, cand);

	for (int k = 0; k < n && !found; k++)
		for (size_t i = 0; i < elf_symbol_count(ef) && !found; i++)
			/* Not a part the compiler split off ("f.cold", "f.part.0"),
			 * which demangles alike: the function is where it starts. */
			if (!strchr(elf_symbol(ef, i)->name, '.') &&
			    !strcmp(elf_symbol(ef, i)->demangled, cand[k])) {
				found = strdup(cand[k]);
				if (found && ret_addr)
					*ret_addr = elf_symbol(ef, i)->addr;
			}
	for (int k = 0; k < n; k++)
		free(cand[k]);
	return found;
}
