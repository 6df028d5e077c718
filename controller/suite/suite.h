/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_SUITE_H
#define BENCHTRAP_SUITE_H

/*
 * The kinds of suite (suite.c): a row per kind of benchmark binary, as the
 * instrument is a row of measure/instruments.c, so that each measurement
 * is one cell of a (suite kind x instrument) matrix. A row says how a
 * binary of its kind is recognized, how its benchmarks are listed and made
 * into bench_specs, and, per instrument, what runs them (or why nothing
 * does) and which options apply. cli/ reads the rows and never asks which
 * kind a binary is.
 *
 * Rows: Google Benchmark (controller/gbench/), then the native row, last:
 * any binary, its target-stub registrations and --symbol functions, which
 * measure_select() selects. --symbol selects functions through
 * measure_select() whatever the kind; their specs are the native row's.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "measure/measure.h"
#include "measure/own.h" /* struct suite_ctx, what a kind gets */

struct elf_file;

struct own_cell;

struct suite_leaf {		   /* one cell: kind x instrument */
	measure_run_fn *run;	   /* an instrument's own run (the native row), or NULL */
	measure_paired_fn *paired; /* compare BASE HEAD alternating the two builds; NULL: each
				      build measured in turn */
	const struct own_cell *own; /* or a cell of a kind that runs its own main, instance by
				       instance (measure/own.h); both NULL: refused */
	const char *refusal;	   /* why not, when neither runs ("valgrind cannot ...") */
	unsigned options;	   /* MEASURE_OPT_* that apply in this cell, and
				      SUITE_PRELOADS */
};

/* Not an option: the cell preloads a library into the target, so a static
 * binary cannot be measured in it. */
#define SUITE_PRELOADS (1u << 31)

struct suite_kind {
	const char *name;  /* the list document's "framework": "benchtrap", "gbench", "criterion" */
	const char *title; /* for people: "Google Benchmark", "criterion" */
	bool (*detect)(struct elf_file *ef); /* NULL: any binary (the native row, last) */
	bool lists_by_running; /* listing runs the binary: done guarded (no process outlives it) */
	const char *const *reserved; /* target arguments after "--" that would change what
					benchtrap selects or reads; NULL-terminated or NULL */
	/* Its options that take the next word as their value ("--sample-count
	 * 5"; "?" at the end: only a next word "true" or "false"): a word that
	 * is none's value is a positional filter, which selects, and is
	 * refused too. NULL: positional words are the program's own. */
	const char *const *valued;
	/* The instances the binary has, by the names it gives them, in its
	 * order; NULL: measure_select() selects (the native row). */
	int (*list)(const struct suite_ctx *c, char ***ret_names, size_t *ret_n, char **ret_error);
	/* Fill one spec for instance 'name' (name, object, symbol/link_addr of the function that
	 * runs one batch when known, build_id, in_main, registered; its kind, when left NULL,
	 * is this row). */
	int (*spec)(const struct suite_ctx *c, const char *name, struct bench_spec *ret);
	struct suite_leaf leaf[MEASURE_N_INSTRUMENTS];
	/* Each instance runs in a fresh process of its own, exec and all: the
	 * run's isolation is "process" whatever --isolation says. */
	bool fresh_process;
	const char *doc; /* the page that says how it is measured ("docs/gbench.md"), or NULL */
	/* Instance names as the binary gives them, for --help: "'fib/20'". */
	const char *examples;
	/* Why the instruments' options do not apply to it, said with the
	 * refusal of one ("its own ->Threads() are ..."), or NULL. */
	const char *options_note;
	/* Frees what the kind keeps for as long as its results are read
	 * (interned counter names), once the last is written; or NULL. */
	void (*release)(void);
};

const struct suite_kind *suite_kind_of(struct elf_file *ef); /* first row whose detect says yes */

/* The rows, the native one last; *ret_n of them. */
const struct suite_kind *suite_kinds(size_t *ret_n);

/* The native row (detect NULL, the last): what --symbol specs are. */
const struct suite_kind *suite_native(void);

/* Every row's release(), after the last result is written. */
void suite_release(void);

/* Whether cell l measures at all; whether it pairs two builds. */
bool suite_leaf_runs(const struct suite_leaf *l);
bool suite_leaf_pairs(const struct suite_leaf *l);

/* Cell l of instrument 'in' run on specs[0..n), as measure_run_fn. */
int suite_leaf_run(const struct suite_leaf *l, enum measure_instrument_id in,
		   const struct measure_target *t, const struct bench_spec *specs, size_t n,
		   const struct measure_plan *plan, enum measure_isolation iso,
		   const struct measure_opts *opts, const struct measure_hooks *hooks,
		   struct bench_result *results, char **ret_error);

/* Cell l pairing two builds (suite_leaf_pairs), as measure_paired_fn. */
int suite_leaf_paired(const struct suite_leaf *l, enum measure_instrument_id in,
		      const struct measure_target *base, const struct measure_target *head,
		      const struct bench_spec *bspecs, const struct bench_spec *hspecs, size_t n,
		      const struct measure_plan *plan, const struct measure_hooks *hooks,
		      struct bench_result *bres, struct bench_result *hres, char **ret_error);

/* The reserved target argument of k that args[0..n) holds ("--v=2" for
 * "--v"), or NULL. */
const char *suite_reserved_arg(const struct suite_kind *k, char *const *args, int n);

#endif
