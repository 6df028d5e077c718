/* SPDX-License-Identifier: MIT */
/* benchtrap compare: two results files, a verdict per benchmark, a CI gate. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/report.h"
#include "results/results.h"
#include "util/strutil.h"
#include "cli/cli.h"
#include "cli/runopts.h"

static const char usage[] =
	"usage: benchtrap compare BASE.json HEAD.json [--threshold PCT]\n"
	"                         [--format text|markdown|json]\n"
	"                         [--max-bytes N] [--full-report URL]\n"
	"       benchtrap compare PAIRED.json [--threshold PCT] [--format FMT]\n"
	"       benchtrap compare BASE_BINARY HEAD_BINARY [--bench GLOB]...\n"
	"                         [--symbol GLOB|'F(1,2)']... [run's sampling and child\n"
	"                         options] [--threshold PCT] [--format FMT]\n"
	"                         [--output FILE] [-- TARGET_ARGS...]\n"
	"\n"
	"Compare two results files (`benchtrap run --output FILE`), or measure two\n"
	"builds side by side and compare them. Benchmarks are paired by name and\n"
	"instrument, and each pair gets a verdict: regressed, improved, unchanged,\n"
	"inconclusive (an interval wider than the threshold on both sides), failed\n"
	"(in HEAD), new (only in HEAD) or missing (only in BASE). Largest\n"
	"changes come first, after a summary line with the geometric mean of all\n"
	"changes and the count of each verdict. Two files of `benchtrap observe\n"
	"--output` compare alike, per observed function (docs/compare.md); a file\n"
	"of observe and one of run are refused.\n"
	"\n"
	"Two binaries (paired): each benchmark runs in a fresh child of each build,\n"
	"both alive for the whole benchmark, and samples alternate between them\n"
	"(base, head, head, base, ...) at one iteration count. A change of the\n"
	"machine's speed then hits both sides alike and cancels in the ratio of each\n"
	"pair; the verdict rests on the median of those ratios. This is the gate to\n"
	"use on a shared CI runner, where two runs minutes apart can differ by 2x.\n"
	"Under a counting instrument (--instrument callgrind) both builds are simply\n"
	"measured: counts need no pairing. docs/compare.md explains it.\n"
	"\n"
	"Walltime changes count only when they are significant (the 99% bootstrap\n"
	"interval of the ratio excludes 1) and beyond the threshold; one whose\n"
	"interval runs from below -threshold to above +threshold is inconclusive,\n"
	"which does not fail the gate (compare the two binaries side by side to\n"
	"tell). Exact instruments (callgrind, perf, memory) need only the\n"
	"threshold. docs/ci.md explains the test and the default.\n"
	"\n"
	"options:\n"
	"  --threshold PCT     a change smaller than PCT percent is 'unchanged' (5)\n"
	"  --format FMT        text (default), markdown (for a pull-request comment)\n"
	"                      or json\n"
	"  --max-bytes N       markdown of at most N bytes (a GitHub comment holds\n"
	"                      65536 characters): when the whole report is larger,\n"
	"                      the changed benchmarks that fit (failed, regressed,\n"
	"                      improved, inconclusive, new, missing) and how many\n"
	"                      are not shown\n"
	"  --full-report URL   where the whole report is, linked when rows are left out\n"
	"  -h, --help          show this help\n"
	"\n";

/* The help in two strings: C compilers need take none over 4095 bytes. */
static const char usage_binaries[] =
	"options with two binaries, as for `benchtrap run` (see `benchtrap run --help`):\n"
	"  --bench GLOB, --symbol GLOB|'F(1,2)'   what to measure (default: every\n"
	"                      registered benchmark of either build)\n"
	"  --warmup, --time, --sample-time, --min-samples, --max-samples, --timeout\n"
	"                      per side: --time 1 gives each build 1 s of samples;\n"
	"                      --sample-time is 0.0005 here (the closer the two\n"
	"                      samples of a pair, the less noise between them)\n"
	"  --aslr, --cpu N, --clean-env, --show-output, --input FILE\n"
	"  --instrument NAME   walltime (default: samples in pairs), or callgrind,\n"
	"                      perf or memory (counts of each build; exact, no\n"
	"                      pairing needed)\n"
	"  -o, --output FILE   the results document: HEAD's, with BASE's whole document\n"
	"                      and every pair's ratio in it (docs/results.md); compare\n"
	"                      PAIRED.json judges it again, merge joins shards of it;\n"
	"                      its directory must exist\n"
	"  --shard K/N         part K of N of the benchmarks, the same in both builds\n"
	"  --threads LIST      each benchmark on N threads at once for each N of LIST,\n"
	"                      NAME[threads=N], in both builds\n"
	"  --markers FILE      start/end markers of every benchmark and sample\n"
	"  --quiet             no progress on stderr (otherwise, when stderr is not a\n"
	"                      terminal, a line per build's benchmark as it finishes:\n"
	"                      [2/7] work (head)  2.916 µs ± 1.6%)\n"
	"\n"
	"When GITHUB_STEP_SUMMARY names a file (GitHub Actions), the markdown report\n"
	"is appended to it as well.\n"
	"\n"
	"examples:\n"
	"  benchtrap compare main.json pr.json\n"
	"  benchtrap compare main.json pr.json --threshold 10 --format markdown > comment.md\n"
	"  benchtrap compare paired.json --format markdown --max-bytes 65000 \\\n"
	"      --full-report \"$RUN_URL\" > comment.md\n"
	"  benchtrap compare ./build-main/benches ./build-pr/benches --threshold 2\n"
	"\n"
	"exit status: 0 no regression beyond the threshold, 1 a regression or a\n"
	"benchmark that failed in HEAD, 2 bad usage or bad input (an unreadable or\n"
	"malformed file, an unknown schema version, a binary that cannot run, two\n"
	"binaries with no benchmark in common), 128+N two binaries' run stopped by\n"
	"signal N (Ctrl-C: the benchmarks both measured are judged and written).\n"
	"Files with the same build_id measured one binary twice: their regressions\n"
	"are noise and exit 0.\n";

enum { OPT_THRESHOLD = CLI_OPT_RUN_END, OPT_MAX_BYTES, OPT_FULL_REPORT };

/* --max-bytes and --full-report, for the report of either kind of compare
 * (cli_compare_report is also paired.c's). */
static struct report_markdown_limit markdown_limit;

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

int cli_compare_report(const struct results_comparison *cmp, enum report_format fmt,
		       const char *base, const char *head)
{
	int r;

	switch (fmt) {
	case REPORT_TEXT:
		report_compare_text(cmp, stdout, cli_color(stdout));
		break;
	case REPORT_MARKDOWN:
		r = report_compare_markdown_limited(cmp, &markdown_limit, stdout, NULL);
		if (r == -ENOSPC)
			return cli_error("compare: --max-bytes %zu is too small for the report's "
					 "heading, counts and the line of what is left out; give "
					 "more, e.g. 65000",
					 markdown_limit.max_bytes);
		if (r == -ENOMEM)
			return cli_error("out of memory");
		if (r < 0)
			return cli_error("compare: cannot cut the markdown report: %s",
					 str_errno(-r));
		break;
	case REPORT_JSON:
		r = report_compare_json(cmp, base, head, stdout);
		if (r == -ENOMEM)
			return cli_error("out of memory");
		if (r < 0)
			return cli_error("cannot write the output: %s", str_errno(-r));
		break;
	}
	append_step_summary(cmp);
	return cmp->gate_failed ? EXIT_FAILED : EXIT_OK;
}

/* Whether path names an ELF file (its first bytes), rather than results.
 * Only a regular file can be a program: a pipe or a FIFO is neither read
 * nor waited on here. */
static bool is_elf(const char *path)
{
	unsigned char magic[4];
	struct stat st;
	bool elf;
	int fd;

	if (!strcmp(path, "-") || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	elf = read(fd, magic, 4) == 4 && !memcmp(magic, "\177ELF", 4);
	close(fd);
	return elf;
}

/* "--NAME" of the long option whose value is c. */
static const char *option_name(const struct option *longopts, int c)
{
	static char buf[64];

	for (const struct option *o = longopts; o->name; o++)
		if (o->val == c) {
			snprintf(buf, sizeof(buf), "--%s", o->name);
			return buf;
		}
	return "an option of run";
}

int cli_compare(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_RUN_LONGOPTS,
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "max-bytes", required_argument, NULL, OPT_MAX_BYTES },
		{ "full-report", required_argument, NULL, OPT_FULL_REPORT },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct results_compare_opts opts;
	struct cli_run_opts ro = { 0 };
	struct results_file *base = NULL, *head = NULL;
	struct results_comparison cmp = { 0 };
	const char *paths[2], *binary_option = NULL;
	int npaths = 0, c, r, code = EXIT_USAGE;
	int nopts = cli_find_dashdash(argc, argv);

	results_compare_opts_default(&opts);
	if (cli_run_opts_init(&ro, argc) < 0)
		return cli_error("out of memory");
	ro.target_args = argv + (nopts < argc ? nopts + 1 : argc);
	ro.ntarget_args = nopts < argc ? argc - nopts - 1 : 0;
	optind = 1;
	opterr = 0;
	/* '-' first: keep operands in order, and "-" (stdin) is an operand. */
	while ((c = getopt_long(nopts, argv, "-ho:", longopts, NULL)) != -1) {
		char *end;

		if (c == 'o')
			c = CLI_OPT_OUTPUT; /* named --output in messages */
		switch (c) {
		case 1:
			if (npaths == 2) {
				cli_error("compare: unexpected argument '%s' (compare takes two "
					  "files, BASE.json HEAD.json, or two binaries; arguments "
					  "for the binaries go after '--')",
					  optarg);
				goto out;
			}
			paths[npaths++] = optarg;
			break;
		case OPT_THRESHOLD:
			if (cli_parse_percent("compare", "--threshold", optarg, &opts.threshold))
				goto out;
			break;
		case OPT_MAX_BYTES: {
			unsigned long long n;

			errno = 0;
			n = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || n == 0 ||
			    n > SIZE_MAX / 2) {
				cli_error("compare: --max-bytes wants a size in bytes, e.g. 65000 "
					  "for a GitHub comment, not '%s'",
					  optarg);
				goto out;
			}
			markdown_limit.max_bytes = (size_t)n;
			break;
		}
		case OPT_FULL_REPORT:
			if (!*optarg || strpbrk(optarg, " \t\n\r()<>")) {
				cli_error("compare: --full-report wants a URL without spaces, "
					  "parentheses or angle brackets, not '%s'",
					  optarg);
				goto out;
			}
			markdown_limit.full_report = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			fputs(usage_binaries, stdout);
			code = EXIT_OK;
			goto out;
		default:
			r = cli_run_option("compare", c, &ro);
			if (r == -ENOENT) {
				code = cli_bad_option("compare", "-ho:", nopts, argv);
				goto out;
			}
			if (r)
				goto out;
			/* The options of measuring, for the message if the
			 * operands turn out to be files. */
			if (c != CLI_OPT_FORMAT && c != CLI_OPT_QUIET && !binary_option)
				binary_option = option_name(longopts, c);
		}
	}
	if ((markdown_limit.max_bytes || markdown_limit.full_report) &&
	    ro.format != REPORT_MARKDOWN) {
		cli_error("compare: %s applies to --format markdown (the report for a "
			  "pull-request comment)",
			  markdown_limit.max_bytes ? "--max-bytes" : "--full-report");
		goto out;
	}
	/* One file: the two sides of a paired comparison's document. */
	if (npaths == 1 && !is_elf(paths[0]) && !binary_option && nopts == argc) {
		if (cli_load_results(paths[0], false, &head) != 0)
			goto out;
		if (!head->paired_base) {
			cli_error("compare: which files? %s holds one run: compare takes two, "
				  "BASE.json HEAD.json, or one written by `benchtrap compare "
				  "BASE_BINARY HEAD_BINARY --output FILE`",
				  paths[0]);
			goto out;
		}
		if (results_compare(head->paired_base, head, &opts, &cmp) < 0) {
			cli_error("out of memory");
			goto out;
		}
		code = cli_compare_report(&cmp, ro.format, head->paired_base->path, paths[0]);
		goto out;
	}
	if (npaths < 2) {
		cli_error("compare: which files? usage: benchtrap compare BASE.json HEAD.json "
			  "(write them with `benchtrap run --output FILE`), or benchtrap compare "
			  "BASE_BINARY HEAD_BINARY");
		goto out;
	}
	bool elf0 = is_elf(paths[0]), elf1 = is_elf(paths[1]);

	if (elf0 && elf1) {
		code = cli_compare_binaries(paths[0], paths[1], &ro, &opts, argc, argv);
		goto out;
	}
	if (elf0 != elf1) {
		const char *other = elf0 ? paths[1] : paths[0];
		struct stat st;

		if (strcmp(other, "-") && stat(other, &st) != 0) {
			cli_error("compare: %s: %s", other, strerror(errno));
			goto out;
		}
		cli_error("compare: %s is a program and %s is not: give two binaries (measured "
			  "side by side) or two results files",
			  elf0 ? paths[0] : paths[1], elf0 ? paths[1] : paths[0]);
		goto out;
	}
	if (binary_option || nopts < argc) {
		cli_error("compare: %s applies when comparing two binaries, and %s and %s are not "
			  "programs",
			  binary_option ? binary_option : "'--'", paths[0], paths[1]);
		goto out;
	}
	if (cli_load_results(paths[0], false, &base) != 0 ||
	    cli_load_results(paths[1], false, &head) != 0)
		goto out;
	/* Observed calls and run's loops time a function differently (the
	 * program's own calls with the stops removed, against a loop of calls
	 * with none inside): their ratio would be the method's, not the code's. */
	if (results_file_observed(base) != results_file_observed(head)) {
		const struct results_file *obs = results_file_observed(base) ? base : head;

		cli_error("compare: %s holds calls observed by `benchtrap observe` and %s "
			  "benchmarks of `benchtrap run`: their times are not alike (compare "
			  "two observe files, or two run files)",
			  obs->path, obs == base ? head->path : base->path);
		goto out;
	}
	if (results_compare(base, head, &opts, &cmp) < 0) {
		cli_error("out of memory");
		goto out;
	}
	code = cli_compare_report(&cmp, ro.format, paths[0], paths[1]);
out:
	cli_run_opts_clear(&ro);
	results_comparison_clear(&cmp);
	results_free(base);
	results_free(head);
	return code;
}
