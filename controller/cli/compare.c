/* SPDX-License-Identifier: MIT */
/* benchtrap compare: two results files, a verdict per benchmark, a CI gate. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report.h"
#include "results/results.h"
#include "util/strutil.h"
#include "cli/cli.h"

static const char usage[] =
	"usage: benchtrap compare BASE.json HEAD.json [--threshold PCT]\n"
	"                         [--format text|markdown|json]\n"
	"\n"
	"Compare two results files (`benchtrap run --output FILE`): benchmarks are\n"
	"paired by name and instrument, and each pair gets a verdict: regressed,\n"
	"improved, unchanged, failed (in HEAD), new (only in HEAD) or missing (only\n"
	"in BASE). Largest changes come first, after a summary line with the\n"
	"geometric mean of all changes and the count of each verdict.\n"
	"\n"
	"Walltime changes count only when they are significant (the 99% bootstrap\n"
	"interval of the ratio of medians, from the raw samples, excludes 1) and\n"
	"beyond the threshold; exact instruments (callgrind, perf, memory) need\n"
	"only the threshold. docs/ci.md explains the test and the default.\n"
	"\n"
	"options:\n"
	"  --threshold PCT     a change smaller than PCT percent is 'unchanged' (5)\n"
	"  --format FMT        text (default), markdown (for a pull-request comment)\n"
	"                      or json\n"
	"  -h, --help          show this help\n"
	"\n"
	"When GITHUB_STEP_SUMMARY names a file (GitHub Actions), the markdown report\n"
	"is appended to it as well.\n"
	"\n"
	"examples:\n"
	"  benchtrap compare main.json pr.json\n"
	"  benchtrap compare main.json pr.json --threshold 10 --format markdown > comment.md\n"
	"\n"
	"exit status: 0 no regression beyond the threshold, 1 a regression or a\n"
	"benchmark that failed in HEAD, 2 bad usage or bad input (an unreadable or\n"
	"malformed file, an unknown schema version). Files with the same build_id\n"
	"measured one binary twice: their regressions are noise and exit 0.\n";

enum { OPT_THRESHOLD = 0x100, OPT_FORMAT };

static int load(const char *path, struct results_file **ret)
{
	char *msg = NULL;
	int r = results_load(path, ret, &msg);

	if (r == 0)
		return 0;
	if (r == -ENOMEM && !msg)
		return cli_error("out of memory");
	cli_error("%s", msg ? msg : path);
	free(msg);
	return EXIT_USAGE;
}

static void append_step_summary(const struct results_comparison *c)
{
	const char *path = getenv("GITHUB_STEP_SUMMARY");
	FILE *f;

	if (!path || !*path)
		return;
	f = fopen(path, "ae");
	if (!f) {
		cli_note("cannot append to GITHUB_STEP_SUMMARY (%s): %s", path, strerror(errno));
		return;
	}
	report_compare_markdown(c, f);
	fputc('\n', f);
	if (fclose(f) != 0)
		cli_note("cannot append to GITHUB_STEP_SUMMARY (%s): %s", path, strerror(errno));
}

int cli_compare(int argc, char **argv)
{
	static const char *const formats[] = { "text", "markdown", "json", NULL };
	static const struct option longopts[] = {
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct results_compare_opts opts;
	struct results_file *base = NULL, *head = NULL;
	struct results_comparison cmp = { 0 };
	enum report_format fmt = REPORT_TEXT;
	const char *paths[2];
	int npaths = 0, c, r, code = EXIT_USAGE;

	results_compare_opts_default(&opts);
	optind = 1;
	opterr = 0;
	/* '-' first: keep operands in order, and "-" (stdin) is an operand. */
	while ((c = getopt_long(argc, argv, "-h", longopts, NULL)) != -1) {
		char *end;
		double v;

		switch (c) {
		case 1:
			if (npaths == 2)
				return cli_error("compare: unexpected argument '%s' (compare takes "
						 "two files: BASE.json HEAD.json)",
						 optarg);
			paths[npaths++] = optarg;
			break;
		case OPT_THRESHOLD:
			errno = 0;
			v = strtod(optarg, &end);
			if (errno || end == optarg || (*end && strcmp(end, "%")) || !isfinite(v) ||
			    v < 0 || v > 10000)
				return cli_error(
					"compare: --threshold wants a percentage from 0 to "
					"10000, e.g. 5, not '%s'",
					optarg);
			opts.threshold = v / 100.0;
			break;
		case OPT_FORMAT:
			r = cli_parse_format("compare", formats, optarg, &fmt);
			if (r != 0)
				return r;
			break;
		default:
			return cli_help_or_bad_option("compare", usage, c, EXIT_OK, argc, argv);
		}
	}
	if (npaths < 2)
		return cli_error("compare: which files? usage: benchtrap compare BASE.json "
				 "HEAD.json (write them with `benchtrap run --output FILE`)");
	if (load(paths[0], &base) != 0 || load(paths[1], &head) != 0)
		goto out;
	if (results_compare(base, head, &opts, &cmp) < 0) {
		cli_error("out of memory");
		goto out;
	}
	switch (fmt) {
	case REPORT_TEXT:
		report_compare_text(&cmp, stdout, cli_color(stdout));
		break;
	case REPORT_MARKDOWN:
		report_compare_markdown(&cmp, stdout);
		break;
	case REPORT_JSON:
		r = report_compare_json(&cmp, paths[0], paths[1], stdout);
		if (r < 0) {
			if (r == -ENOMEM)
				cli_error("out of memory");
			else
				cli_error("cannot write the output: %s", str_errno(-r));
			goto out;
		}
		break;
	}
	append_step_summary(&cmp);
	code = cmp.gate_failed ? EXIT_FAILED : EXIT_OK;
out:
	results_comparison_clear(&cmp);
	results_free(base);
	results_free(head);
	return code;
}
