/* SPDX-License-Identifier: MIT */
/*
 * The kinds of suite, one row each (suite.h, docs/architecture.md): how a
 * binary of the kind is recognized, listed and made into specs, and per
 * instrument the cell that measures it. The first row whose detect() says
 * yes is the binary's kind; the native row, last, takes any binary.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf.h"
#include "gbench/gbench.h"
#include "criterion/criterion.h"
#include "divan/divan.h"
#include "measure/own.h"
#include "suite/suite.h"

/* ---- the rows ------------------------------------------------------------- */

static struct suite_kind kinds[] = {
	{
		/* Google Benchmark (controller/gbench/, docs/gbench.md). */
		.name = "gbench",
		.title = "Google Benchmark",
		.detect = gbench_detect,
		.lists_by_running = true,
		.reserved = gbench_reserved,
		.list = gbench_list,
		.spec = gbench_spec,
		.fresh_process = true,
		.doc = "docs/gbench.md",
		.examples = "'BM_memcpy/8', 'BM_x/threads:2'",
		.options_note = "each instance runs alone in a process of its own, and its own "
				"->Threads() are benchmarks of their own",
		.release = gbench_strings_clear,
		/* Its own ->Threads() are benchmarks of their own; each instance
		 * runs in a process of its own: no option of the instruments
		 * applies. */
		.leaf = {
			[MEASURE_WALLTIME] = { .own = &gbench_walltime_cell },
			[MEASURE_CALLGRIND] = { .own = &gbench_callgrind_cell },
			[MEASURE_PERF] = {
				.refusal = "perf counts the calls its driver makes in place of "
					   "main, and a benchmark's function needs the State "
					   "that Google Benchmark's own main makes",
			},
			[MEASURE_MEMORY] = { .own = &gbench_memory_cell },
		},
	},
	{
		/* Rust criterion suites (controller/criterion/, docs/criterion.md). */
		.name = "criterion",
		.title = "criterion",
		.detect = criterion_detect,
		.lists_by_running = true,
		.reserved = criterion_reserved,
		.valued = criterion_valued,
		.list = criterion_list,
		.spec = criterion_spec,
		.fresh_process = true,
		.doc = "docs/criterion.md",
		.examples = "'fib/20', 'group/chase'",
		.leaf = {
			[MEASURE_WALLTIME] = { .own = &criterion_walltime_cell },
			[MEASURE_CALLGRIND] = { .own = &criterion_callgrind_cell },
			[MEASURE_PERF] = {
				.refusal = "perf counts the calls its driver makes in place of "
					   "main, and criterion's batch function needs the "
					   "Bencher that criterion's own main makes",
			},
			[MEASURE_MEMORY] = { .own = &criterion_memory_cell },
		},
	},
	{
		/* Rust divan suites (controller/divan/, docs/divan.md). */
		.name = "divan",
		.title = "divan",
		.detect = divan_detect,
		.lists_by_running = true,
		.reserved = divan_reserved,
		.valued = divan_valued,
		.list = divan_list,
		.spec = divan_spec,
		.fresh_process = true,
		.doc = "docs/divan.md",
		.examples = "'crate::fib', 'crate::fib::20', 'crate::work/threads:2'",
		.options_note = "each instance runs alone in a process of its own, and each "
				"thread count of its threads = [...] is an instance of its own",
		.leaf = {
			[MEASURE_WALLTIME] = { .own = &divan_walltime_cell },
			[MEASURE_CALLGRIND] = { .own = &divan_callgrind_cell },
			[MEASURE_PERF] = {
				.refusal = "perf counts the calls its driver makes in place of "
					   "main, and a divan benchmark needs the Bencher that "
					   "divan's own main makes",
			},
			[MEASURE_MEMORY] = { .own = &divan_memory_cell },
		},
	},
	{
		/* Any binary: its target-stub registrations and the functions
		 * --symbol names, selected by measure_select(); each cell is its
		 * instrument's row (native_cells()). */
		.name = "benchtrap",
		.title = "benchtrap",
	},
};

#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

/* The native row's cells are the instruments' rows: filled from them once,
 * before the first row is read (the command line reads them from its one
 * thread). */
static void native_cells(void)
{
	struct suite_kind *k = &kinds[NKINDS - 1];
	size_t n;
	const struct measure_instrument *ins;

	if (k->leaf[MEASURE_WALLTIME].run)
		return;
	ins = measure_instruments(&n);
	for (size_t i = 0; i < n; i++) {
		struct suite_leaf *l = &k->leaf[ins[i].id];

		l->run = ins[i].run;
		l->options =
			ins[i].options |
			(measure_instrument_has(&ins[i], MEASURE_PRELOADS) ? SUITE_PRELOADS : 0);
		if (measure_instrument_has(&ins[i], MEASURE_PAIRABLE))
			l->paired = measure_walltime_paired;
	}
}

const struct suite_kind *suite_kind_of(struct elf_file *ef)
{
	native_cells();
	for (size_t i = 0; i + 1 < NKINDS; i++)
		if (kinds[i].detect(ef))
			return &kinds[i];
	return &kinds[NKINDS - 1];
}

const struct suite_kind *suite_kinds(size_t *ret_n)
{
	native_cells();
	*ret_n = NKINDS;
	return kinds;
}

const struct suite_kind *suite_native(void)
{
	native_cells();
	return &kinds[NKINDS - 1];
}

void suite_release(void)
{
	for (size_t i = 0; i < NKINDS; i++)
		if (kinds[i].release)
			kinds[i].release();
}

/* Whether option word a is 'name' or 'name=...'. */
static bool is_option(const char *a, const char *name, size_t l)
{
	return !strncmp(a, name, l) && (a[l] == '=' || a[l] == '\0');
}

/* How many words after args[i] are its value: 0 or 1. */
static int value_words(const struct suite_kind *k, char *const *args, int i, int n)
{
	for (size_t v = 0; k->valued && k->valued[v] && i + 1 < n; v++) {
		size_t l = strlen(k->valued[v]);
		bool optional = l && k->valued[v][l - 1] == '?';

		l -= optional;
		if (strncmp(args[i], k->valued[v], l) || args[i][l] != '\0')
			continue;
		return !optional || !strcmp(args[i + 1], "true") || !strcmp(args[i + 1], "false");
	}
	return 0;
}

const char *suite_reserved_arg(const struct suite_kind *k, char *const *args, int n)
{
	bool words = false; /* past a "--": every word positional */

	for (int i = 0; i < n; i++) {
		for (size_t r = 0; !words && k->reserved && k->reserved[r]; r++)
			if (is_option(args[i], k->reserved[r], strlen(k->reserved[r])))
				return args[i];
		if (!k->valued)
			continue;
		if (!words && !strcmp(args[i], "--")) {
			words = true;
			continue;
		}
		if (words || args[i][0] != '-' || !args[i][1])
			return args[i];
		i += value_words(k, args, i, n);
	}
	return NULL;
}

bool suite_leaf_runs(const struct suite_leaf *l)
{
	return l->run || l->own;
}

bool suite_leaf_pairs(const struct suite_leaf *l)
{
	return l->paired || (l->own && l->own->pair);
}

int suite_leaf_run(const struct suite_leaf *l, enum measure_instrument_id in,
		   const struct measure_target *t, const struct bench_spec *specs, size_t n,
		   const struct measure_plan *plan, enum measure_isolation iso,
		   const struct measure_opts *opts, const struct measure_hooks *hooks,
		   struct bench_result *results, char **ret_error)
{
	if (l->own)
		return own_measure(l->own, in, t, specs, n, plan, hooks, results, ret_error);
	return l->run(t, specs, n, plan, iso, opts, hooks, results, ret_error);
}

int suite_leaf_paired(const struct suite_leaf *l, enum measure_instrument_id in,
		      const struct measure_target *base, const struct measure_target *head,
		      const struct bench_spec *bspecs, const struct bench_spec *hspecs, size_t n,
		      const struct measure_plan *plan, const struct measure_hooks *hooks,
		      struct bench_result *bres, struct bench_result *hres, char **ret_error)
{
	if (l->own)
		return own_measure_paired(l->own, in, base, head, bspecs, hspecs, n, plan, hooks,
					  bres, hres, ret_error);
	return l->paired(base, head, bspecs, hspecs, n, plan, hooks, bres, hres, ret_error);
}
