/* SPDX-License-Identifier: MIT */
/* benchtrap: the subcommand table and nothing else. */
#include <stdio.h>
#include <string.h>

#include "util/strutil.h"
#include "util/match.h"
#include "cli/cli.h"

#ifndef BENCHTRAP_VERSION
#define BENCHTRAP_VERSION "unknown"
#endif

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "list", cli_list, "list the benchmarks and functions a binary offers" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fputs("usage: benchtrap COMMAND [ARGS...]\n"
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
	      "'benchtrap COMMAND --help' explains a command; docs/ has the manual.\n"
	      "exit status: 0 success, 1 a benchmark failed, 2 bad usage or bad input\n",
	      f);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : NULL;

	if (!name) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help")) {
		if (!strcmp(name, "help") && argc > 2) {
			for (size_t i = 0; i < NCOMMANDS; i++)
				if (!strcmp(argv[2], commands[i].name))
					return commands[i].fn(2, (char *[]){ argv[2], "--help", NULL });
		}
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "-V")) {
		printf("benchtrap %s\n", BENCHTRAP_VERSION);
		return EXIT_OK;
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);

	const char *names[NCOMMANDS];
	char buf[256];

	for (size_t i = 0; i < NCOMMANDS; i++)
		names[i] = commands[i].name;
	if (!str_has_control(name) && match_suggest(name, names, NCOMMANDS, 2, buf, sizeof(buf)))
		return cli_error("'%s' is not a command (did you mean %s?); see 'benchtrap --help'",
				 name, buf);
	return cli_error("'%s' is not a command; see 'benchtrap --help'",
			 str_has_control(name) ? "?" : name);
}
