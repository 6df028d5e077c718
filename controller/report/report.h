/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_REPORT_H
#define BENCHTRAP_REPORT_H

/*
 * Reporting a run: the results file (docs/results.md, schema
 * "benchtrap-results/1"), the text and Markdown tables, and marker lines.
 * jansson stays inside this module and results/, whose results/json.h
 * writes every document.
 */

#include <stdbool.h>
#include <stdio.h>

#include "elf/elf.h"
#include "measure/measure.h"
#include "results/results.h"

/* The environment of a run about to start (results.h, struct results_env):
 * the machine, and 'binary' as given. 0 or -ENOMEM; *ret untouched then. */
int report_env_collect(const struct elf_file *binary, bool aslr, const char *version,
		       struct results_env *ret);

struct report_run {
	struct results_env env;
	const char *instrument;
	const char *isolation; /* "benchmark" or "shared" */
	const struct measure_plan *plan;
	char **argv; /* the benchtrap command line */
	int argc;
	const struct bench_result *results;
	size_t n;
	/* A paired comparison (compare BASE_BINARY HEAD_BINARY): this is
	 * head's run and paired_base base's, written into "paired.base". */
	const struct report_run *paired_base;
	/* A run that a signal stopped (cli_stop_signals): that signal, and
	 * how many benchmarks were selected; results[0..n) are those measured
	 * before it. Written as "partial" (docs/results.md). 0 otherwise. */
	int stopped_by;
	size_t selected;
};

/* The results document, written to 'f', or atomically to 'path' (a temp
 * file in the same directory, then rename). 0 or a negative errno. */
int report_write_json(const struct report_run *run, FILE *f);
int report_write_json_file(const struct report_run *run, const char *path);
/* The same into a new string *ret, to free: 0 or -ENOMEM. */
int report_write_json_mem(const struct report_run *run, char **ret);

/*
 * The journal of a run (docs/results.md, "The journal"): each benchmark's
 * result on disk as soon as it is measured, so that a benchtrap killed
 * before the end (SIGKILL, a crash, the machine) loses nothing measured.
 * The file at 'path' is created (never one that exists: -EEXIST) and holds
 * lines: the first the run's document with no benchmarks and "journal":
 * true, then one benchmark object a line, each written by one write() to
 * the end of the file. A journal is a results file to every command that
 * reads one (results_load: the benchmarks it holds, marked partial).
 * report_journal_open() writes the first line; 0 or a negative errno.
 */
struct report_journal;
int report_journal_open(const char *path, const struct report_run *run,
			struct report_journal **ret);
/* Append r's line; its first failure (-ENOSPC) is kept and returned by
 * report_journal_close(), and nothing more is written. */
void report_journal_add(struct report_journal *j, const struct bench_result *r);
/* Close the journal, removing its file when 'remove' (the results file is
 * whole). Returns the first write error, or 0. NULL does nothing. */
int report_journal_close(struct report_journal *j, bool remove);
/* How many results it holds. */
size_t report_journal_count(const struct report_journal *j);
/* Whether the file at 'path' is a journal (its first line says so). */
bool report_is_journal(const char *path);

/* What a command prints (--format): a table for a terminal, Markdown for a
 * pull-request comment, or the JSON document. cli_parse_format() reads it. */
enum report_format { REPORT_TEXT, REPORT_MARKDOWN, REPORT_JSON };

/* The summary table, in Markdown for REPORT_MARKDOWN and as text otherwise;
 * failures and diagnostics follow it. 'color': ANSI colours (only ever for
 * a terminal without NO_COLOR). */
void report_print_table(const struct report_run *run, FILE *f, enum report_format fmt, bool color);

/* One JSON line for a marker event. */
void report_marker_line(FILE *f, const struct measure_event *ev);

/* ---- benchtrap list --json (list.c) ------------------------------------ */

/* A function listed, and the object (the binary or a library) defining it. */
struct report_list_symbol {
	const struct elf_file *object;
	const struct elf_symbol *symbol;
};

/* What `benchtrap list` selected. */
struct report_list {
	const struct elf_file *binary;
	const char *framework; /* the kind of suite (suite_kind.name): "benchtrap", "gbench" */
	/* Without --symbols: the registered benchmarks listed, or the
	 * instances a kind that lists them named (names, nnames). */
	const struct elf_bench *const *benches;
	size_t nbenches;
	const char *const *names;
	size_t nnames;
	/* With --symbols: the binary and its libraries (NULL without), and the
	 * functions listed. */
	const struct elf_scope *scope;
	const struct report_list_symbol *symbols;
	size_t nsymbols;
};

/* The list as JSON (docs/list.md, schema "benchtrap-list/1"): the
 * benchmarks (registered, or named by the binary), or with a scope the
 * functions; one shape for every kind, with its "framework". 0 or a
 * negative errno. */
int report_list_json(const struct report_list *l, FILE *f);

/* ---- benchtrap compare (compare.c) ------------------------------------- */

/* "this change degrades performance by 1.6% (geometric mean of 9 benchmarks)" */
void report_compare_summary(const struct results_comparison *c, char *buf, size_t size);

/* The summary line, the counts of each verdict, every pair (largest changes
 * first), warnings and notes. */
void report_compare_text(const struct results_comparison *c, FILE *f, bool color);

/* For a pull-request comment or a job summary: the summary as a heading, the
 * counts, a table of what changed, warnings, and every pair in a collapsed
 * <details> block. */
void report_compare_markdown(const struct results_comparison *c, FILE *f);

/* A Markdown report for a place that holds a limited number of bytes (a
 * pull-request comment: GitHub takes 65,536 characters). */
struct report_markdown_limit {
	size_t max_bytes;	 /* 0: no limit */
	const char *full_report; /* the URL of the whole report, or NULL */
};

/* The pairs a comment lists, in its order: failed, regressed, improved,
 * new, missing; within each verdict, the comparison's order (largest change
 * first). Unchanged pairs are left out. Writes the indices into c->pairs to
 * ret_order (room for c->n) and returns how many. */
size_t report_compare_changed_order(const struct results_comparison *c, size_t *ret_order);

/* How many rows, taken in order, fit in 'budget' bytes: the largest k with
 * sizes[0] + ... + sizes[k - 1] <= budget. */
size_t report_rows_fitting(const size_t *sizes, size_t n, size_t budget);

/* report_compare_markdown() in at most lim->max_bytes bytes. When the whole
 * report fits it is written as it is; otherwise the heading, the counts, as
 * many rows of the changed benchmarks as fit (in the order above), a line
 * saying how many changed and unchanged benchmarks are not shown with a link
 * to lim->full_report, and as many warnings as fit. Returns 0, -ENOMEM, or
 * -ENOSPC (nothing written) when even the heading and that line do not fit;
 * *ret_capped (may be NULL) says whether rows were left out. */
int report_compare_markdown_limited(const struct results_comparison *c,
				    const struct report_markdown_limit *lim, FILE *f,
				    bool *ret_capped);

/* The comparison as JSON (docs/ci.md, schema "benchtrap-compare/1"). 0 or a
 * negative errno. */
int report_compare_json(const struct results_comparison *c, const char *base, const char *head,
			FILE *f);

/* ---- benchtrap export (export.c) --------------------------------------- */

/* The export formats by name, in the order docs/ci.md ("Exports") gives
 * them: "bmf" (Bencher Metric Format), "gbench" (Google Benchmark JSON, for
 * its tools/compare.py), "gab" (github-action-benchmark, tool
 * customSmallerIsBetter). The i-th name, or NULL past the last. */
const char *report_export_name(size_t i);

/* What an export changed for its consumer, for the caller to say. */
struct report_export_notes {
	size_t shortened; /* names longer than the consumer takes, shortened */
	size_t limit;	  /* to this many bytes */
	size_t failed;	  /* failed benchmarks left out: they have no figure */
	size_t no_time;	  /* benchmarks that measured no time ("no_time": their
			   * figure is within the noise) left out */
	size_t exported;  /* benchmarks in the export */
};

/* 'rf' in the export format named 'format'. 0, -EINVAL for a name
 * report_export_name() does not give, or a negative errno. On success
 * *ret_notes (when not NULL) says what was shortened and left out. Every
 * format leaves out the same benchmarks: those without a figure (failed,
 * skipped, an observed function never called) and those that measured no
 * time, whose figure is within the noise (docs/ci.md, "Exports"). */
int report_export(const struct results_file *rf, const char *format, FILE *f,
		  struct report_export_notes *ret_notes);

/* "~" and 16 hex digits: what report_export_fit_name() puts after a prefix. */
#define REPORT_EXPORT_HASH_LEN 17

/*
 * 'name' when it has at most 'limit' bytes; otherwise its longest prefix
 * that ends on a UTF-8 character boundary and leaves room for "~" and the
 * 64-bit FNV-1a hash of the whole name in 16 hex digits, so that the result
 * has at most 'limit' bytes, is the same for the same name, and differs for
 * names that share the prefix. A copy to free, or NULL when out of memory.
 */
char *report_export_fit_name(const char *name, size_t limit);

/* ---- benchtrap observe (observe.c) ------------------------------------------ */

struct observe_result;

/* One observing run: the observed process's figures, for the results file
 * (instrument "observe") and the table. */
struct report_observe {
	struct results_env env;
	char **argv; /* the benchtrap command line */
	int argc;
	char *const *target_argv; /* the program's command, or NULL when attached */
	double duration_s;	  /* --duration, 0 for none */
	const struct observe_result *res;
};

int report_observe_json(const struct report_observe *run, FILE *f);
int report_observe_json_file(const struct report_observe *run, const char *path);
/* The table of observed functions, their histograms, then the calibration
 * and the diagnostics. */
void report_observe_table(const struct report_observe *run, FILE *f, enum report_format fmt,
			  bool color);

/* ---- benchtrap history (history.c) ------------------------------------ */

#include "history/history.h"

enum report_history_format { REPORT_HISTORY_TEXT, REPORT_HISTORY_JSON, REPORT_HISTORY_CSV };

/* `history show`: each series' points, as text, JSON ({"series": [{name,
 * instrument, unit, machine, points: [...]}]}) or CSV (a row a point). */
int report_history_series(FILE *f, const struct history_series *v, size_t n,
			  enum report_history_format fmt);
/* `history list`: the runs, as text or JSON. */
int report_history_runs(FILE *f, const struct history_run *v, size_t n,
			enum report_history_format fmt);
/* `history check`: every change point, with the commits either side, its
 * step and significance, then a summary; as text or JSON. */
int report_history_findings(FILE *f, const struct history_finding *v, size_t n, double threshold,
			    enum report_history_format fmt);

#endif
