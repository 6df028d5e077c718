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
#include "cli/cli.h"

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
	"selection (default: every benchmark registered with target-stub):\n"
	"  --bench GLOB        registered benchmarks by name: 'fib*', 'fib[20]'\n"
	"  --symbol GLOB       any function of BINARY or of a library it loads, called\n"
	"                      with no arguments: 'parse_*', 'lzma_crc32'\n"
	"  --symbol 'F(1,2)'   the same with integer arguments (up to 6)\n"
	"                      `benchtrap list BINARY [--symbols]` shows what there is\n"
	"  --shard K/N         run only part K of N of the selection, split by a hash\n"
	"                      of each name, so N CI machines run disjoint parts\n"
	"                      (join their results with `benchtrap merge`)\n"
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
	"  --isolation MODE    'benchmark' (default): a fresh child per benchmark;\n"
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
	"  --cache-sim         callgrind: simulate the caches too (misses per call)\n"
	"\n"
	"output:\n"
	"  --format FMT        text (default), json (the results document on stdout)\n"
	"                      or markdown\n"
	"  --output FILE       also write the results document to FILE, checked before\n"
	"                      measuring: a file is replaced atomically, a device,\n"
	"                      FIFO or /dev/stdout written through (docs/results.md)\n"
	"  --markers FILE      write start/end markers of every benchmark and sample as\n"
	"                      JSON lines (CLOCK_MONOTONIC ns, pid, name)\n"
	"  -h, --help          show this help\n"
	"\n"
	"examples:\n"
	"  benchtrap run ./benches\n"
	"  benchtrap run ./benches --bench 'fib*' --output results.json\n"
	"  benchtrap run /usr/bin/xz --symbol lzma_version_number\n"
	"  benchtrap run ./prog --symbol 'checksum(4096)' -- --config test.conf\n"
	"\n"
	"exit status: 0 all measured, 1 a benchmark failed (crashed, exited, timed\n"
	"out: the others still run), 2 bad usage or bad input\n";

static void print_usage(void)
{
	size_t n;
	const struct measure_instrument *ins = measure_instruments(&n);

	fputs(usage, stdout);
	for (size_t i = 0; i < n; i++)
		if (ins[i].run)
			printf("                        %-10s %s%s\n", ins[i].name, ins[i].summary,
			       i == 0 ? " (default)" : "");
	fputs(usage_tail, stdout);
}

/* The names of the instruments, NULL-terminated, into names[max]: with
 * 'all', those not in this version too. */
static void instrument_names(const char **names, size_t max, bool all, unsigned option)
{
	size_t n, k = 0;
	const struct measure_instrument *ins = measure_instruments(&n);

	for (size_t i = 0; i < n && k + 1 < max; i++)
		if ((all || ins[i].run) && (!option || (ins[i].options & option)))
			names[k++] = ins[i].name;
	names[k] = NULL;
}

/* false, having said so, when option 'name' was given and does not
 * apply to instrument ins. */
static bool option_applies(const struct measure_instrument *ins, bool given, unsigned option,
			   const char *name)
{
	const char *names[16];
	char list[256];

	if (!given || (ins->options & option))
		return true;
	instrument_names(names, 16, false, option);
	cli_join_or(names, false, list, sizeof(list));
	cli_error("run: %s applies to --instrument %s only", name, list);
	return false;
}

enum {
	OPT_BENCH = 0x100,
	OPT_SYMBOL,
	OPT_SHARD,
	OPT_WARMUP,
	OPT_TIME,
	OPT_SAMPLE_TIME,
	OPT_MIN_SAMPLES,
	OPT_MAX_SAMPLES,
	OPT_TIMEOUT,
	OPT_ISOLATION,
	OPT_ASLR,
	OPT_CPU,
	OPT_CLEAN_ENV,
	OPT_SHOW_OUTPUT,
	OPT_INPUT,
	OPT_INSTRUMENT,
	OPT_FORMAT,
	OPT_OUTPUT,
	OPT_MARKERS,
	OPT_KEEP_PROFILES,
	OPT_CACHE_SIM,
};


struct run_opts {
	const char *binary;
	char **benches, **symbols;
	size_t nbenches, nsymbols;
	struct measure_plan plan;
	bool shared, aslr, clean_env, show_output, min_samples_set;
	const struct measure_instrument *instrument;
	const char *keep_profiles; /* --keep-profiles DIR */
	bool cache_sim;
	int cpu;
	unsigned shard_k, shard_n; /* --shard K/N; shard_n 0: all */
	enum report_format format;
	const char *output, *markers;
	const char *input; /* --input: NULL (/dev/null), "-" or a file */
	char **target_args;
	int ntarget_args;
};

/* The selection's "no match", in words, with the way out. */
static int say_miss(const char *binary, const struct measure_miss *m)
{
	switch (m->what) {
	case MEASURE_MISS_BENCH:
		if (m->none_registered && !m->selector)
			return cli_error("%s: registers no benchmarks with target-stub; select "
					 "functions with --symbol (`benchtrap list %s --symbols` "
					 "lists them)",
					 binary, binary);
		if (m->none_registered)
			return cli_error("%s: registers no benchmarks with target-stub; select "
					 "functions with --symbol (`benchtrap list %s --symbols`)",
					 binary, binary);
		if (m->suggest[0])
			return cli_error("%s: no benchmark matches '%s' (did you mean %s?)", binary,
					 m->selector, m->suggest);
		return cli_error("%s: no benchmark matches '%s' (`benchtrap list %s` shows them)",
				 binary, m->selector, binary);
	case MEASURE_MISS_SYMBOL:
		/* A library the loader would find but we could not is the
		 * likeliest reason; say so first. */
		if (m->missing)
			return cli_error("%s: no function matches '%s', and library %s was not "
					 "found, so it was not searched (set LD_LIBRARY_PATH as "
					 "the program needs)",
					 binary, m->pattern, m->missing);
		if (m->suggest[0])
			return cli_error("%s: no function matches '%s' (did you mean %s?)", binary,
					 m->pattern, m->suggest);
		return cli_error("%s: no function matches '%s' in it or its libraries "
				 "(`benchtrap list %s --symbols` shows them)",
				 binary, m->pattern, binary);
	case MEASURE_MISS_BAD_CALL:
		break;
	}
	return cli_error("run: cannot read --symbol '%s': write NAME or NAME(1,2) with up to %d "
			 "integer arguments",
			 m->selector, MEASURE_MAX_ARGS);
}

/* ---- progress and markers ----------------------------------------------- */

struct hooks_state {
	FILE *markers;
	bool progress;
	size_t done, total;
};

static void on_event(const struct measure_event *ev, void *userdata)
{
	struct hooks_state *h = userdata;

	if (h->markers)
		report_marker_line(h->markers, ev);
	if (h->progress && ev->kind == MEASURE_BENCH_START)
		fprintf(stderr, "\r\033[K[%zu/%zu] %s", ++h->done, h->total, ev->name);
}

static bool cpu_allowed(int cpu)
{
	cpu_set_t set;

	return sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_ISSET(cpu, &set);
}

static int parse_options(int argc, char **argv, struct run_opts *o)
{
	static const struct option longopts[] = {
		{ "bench", required_argument, NULL, OPT_BENCH },
		{ "symbol", required_argument, NULL, OPT_SYMBOL },
		{ "shard", required_argument, NULL, OPT_SHARD },
		{ "warmup", required_argument, NULL, OPT_WARMUP },
		{ "time", required_argument, NULL, OPT_TIME },
		{ "sample-time", required_argument, NULL, OPT_SAMPLE_TIME },
		{ "min-samples", required_argument, NULL, OPT_MIN_SAMPLES },
		{ "max-samples", required_argument, NULL, OPT_MAX_SAMPLES },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "isolation", required_argument, NULL, OPT_ISOLATION },
		{ "aslr", no_argument, NULL, OPT_ASLR },
		{ "cpu", required_argument, NULL, OPT_CPU },
		{ "clean-env", no_argument, NULL, OPT_CLEAN_ENV },
		{ "show-output", no_argument, NULL, OPT_SHOW_OUTPUT },
		{ "input", required_argument, NULL, OPT_INPUT },
		{ "instrument", required_argument, NULL, OPT_INSTRUMENT },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "markers", required_argument, NULL, OPT_MARKERS },
		{ "keep-profiles", required_argument, NULL, OPT_KEEP_PROFILES },
		{ "cache-sim", no_argument, NULL, OPT_CACHE_SIM },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	/* isolations[1] is shared. */
	static const char *const formats[] = { "text", "json", "markdown", NULL };
	static const char *const isolations[] = { "benchmark", "shared", NULL };
	int c, v_choice;
	long v;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_BENCH:
			o->benches[o->nbenches++] = optarg;
			break;
		case OPT_SYMBOL:
			o->symbols[o->nsymbols++] = optarg;
			break;
		case OPT_SHARD: {
			/* Digits on both sides of the slash: strtoul alone would take
			 * a sign or blanks, and sets ERANGE beyond ULONG_MAX. */
			unsigned long k = 0, n = 0;
			char *end = optarg;
			bool ok = false;

			errno = 0;
			if (*optarg >= '0' && *optarg <= '9')
				k = strtoul(optarg, &end, 10);
			if (*end == '/' && end[1] >= '0' && end[1] <= '9') {
				n = strtoul(end + 1, &end, 10);
				ok = !*end && errno != ERANGE;
			}
			if (!ok || n < 1 || n > 10000 || k < 1 || k > n)
				return cli_error("run: --shard wants K/N with 1 <= K <= N <= 10000, "
						 "e.g. 2/4, not '%s'",
						 optarg);
			o->shard_k = (unsigned)k;
			o->shard_n = (unsigned)n;
			break;
		}
		case OPT_WARMUP:
			if (cli_parse_seconds("run", "--warmup", optarg, &o->plan.warmup_ns))
				return EXIT_USAGE;
			break;
		case OPT_TIME:
			if (cli_parse_seconds("run", "--time", optarg, &o->plan.time_ns))
				return EXIT_USAGE;
			break;
		case OPT_SAMPLE_TIME:
			if (cli_parse_seconds("run", "--sample-time", optarg,
					      &o->plan.sample_target_ns))
				return EXIT_USAGE;
			if (o->plan.sample_target_ns < 1000)
				return cli_error("run: --sample-time must be at least 1e-6 s: a "
						 "sample must dwarf the clock's own cost");
			break;
		case OPT_MIN_SAMPLES:
			if (cli_parse_count("run", "--min-samples", optarg, 1, 1000000, &v))
				return EXIT_USAGE;
			o->plan.min_samples = (size_t)v;
			o->min_samples_set = true;
			break;
		case OPT_MAX_SAMPLES:
			if (cli_parse_count("run", "--max-samples", optarg, 1, 1000000, &v))
				return EXIT_USAGE;
			o->plan.max_samples = (size_t)v;
			break;
		case OPT_TIMEOUT:
			if (cli_parse_seconds("run", "--timeout", optarg, &o->plan.timeout_ns))
				return EXIT_USAGE;
			if (o->plan.timeout_ns < 1000000)
				return cli_error("run: --timeout must be at least 0.001 s");
			break;
		case OPT_ISOLATION:
			if (cli_parse_choice("run", "--isolation", optarg, isolations, true,
					     &v_choice))
				return EXIT_USAGE;
			o->shared = v_choice == 1;
			break;
		case OPT_ASLR:
			o->aslr = true;
			break;
		case OPT_CPU:
			if (cli_parse_count("run", "--cpu", optarg, 0, CPU_SETSIZE - 1, &v))
				return EXIT_USAGE;
			o->cpu = (int)v;
			if (!cpu_allowed(o->cpu))
				return cli_error("run: --cpu %d: this machine (or this process's CPU "
						 "affinity) has no such CPU; see 'nproc' and "
						 "'taskset -p $$'",
						 o->cpu);
			break;
		case OPT_CLEAN_ENV:
			o->clean_env = true;
			break;
		case OPT_SHOW_OUTPUT:
			o->show_output = true;
			break;
		case OPT_INPUT: {
			struct stat st;

			/* Checked now, not when the first child starts. */
			if (strcmp(optarg, "-") != 0 &&
			    (stat(optarg, &st) != 0 || S_ISDIR(st.st_mode) ||
			     access(optarg, R_OK) != 0))
				return cli_error("run: --input wants a readable file or '-' "
						 "(benchtrap's own input), '%s' is not one",
						 optarg);
			o->input = optarg;
			break;
		}
		case OPT_INSTRUMENT: {
			const char *names[16];
			char list[256];

			o->instrument = measure_instrument_find(optarg);
			if (o->instrument && o->instrument->run)
				break;
			instrument_names(names, 16, !o->instrument, 0);
			cli_join_or(names, false, list, sizeof(list));
			if (o->instrument)
				return cli_error("run: the %s instrument is not in this version of "
						 "benchtrap; use %s",
						 optarg, list);
			return cli_error("run: unknown instrument '%s' (%s)", optarg, list);
		}
		case OPT_KEEP_PROFILES: {
			struct stat st;

			if (stat(optarg, &st) != 0 || !S_ISDIR(st.st_mode) ||
			    access(optarg, W_OK) != 0)
				return cli_error("run: --keep-profiles wants a writable directory, "
						 "'%s' is not one (create it first)",
						 optarg);
			o->keep_profiles = optarg;
			break;
		}
		case OPT_CACHE_SIM:
			o->cache_sim = true;
			break;
		case OPT_FORMAT:
			if (cli_parse_format("run", formats, optarg, &o->format))
				return EXIT_USAGE;
			break;
		case OPT_OUTPUT:
			o->output = optarg;
			break;
		case OPT_MARKERS:
			o->markers = optarg;
			break;
		case 'h':
			print_usage();
			return -1;
		default:
			return cli_bad_option("run", argc, argv);
		}
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
	if (!option_applies(o->instrument, o->keep_profiles, MEASURE_OPT_KEEP_PROFILES,
			    "--keep-profiles") ||
	    !option_applies(o->instrument, o->cache_sim, MEASURE_OPT_CACHE_SIM, "--cache-sim"))
		return EXIT_USAGE;
	/* --max-samples 5 alone lowers the default minimum with it. */
	if (!o->min_samples_set && o->plan.min_samples > o->plan.max_samples)
		o->plan.min_samples = o->plan.max_samples;
	if (o->plan.min_samples > o->plan.max_samples)
		return cli_error("run: --min-samples (%zu) is above --max-samples (%zu)",
				 o->plan.min_samples, o->plan.max_samples);
	return 0;
}

int cli_run(int argc, char **argv)
{
	struct run_opts o = { .cpu = -1 };
	struct elf_file *ef = NULL;
	struct measure_selection specs = { 0 };
	struct measure_miss miss = { 0 };
	struct bench_result *results = NULL;
	struct hooks_state hs = { 0 };
	struct measure_hooks hooks = { on_event, &hs };
	struct measure_target t = { 0 };
	struct report_run rep = { 0 };
	char **target_argv = NULL, *error = NULL, *exec_path = NULL;
	char **command = NULL;
	size_t ninstruments;
	int r, exit_code = EXIT_USAGE;

	/* The command line as typed, for the results file: getopt permutes
	 * argv's pointers. */
	command = calloc((size_t)argc + 1, sizeof(*command));
	if (!command) {
		cli_error("out of memory");
		goto out;
	}
	memcpy(command, argv, (size_t)argc * sizeof(*argv));
	measure_plan_default(&o.plan);
	/* The first instrument is the default. */
	o.instrument = measure_instruments(&ninstruments);
	o.benches = calloc((size_t)argc, sizeof(*o.benches));
	o.symbols = calloc((size_t)argc, sizeof(*o.symbols));
	if (!o.benches || !o.symbols) {
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
	if (o.output && (r = atomic_check(o.output)) < 0) {
		cli_results_unwritable(o.output, r);
		goto out;
	}
	if (o.markers && (r = atomic_open_stream(o.markers, &hs.markers)) < 0) {
		cli_error("%s: cannot write markers: %s", o.markers, atomic_strerror(r));
		goto out;
	}
	if (cli_open_binary(o.binary, &ef) != 0)
		goto out;

	r = measure_select(ef, (const char *const *)o.benches, o.nbenches,
			   (const char *const *)o.symbols, o.nsymbols, &specs, &miss);
	if (r == -ENOENT || r == -EINVAL) {
		say_miss(o.binary, &miss);
		goto out;
	}
	if (r < 0) {
		cli_error("out of memory");
		goto out;
	}
	if (o.shard_n) {
		size_t selected = specs.n;

		measure_select_shard(&specs, o.shard_k, o.shard_n);
		if (!specs.n)
			cli_note("shard %u/%u holds none of the %zu selected benchmarks", o.shard_k,
				 o.shard_n, selected);
	}

	target_argv = calloc((size_t)o.ntarget_args + 2, sizeof(*target_argv));
	if (!target_argv) {
		cli_error("out of memory");
		goto out;
	}
	/* The file read is the file executed: a name without a slash is in
	 * the current directory, as for `list`, never looked up in PATH. */
	if (!strchr(o.binary, '/') && asprintf(&exec_path, "./%s", o.binary) < 0) {
		exec_path = NULL;
		cli_error("out of memory");
		goto out;
	}
	target_argv[0] = exec_path ? exec_path : (char *)o.binary;
	memcpy(target_argv + 1, o.target_args, (size_t)o.ntarget_args * sizeof(*target_argv));

	const struct elf_symbol *main_sym = elf_is_stripped(ef) ? NULL :
								  elf_symbol_by_name(ef, "main");

	t = (struct measure_target){
		.binary = o.binary,
		.argv = target_argv,
		.main_link = main_sym ? main_sym->addr : 0,
		.entry_link = elf_entry(ef),
		.aslr = o.aslr,
		.clean_env = o.clean_env,
		.cpu = o.cpu,
		.quiet_stdio = !o.show_output,
		.input = o.input,
	};

	hs.progress = isatty(STDERR_FILENO) && o.format == REPORT_TEXT;
	hs.total = specs.n;
	results = calloc(specs.n ? specs.n : 1, sizeof(*results));
	if (!results) {
		cli_error("out of memory");
		goto out;
	}

	/* A library preloaded into a static binary would not be loaded. */
	if (o.instrument->preloads && !elf_is_dynamic(ef)) {
		cli_error("%s is a static binary: the %s instrument preloads a library into the "
			  "target; use --instrument callgrind",
			  o.binary, o.instrument->name);
		goto out;
	}
	cli_fatal_signals();
	r = o.instrument->run(&t, specs.v, specs.n, &o.plan, !o.shared,
			      &(struct measure_opts){ .keep_profiles = o.keep_profiles,
						      .cache_sim = o.cache_sim,
						      .static_binary = !elf_is_dynamic(ef) },
			      &hooks, results, &error);
	if (hs.progress)
		fputs("\r\033[K", stderr);
	if (r < 0) {
		/* The binary could not run at all: bad input. */
		char *nl = error ? strchr(error, '\n') : NULL;

		if (nl)
			*nl = '\0';
		cli_error("%s", error ? error : "cannot run the binary");
		goto out;
	}

	r = report_env_collect(ef, o.aslr, BENCHTRAP_VERSION, &rep.env);
	if (r < 0) {
		cli_error("out of memory");
		goto out;
	}
	rep.instrument = o.instrument->name;
	rep.isolation = o.shared ? "shared" : "benchmark";
	rep.plan = &o.plan;
	rep.argv = command;
	rep.argc = argc;
	rep.results = results;
	rep.n = specs.n;

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
	}
out:
	if (hs.markers && fclose(hs.markers) != 0 && exit_code != EXIT_USAGE)
		exit_code = cli_error("%s: cannot write markers: %s", o.markers,
				      atomic_strerror(errno));
	results_env_clear(&rep.env);
	for (size_t i = 0; results && i < specs.n; i++)
		bench_result_clear(&results[i]);
	free(results);
	free(error);
	free(target_argv);
	free(exec_path);
	free(command);
	measure_selection_clear(&specs);
	measure_miss_clear(&miss);
	elf_close(ef);
	free(o.benches);
	free(o.symbols);
	return exit_code;
}
