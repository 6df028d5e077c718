/* SPDX-License-Identifier: MIT */
/* benchtrap: the subcommand table and nothing else. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/launch.h"
#include "util/match.h"
#include "util/strutil.h"
#include "cli/cli.h"

#ifndef BENCHTRAP_VERSION
#define BENCHTRAP_VERSION "unknown"
#endif

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	/* Starts or attaches to processes: runs in a worker that cleans up
	 * even when this process is killed (util/launch.h). */
	bool guarded;
} commands[] = {
	{ "run", cli_run, "measure benchmarks, each in a fresh traced child", true },
	{ "list", cli_list, "list the benchmarks and functions a binary offers" },
	{ "observe", cli_observe, "time every call of functions in a real run, or attached",
	  true },
	{ "compare", cli_compare, "two builds side by side, or two results files: a CI gate", true },
	{ "merge", cli_merge, "join the results files of shards into one", true },
	{ "export", cli_export, "a results file for Bencher, Google Benchmark, gab" },
	{ "history", cli_history, "keep runs' results over commits, and find their change points",
	  true },
	{ "report", cli_report, "one HTML page of runs, comparisons, histories, observed calls",
	  true },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fputs("usage: benchtrap COMMAND [ARGS...]\n"
	      "       benchtrap --help | --version\n"
	      "\n"
	      "benchtrap benchmarks functions of a Linux binary from outside it: it reads the\n"
	      "binary's ELF file, starts a fresh traced child for every benchmark, and takes\n"
	      "the measurements itself. The target needs no timing code and no harness.\n"
	      "\n"
	      "commands:\n",
	      f);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\n"
	      "options:\n"
	      "  -h, --help     show this help ('benchtrap help COMMAND' shows a command's)\n"
	      "  -V, --version  show the version\n"
	      "\n"
	      "'benchtrap COMMAND --help' explains a command; docs/ and the manual pages\n"
	      "benchtrap(1), benchtrap-run(1), ... have the rest.\n"
	      "\n"
	      "exit status: 0 success, 1 a benchmark failed, 2 bad usage or bad input\n",
	      f);
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

static int unknown_command(const char *name)
{
	const char *names[NCOMMANDS];
	char buf[256];

	for (size_t i = 0; i < NCOMMANDS; i++)
		names[i] = commands[i].name;
	if (match_suggest(name, names, NCOMMANDS, 2, buf, sizeof(buf)))
		return cli_error("'%s' is not a command (did you mean %s?); see 'benchtrap --help'",
				 name, buf);
	return cli_error("'%s' is not a command; see 'benchtrap --help'", name);
}

/* Whatever a command printed must have reached its destination: a full
 * disk or a closed pipe is an error, not a silent success. A command that
 * failed on bad input has said so in its one line already. */
static int finish_output(int code)
{
	if ((fflush(stdout) != 0 || ferror(stdout)) && code != EXIT_USAGE) {
		cli_error("cannot write the output: %s", str_errno(errno));
		return EXIT_USAGE;
	}
	return code;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : NULL;
	const struct command *cmd;

	if (!name)
		return cli_error("which command? 'benchtrap --help' lists them (list, run, ...)");
	if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help")) {
		if (!strcmp(name, "help") && argc > 2) {
			cmd = find_command(argv[2]);
			if (!cmd)
				return unknown_command(argv[2]);
			return finish_output(cmd->fn(2, (char *[]){ argv[2], "--help", NULL }));
		}
		usage(stdout);
		return finish_output(EXIT_OK);
	}
	if (!strcmp(name, "--version") || !strcmp(name, "-V")) {
		printf("benchtrap %s\n", BENCHTRAP_VERSION);
		return finish_output(EXIT_OK);
	}
	cmd = find_command(name);
	if (cmd) {
		int code;

		/* On failure to fork, go on alone: only SIGKILL protection
		 * is lost. */
		if (cmd->guarded)
			launch_guard();
		code = finish_output(cmd->fn(argc - 1, argv + 1));
		if (cmd->guarded)
			launch_sweep();
		return code;
	}
	return unknown_command(name);
}
