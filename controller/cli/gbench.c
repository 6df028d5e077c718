/* SPDX-License-Identifier: MIT */
/*
 * The command line for Google Benchmark binaries (docs/gbench.md): list,
 * run and compare take one as it is, by the names it gives its benchmarks.
 * list.c, run.c and paired.c hand over to these when gbench_detect() says
 * the binary is one.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "gbench/gbench.h"
#include "measure/measure.h"
#include "report/report.h"
#include "results/results.h"
#include "util/atomic.h"
#include "util/match.h"
#include "util/strutil.h"
#include "cli/cli.h"
#include "cli/gbench.h"
#include "cli/runopts.h"

/* How long the binary may take to list its benchmarks. */
#define LIST_TIMEOUT_NS 60000000000ull

/* Flags after '--' that would change what benchtrap selects or reads. */
static const char *const reserved[] = {
	"--benchmark_filter",
	"--benchmark_out",
	"--benchmark_out_format",
	"--benchmark_list_tests",
	"--benchmark_format",
	"--v",
	NULL,
};

static const char *reserved_arg(char *const *args, int n)
{
	for (int i = 0; i < n; i++)
		for (size_t k = 0; reserved[k]; k++) {
			size_t l = strlen(reserved[k]);

			if (!strncmp(args[i], reserved[k], l) &&
			    (args[i][l] == '=' || args[i][l] == '\0'))
				return args[i];
		}
	return NULL;
}

/* The instances, asked of the binary; EXIT_USAGE having said why not. */
static int ask_list(const char *binary, const struct measure_target *t, char ***names, size_t *n)
{
	char *error = NULL;
	int r = gbench_list(t, LIST_TIMEOUT_NS, names, n, &error);

	if (r == -ENOMEM && !error)
		return cli_error("out of memory");
	if (r < 0) {
		cli_error("%s: cannot list its Google Benchmark benchmarks: %s", binary,
			  error ? error : strerror(-r));
		free(error);
		return EXIT_USAGE;
	}
	return 0;
}

int cli_gbench_list(const char *binary, char **filters, size_t nfilters, bool json)
{
	char *argv[] = { (char *)binary, NULL };
	struct measure_target t = { .binary = binary, .argv = argv, .cpu = -1 };
	char **names = NULL;
	size_t n = 0;
	bool *keep = NULL;
	int r;

	r = ask_list(binary, &t, &names, &n);
	if (r)
		return r;
	keep = calloc(n + 1, sizeof(*keep));
	if (!keep) {
		r = cli_error("out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		keep[i] = !nfilters;
	for (size_t f = 0; f < nfilters; f++) {
		bool hit = false;

		for (size_t i = 0; i < n; i++)
			if (match_glob(filters[f], names[i]) || !strcmp(filters[f], names[i]))
				keep[i] = hit = true;
		if (!hit) {
			char buf[512];

			if (match_suggest(filters[f], (const char *const *)names, n, 3, buf,
					  sizeof(buf)))
				r = cli_error("%s: no benchmark matches '%s' (did you mean %s?)",
					      binary, filters[f], buf);
			else
				r = cli_error("%s: no benchmark matches '%s' (it lists %zu; run "
					      "without --filter to see them)",
					      binary, filters[f], n);
			goto out;
		}
	}
	if (json) {
		json_t *doc = json_object(), *arr = json_array();

		if (!doc || !arr) {
			json_decref(doc);
			json_decref(arr);
			r = cli_error("out of memory");
			goto out;
		}
		json_object_set_new(doc, "binary", json_string(binary));
		json_object_set_new(doc, "framework", json_string("gbench"));
		for (size_t i = 0; i < n; i++)
			if (keep[i])
				json_array_append_new(arr, json_pack("{s:s}", "name", names[i]));
		json_object_set_new(doc, "benchmarks", arr);
		json_dumpf(doc, stdout, JSON_INDENT(2));
		fputc('\n', stdout);
		json_decref(doc);
	} else {
		puts("BENCHMARK (Google Benchmark)");
		for (size_t i = 0; i < n; i++)
			if (keep[i])
				puts(names[i]);
	}
	r = EXIT_OK;
out:
	free(keep);
	str_free_n(names, n);
	return r;
}

/* The selection: each instance the binary lists that a --bench glob
 * matches (each once, in the binary's order), with its function for
 * callgrind. */
static int select_instances(const char *binary, struct elf_file *ef, struct cli_run_opts *o,
			    char **names, size_t n, struct measure_selection *sel)
{
	bool *take = calloc(n + 1, sizeof(*take));
	int r = 0;

	if (!take)
		return cli_error("out of memory");
	for (size_t i = 0; i < n; i++)
		take[i] = !o->nbenches;
	for (size_t b = 0; b < o->nbenches; b++) {
		bool hit = false;

		for (size_t i = 0; i < n; i++)
			if (match_glob(o->benches[b], names[i]) || !strcmp(o->benches[b], names[i]))
				take[i] = hit = true;
		if (!hit) {
			char buf[512];

			if (match_suggest(o->benches[b], (const char *const *)names, n, 3, buf,
					  sizeof(buf)))
				r = cli_error(
					"run: %s: no benchmark matches '%s' (did you mean %s?)",
					binary, o->benches[b], buf);
			else
				r = cli_error("run: %s: no benchmark matches '%s' (`benchtrap list "
					      "%s` shows the %zu it has)",
					      binary, o->benches[b], binary, n);
			goto out;
		}
	}
	sel->v = calloc(n + 1, sizeof(*sel->v));
	if (!sel->v) {
		r = cli_error("out of memory");
		goto out;
	}
	sel->cap = n + 1;
	for (size_t i = 0; i < n; i++) {
		struct bench_spec *s;

		if (!take[i])
			continue;
		s = &sel->v[sel->n++];
		s->name = strdup(names[i]);
		s->object = strdup(elf_path(ef));
		s->symbol = gbench_function(ef, names[i], &s->link_addr);
		s->build_id = elf_build_id(ef) ? strdup(elf_build_id(ef)) : NULL;
		s->in_main = true;
		s->registered = true;
		if (!s->name || !s->object) {
			r = cli_error("out of memory");
			goto out;
		}
	}
out:
	free(take);
	return r;
}

int cli_gbench_run(struct cli_run_opts *o, struct elf_file *ef, struct cli_progress *hs, int argc,
		   char **command)
{
	struct measure_selection sel = { 0 };
	struct measure_target t = { 0 };
	struct report_run rep = { 0 };
	struct bench_result *results = NULL;
	struct measure_hooks hooks = { cli_progress_event, hs };
	char **target_argv = NULL, *exec_path = NULL, *error = NULL, **names = NULL;
	const char *bad;
	size_t nnames = 0;
	int r, exit_code = EXIT_USAGE;

	if (o->instrument->id != MEASURE_WALLTIME && o->instrument->id != MEASURE_CALLGRIND &&
	    o->instrument->id != MEASURE_MEMORY) {
		cli_error("run: %s is a Google Benchmark binary: --instrument %s does not measure "
			  "one yet (walltime, callgrind and memory do; docs/gbench.md)",
			  o->binary, o->instrument->name);
		goto out;
	}
	if (o->isolation == MEASURE_ISOLATION_SHARED || o->threads.n || o->profile ||
	    o->keep_profiles || o->cache_sim || o->alloc_stacks || o->warmup_calls_set) {
		cli_error("run: %s is a Google Benchmark binary: --isolation shared, --threads, "
			  "--profile, --keep-profiles, --cache-sim, --alloc-stacks and "
			  "--warmup-calls do not apply to it (its own ->Threads() are benchmarks "
			  "of their own; docs/gbench.md)",
			  o->binary);
		goto out;
	}
	bad = reserved_arg(o->target_args, o->ntarget_args);
	if (bad) {
		cli_error("run: '%s' after '--' would change what benchtrap selects or reads from "
			  "%s: select with --bench GLOB (docs/gbench.md)",
			  bad, o->binary);
		goto out;
	}
	if (cli_measure_target(o->binary, ef, o, &t, &target_argv, &exec_path) < 0) {
		cli_error("out of memory");
		goto out;
	}
	cli_fatal_signals();
	if (ask_list(o->binary, &t, &names, &nnames))
		goto out;
	if (select_instances(o->binary, ef, o, names, nnames, &sel))
		goto out;
	if (o->shard_n) {
		size_t selected = sel.n;

		measure_select_shard(&sel, o->shard_k, o->shard_n);
		if (!sel.n)
			cli_note("shard %u/%u holds none of the %zu selected benchmarks",
				 o->shard_k, o->shard_n, selected);
	}
	results = calloc(sel.n + 1, sizeof(*results));
	if (!results) {
		cli_error("out of memory");
		goto out;
	}
	cli_progress_init(hs, o, sel.n);
	r = gbench_measure(&t, o->instrument->id, sel.v, sel.n, &o->plan, &hooks, results,
			   &error);
	cli_progress_end(hs);
	if (r < 0) {
		cli_error("%s", error ? error : "cannot run the binary");
		goto out;
	}
	if (report_env_collect(ef, o->aslr, BENCHTRAP_VERSION, &rep.env) < 0) {
		cli_error("out of memory");
		goto out;
	}
	rep.instrument = o->instrument->name;
	rep.isolation = measure_isolation_name(MEASURE_ISOLATION_PROCESS);
	rep.plan = &o->plan;
	rep.argv = command;
	rep.argc = argc;
	rep.results = results;
	rep.n = sel.n;
	exit_code = EXIT_OK;
	for (size_t i = 0; i < sel.n; i++)
		if (results[i].status != BENCH_OK)
			exit_code = EXIT_FAILED;
	if (o->format == REPORT_JSON) {
		if (report_write_json(&rep, stdout) < 0) {
			exit_code = cli_error("cannot write the results document: %s",
					      strerror(errno ? errno : EIO));
			goto out;
		}
	} else {
		report_print_table(&rep, stdout, o->format,
				   o->format == REPORT_TEXT && cli_color(stdout));
	}
	fflush(stdout);
	if (o->output) {
		r = report_write_json_file(&rep, o->output);
		if (r < 0)
			exit_code = cli_results_unwritable(o->output, r);
	}
out:
	results_env_clear(&rep.env);
	for (size_t i = 0; results && i < sel.n; i++)
		bench_result_clear(&results[i]);
	free(results);
	gbench_strings_clear();
	measure_selection_clear(&sel);
	str_free_n(names, nnames);
	free(error);
	free(target_argv);
	free(exec_path);
	return exit_code;
}

/* One build of a comparison. */
struct side {
	const char *path;
	struct elf_file *ef;
	struct measure_target t;
	char **targv, *exec_path, **names;
	size_t nnames;
	struct measure_selection sel; /* the common first, in head's order, then its own */
	struct bench_result *results;
	struct report_run rep;
};

static void side_clear(struct side *b)
{
	for (size_t i = 0; b->results && i < b->sel.n; i++)
		bench_result_clear(&b->results[i]);
	free(b->results);
	results_env_clear(&b->rep.env);
	measure_selection_clear(&b->sel);
	str_free_n(b->names, b->nnames);
	free(b->targv);
	free(b->exec_path);
	elf_close(b->ef);
}

static bool selected(const struct cli_run_opts *o, const char *name, bool *hits)
{
	bool take = !o->nbenches;

	for (size_t b = 0; b < o->nbenches; b++)
		if (match_glob(o->benches[b], name) || !strcmp(o->benches[b], name))
			take = hits[b] = true;
	return take;
}

static bool listed(const struct side *b, const char *name)
{
	for (size_t i = 0; i < b->nnames; i++)
		if (!strcmp(b->names[i], name))
			return true;
	return false;
}

/* Add instance 'name' of b to its selection. */
static int add_spec(struct side *b, const char *name)
{
	struct bench_spec *s = &b->sel.v[b->sel.n++];

	s->name = strdup(name);
	s->object = strdup(elf_path(b->ef));
	s->symbol = gbench_function(b->ef, name, &s->link_addr);
	s->build_id = elf_build_id(b->ef) ? strdup(elf_build_id(b->ef)) : NULL;
	s->in_main = s->registered = true;
	return s->name && s->object ? 0 : -ENOMEM;
}

int cli_gbench_compare(const char *base_path, const char *head_path, struct cli_run_opts *o,
		       const struct results_compare_opts *copts, int argc, char **argv,
		       bool *ret_handled)
{
	struct side base = { .path = base_path }, head = { .path = head_path };
	struct side *sides[2] = { &base, &head };
	struct cli_progress hs = { 0 };
	struct measure_hooks hooks = { cli_progress_event, &hs };
	bool *hits = NULL, walltime = o->instrument->id == MEASURE_WALLTIME;
	size_t ncommon = 0;
	char *error = NULL;
	const char *bad;
	int r, code = EXIT_USAGE;

	*ret_handled = false;
	for (int k = 0; k < 2; k++) {
		const char *what = NULL;

		if (elf_open(sides[k]->path, &sides[k]->ef, &what) < 0)
			goto out; /* said by the comparison of other binaries */
		if (gbench_detect(sides[k]->ef))
			*ret_handled = true;
	}
	if (!*ret_handled)
		goto out;
	if (o->nsymbols) {
		cli_error("compare: %s is a Google Benchmark binary: select its benchmarks with "
			  "--bench, not --symbol (docs/gbench.md)",
			  gbench_detect(base.ef) ? base_path : head_path);
		goto out;
	}
	for (int k = 0; k < 2; k++)
		if (!gbench_detect(sides[k]->ef)) {
			cli_error("compare: %s is a Google Benchmark binary and %s is not: compare "
				  "two builds of one suite",
				  sides[1 - k]->path, sides[k]->path);
			goto out;
		}
	if (o->instrument->id != MEASURE_WALLTIME && o->instrument->id != MEASURE_CALLGRIND &&
	    o->instrument->id != MEASURE_MEMORY) {
		cli_error("compare: Google Benchmark binaries: --instrument %s does not measure "
			  "them yet (walltime, callgrind and memory do; docs/gbench.md)",
			  o->instrument->name);
		goto out;
	}
	if (o->isolation == MEASURE_ISOLATION_SHARED || o->threads.n || o->profile ||
	    o->keep_profiles || o->cache_sim || o->alloc_stacks || o->warmup_calls_set) {
		cli_error("compare: Google Benchmark binaries: --isolation shared, --threads, "
			  "--profile, --keep-profiles, --cache-sim, --alloc-stacks and "
			  "--warmup-calls do not apply to them (docs/gbench.md)");
		goto out;
	}
	bad = reserved_arg(o->target_args, o->ntarget_args);
	if (bad) {
		cli_error("compare: '%s' after '--' would change what benchtrap selects or reads: "
			  "select with --bench GLOB (docs/gbench.md)",
			  bad);
		goto out;
	}
	if (cli_check_output(o->output) || cli_open_markers(o->markers, &hs.markers))
		goto out;
	cli_fatal_signals();
	for (int k = 0; k < 2; k++) {
		struct side *b = sides[k];

		if (cli_measure_target(b->path, b->ef, o, &b->t, &b->targv, &b->exec_path) < 0) {
			cli_error("out of memory");
			goto out;
		}
		if (ask_list(b->path, &b->t, &b->names, &b->nnames))
			goto out;
		b->sel.v = calloc(b->nnames + 1, sizeof(*b->sel.v));
		if (!b->sel.v) {
			cli_error("out of memory");
			goto out;
		}
		b->sel.cap = b->nnames + 1;
	}
	hits = calloc(o->nbenches + 1, sizeof(*hits));
	if (!hits) {
		cli_error("out of memory");
		goto out;
	}
	/* The common instances in head's order, then each build's own. */
	r = 0;
	for (size_t i = 0; r == 0 && i < head.nnames; i++)
		if (selected(o, head.names[i], hits) && listed(&base, head.names[i])) {
			r = add_spec(&base, head.names[i]);
			if (r == 0)
				r = add_spec(&head, head.names[i]);
			ncommon++;
		}
	for (int k = 0; r == 0 && k < 2; k++) {
		struct side *b = sides[k], *other = sides[1 - k];

		for (size_t i = 0; r == 0 && i < b->nnames; i++)
			if (selected(o, b->names[i], hits) && !listed(other, b->names[i]))
				r = add_spec(b, b->names[i]);
	}
	if (r < 0) {
		cli_error("out of memory");
		goto out;
	}
	for (size_t i = 0; i < o->nbenches; i++)
		if (!hits[i]) {
			cli_error("compare: no benchmark of %s or %s matches '%s' (`benchtrap list "
				  "%s` shows them)",
				  base_path, head_path, o->benches[i], head_path);
			goto out;
		}
	if (o->shard_n) {
		measure_select_shard(&base.sel, o->shard_k, o->shard_n);
		measure_select_shard(&head.sel, o->shard_k, o->shard_n);
		ncommon = 0;
		while (ncommon < base.sel.n && ncommon < head.sel.n &&
		       !strcmp(base.sel.v[ncommon].name, head.sel.v[ncommon].name))
			ncommon++;
	} else if (!ncommon) {
		cli_error("compare: %s and %s have no benchmark in common: nothing to compare",
			  base_path, head_path);
		goto out;
	}
	for (int k = 0; k < 2; k++) {
		sides[k]->results = calloc(sides[k]->sel.n + 1, sizeof(*sides[k]->results));
		if (!sides[k]->results) {
			cli_error("out of memory");
			goto out;
		}
	}
	cli_progress_init(&hs, o, base.sel.n + head.sel.n);
	hs.head = head.results;
	hs.nhead = head.sel.n;
	/* walltime: the common instances paired, round by round; the counting
	 * instruments are exact, each build measured in turn. */
	if (walltime) {
		r = gbench_measure_paired(&base.t, &head.t, base.sel.v, head.sel.v, ncommon,
					  &o->plan, &hooks, base.results, head.results, &error);
		for (int k = 0; r == 0 && k < 2; k++)
			r = gbench_measure(&sides[k]->t, MEASURE_WALLTIME, sides[k]->sel.v + ncommon,
					   sides[k]->sel.n - ncommon, &o->plan, &hooks,
					   sides[k]->results + ncommon, &error);
	} else {
		r = 0;
		for (int k = 0; r == 0 && k < 2; k++)
			r = gbench_measure(&sides[k]->t, o->instrument->id, sides[k]->sel.v,
					   sides[k]->sel.n, &o->plan, &hooks, sides[k]->results,
					   &error);
	}
	cli_progress_end(&hs);
	if (r < 0) {
		cli_error("%s", error ? error : "cannot run the binaries");
		goto out;
	}
	for (int k = 0; k < 2; k++) {
		struct side *b = sides[k];

		if (report_env_collect(b->ef, o->aslr, BENCHTRAP_VERSION, &b->rep.env) < 0) {
			cli_error("out of memory");
			goto out;
		}
		b->rep.instrument = o->instrument->name;
		b->rep.isolation = measure_isolation_name(MEASURE_ISOLATION_PROCESS);
		b->rep.plan = &o->plan;
		b->rep.argv = argv;
		b->rep.argc = argc;
		b->rep.results = b->results;
		b->rep.n = b->sel.n;
	}
	head.rep.paired_base = &base.rep;
	code = cli_compare_conclude(&head.rep, copts, o, base_path, head_path);
out:
	if (cli_close_markers(&hs, o->markers, code != EXIT_USAGE))
		code = EXIT_USAGE;
	gbench_strings_clear();
	free(error);
	free(hits);
	side_clear(&base);
	side_clear(&head);
	return code;
}
