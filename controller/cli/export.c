/* SPDX-License-Identifier: MIT */
/* benchtrap export: a results file in another tool's format. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "results/results.h"
#include "util/atomic.h"
#include "util/strutil.h"
#include "cli/cli.h"

static const char usage[] =
	"usage: benchtrap export FILE --format bmf|gbench|gab [--output OUT]\n"
	"\n"
	"Print the results file FILE (`benchtrap run --output FILE`) on stdout, or\n"
	"write it to OUT, in the format another tool ingests:\n"
	"\n"
	"  bmf      Bencher Metric Format, for `bencher run --adapter json --file F`:\n"
	"           {NAME: {MEASURE: {value, lower_value, upper_value}}}, the bounds\n"
	"           the confidence interval of the median; one measure per\n"
	"           instrument: latency (walltime, ns), instructions (callgrind),\n"
	"           perf-instructions (perf), total-bytes (memory: Bencher's\n"
	"           built-in measure in bytes; BMF itself has no units)\n"
	"  gbench   Google Benchmark JSON, for its tools/compare.py: one iteration\n"
	"           row per benchmark, its median, so OVERALL_GEOMEAN weighs each\n"
	"           once; then the mean, median, stddev and cv over its N samples\n"
	"           (repetitions N, as Google Benchmark writes N repetitions). A\n"
	"           median of zero (a count of none) has the aggregates only. A\n"
	"           Google Benchmark binary's run keeps the cpu_time, label and\n"
	"           counters it reported; otherwise cpu_time repeats real_time\n"
	"  gab      github-action-benchmark, tool 'customSmallerIsBetter':\n"
	"           [{name, unit, value, range, extra}]\n"
	"\n"
	"Every format leaves out the same benchmarks, and says on stderr how many:\n"
	"failed ones (they have no figure) and those that measured no time\n"
	"(\"no_time\": not told from an empty function, observe's unresolved, or\n"
	"a time not above zero), whose figure is noise a threshold would alert\n"
	"on. In a file of several instruments, gbench and gab names end in\n"
	"' (INSTRUMENT)'. bmf only: names longer than Bencher's 1024 bytes are\n"
	"shortened to a prefix, '~' and a hash of the whole name, said on\n"
	"stderr; gbench and gab keep whole names. Whole numbers are written\n"
	"with all their digits. docs/ci.md shows each format. When no benchmark is\n"
	"left to export (an empty file, or every one failed), nothing is written\n"
	"and export exits 2: an empty export would fail the tool reading it.\n"
	"\n"
	"options:\n"
	"  --format FMT        bmf, gbench or gab (required)\n"
	"  -o, --output OUT    write the export to OUT instead of stdout (in a\n"
	"                      directory that exists): a file is replaced\n"
	"                      atomically, a device or FIFO written through\n"
	"  -h, --help          show this help\n"
	"\n"
	"examples:\n"
	"  benchtrap export results.json --format bmf > bmf.json\n"
	"  benchtrap export results.json --format gab --output gab.json\n"
	"\n"
	"exit status: 0 exported, 2 bad usage or bad input (nothing to export)\n";

enum { OPT_FORMAT = 0x100 };

/* An export rendered in memory, for atomic_write(). */
struct rendered {
	const char *buf;
	size_t len;
};

static int write_rendered(FILE *f, void *ctx)
{
	const struct rendered *x = ctx;

	return fwrite(x->buf, 1, x->len, f) == x->len ? 0 : -EIO;
}

/* Why 'rf' has nothing to export, into buf: "it has none", or what each
 * benchmark was. */
static void why_empty(const struct results_file *rf, const struct report_export_notes *n, char *buf,
		      size_t size)
{
	size_t other = rf->n - n->failed - n->no_time;
	int k = 0;

	if (!rf->n) {
		snprintf(buf, size, "it has none");
		return;
	}
	if (n->failed)
		k += snprintf(buf + k, size - (size_t)k, "%zu failed", n->failed);
	if (n->no_time)
		k += snprintf(buf + k, size - (size_t)k, "%s%zu measured no time", k ? ", " : "",
			      n->no_time);
	if (other)
		snprintf(buf + k, size - (size_t)k, "%s%zu without a figure", k ? ", " : "", other);
}

/* The export formats, "bmf,gbench,gab", from report's table. */
/* The export table's names, NULL-terminated, for cli_parse_choice(). */
static void export_names(const char **v, size_t max)
{
	size_t i = 0;

	for (; i + 1 < max && report_export_name(i); i++)
		v[i] = report_export_name(i);
	v[i] = NULL;
}

int cli_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct report_export_notes notes = { 0 };
	struct results_file *rf = NULL;
	const char *path = NULL, *fmt = NULL, *output = NULL;
	const char *names[16];
	char *buf = NULL, why[128];
	size_t len = 0;
	FILE *mem;
	int c, i, r;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "-ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 1:
			if (path)
				return cli_error(
					"export: unexpected argument '%s' (export takes one "
					"results file)",
					optarg);
			path = optarg;
			break;
		case OPT_FORMAT:
			export_names(names, sizeof(names) / sizeof(names[0]));
			r = cli_parse_choice("export", "--format", optarg, names, false, &i);
			if (r != 0)
				return r;
			fmt = report_export_name((size_t)i);
			break;
		case 'o':
			output = optarg;
			break;
		default:
			return cli_help_or_bad_option("export", usage, "-ho:", c, EXIT_OK, argc,
						      argv);
		}
	}
	if (!path)
		return cli_error("export: which file? usage: benchtrap export FILE --format "
				 "bmf|gbench|gab");
	if (!fmt)
		return cli_error("export: which format? add --format bmf, gbench or gab");
	if (output && (r = atomic_check(output)) < 0)
		return cli_error("export: %s: cannot write the export: %s", output,
				 atomic_strerror(r));
	if (cli_load_results(path, false, &rf) != 0)
		return EXIT_USAGE;
	/* The whole export in memory first: nothing is written when it holds
	 * no benchmark, or when it cannot be made. */
	mem = open_memstream(&buf, &len);
	r = mem ? report_export(rf, fmt, mem, &notes) : -ENOMEM;
	if (mem && fclose(mem) != 0 && r == 0)
		r = -ENOMEM;
	if (r == 0 && !notes.exported) {
		why_empty(rf, &notes, why, sizeof(why));
		cli_error("export: %s: no benchmark to export (%s): nothing written, since an "
			  "empty export fails the tool reading it; export a file with a "
			  "measured benchmark",
			  path, why);
		results_free(rf);
		free(buf);
		return EXIT_USAGE;
	}
	results_free(rf);
	if (r == 0 && output) {
		struct rendered x = { buf, len };

		cli_fatal_signals();
		r = atomic_write(output, write_rendered, &x);
		if (r < 0) {
			free(buf);
			return cli_error("export: %s: cannot write the export: %s", output,
					 atomic_strerror(r));
		}
	} else if (r == 0 && (fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0)) {
		r = errno ? -errno : -EIO;
	}
	free(buf);
	if (r < 0)
		return cli_error("export: cannot write the export: %s", str_errno(-r));
	if (notes.shortened)
		fprintf(stderr,
			"benchtrap: export: %zu benchmark name%s longer than %s takes (%zu "
			"bytes) shortened to a prefix and a hash of the whole name\n",
			notes.shortened, notes.shortened == 1 ? "" : "s",
			!strcmp(fmt, "bmf") ? "Bencher" : fmt, notes.limit);
	if (notes.failed)
		fprintf(stderr, "benchtrap: export: %zu failed benchmark%s left out (no figure)\n",
			notes.failed, notes.failed == 1 ? "" : "s");
	if (notes.no_time)
		fprintf(stderr,
			"benchtrap: export: %zu benchmark%s that measured no time left out (a "
			"figure within the noise; the results file has %s)\n",
			notes.no_time, notes.no_time == 1 ? "" : "s",
			notes.no_time == 1 ? "it" : "them");
	return EXIT_OK;
}
