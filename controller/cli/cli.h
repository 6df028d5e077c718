/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_CLI_H
#define BENCHTRAP_CLI_H

/*
 * The command line: one file per subcommand (list.c, ...), each exporting
 * one cli_<name>() entry point that parses its options and returns the
 * process exit code. Only this layer prints; everything below returns
 * errors.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "elf/elf.h"
#include "report/report.h"

/* Exit codes (docs/cli.md). */
enum {
	EXIT_OK = 0,
	EXIT_FAILED = 1, /* a benchmark failed, or a regression beyond the threshold */
	EXIT_USAGE = 2,	 /* bad usage or bad input */
};

/* "benchtrap: <message>" on stderr, one line. Returns EXIT_USAGE. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "benchtrap: note: <message>" on stderr. */
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* After getopt_long returned '?' (opterr is 0): one line naming the
 * unknown option, or the option missing its value. 'shorts' is the short
 * options given to getopt_long ("ho:"), which tell a short option that
 * needs a value from an unknown one. Returns EXIT_USAGE. */
int cli_bad_option(const char *cmd, const char *shorts, int argc, char **argv);

/* The last case of an option loop, for whatever getopt_long returned that the
 * loop does not take itself: for 'h' (-h, --help) 'usage' on stdout and
 * 'help_code'; else cli_bad_option's one line and EXIT_USAGE. */
int cli_help_or_bad_option(const char *cmd, const char *usage, const char *shorts, int c,
			   int help_code, int argc, char **argv);

/* The index of the first "--" in argv[1..argc-1], or argc when there is none:
 * what stands before it are benchtrap's options, what follows is not. */
int cli_find_dashdash(int argc, char **argv);

/* "<path>: cannot write results: <why>" for the negative errno 'err' of the
 * results file 'path' (see atomic_strerror). Returns EXIT_USAGE. */
int cli_results_unwritable(const char *path, int err);
struct results_file;
/* results_load() of 'path' into *ret: 0, or EXIT_USAGE having said why in
 * its one line. Without 'keep_doc' the parsed JSON is released at once
 * (results_release_doc): a command that does not merge needs the structs
 * alone. */
int cli_load_results(const char *path, bool keep_doc, struct results_file **ret);

/* --output PATH (NULL: none), checked before anything is measured or run:
 * 0, or EXIT_USAGE having said why it cannot be written. */
int cli_check_output(const char *path);

/* Check an output directory 'dir' of option 'opt' of 'cmd' (--profile DIR)
 * as atomic_check_dir() does (util/atomic.h); an error is printed and
 * EXIT_USAGE returned. */
int cli_check_out_dir(const char *cmd, const char *opt, const char *dir);

struct bench_result;
/* The first file of --profile, --keep-profiles or --alloc-stacks among the
 * n results that could not be written (bench_result_unwritten), said in one
 * line: EXIT_USAGE; 0 when every one was written. */
int cli_unwritten(const struct bench_result *res, size_t n);
/* --markers PATH (NULL: none) opened into *ret: 0, or EXIT_USAGE. */
int cli_open_markers(const char *path, FILE **ret);

/* Whether text written to 'out' is coloured: when it is a terminal and
 * NO_COLOR is not set. */
bool cli_color(FILE *out);

/*
 * The value of --format for 'cmd': one of 'choices' (NULL-terminated), the
 * formats it writes among text, markdown and json, in the order its --help
 * gives them. For example, in `benchtrap compare`:
 *
 *	static const char *const formats[] = { "text", "markdown", "json", NULL };
 *	r = cli_parse_format("compare", formats, optarg, &fmt);
 *	if (r != 0)
 *		return r;
 *
 * Returns 0 and sets *ret, or prints "compare: --format is text, markdown
 * or json, not 'html'" and returns EXIT_USAGE.
 */
int cli_parse_format(const char *cmd, const char *const *choices, const char *arg,
		     enum report_format *ret);

/*
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT: kill and reap every process started
 * (and what they left), remove temporary files and directories, then die
 * of the signal. No child may outlive benchtrap, nothing half-written stays.
 */
void cli_fatal_signals(void);

/*
 * For a command that keeps what it measured (run): SIGINT, SIGTERM and
 * SIGHUP stop the measuring instead (launch_stop(): the benchmark being
 * measured is killed, nothing more starts), said on stderr at once; the
 * command then reports and writes what was measured, marked partial. A
 * second one of them (a CI's cancel sends SIGINT, then SIGTERM), and
 * SIGQUIT, end it as cli_fatal_signals() does; the journal of --output
 * stays. cli_stopped() is the signal that stopped it, or 0.
 */
void cli_stop_signals(void);
int cli_stopped(void);

/* Open BINARY for a subcommand, printing the one-line error on failure;
 * a binary whose benchmark registry is corrupt is such a failure. */
int cli_open_binary(const char *path, struct elf_file **ret);
/* The same for a subcommand that needs only the symbols (list --symbols,
 * observe): a corrupt registry is left to elf_registry_error(). */
int cli_open_binary_symbols(const char *path, struct elf_file **ret);
/* 0 when BINARY can be started here; otherwise the one-line error (its
 * PT_INTERP is not on this machine) and 2. */
int cli_check_interp(const char *path, const struct elf_file *ef);

int cli_list(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_observe(int argc, char **argv);
int cli_compare(int argc, char **argv);

/* The report of a comparison in 'fmt' on stdout, and in GitHub's step
 * summary; returns the exit code (gate_failed: EXIT_FAILED). */
struct results_comparison;
struct results_compare_opts;
struct cli_run_opts;
int cli_compare_report(const struct results_comparison *cmp, enum report_format fmt,
		       const char *base, const char *head);
/* compare BASE_BINARY HEAD_BINARY (paired.c): o holds run's options, argv
 * the command line for the results document. */
int cli_compare_binaries(const char *base, const char *head, struct cli_run_opts *o,
			 const struct results_compare_opts *copts, int argc, char **argv);
/* The end of a comparison of two builds: head's run (its base in
 * rep->paired_base) written as a results document, read back as `compare`
 * reads a file and judged, the report printed in o->format, the results
 * written to o->output; the exit status. */
int cli_compare_conclude(const struct report_run *rep, const struct results_compare_opts *copts,
			 const struct cli_run_opts *o, const char *base_path,
			 const char *head_path);
int cli_merge(int argc, char **argv);
int cli_export(int argc, char **argv);
int cli_history(int argc, char **argv);
int cli_report(int argc, char **argv);

/* ---- option values shared by the subcommands ---------------------------- */

#include <stdint.h>

/* 'words' (NULL-terminated) as a sentence lists them: "a, b or c", each in
 * single quotes when 'quote'; cut short to fit 'size'. */
void cli_join_or(const char *const *words, bool quote, char *buf, size_t size);
/* The same with "and": "a, b and c". */
void cli_join_and(const char *const *words, char *buf, size_t size);

/*
 * Parsers of option values. On bad input each prints one line,
 * "<cmd>: <opt> wants ..., not '<arg>'", and returns EXIT_USAGE; otherwise
 * it returns 0. ret_* is written only on success.
 *
 * cli_parse_seconds: a decimal number of seconds from 0 to 1e6, in ns.
 * cli_parse_count: a whole number from min to max.
 * cli_parse_choice: one of 'choices' (NULL-terminated), its index; the
 * error lists them as cli_join_or() does: "<cmd>: <opt> is a, b or c, not
 * '<arg>'".
 */
int cli_parse_seconds(const char *cmd, const char *opt, const char *arg, uint64_t *ret_ns);
int cli_parse_count(const char *cmd, const char *opt, const char *arg, long min, long max,
		    long *ret);
/* A percentage from 0 to 10000 ("5", "5%"), as a fraction (0.05). */
int cli_parse_percent(const char *cmd, const char *opt, const char *arg, double *ret);
int cli_parse_choice(const char *cmd, const char *opt, const char *arg, const char *const *choices,
		     bool quote, int *ret_index);

#endif
