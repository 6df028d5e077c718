/* SPDX-License-Identifier: MIT */
/* benchtrap merge: join the results files of shards into one. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/results.h"
#include "util/atomic.h"
#include "cli/cli.h"

static const char usage[] =
	"usage: benchtrap merge FILE... --output FILE [--allow-duplicates]\n"
	"                       [--allow-mismatch] [--force]\n"
	"\n"
	"Join results files into one, typically the shards of one suite that N CI\n"
	"machines ran with `benchtrap run --shard K/N`. The output keeps the first\n"
	"file's environment and run settings, every file's benchmarks in the order\n"
	"given, and lists the inputs in run.merged_from. It is written atomically\n"
	"(a device, FIFO or /dev/stdout is written through), and checked first.\n"
	"\n"
	"Refused unless told otherwise:\n"
	"  - a benchmark (name and instrument) found twice: two shards overlap\n"
	"  - files from another build (build_id), instrument or isolation, or\n"
	"    measured in another environment (cpu, kernel, libc, compiler, ...)\n"
	"\n"
	"options:\n"
	"  -o, --output FILE   where to write the merged results (required), in a\n"
	"                      directory that exists\n"
	"  --allow-duplicates  keep every copy of a benchmark found twice\n"
	"  --allow-mismatch    merge files whose environments or settings differ\n"
	"                      (CI machines of one pool can differ in CPU model)\n"
	"  --force             both of the above\n"
	"  -h, --help          show this help\n"
	"\n"
	"examples:\n"
	"  benchtrap merge shard-1.json shard-2.json shard-3.json --output all.json\n"
	"  benchtrap merge results/*.json --output all.json --allow-mismatch\n"
	"\n"
	"exit status: 0 merged, 2 bad usage or bad input (an unreadable or\n"
	"malformed file, a duplicate, a mismatch, an unwritable output)\n";

enum { OPT_OUTPUT = 0x100, OPT_ALLOW_DUPLICATES, OPT_ALLOW_MISMATCH, OPT_FORCE };

int cli_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "allow-duplicates", no_argument, NULL, OPT_ALLOW_DUPLICATES },
		{ "allow-mismatch", no_argument, NULL, OPT_ALLOW_MISMATCH },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct results_file **files = NULL;
	const char *output = NULL;
	char **paths = calloc((size_t)argc + 1, sizeof(*paths));
	size_t npaths = 0, nfiles = 0, nbench = 0;
	unsigned flags = 0;
	char *msg = NULL;
	int c, r, code = EXIT_USAGE;

	if (!paths)
		return cli_error("out of memory");
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 1:
			paths[npaths++] = optarg;
			break;
		case 'o':
		case OPT_OUTPUT:
			output = optarg;
			break;
		case OPT_ALLOW_DUPLICATES:
			flags |= RESULTS_MERGE_ALLOW_DUPLICATES;
			break;
		case OPT_ALLOW_MISMATCH:
			flags |= RESULTS_MERGE_ALLOW_MISMATCH;
			break;
		case OPT_FORCE:
			flags |= RESULTS_MERGE_ALLOW_DUPLICATES | RESULTS_MERGE_ALLOW_MISMATCH;
			break;
		default:
			code = cli_help_or_bad_option("merge", usage, "-ho:", c, EXIT_OK, argc,
						      argv);
			goto out;
		}
	}
	if (!npaths) {
		cli_error("merge: which files? usage: benchtrap merge FILE... --output FILE");
		goto out;
	}
	if (!output) {
		cli_error("merge: where to? add --output FILE");
		goto out;
	}
	r = atomic_check(output);
	if (r < 0) {
		cli_error("merge: %s: cannot write the merged results: %s", output,
			  atomic_strerror(r));
		goto out;
	}
	cli_fatal_signals();
	files = calloc(npaths, sizeof(*files));
	if (!files) {
		cli_error("out of memory");
		goto out;
	}
	for (; nfiles < npaths; nfiles++) {
		r = results_load(paths[nfiles], &files[nfiles], &msg);
		if (r < 0) {
			cli_error("%s", msg ? msg : "out of memory");
			goto out;
		}
		nbench += files[nfiles]->n;
	}
	r = results_merge(files, nfiles, output, flags, &msg);
	if (r < 0) {
		cli_error("merge: %s", msg ? msg : strerror(-r));
		goto out;
	}
	printf("merged %zu benchmark%s from %zu file%s into %s\n", nbench, nbench == 1 ? "" : "s",
	       nfiles, nfiles == 1 ? "" : "s", output);
	code = EXIT_OK;
out:
	free(msg);
	for (size_t i = 0; i < nfiles; i++)
		results_free(files[i]);
	free(files);
	free(paths);
	return code;
}
