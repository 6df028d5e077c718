/* SPDX-License-Identifier: MIT */
/*
 * A binary as a suite of its kind (suite/suite.h), for run and compare:
 * what is selected in it and which cell of the matrix measures each
 * selected benchmark. Nothing here knows a kind: it reads the kind's row
 * and the instrument's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/measure.h"
#include "suite/suite.h"
#include "util/launch.h"
#include "util/match.h"
#include "util/strutil.h"
#include "cli/cli.h"
#include "cli/runopts.h"

/* How long a binary that lists by running may take to list its benchmarks. */
#define LIST_TIMEOUT_NS 60000000000ull

int cli_suite_open(struct cli_suite *s, const char *path, const struct cli_run_opts *o)
{
	*s = (struct cli_suite){ .path = path };
	if (cli_open_binary(path, &s->ef) != 0)
		return EXIT_USAGE;
	s->kind = suite_kind_of(s->ef);
	/* Before anything runs the binary (a kind that lists by running
	 * passes it these arguments): a refused --benchmark_out=FILE must
	 * not have truncated FILE first. */
	if (o->ntarget_args) {
		const char *bad = suite_reserved_arg(s->kind, o->target_args, o->ntarget_args);

		if (bad)
			return cli_error("'%s' after '--' would change what benchtrap selects or "
					 "reads from %s: select with --bench GLOB (%s)",
					 bad, path, s->kind->doc ? s->kind->doc : "docs/instruments.md");
	}
	if (cli_measure_target(path, s->ef, o, &s->t, &s->argv, &s->exec_path) < 0)
		return cli_error("out of memory");
	return 0;
}

void cli_suite_clear(struct cli_suite *s)
{
	str_free_n(s->names, s->nnames);
	free(s->argv);
	free(s->exec_path);
	elf_close(s->ef);
	*s = (struct cli_suite){ 0 };
}

int cli_suite_names(struct cli_suite *s)
{
	struct suite_ctx c = {
		.binary = s->path, .ef = s->ef, .t = &s->t, .list_timeout_ns = LIST_TIMEOUT_NS
	};
	char *error = NULL;
	int r;

	if (s->listed)
		return 0;
	/* A kind that lists by running the binary runs its constructors:
	 * whatever they start (a daemon that left the process group) must
	 * not outlive the command, so the command goes on in a guarded
	 * worker, the child subreaper that adopts such processes, as the
	 * commands that run benchmarks are (main.c); and what the listing
	 * left is swept once it is done. */
	if (s->kind->lists_by_running && !launch_front()) {
		fflush(stdout);
		fflush(stderr);
		launch_guard();
	}
	r = s->kind->list(&c, &s->names, &s->nnames, &error);
	if (s->kind->lists_by_running)
		launch_sweep();
	if (r == -ENOMEM && !error)
		return cli_error("out of memory");
	if (r < 0) {
		cli_error("%s: cannot list its %s benchmarks: %s", s->path, s->kind->title,
			  error ? error : strerror(-r));
		free(error);
		return EXIT_USAGE;
	}
	s->listed = true;
	return 0;
}

/* Append *spec (moved) to sel. */
static int take(struct measure_selection *sel, struct bench_spec *spec)
{
	if (sel->n + 1 >= sel->cap) {
		size_t cap = sel->cap ? 2 * sel->cap : 16;
		struct bench_spec *v = realloc(sel->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + sel->n, 0, (cap - sel->n) * sizeof(*v));
		sel->v = v;
		sel->cap = cap;
	}
	sel->v[sel->n++] = *spec;
	*spec = (struct bench_spec){ 0 };
	return 0;
}

/* The instances of a kind that lists them: each that a --bench glob
 * matches (all without --bench), once, in the binary's order. */
static int select_listed(struct cli_suite *s, const struct cli_run_opts *o, bool *found,
			 struct measure_selection *sel, struct measure_miss *ret_miss)
{
	struct suite_ctx c = {
		.binary = s->path, .ef = s->ef, .t = &s->t, .list_timeout_ns = LIST_TIMEOUT_NS
	};
	bool *want = calloc(s->nnames + 1, sizeof(*want));
	int r = 0;

	if (!want)
		return -ENOMEM;
	for (size_t i = 0; i < s->nnames; i++)
		want[i] = !o->nbenches;
	if (!o->nbenches && found && s->nnames)
		found[0] = true;
	for (size_t b = 0; b < o->nbenches; b++) {
		bool hit = false;

		for (size_t i = 0; i < s->nnames; i++)
			if (match_glob(o->benches[b], s->names[i]) ||
			    !strcmp(o->benches[b], s->names[i]))
				want[i] = hit = true;
		if (hit && found)
			found[b] = true;
		if (hit || found)
			continue;
		*ret_miss = (struct measure_miss){ .what = MEASURE_MISS_BENCH,
						   .selector = o->benches[b] };
		match_suggest(o->benches[b], (const char *const *)s->names, s->nnames, 3,
			      ret_miss->suggest, sizeof(ret_miss->suggest));
		r = -ENOENT;
		goto out;
	}
	for (size_t i = 0; r == 0 && i < s->nnames; i++) {
		struct bench_spec spec;

		if (!want[i])
			continue;
		r = s->kind->spec(&c, s->names[i], &spec);
		/* Of the row that made it: a kind need not know its own row. */
		if (r == 0 && !spec.kind)
			spec.kind = s->kind;
		if (r == 0) {
			r = take(sel, &spec);
			bench_spec_clear(&spec);
		}
	}
out:
	free(want);
	return r;
}

int cli_suite_select(struct cli_suite *s, const struct cli_run_opts *o, bool *found,
		     struct measure_selection *ret, struct measure_miss *ret_miss)
{
	const struct suite_kind *native = suite_native();
	struct measure_selection fns = { 0 };
	bool listed = s->kind->list && (o->nbenches || !o->nsymbols);
	int r;

	/* --symbol always selects functions, whatever the kind; --bench the
	 * instances of a kind that lists them, or target-stub's
	 * registrations. */
	if (!s->kind->list)
		r = measure_select(s->ef, (const char *const *)o->benches, o->nbenches,
				   (const char *const *)o->symbols, o->nsymbols, found, &fns,
				   ret_miss);
	else if (o->nsymbols)
		r = measure_select(s->ef, NULL, 0, (const char *const *)o->symbols, o->nsymbols,
				   found ? found + o->nbenches : NULL, &fns, ret_miss);
	else
		r = 0;
	if (r < 0)
		goto out;
	if (listed) {
		r = cli_suite_names(s);
		if (r) {
			r = -ECANCELED;
			goto out;
		}
		r = select_listed(s, o, found, ret, ret_miss);
		if (r < 0)
			goto out;
	}
	for (size_t i = 0; r == 0 && i < fns.n; i++) {
		fns.v[i].kind = native;
		r = take(ret, &fns.v[i]);
	}
	for (size_t i = 0; i < ret->n; i++)
		if (!ret->v[i].kind)
			ret->v[i].kind = s->kind;
out:
	measure_selection_clear(&fns);
	return r;
}

/* The options given that a cell may not take, by MEASURE_OPT_* bit. */
static const struct {
	unsigned bit;
	const char *name;
} cell_options[] = {
	{ MEASURE_OPT_ISOLATION_SHARED, "--isolation shared" },
	{ MEASURE_OPT_THREADS, "--threads" },
	{ MEASURE_OPT_PROFILE, "--profile" },
	{ MEASURE_OPT_KEEP_PROFILES, "--keep-profiles" },
	{ MEASURE_OPT_CACHE_SIM, "--cache-sim" },
	{ MEASURE_OPT_ALLOC_STACKS, "--alloc-stacks" },
	{ MEASURE_OPT_WARMUP_CALLS, "--warmup-calls" },
};

static unsigned given_options(const struct cli_run_opts *o)
{
	return (o->isolation == MEASURE_ISOLATION_SHARED ? MEASURE_OPT_ISOLATION_SHARED : 0) |
	       (o->threads.n ? MEASURE_OPT_THREADS : 0) | (o->profile ? MEASURE_OPT_PROFILE : 0) |
	       (o->keep_profiles ? MEASURE_OPT_KEEP_PROFILES : 0) |
	       (o->cache_sim ? MEASURE_OPT_CACHE_SIM : 0) |
	       (o->alloc_stacks ? MEASURE_OPT_ALLOC_STACKS : 0) |
	       (o->warmup_calls_set ? MEASURE_OPT_WARMUP_CALLS : 0);
}

/* The instruments whose cell of kind k runs: "walltime, callgrind and
 * memory". */
static void running_cells(const struct suite_kind *k, char *buf, size_t size)
{
	const char *names[MEASURE_N_INSTRUMENTS + 1];
	size_t n = 0;

	for (int i = 0; i < MEASURE_N_INSTRUMENTS; i++)
		if (suite_leaf_runs(&k->leaf[i]))
			names[n++] = measure_instrument_of((enum measure_instrument_id)i)->name;
	names[n] = NULL;
	cli_join_and(names, buf, size);
}

/* The cell of kind k under o's instrument, for the benchmarks of s: 0, or
 * EXIT_USAGE having said why it cannot measure them as o asks. */
static int check_cell(const char *cmd, const struct cli_suite *s, const struct suite_kind *k,
		      const struct cli_run_opts *o)
{
	const struct measure_instrument *in = o->instrument;
	const struct suite_leaf *cell = &k->leaf[in->id];
	const char *doc = k->doc ? k->doc : "docs/instruments.md";
	const char *names[sizeof(cell_options) / sizeof(cell_options[0]) + 1];
	size_t n = 0;
	unsigned refused = given_options(o) & ~cell->options;
	const char *bad;
	char list[256], opts[256];

	if (!suite_leaf_runs(cell)) {
		running_cells(k, list, sizeof(list));
		return cli_error("%s: %s is a %s binary: --instrument %s does not measure one: %s "
				 "(%s do; %s)",
				 cmd, s->path, k->title, in->name,
				 cell->refusal ? cell->refusal : "not in this version", list, doc);
	}
	for (size_t i = 0; i < sizeof(cell_options) / sizeof(cell_options[0]); i++)
		if (refused & cell_options[i].bit)
			names[n++] = cell_options[i].name;
	names[n] = NULL;
	cli_join_and(names, opts, sizeof(opts));
	if (n)
		return cli_error("%s: %s is a %s binary: %s %s not apply to it under --instrument "
				 "%s (%s%s%s)",
				 cmd, s->path, k->title, opts, n > 1 ? "do" : "does", in->name,
				 k->options_note ? k->options_note : "",
				 k->options_note ? "; " : "", doc);
	bad = suite_reserved_arg(k, o->target_args, o->ntarget_args);
	if (bad)
		return cli_error("%s: '%s' after '--' would change what benchtrap selects or reads "
				 "from %s: select with --bench GLOB (%s)",
				 cmd, bad, s->path, doc);
	if ((cell->options & SUITE_PRELOADS) && !elf_is_dynamic(s->ef))
		return cli_error("%s is a static binary: the %s instrument preloads a library into "
				 "the target; %s",
				 s->path, in->name, cli_static_advice(in));
	return 0;
}

int cli_suite_check(const char *cmd, const struct cli_suite *s, const struct cli_run_opts *o,
		    const struct measure_selection *sel)
{
	const struct suite_kind *kinds[8];
	size_t nkinds = 0;

	/* The binary's kind when --bench (or nothing) selects in it, even when
	 * nothing is left of it (an empty shard); then each kind selected. */
	if (o->nbenches || !o->nsymbols)
		kinds[nkinds++] = s->kind;
	for (size_t i = 0; i < sel->n; i++) {
		size_t k = 0;

		while (k < nkinds && kinds[k] != sel->v[i].kind)
			k++;
		if (k == nkinds && nkinds < sizeof(kinds) / sizeof(kinds[0]))
			kinds[nkinds++] = sel->v[i].kind;
	}
	for (size_t k = 0; k < nkinds; k++) {
		int r = check_cell(cmd, s, kinds[k], o);

		if (r)
			return r;
	}
	return 0;
}

enum measure_isolation cli_suite_isolation(const struct cli_suite *s, const struct cli_run_opts *o)
{
	return s->kind->fresh_process && !o->nsymbols ? MEASURE_ISOLATION_PROCESS : o->isolation;
}

int cli_suite_run(const struct cli_suite *s, const struct cli_run_opts *o,
		  const struct bench_spec *specs, size_t n, const struct measure_hooks *hooks,
		  struct bench_result *results, char **ret_error)
{
	struct measure_opts mo = { .keep_profiles = o->keep_profiles,
				   .cache_sim = o->cache_sim,
				   .warmup_calls = o->warmup_calls,
				   .alloc_stacks = o->alloc_stacks,
				   .profile = o->profile,
				   .static_binary = !elf_is_dynamic(s->ef) };
	int r = 0;

	/* Each stretch of one kind by its cell. */
	for (size_t i = 0, j; r == 0 && i < n; i = j) {
		const struct suite_kind *k = specs[i].kind;

		for (j = i + 1; j < n && specs[j].kind == k;)
			j++;
		r = suite_leaf_run(&k->leaf[o->instrument->id], o->instrument->id, &s->t, specs + i,
				   j - i, &o->plan, o->isolation, &mo, hooks, results + i, ret_error);
	}
	return r;
}

int cli_suite_paired(const struct cli_suite *base, const struct cli_suite *head,
		     const struct cli_run_opts *o, const struct bench_spec *bspecs,
		     const struct bench_spec *hspecs, size_t n, const struct measure_hooks *hooks,
		     struct bench_result *bres, struct bench_result *hres, char **ret_error)
{
	int r = 0;

	for (size_t i = 0, j; r == 0 && i < n; i = j) {
		const struct suite_kind *k = hspecs[i].kind;
		const struct suite_leaf *cell = &k->leaf[o->instrument->id];

		for (j = i + 1; j < n && hspecs[j].kind == k;)
			j++;
		if (suite_leaf_pairs(cell)) {
			r = suite_leaf_paired(cell, o->instrument->id, &base->t, &head->t,
					      bspecs + i, hspecs + i, j - i, &o->plan, hooks,
					      bres + i, hres + i, ret_error);
			continue;
		}
		r = cli_suite_run(base, o, bspecs + i, j - i, hooks, bres + i, ret_error);
		if (r == 0)
			r = cli_suite_run(head, o, hspecs + i, j - i, hooks, hres + i, ret_error);
	}
	return r;
}
