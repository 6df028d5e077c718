/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_CLI_GBENCH_H
#define BENCHTRAP_CLI_GBENCH_H
/*
 * Google Benchmark binaries on the command line (gbench.c,
 * docs/gbench.md): what list, run and compare do when gbench_detect()
 * recognizes the binary. Each returns the exit code.
 */
#include <stdbool.h>
#include <stddef.h>

struct cli_run_opts;
struct cli_progress;
struct elf_file;

/* list BINARY [--filter GLOB]... [--json]: the instances the binary lists. */
int cli_gbench_list(const char *binary, char **filters, size_t nfilters, bool json);

/* run BINARY with o's options: each selected instance in a fresh process;
 * command[0..argc) is the command line for the results document. */
int cli_gbench_run(struct cli_run_opts *o, struct elf_file *ef, struct cli_progress *hs, int argc,
		   char **command);

/* compare BASE HEAD: when either is a Google Benchmark binary
 * (*ret_handled set), the comparison of their instances (walltime: paired,
 * round by round) and its exit code; else *ret_handled is false and the
 * caller compares them as other binaries. */
struct results_compare_opts;
int cli_gbench_compare(const char *base, const char *head, struct cli_run_opts *o,
		       const struct results_compare_opts *copts, int argc, char **argv,
		       bool *ret_handled);

#endif
