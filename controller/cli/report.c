/* SPDX-License-Identifier: MIT */
/* benchtrap report: one self-contained HTML page of results files, their
 * comparisons, a history and observed calls (docs/report.md). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history/history.h"
#include "report/html.h"
#include "results/results.h"
#include "util/atomic.h"
#include "util/strutil.h"
#include "cli/cli.h"

static const char usage[] =
	"usage: benchtrap report FILE... [--base BASE.json] [--history DB]\n"
	"                        [--threshold PCT] [--title TEXT] -o OUT.html\n"
	"       benchtrap report --history DB [--title TEXT] -o OUT.html\n"
	"\n"
	"Write one HTML page of results files, to open in a browser or keep as a CI\n"
	"artifact. The page is self-contained: its plots are SVG written by benchtrap,\n"
	"its styles inline, and it makes no request when it opens (offline, no\n"
	"plotting library). Each FILE is shown by what it holds:\n"
	"\n"
	"  run        written by `benchtrap run --output FILE`: per benchmark a\n"
	"             histogram of its samples with the median and its interval\n"
	"             marked, its figures, diagnostics and error beside it, and its\n"
	"             flame graph when it was run with --profile DIR (read from the\n"
	"             path the file names, as given or beside FILE)\n"
	"  paired     written by `compare BASE_BINARY HEAD_BINARY --output FILE`:\n"
	"             every benchmark's change with its interval against the\n"
	"             threshold, in compare's order, with compare's verdict; then\n"
	"             head's run\n"
	"  observed   written by `benchtrap observe --output FILE`: per function a\n"
	"             histogram of its calls' durations on a logarithmic axis, and\n"
	"             its counts\n"
	"\n"
	"With --base, every FILE is compared against BASE.json as `benchtrap compare\n"
	"BASE.json FILE` compares them. With --history, each benchmark's series over\n"
	"the commits of the history (`benchtrap history add`) is drawn with its change\n"
	"points; hover over a run, or reach it with Tab, for its commit.\n"
	"docs/report.md shows the page.\n"
	"\n"
	"options:\n"
	"  --base BASE.json    compare every FILE against BASE.json (instead of a paired\n"
	"                      file's own base)\n"
	"  --history DB        draw the series of the history database DB\n"
	"  --threshold PCT     a change smaller than PCT percent is 'unchanged' (5)\n"
	"  --title TEXT        the page's heading (default: benchtrap report)\n"
	"  -o, --output OUT    where to write the page (required): a file is replaced\n"
	"                      atomically, a device or FIFO written through; '-' is\n"
	"                      stdout\n"
	"  -h, --help          show this help\n"
	"\n"
	"examples:\n"
	"  benchtrap report results.json -o report.html\n"
	"  benchtrap report pr.json --base main.json --threshold 2 -o report.html\n"
	"  benchtrap report paired.json observed.json --history H.db -o report.html\n"
	"\n"
	"exit status: 0 written, 2 bad usage or bad input (a missing or malformed file,\n"
	"an unreadable history, an output that cannot be written: nothing is written)\n";

enum { OPT_BASE = 0x100, OPT_HISTORY, OPT_THRESHOLD, OPT_TITLE };

static int write_page(FILE *f, void *ctx)
{
	return report_html_write(ctx, f);
}

static int load_history(const char *path, struct history_series **ret, size_t *ret_n)
{
	struct history *h = NULL;
	char *msg = NULL;
	int r = history_open(path, false, &h, &msg);

	if (r == 0)
		r = history_series(h, NULL, ret, ret_n, &msg);
	history_close(h);
	if (r == 0)
		return 0;
	if (msg)
		cli_error("%s", msg);
	else
		cli_error("report: %s: cannot read the history: %s", path, str_errno(-r));
	free(msg);
	return EXIT_USAGE;
}

int cli_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "base", required_argument, NULL, OPT_BASE },
		{ "history", required_argument, NULL, OPT_HISTORY },
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct report_html page = { 0 };
	struct results_file **files = NULL, *base = NULL;
	struct history_series *series = NULL;
	const char *base_path = NULL, *output = NULL;
	size_t nfiles = 0, nseries = 0;
	int c, r, code = EXIT_USAGE;

	results_compare_opts_default(&page.compare);
	files = calloc((size_t)argc + 1, sizeof(*files));
	if (!files)
		return cli_error("out of memory");
	optind = 1;
	opterr = 0;
	/* '-' first: operands in order, and "-" (stdin) is one. */
	while ((c = getopt_long(argc, argv, "-ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 1:
			if (cli_load_results(optarg, false, &files[nfiles]) != 0)
				goto out;
			nfiles++;
			break;
		case OPT_BASE:
			base_path = optarg;
			break;
		case OPT_HISTORY:
			page.history = optarg;
			break;
		case OPT_THRESHOLD:
			r = cli_parse_percent("report", "--threshold", optarg,
					      &page.compare.threshold);
			if (r)
				goto out;
			break;
		case OPT_TITLE:
			page.title = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		default:
			code = cli_help_or_bad_option("report", usage, "-ho:", c, EXIT_OK, argc,
						      argv);
			goto out;
		}
	}
	if (!nfiles && !page.history) {
		cli_error("report: which files? usage: benchtrap report FILE... -o OUT.html "
			  "(results of `benchtrap run --output FILE`), or --history DB");
		goto out;
	}
	if (!output) {
		cli_error("report: where to? add -o OUT.html (or -o - for stdout)");
		goto out;
	}
	if (base_path && cli_load_results(base_path, false, &base) != 0)
		goto out;
	/* As compare refuses them: observed calls and run's loops time a
	 * function differently. */
	for (size_t i = 0; base && i < nfiles; i++)
		if (results_file_observed(base) != results_file_observed(files[i])) {
			const struct results_file *obs =
				results_file_observed(base) ? base : files[i];

			cli_error("report: %s holds calls observed by `benchtrap observe` and %s "
				  "benchmarks of `benchtrap run`: their times are not alike "
				  "(--base an observe file for observe files, a run's for runs)",
				  obs->path, obs == base ? files[i]->path : base->path);
			goto out;
		}
	if (page.history && load_history(page.history, &series, &nseries) != 0)
		goto out;
	if (strcmp(output, "-") && (r = atomic_check(output)) < 0) {
		cli_error("report: %s: cannot write the report: %s", output, atomic_strerror(r));
		goto out;
	}
	page.files = (const struct results_file *const *)files;
	page.nfiles = nfiles;
	page.base = base;
	page.series = series;
	page.nseries = nseries;
	cli_fatal_signals();
	if (!strcmp(output, "-")) {
		r = report_html_write(&page, stdout);
		if (r == 0 && fflush(stdout) != 0)
			r = errno ? -errno : -EIO;
	} else {
		r = atomic_write(output, write_page, &page);
	}
	if (r == -ENOMEM)
		cli_error("out of memory");
	else if (r < 0)
		cli_error("report: %s: cannot write the report: %s",
			  strcmp(output, "-") ? output : "stdout",
			  strcmp(output, "-") ? atomic_strerror(r) : str_errno(-r));
	else
		code = EXIT_OK;
out:
	for (size_t i = 0; i < nfiles; i++)
		results_free(files[i]);
	free(files);
	results_free(base);
	history_series_free(series, nseries);
	return code;
}
