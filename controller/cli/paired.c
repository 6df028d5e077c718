/* SPDX-License-Identifier: MIT */
/*
 * benchtrap compare BASE_BINARY HEAD_BINARY: measure two builds side by side
 * (each cell that pairs two builds alternating them, measure_walltime_paired
 * for any binary; else both in turn, as under a counting instrument),
 * write one results document holding both, and judge it as `compare` judges
 * two files (docs/compare.md).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/measure.h"
#include "report/report.h"
#include "results/results.h"
#include "util/atomic.h"
#include "suite/suite.h"
#include "cli/cli.h"
#include "cli/runopts.h"

/* One build: its binary, what was selected in it, and what came out. */
struct build {
	const char *path;
	struct cli_suite s; /* the binary, its kind, how it runs */
	struct measure_selection sel;
	struct bench_result *results; /* for sel.v, in report order: the common first */
	size_t n;
	struct report_run rep;
};

static void build_clear(struct build *b)
{
	for (size_t i = 0; b->results && i < b->n; i++)
		bench_result_clear(&b->results[i]);
	free(b->results);
	results_env_clear(&b->rep.env);
	measure_selection_clear(&b->sel);
	cli_suite_clear(&b->s);
}

/* The selection in one build: every selector that matches there (a
 * selector may match in one build only: a benchmark added or removed);
 * matched[i] is set for each selector i that does. */
static int select_in(struct build *b, const struct cli_run_opts *o, bool *matched,
		     struct measure_miss *ret_miss)
{
	return cli_suite_select(&b->s, o, matched, &b->sel, ret_miss);
}

/* Selector i (benches, then symbols; 0 for the default selection, every
 * registered benchmark) matched in neither build: say so, as run does, for
 * head. */
static int say_unmatched(struct build *head, const struct cli_run_opts *o, size_t i)
{
	struct measure_selection one = { 0 };
	struct measure_miss miss = { 0 };
	struct cli_run_opts only = *o;
	char *sel = NULL;

	only.nbenches = only.nsymbols = 0;
	if (i < o->nbenches) {
		sel = o->benches[i];
		only.benches = &sel;
		only.nbenches = 1;
	} else if (i < o->nbenches + o->nsymbols) {
		sel = o->symbols[i - o->nbenches];
		only.symbols = &sel;
		only.nsymbols = 1;
	}
	if (cli_suite_select(&head->s, &only, NULL, &one, &miss) != -ECANCELED)
		cli_say_miss("compare", head->path, &miss);
	measure_selection_clear(&one);
	measure_miss_clear(&miss);
	return EXIT_USAGE;
}

static const struct bench_spec *find_spec(const struct measure_selection *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return &s->v[i];
	return NULL;
}

/* Measure: the common benchmarks paired where their cell pairs two builds,
 * else in turn, then those of one side alone. */
static int measure(struct build *base, struct build *head, size_t ncommon,
		   const struct cli_run_opts *o, const struct measure_hooks *hooks,
		   char **ret_error)
{
	int r = cli_suite_paired(&base->s, &head->s, o, base->sel.v, head->sel.v, ncommon, hooks,
				 base->results, head->results, ret_error);

	if (r == 0)
		r = cli_suite_run(&base->s, o, base->sel.v + ncommon, base->n - ncommon, hooks,
				  base->results + ncommon, ret_error);
	if (r == 0)
		r = cli_suite_run(&head->s, o, head->sel.v + ncommon, head->n - ncommon, hooks,
				  head->results + ncommon, ret_error);
	return r;
}

/* Whether results[i] was measured to its end, not cut short by a stop. */
static bool measured(const struct bench_result *r)
{
	return r->ended && !r->interrupted;
}

/* Results [from, b->n) of build b: those a stop cut short cleared, the
 * others moved down to start at 'from'; b->n updated. */
static void keep_own(struct build *b, size_t from)
{
	size_t k = from;

	for (size_t i = from; i < b->n; i++) {
		if (!measured(&b->results[i])) {
			bench_result_clear(&b->results[i]);
			continue;
		}
		if (k != i) {
			b->results[k] = b->results[i];
			b->results[i] = (struct bench_result){ 0 };
		}
		k++;
	}
	b->n = k;
}

/*
 * After a stop (cli_stop_signals): what both builds measured whole. A
 * benchmark of both is kept only when both sides ended, so that the
 * common ones stay first and in step; one build's own are kept alone.
 */
static void keep_measured(struct build *base, struct build *head, size_t *ncommon)
{
	struct build *sides[2] = { base, head };
	size_t k = 0, nc = *ncommon;

	for (size_t i = 0; i < nc; i++) {
		bool both = measured(&base->results[i]) && measured(&head->results[i]);

		for (int s = 0; s < 2; s++) {
			struct bench_result *v = sides[s]->results;

			if (!both) {
				bench_result_clear(&v[i]);
				v[i] = (struct bench_result){ 0 };
			} else if (k != i) {
				v[k] = v[i];
				v[i] = (struct bench_result){ 0 };
			}
		}
		k += both;
	}
	for (int s = 0; s < 2; s++) {
		struct build *b = sides[s];

		/* Close the gap between the common ones kept and the own. */
		for (size_t i = nc; i < b->n; i++) {
			b->results[k + (i - nc)] = b->results[i];
			if (k + (i - nc) != i)
				b->results[i] = (struct bench_result){ 0 };
		}
		b->n -= nc - k;
		keep_own(b, k);
	}
	*ncommon = k;
}

static int open_build(struct build *b, const struct cli_run_opts *o)
{
	return cli_suite_open(&b->s, b->path, o);
}

/* Put the selection of build b in the order of ptrs[0..n) (each spec
 * moved, none copied). */
static int reorder(struct build *b, const struct bench_spec **ptrs, size_t n)
{
	struct bench_spec *v = calloc(n + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = *ptrs[i];
	free(b->sel.v);
	b->sel.v = v;
	b->sel.n = n;
	b->sel.cap = n + 1;
	b->n = n;
	b->results = calloc(n + 1, sizeof(*b->results));
	return b->results ? 0 : -ENOMEM;
}

/* The report order of each side: the benchmarks of both, in head's order,
 * then head's own, then base's own; *ret_ncommon of both. */
static int order(struct build *base, struct build *head, size_t *ret_ncommon)
{
	const struct bench_spec **bo = calloc(base->sel.n + 1, sizeof(*bo));
	const struct bench_spec **ho = calloc(head->sel.n + 1, sizeof(*ho));
	size_t nc = 0, nb, nh;
	int r = -ENOMEM;

	if (!bo || !ho)
		goto out;
	for (size_t i = 0; i < head->sel.n; i++) {
		const struct bench_spec *b = find_spec(&base->sel, head->sel.v[i].name);

		if (b) {
			ho[nc] = &head->sel.v[i];
			bo[nc++] = b;
		}
	}
	nh = nb = nc;
	for (size_t i = 0; i < head->sel.n; i++)
		if (!find_spec(&base->sel, head->sel.v[i].name))
			ho[nh++] = &head->sel.v[i];
	for (size_t i = 0; i < base->sel.n; i++)
		if (!find_spec(&head->sel, base->sel.v[i].name))
			bo[nb++] = &base->sel.v[i];
	r = reorder(base, bo, nb);
	if (r == 0)
		r = reorder(head, ho, nh);
	*ret_ncommon = nc;
out:
	free(bo);
	free(ho);
	return r;
}

/* The results document, held in memory and read back as `compare` reads
 * a file: what is judged is what --output writes. */
static int judge(const struct report_run *rep, const struct results_compare_opts *copts,
		 struct results_file **ret_file, struct results_comparison *ret)
{
	char *text = NULL, *msg = NULL;
	int r;

	r = report_write_json_mem(rep, &text);
	if (r == 0)
		r = results_parse(text, strlen(text), "paired comparison", ret_file, &msg);
	free(text);
	if (r < 0) {
		if (msg)
			cli_error("%s", msg);
		free(msg);
		return r;
	}
	r = results_compare((*ret_file)->paired_base, *ret_file, copts, ret);
	return r;
}

int cli_compare_conclude(const struct report_run *rep, const struct results_compare_opts *copts,
			 const struct cli_run_opts *o, const char *base_path, const char *head_path)
{
	struct results_file *doc = NULL;
	struct results_comparison cmp = { 0 };
	int r, code = EXIT_USAGE;

	r = judge(rep, copts, &doc, &cmp);
	if (r < 0) {
		if (r == -ENOMEM)
			cli_error("out of memory");
	} else {
		code = cli_compare_report(&cmp, o->format, base_path, head_path);
		fflush(stdout);
		if (o->output) {
			r = report_write_json_file(rep, o->output);
			if (r < 0)
				code = cli_results_unwritable(o->output, r);
		}
	}
	results_comparison_clear(&cmp);
	results_free(doc);
	return code;
}

int cli_compare_binaries(const char *base_path, const char *head_path, struct cli_run_opts *o,
			 const struct results_compare_opts *copts, int argc, char **argv)
{
	struct build base = { .path = base_path }, head = { .path = head_path };
	struct measure_miss miss = { 0 };
	struct cli_progress hs = { 0 };
	struct measure_hooks hooks = { cli_progress_event, &hs };
	char *error = NULL;
	bool *matched = NULL;
	size_t ncommon = 0;
	int r, code = EXIT_USAGE;

	if (cli_run_opts_check("compare", o) != 0)
		goto out;
	if (o->profile) {
		cli_error("compare: --profile does not apply to two binaries; profile each "
			  "with run --profile");
		goto out;
	}
	if (o->isolation == MEASURE_ISOLATION_SHARED) {
		cli_error("compare: --isolation shared does not apply to two binaries: each "
			  "benchmark runs in a fresh child of each build");
		goto out;
	}
	if (cli_check_output(o->output) || cli_open_markers(o->markers, &hs.markers))
		goto out;
	/* Both children of a pair on one CPU: two CPUs of a VM differ in
	 * speed, which identical code measured as changes of up to 20%. Not
	 * a benchmark on several threads (--threads), which would take turns
	 * on it. */
	bool cpu_single = o->cpu < 0;

	if (o->cpu < 0) {
		cpu_set_t set;

		if (sched_getaffinity(0, sizeof(set), &set) == 0)
			for (int c = 0; c < CPU_SETSIZE && o->cpu < 0; c++)
				if (CPU_ISSET(c, &set))
					o->cpu = c;
	}
	if (!o->sample_time_set)
		o->plan.sample_target_ns = MEASURE_PAIRED_SAMPLE_NS;
	if (open_build(&base, o) != 0 || open_build(&head, o) != 0)
		goto out;
	base.s.t.cpu_single = head.s.t.cpu_single = cpu_single;
	/* Instances named by a kind are two builds of one suite when both
	 * builds are of that kind; functions (--symbol alone) are any
	 * binary's. */
	if (base.s.kind != head.s.kind && (o->nbenches || !o->nsymbols)) {
		const struct build *named = base.s.kind->list ? &base : &head;
		const struct build *other = named == &base ? &head : &base;

		cli_error("compare: %s is a %s binary and %s is not: compare two builds of one "
			  "suite",
			  named->path, named->s.kind->title, other->path);
		goto out;
	}

	size_t nsel = o->nbenches + o->nsymbols;

	matched = calloc(nsel + 1, sizeof(*matched));
	if (!matched) {
		cli_error("out of memory");
		goto out;
	}
	r = select_in(&base, o, matched, &miss);
	if (r == 0)
		r = select_in(&head, o, matched, &miss);
	if (r == -EINVAL) {
		cli_say_miss("compare", head_path, &miss);
		goto out;
	}
	if (r == -ECANCELED)
		goto out;
	if (r == 0 && (cli_suite_check("compare", &base.s, o, &base.sel) != 0 ||
		       cli_suite_check("compare", &head.s, o, &head.sel) != 0))
		goto out;
	/* Each count is a benchmark of its own, paired and sharded as one. */
	if (r == 0 && (cli_select_threads("compare", base_path, o, &base.sel) != 0 ||
		       cli_select_threads("compare", head_path, o, &head.sel) != 0))
		goto out;
	/* A shard is chosen by name: the same part of both builds. */
	if (r == 0 && o->shard_n) {
		measure_select_shard(&base.sel, o->shard_k, o->shard_n);
		measure_select_shard(&head.sel, o->shard_k, o->shard_n);
	}
	if (r < 0 || order(&base, &head, &ncommon) < 0) {
		cli_error("out of memory");
		goto out;
	}
	/* A selector that matched in neither build is a mistake. */
	for (size_t i = 0; i < (nsel ? nsel : 1); i++)
		if (!matched[i]) {
			say_unmatched(&head, o, i);
			goto out;
		}
	if (!ncommon && o->shard_n && (base.n || head.n)) {
		cli_note("shard %u/%u holds no benchmark of both builds", o->shard_k, o->shard_n);
	} else if (!ncommon && o->shard_n) {
		cli_note("shard %u/%u holds none of the selected benchmarks", o->shard_k,
			 o->shard_n);
	} else if (!ncommon) {
		cli_error("compare: %s and %s have no benchmark in common (%zu selected in base, "
			  "%zu in head): nothing to compare",
			  base_path, head_path, base.n, head.n);
		goto out;
	}

	cli_progress_init(&hs, o, base.n + head.n);
	hs.head = head.results;
	hs.nhead = head.n;
	cli_stop_signals();
	r = measure(&base, &head, ncommon, o, &hooks, &error);
	cli_progress_end(&hs);
	/* What a stop refused to start is no fault of the binaries'. */
	if (r < 0 && !cli_stopped()) {
		char *nl = error ? strchr(error, '\n') : NULL;

		if (nl)
			*nl = '\0';
		if (r == -ENOMEM && !error)
			cli_error("out of memory");
		else
			cli_error("%s", error ? error : "cannot run the binaries");
		goto out;
	}

	struct build *sides[2] = { &base, &head };
	size_t selected[2] = { base.n, head.n }, common = ncommon;

	if (cli_stopped())
		keep_measured(&base, &head, &ncommon);
	for (int k = 0; k < 2; k++) {
		struct build *b = sides[k];

		if (report_env_collect(b->s.ef, o->aslr, BENCHTRAP_VERSION, &b->rep.env) < 0) {
			cli_error("out of memory");
			goto out;
		}
		b->rep.instrument = o->instrument->name;
		b->rep.isolation = measure_isolation_name(cli_suite_isolation(&b->s, o));
		b->rep.plan = &o->plan;
		b->rep.argv = argv;
		b->rep.argc = argc;
		b->rep.results = b->results;
		b->rep.n = b->n;
		if (cli_stopped()) {
			b->rep.stopped_by = cli_stopped();
			b->rep.selected = selected[k];
		}
	}
	head.rep.paired_base = &base.rep;
	code = cli_compare_conclude(&head.rep, copts, o, base_path, head_path);
	if (code != EXIT_USAGE &&
	    (cli_unwritten(base.results, base.n) || cli_unwritten(head.results, head.n)))
		code = EXIT_USAGE;
	if (cli_stopped() && code != EXIT_USAGE) {
		const char *abbrev = sigabbrev_np(cli_stopped());

		cli_note("stopped by SIG%s: %zu of %zu benchmarks of both builds measured and "
			 "judged%s%s%s",
			 abbrev ? abbrev : "?", ncommon, common, o->output ? " (in " : "",
			 o->output ? o->output : "", o->output ? ", marked partial)" : "");
		code = 128 + cli_stopped();
	}
out:
	if (cli_close_markers(&hs, o->markers, code != EXIT_USAGE))
		code = EXIT_USAGE;
	free(error);
	measure_miss_clear(&miss);
	free(matched);
	build_clear(&base);
	build_clear(&head);
	suite_release();
	return code;
}
