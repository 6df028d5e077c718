/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_CLI_RUNOPTS_H
#define BENCHTRAP_CLI_RUNOPTS_H
/*
 * What to measure and how, as `run` and `compare BASE_BINARY HEAD_BINARY`
 * take it from the command line (runopts.c): selection, sampling, the
 * child, the instrument, markers. Each subcommand lists CLI_RUN_LONGOPTS in
 * its getopt table, passes what getopt returns to cli_run_option() and
 * checks the whole with cli_run_opts_check().
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "measure/measure.h"
#include "report/report.h"

enum cli_run_opt {
	CLI_OPT_BENCH = 0x100,
	CLI_OPT_SYMBOL,
	CLI_OPT_SHARD,
	CLI_OPT_WARMUP,
	CLI_OPT_TIME,
	CLI_OPT_SAMPLE_TIME,
	CLI_OPT_MIN_SAMPLES,
	CLI_OPT_MAX_SAMPLES,
	CLI_OPT_TIMEOUT,
	CLI_OPT_ISOLATION,
	CLI_OPT_ASLR,
	CLI_OPT_CPU,
	CLI_OPT_CLEAN_ENV,
	CLI_OPT_SHOW_OUTPUT,
	CLI_OPT_INPUT,
	CLI_OPT_INSTRUMENT,
	CLI_OPT_FORMAT,
	CLI_OPT_OUTPUT,
	CLI_OPT_MARKERS,
	CLI_OPT_KEEP_PROFILES,
	CLI_OPT_CACHE_SIM,
	CLI_OPT_WARMUP_CALLS,
	CLI_OPT_ALLOC_STACKS,
	CLI_OPT_PROFILE,
	CLI_OPT_THREADS,
	CLI_OPT_QUIET,
	CLI_OPT_RUN_END, /* a subcommand's own options from here */
};

/* clang-format off */
#define CLI_RUN_LONGOPTS                                                    \
	{ "bench", required_argument, NULL, CLI_OPT_BENCH },                \
	{ "symbol", required_argument, NULL, CLI_OPT_SYMBOL },              \
	{ "shard", required_argument, NULL, CLI_OPT_SHARD },                \
	{ "warmup", required_argument, NULL, CLI_OPT_WARMUP },              \
	{ "time", required_argument, NULL, CLI_OPT_TIME },                  \
	{ "sample-time", required_argument, NULL, CLI_OPT_SAMPLE_TIME },    \
	{ "min-samples", required_argument, NULL, CLI_OPT_MIN_SAMPLES },    \
	{ "max-samples", required_argument, NULL, CLI_OPT_MAX_SAMPLES },    \
	{ "timeout", required_argument, NULL, CLI_OPT_TIMEOUT },            \
	{ "isolation", required_argument, NULL, CLI_OPT_ISOLATION },        \
	{ "aslr", no_argument, NULL, CLI_OPT_ASLR },                        \
	{ "cpu", required_argument, NULL, CLI_OPT_CPU },                    \
	{ "clean-env", no_argument, NULL, CLI_OPT_CLEAN_ENV },              \
	{ "show-output", no_argument, NULL, CLI_OPT_SHOW_OUTPUT },          \
	{ "input", required_argument, NULL, CLI_OPT_INPUT },                \
	{ "instrument", required_argument, NULL, CLI_OPT_INSTRUMENT },      \
	{ "format", required_argument, NULL, CLI_OPT_FORMAT },              \
	{ "output", required_argument, NULL, CLI_OPT_OUTPUT },              \
	{ "markers", required_argument, NULL, CLI_OPT_MARKERS },            \
	{ "keep-profiles", required_argument, NULL, CLI_OPT_KEEP_PROFILES }, \
	{ "cache-sim", no_argument, NULL, CLI_OPT_CACHE_SIM },              \
	{ "warmup-calls", required_argument, NULL, CLI_OPT_WARMUP_CALLS }, \
	{ "alloc-stacks", required_argument, NULL, CLI_OPT_ALLOC_STACKS }, \
	{ "profile", required_argument, NULL, CLI_OPT_PROFILE },           \
	{ "threads", required_argument, NULL, CLI_OPT_THREADS },           \
	{ "quiet", no_argument, NULL, CLI_OPT_QUIET }
/* clang-format on */

struct cli_run_opts {
	const char *binary;
	char **benches, **symbols;
	size_t nbenches, nsymbols;
	struct measure_plan plan;
	enum measure_isolation isolation;
	bool aslr, clean_env, show_output, min_samples_set, sample_time_set, timeout_set;
	bool quiet; /* --quiet: no progress on stderr */
	const struct measure_instrument *instrument;
	const char *keep_profiles; /* --keep-profiles DIR */
	bool cache_sim;
	unsigned long warmup_calls; /* --warmup-calls N */
	const char *alloc_stacks;   /* --alloc-stacks DIR */
	const char *profile;	    /* --profile DIR */
	bool warmup_calls_set;
	int cpu;
	unsigned shard_k, shard_n;	/* --shard K/N; shard_n 0: all */
	struct measure_threads threads; /* --threads LIST; none: as registered */
	enum report_format format;
	const char *output, *markers;
	const char *input; /* --input: NULL (/dev/null), "-" or a file */
	char **target_args;
	int ntarget_args;
};

/* Defaults, with room for argc selectors; 0 or -ENOMEM. */
int cli_run_opts_init(struct cli_run_opts *o, int argc);
void cli_run_opts_clear(struct cli_run_opts *o);

/* Take option c (getopt_long's return, its argument in optarg) for
 * subcommand cmd: 0, EXIT_USAGE having said why, or -ENOENT when c is not
 * one of CLI_RUN_LONGOPTS. */
int cli_run_option(const char *cmd, int c, struct cli_run_opts *o);
/* The checks across options, after the last: 0 or EXIT_USAGE. */
/* What to do instead when 'in' cannot measure a static binary. */
const char *cli_static_advice(const struct measure_instrument *in);

int cli_run_opts_check(const char *cmd, struct cli_run_opts *o);

/* The lines of --help that list the instruments of this version. */
void cli_print_instruments(FILE *f);
/* The lines of --help that list the kinds of suite taken as they are, from
 * suite/suite.c's table: title, instance names, page. */
void cli_print_kinds(FILE *f);

/* The selection's "no match" in binary, in words, with the way out;
 * returns EXIT_USAGE. */
int cli_say_miss(const char *cmd, const char *binary, const struct measure_miss *m);

/* The selection 'sel' of binary at o's --threads counts
 * (measure_select_threads), before any shard is taken: 0, or EXIT_USAGE
 * having said why when a benchmark would run on more threads than
 * benchtrap runs (a BENCHTRAP_THREADS count), or on several under an
 * instrument that cannot. */
int cli_select_threads(const char *cmd, const char *binary, const struct cli_run_opts *o,
		       struct measure_selection *sel);

/* ---- a binary as a suite of its kind (select.c) --------------------------- */

struct suite_kind;

/* One binary to measure: its kind's row (suite/suite.h) and how it runs. */
struct cli_suite {
	const char *path;
	struct elf_file *ef;
	const struct suite_kind *kind;
	struct measure_target t;
	char **argv, *exec_path;
	/* The instances the binary lists, for a kind that lists them, once
	 * asked (cli_suite_names). */
	char **names;
	size_t nnames;
	bool listed;
};

/* Open binary 'path' (saying why not), its kind and how it runs by o: 0 or
 * EXIT_USAGE. Clear it with cli_suite_clear either way. */
int cli_suite_open(struct cli_suite *s, const char *path, const struct cli_run_opts *o);
void cli_suite_clear(struct cli_suite *s);

/* The names of s's instances, asked of its kind once: 0, or EXIT_USAGE
 * having said why they cannot be listed. */
int cli_suite_names(struct cli_suite *s);

/*
 * The selection of o in s, as measure_select() selects (found, *ret_miss,
 * the same returns): --symbol selects functions through measure_select()
 * whatever the kind, --bench the instances of a kind that lists them (or
 * target-stub's registrations); each spec's kind is the row that made it.
 * -ECANCELED when the binary could not list its instances (said).
 */
int cli_suite_select(struct cli_suite *s, const struct cli_run_opts *o, bool *found,
		     struct measure_selection *ret, struct measure_miss *ret_miss);

/* Whether the cells of the selection's kinds under o's instrument measure
 * as o asks (an instrument that measures the kind, the options that apply,
 * no reserved target argument, a library preloaded only into a dynamic
 * binary): 0, or EXIT_USAGE having said why not. */
int cli_suite_check(const char *cmd, const struct cli_suite *s, const struct cli_run_opts *o,
		    const struct measure_selection *sel);

/* The isolation the results say s was measured at. */
enum measure_isolation cli_suite_isolation(const struct cli_suite *s, const struct cli_run_opts *o);

/* Measure specs[0..n) of s, each stretch of one kind by its cell. */
int cli_suite_run(const struct cli_suite *s, const struct cli_run_opts *o,
		  const struct bench_spec *specs, size_t n, const struct measure_hooks *hooks,
		  struct bench_result *results, char **ret_error);

/* The common benchmarks of two builds, each stretch of one kind by its
 * cell: alternating the builds where the cell pairs them, else each build
 * in turn. */
int cli_suite_paired(const struct cli_suite *base, const struct cli_suite *head,
		     const struct cli_run_opts *o, const struct bench_spec *bspecs,
		     const struct bench_spec *hspecs, size_t n, const struct measure_hooks *hooks,
		     struct bench_result *bres, struct bench_result *hres, char **ret_error);

/* ---- progress and markers ----------------------------------------------- */

/* Progress on stderr and markers (--markers), as measure hooks. */
struct cli_progress {
	FILE *markers;
	int markers_err; /* the errno of the first marker line not written, or 0 */
	/* stderr a terminal, text output: the benchmark running now, on one
	 * line rewritten in place ("[3/11] fib[20]") and erased at the end */
	bool progress;
	/* stderr not a terminal (a CI log): one line per benchmark finished
	 * (report/progress.h), kept */
	bool lines;
	size_t done, ended, total;
	/* compare BASE_BINARY HEAD_BINARY: head's results[0..nhead), to say
	 * which build a line is of; NULL for run */
	const struct bench_result *head;
	size_t nhead;
	/* run --output FILE: FILE.journal, each result as it ends (report.h) */
	struct report_journal *journal;
};

/* Progress for 'total' benchmarks as o asks (--quiet, --format) and as
 * stderr is (a terminal or not). */
void cli_progress_init(struct cli_progress *h, const struct cli_run_opts *o, size_t total);
void cli_progress_event(const struct measure_event *ev, void *userdata);
/* The measuring is over: the terminal's line erased. */
void cli_progress_end(struct cli_progress *h);
/* Close --markers 'path' (h->markers, if open): a line that could not be
 * written (a full file system) or a failed close is one line on stderr when
 * 'say', and EXIT_USAGE; 0 otherwise. */
int cli_close_markers(struct cli_progress *h, const char *path, bool say);

/* Where and how binary ef runs, by o: *t, its argv in *ret_argv (argv[0]
 * the path executed, then o's target arguments) and *ret_path (the path
 * when binary has no slash), both to free. 0 or -ENOMEM. */
int cli_measure_target(const char *binary, const struct elf_file *ef, const struct cli_run_opts *o,
		       struct measure_target *t, char ***ret_argv, char **ret_path);

#endif
