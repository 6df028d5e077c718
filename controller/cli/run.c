/* SPDX-License-Identifier: MIT */
/* benchtrap run: measure benchmarks, each in a fresh traced child. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "measure/measure.h"
#include "report/report.h"
#include "util/atomic.h"
#include "suite/suite.h"
#include "cli/cli.h"
#include "cli/runopts.h"

static const char usage[] =
	"usage: benchtrap run BINARY [--bench GLOB]... [--symbol GLOB|'SYM(1,2)']...\n"
	"                     [options] [-- TARGET_ARGS...]\n"
	"\n"
	"Measure benchmarks of BINARY, each in a fresh child started for it: the child\n"
	"runs to main (loader and constructors done), benchtrap injects a timing loop\n"
	"that calls the benchmark n times between two clock reads, and reads the\n"
	"result at the end of each sample. No trap falls inside a timed interval; the\n"
	"loop's own cost is measured in the same child and subtracted.\n"
	"\n"
	"A suite of another framework is taken as it is: --bench selects the\n"
	"instances the binary lists, by the names it gives them, each run alone in a\n"
	"fresh process of the binary with the framework's flags passed after '--';\n"
	"--symbol selects its functions as in any binary:\n";

/* After the kinds of suite. */
static const char usage_select[] =
	"\n"
	"selection (default: every benchmark registered with target-stub):\n"
	"  --bench GLOB        registered benchmarks by name: 'fib*', 'fib[20]'\n"
	"  --symbol GLOB       any function of BINARY or of a library it loads, called\n"
	"                      with no arguments: 'parse_*', 'lzma_crc32'\n"
	"  --symbol 'F(1,2)'   the same with integer arguments (up to 6)\n"
	"  --symbol 'F(long)'  one C++ overload, by its parameter types; with\n"
	"                      arguments 'F(long)(7)'. A name of several overloads\n"
	"                      (or of a template's instances) is refused with their\n"
	"                      list; globs leave out pieces of functions (.cold,\n"
	"                      .part) and C++ member functions that need an object,\n"
	"                      which are refused by name\n"
	"                      `benchtrap list BINARY [--symbols]` shows what there is\n"
	"  --shard K/N         run only part K of N of the selection, split by a hash\n"
	"                      of each name, so N CI machines run disjoint parts\n"
	"                      (join their results with `benchtrap merge`)\n"
	"  --threads LIST      run each benchmark on N threads at once for each N of\n"
	"                      LIST (1,2,4; 1 to 64), each count a benchmark of its\n"
	"                      own, NAME[threads=N]; instead of BENCHTRAP_THREADS's\n"
	"                      counts (default: 1, names unchanged; not under perf)\n"
	"\n"
	"sampling (defaults: docs/run.md explains them):\n"
	"  --warmup SEC        run each benchmark this long before sampling (0.2)\n"
	"  --time SEC          sampling time per benchmark (1)\n"
	"  --sample-time SEC   grow iterations until one sample lasts this long (0.01)\n"
	"  --min-samples N     at least N samples, even past --time (10)\n"
	"  --max-samples N     at most N samples (1000)\n"
	"  --timeout SEC       a benchmark still running after SEC is killed and\n"
	"                      reported as failed (60)\n"
	"\n"
	"child:\n"
	"  --isolation MODE    'benchmark' (default): every benchmark starts from a\n"
	"                      fresh process at main: a fresh child (walltime), a\n"
	"                      child forked from one process stopped at main\n"
	"                      (callgrind, perf, memory; under valgrind ~10 ms a\n"
	"                      benchmark, not a start-up);\n"
	"                      'process': a fresh process per benchmark, exec and\n"
	"                      all, under every instrument;\n"
	"                      'shared': one child runs all, in order, as in-process\n"
	"                      harnesses do (to see what isolation changes)\n"
	"  --aslr              keep address-space randomization (off by default)\n"
	"  --cpu N             pin the child to CPU N\n"
	"  --clean-env         run the child with a minimal environment\n"
	"  --show-output       let the child write to the terminal (default: its\n"
	"                      stdout and stderr go to /dev/null)\n"
	"  --input FILE        the child's standard input: FILE, read from its start\n"
	"                      by every child, or '-' for benchtrap's own (default:\n"
	"                      /dev/null, so a benchmark never waits on a terminal\n"
	"                      or eats a pipe)\n"
	"  --instrument NAME   what measures the calls (docs/instruments.md):\n";

/* The rest of the usage, after the list of instruments. */
static const char usage_tail[] =
	"  --keep-profiles DIR callgrind: keep each benchmark's raw profile in DIR\n"
	"                      (a directory that exists)\n"
	"  --cache-sim         callgrind: simulate the caches too (misses per call)\n"
	"  --warmup-calls N    memory: N uncounted calls before the counted one (0)\n"
	"  --alloc-stacks DIR  memory: a call stack for every allocation; the top\n"
	"                      sites in the results, all in DIR/NNN-<name>.folded\n"
	"                      (flamegraph.pl, speedscope, inferno)\n"
	"  --profile DIR       walltime, callgrind: after each benchmark, a pass that\n"
	"                      records its stacks: DIR/NNN-<name>.folded and .svg\n"
	"                      (a flamegraph)\n"
	"                      benchtrap creates no directory: each DIR, and the\n"
	"                      directory of each FILE below, must exist\n"
	"\n"
	"output:\n"
	"  --format FMT        text (default), json (the results document on stdout)\n"
	"                      or markdown\n"
	"  -o, --output FILE   also write the results document to FILE, checked before\n"
	"                      measuring: a file is replaced atomically, a device,\n"
	"                      FIFO or /dev/stdout written through; another user's\n"
	"                      symbolic link in /tmp is not followed (docs/results.md);\n"
	"                      while measuring, each result also goes to FILE.journal\n"
	"                      (JSON lines), removed once FILE is written whole\n"
	"  --markers FILE      write start/end markers of every benchmark and sample as\n"
	"                      JSON lines (CLOCK_MONOTONIC ns, pid, name)\n"
	"  --quiet             no progress on stderr: by default a terminal shows the\n"
	"                      benchmark running now ([3/11] fib[20]), and anything\n"
	"                      else (a CI log, a file) gets a line per benchmark as\n"
	"                      it finishes: [3/11] fib[20]  8.203 µs ± 0.8%\n"
	"  -h, --help          show this help\n"
	"\n"
	"examples:\n"
	"  benchtrap run ./benches\n"
	"  benchtrap run ./benches --bench 'fib*' --output results.json\n"
	"  benchtrap run /usr/bin/xz --symbol lzma_version_number\n"
	"  benchtrap run ./benches --instrument memory --bench 'parse*'\n"
	"  benchtrap run ./benches --bench 'queue_*' --threads 1,2,4,8\n"
	"  benchtrap run ./bm_gbench --bench 'BM_memcpy/*' -- --benchmark_min_time=0.2\n"
	"  benchtrap run ./prog --symbol 'checksum(4096)' -- --config test.conf\n"
	"\n"
	"Ctrl-C (SIGINT), SIGTERM or SIGHUP stops the run: the benchmark running is\n"
	"ended, those measured are kept, and the table and FILE are written with the\n"
	"run marked partial (a second signal ends benchtrap at once)\n"
	"\n"
	"exit status: 0 all measured, 1 a benchmark failed (crashed, exited, timed\n"
	"out: the others still run), 2 bad usage or bad input, 128+N stopped by\n"
	"signal N (the results measured written)\n";

static void print_usage(void)
{
	fputs(usage, stdout);
	cli_print_kinds(stdout);
	fputs(usage_select, stdout);
	cli_print_instruments(stdout);
	fputs(usage_tail, stdout);
}

static int parse_options(int argc, char **argv, struct cli_run_opts *o)
{
	static const struct option longopts[] = {
		CLI_RUN_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c, r;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		if (c == 'h') {
			print_usage();
			return -1;
		}
		r = cli_run_option("run", c, o);
		if (r == -ENOENT)
			return cli_bad_option("run", "ho:", argc, argv);
		if (r)
			return r;
	}
	if (optind < argc)
		o->binary = argv[optind++];
	if (!o->binary)
		return cli_error("run: which binary? usage: benchtrap run BINARY [--bench GLOB] "
				 "[--symbol GLOB] [-- TARGET_ARGS]");
	if (optind < argc)
		return cli_error("run: unexpected argument '%s' (arguments for the target go "
				 "after '--')",
				 argv[optind]);
	return cli_run_opts_check("run", o);
}

/*
 * The journal beside --output FILE (report.h): FILE.journal, created for
 * this run, for a FILE that is a regular file or nothing yet (a device or
 * a FIFO gets none). One that exists is never replaced: a journal left by
 * a run that was killed holds what it measured.
 */
static int open_journal(const char *output, const struct report_run *rep, char **ret_path,
			struct report_journal **ret)
{
	struct stat st;
	int r;

	if (stat(output, &st) == 0 && !S_ISREG(st.st_mode))
		return 0;
	if (asprintf(ret_path, "%s.journal", output) < 0) {
		*ret_path = NULL;
		return cli_error("out of memory");
	}
	r = report_journal_open(*ret_path, rep, ret);
	if (r == -EEXIST && report_is_journal(*ret_path))
		return cli_error("%s: left by a run that did not finish, and holds what it "
				 "measured (every command that reads results reads it: `benchtrap "
				 "compare %s ...`); move or remove it to run again",
				 *ret_path, *ret_path);
	if (r == -EEXIST)
		return cli_error("%s: in the way of the journal benchtrap keeps beside %s while "
				 "it runs; move or remove it",
				 *ret_path, output);
	if (r < 0)
		return cli_error("%s: cannot write the journal of the run: %s", *ret_path,
				 atomic_strerror(r));
	return 0;
}

/* A stopped run: results[0..n) made those measured before the stop, in
 * order; the others cleared. Returns how many. */
static size_t keep_measured(struct bench_result *results, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (!results[i].ended || results[i].interrupted) {
			bench_result_clear(&results[i]);
			continue;
		}
		if (k != i) {
			results[k] = results[i];
			results[i] = (struct bench_result){ 0 };
		}
		k++;
	}
	return k;
}

int cli_run(int argc, char **argv)
{
	struct cli_run_opts o = { 0 };
	struct elf_file *ef = NULL;
	struct measure_selection specs = { 0 };
	struct measure_miss miss = { 0 };
	struct bench_result *results = NULL;
	struct cli_progress hs = { 0 };
	struct measure_hooks hooks = { cli_progress_event, &hs };
	struct cli_suite suite = { 0 };
	struct report_run rep = { 0 };
	char *error = NULL, *journal = NULL;
	char **command = NULL;
	int r, exit_code = EXIT_USAGE;

	/* The command line as typed, for the results file: getopt permutes
	 * argv's pointers. */
	command = calloc((size_t)argc + 1, sizeof(*command));
	if (!command) {
		cli_error("out of memory");
		goto out;
	}
	memcpy(command, argv, (size_t)argc * sizeof(*argv));
	if (cli_run_opts_init(&o, argc) < 0) {
		cli_error("out of memory");
		goto out;
	}
	/* Everything after the first "--" belongs to the target's main. */
	int nopts = cli_find_dashdash(argc, argv);

	o.target_args = argv + (nopts < argc ? nopts + 1 : argc);
	o.ntarget_args = nopts < argc ? argc - nopts - 1 : 0;
	r = parse_options(nopts, argv, &o);
	if (r != 0) {
		exit_code = r < 0 ? EXIT_OK : r;
		goto out;
	}
	/* Output paths are checked before anything is measured. */
	if (cli_check_output(o.output) || cli_open_markers(o.markers, &hs.markers))
		goto out;
	if (cli_suite_open(&suite, o.binary, &o) != 0 || cli_check_interp(o.binary, suite.ef) != 0)
		goto out;
	ef = suite.ef;
	r = cli_suite_select(&suite, &o, NULL, &specs, &miss);
	if (r == -ENOENT || r == -EINVAL) {
		cli_say_miss("run", o.binary, &miss);
		goto out;
	}
	if (r == -ECANCELED)
		goto out;
	if (r < 0) {
		cli_error("out of memory");
		goto out;
	}
	if (cli_suite_check("run", &suite, &o, &specs) != 0)
		goto out;
	/* Each count is a benchmark of its own, sharded as one. */
	if (cli_select_threads("run", o.binary, &o, &specs) != 0)
		goto out;
	if (o.shard_n) {
		size_t selected = specs.n;

		measure_select_shard(&specs, o.shard_k, o.shard_n);
		if (!specs.n)
			cli_note("shard %u/%u holds none of the %zu selected benchmarks", o.shard_k,
				 o.shard_n, selected);
	}

	cli_progress_init(&hs, &o, specs.n);
	results = calloc(specs.n ? specs.n : 1, sizeof(*results));
	if (!results) {
		cli_error("out of memory");
		goto out;
	}
	r = report_env_collect(ef, o.aslr, BENCHTRAP_VERSION, &rep.env);
	if (r < 0) {
		cli_error("out of memory");
		goto out;
	}
	rep.instrument = o.instrument->name;
	rep.isolation = measure_isolation_name(cli_suite_isolation(&suite, &o));
	rep.plan = &o.plan;
	rep.argv = command;
	rep.argc = argc;
	if (o.output && open_journal(o.output, &rep, &journal, &hs.journal) != 0)
		goto out;
	cli_stop_signals();
	r = cli_suite_run(&suite, &o, specs.v, specs.n, &hooks, results, &error);
	cli_progress_end(&hs);
	/* What a stop refused to start is no fault of the binary's. */
	if (r < 0 && !cli_stopped()) {
		/* The binary could not run at all: bad input. */
		char *nl = error ? strchr(error, '\n') : NULL;

		if (nl)
			*nl = '\0';
		cli_error("%s", error ? error : "cannot run the binary");
		goto out;
	}
	rep.results = results;
	rep.n = specs.n;
	if (cli_stopped()) {
		rep.stopped_by = cli_stopped();
		rep.selected = specs.n;
		rep.n = keep_measured(results, specs.n);
	}

	exit_code = EXIT_OK;
	for (size_t i = 0; i < specs.n; i++)
		if (results[i].status != BENCH_OK)
			exit_code = EXIT_FAILED;

	if (o.format == REPORT_JSON) {
		if (report_write_json(&rep, stdout) < 0) {
			exit_code = cli_error("cannot write the results document: %s",
					      strerror(errno ? errno : EIO));
			goto out;
		}
	} else {
		bool color = o.format == REPORT_TEXT && cli_color(stdout);

		report_print_table(&rep, stdout, o.format, color);
	}
	fflush(stdout);
	if (o.output) {
		r = report_write_json_file(&rep, o.output);
		if (r < 0)
			exit_code = cli_results_unwritable(o.output, r);
		/* The results file is whole: the journal has served. */
		r = report_journal_close(hs.journal, r == 0);
		hs.journal = NULL;
		if (r < 0 && exit_code != EXIT_USAGE)
			cli_note("%s: the journal could not be written (%s); the results file is "
				 "whole",
				 journal, atomic_strerror(r));
	}
	if (exit_code != EXIT_USAGE && cli_unwritten(results, specs.n))
		exit_code = EXIT_USAGE;
	if (rep.stopped_by && exit_code != EXIT_USAGE) {
		const char *abbrev = sigabbrev_np(rep.stopped_by);
		const char *name = abbrev ? abbrev : "?";

		if (o.output)
			cli_note("stopped by SIG%s after %zu of %zu benchmarks: the %zu measured "
				 "are in %s, marked partial",
				 name, rep.n, specs.n, rep.n, o.output);
		else
			cli_note("stopped by SIG%s after %zu of %zu benchmarks: the table holds "
				 "the %zu measured",
				 name, rep.n, specs.n, rep.n);
		exit_code = 128 + rep.stopped_by;
	}
out:
	/* The results file was not written whole: the journal stays when it
	 * holds anything measured (said), and goes when it holds nothing. */
	if (hs.journal) {
		size_t held = report_journal_count(hs.journal);

		report_journal_close(hs.journal, held == 0);
		if (held)
			cli_note("%s holds the %zu benchmark%s measured; every command that reads "
				 "results reads it",
				 journal, held, held == 1 ? "" : "s");
	}
	free(journal);
	if (cli_close_markers(&hs, o.markers, exit_code != EXIT_USAGE))
		exit_code = EXIT_USAGE;
	results_env_clear(&rep.env);
	for (size_t i = 0; results && i < specs.n; i++)
		bench_result_clear(&results[i]);
	free(results);
	suite_release();
	free(error);
	free(command);
	measure_selection_clear(&specs);
	measure_miss_clear(&miss);
	cli_suite_clear(&suite);
	cli_run_opts_clear(&o);
	return exit_code;
}
