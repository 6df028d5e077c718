/* SPDX-License-Identifier: MIT */
/* The options of run and of compare BASE_BINARY HEAD_BINARY (runopts.h). */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elf.h"
#include "report/progress.h"
#include "suite/suite.h"
#include "util/atomic.h"
#include "cli/cli.h"
#include "cli/runopts.h"

static int cmd_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int cmd_error(const char *cmd, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	cli_error("%s: %s", cmd, msg ? msg : "bad option");
	free(msg);
	return EXIT_USAGE;
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
static bool option_applies(const char *cmd, const struct measure_instrument *ins, bool given,
			   unsigned option, const char *name)
{
	const char *names[16];
	char list[256];

	if (!given || (ins->options & option))
		return true;
	instrument_names(names, 16, false, option);
	cli_join_or(names, false, list, sizeof(list));
	cli_error("%s: %s applies to --instrument %s only", cmd, name, list);
	return false;
}

void cli_print_instruments(FILE *f)
{
	size_t n;
	const struct measure_instrument *ins = measure_instruments(&n);

	for (size_t i = 0; i < n; i++)
		if (ins[i].run)
			fprintf(f, "                        %-10s %s%s\n", ins[i].name,
				ins[i].summary, i == 0 ? " (default)" : "");
}

void cli_print_kinds(FILE *f)
{
	size_t n;
	const struct suite_kind *k = suite_kinds(&n);

	for (size_t i = 0; i < n; i++)
		if (k[i].detect)
			fprintf(f, "  %-18s %s (%s)\n", k[i].title,
				k[i].examples ? k[i].examples : "", k[i].doc ? k[i].doc : "");
}

/* The selection's "no match", in words, with the way out. */
int cli_say_miss(const char *cmd, const char *binary, const struct measure_miss *m)
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
		if (m->stripped && m->suggest[0])
			return cli_error(
				"%s: no function matches '%s' (did you mean %s?); if it is "
				"the binary's own, the binary is stripped and its code may be "
				"linked in without a symbol: run a build that is not "
				"stripped",
				binary, m->pattern, m->suggest);
		if (m->stripped)
			return cli_error("%s: no function matches '%s': the binary is stripped and "
					 "exports no such function (its code may be linked in "
					 "statically, without a symbol); run a build that is not "
					 "stripped",
					 binary, m->pattern);
		if (m->suggest[0])
			return cli_error("%s: no function matches '%s' (did you mean %s?)", binary,
					 m->pattern, m->suggest);
		return cli_error("%s: no function matches '%s' in it or its libraries "
				 "(`benchtrap list %s --symbols` shows them)",
				 binary, m->pattern, binary);
	case MEASURE_MISS_AMBIGUOUS:
		if (m->generic)
			return cli_error("%s: --symbol '%s' names several instances of a generic "
					 "function: %s (pick one by its whole name, as in --symbol "
					 "'%s')",
					 binary, m->selector, m->names, m->function);
		if (m->instances)
			return cli_error("%s: --symbol '%s' names several instances of a function "
					 "template: %s (pick one by its template arguments or its "
					 "parameter types, as in --symbol '%s' or '%s')",
					 binary, m->selector, m->names, m->instance, m->function);
		return cli_error("%s: --symbol '%s' names several functions: %s (pick one by its "
				 "parameter types, as in --symbol '%s')",
				 binary, m->selector, m->names, m->function);
	case MEASURE_MISS_FRAGMENT:
		return cli_error("%s: '%s' is a piece the compiler split off a function "
				 "(.cold, .part), which runs only from inside it and cannot be "
				 "called (select the function it belongs to)",
				 binary, m->function);
	case MEASURE_MISS_FLOATING:
		return cli_error("%s: '%s' takes floating-point parameters, but --symbol passes "
				 "integer arguments, in integer registers (pick an overload with "
				 "integer parameters, or select it without arguments)",
				 binary, m->function);
	case MEASURE_MISS_MEMBER:
		return cli_error("%s: '%s' is a member function that needs an object ('this'), "
				 "which --symbol cannot give (benchmark a function that makes one "
				 "and calls it)",
				 binary, m->function);
	case MEASURE_MISS_BAD_CALL:
		if (m->not_integer)
			return cli_error("%s: cannot read --symbol '%s': arguments must be "
					 "integers, decimal or hex with 0x (NAME(TYPES)(1,2))",
					 cmd, m->selector);
		break;
	}
	return cli_error("%s: cannot read --symbol '%s': write NAME, NAME(1,2) with up to %d "
			 "integer arguments, or NAME(TYPES)(1,2) for one overload",
			 cmd, m->selector, MEASURE_MAX_ARGS);
}

void cli_progress_init(struct cli_progress *h, const struct cli_run_opts *o, size_t total)
{
	bool tty = isatty(STDERR_FILENO);

	/* On a terminal a live line, not under JSON, which a terminal shows
	 * on the same screen; in a log a line per benchmark, whatever stdout
	 * holds. */
	h->progress = !o->quiet && tty && o->format == REPORT_TEXT;
	h->lines = !o->quiet && !tty;
	h->total = total;
}

/* "head" or "base" for a result of compare BASE_BINARY HEAD_BINARY, NULL
 * for run. */
static const char *progress_side(const struct cli_progress *h, const struct bench_result *r)
{
	if (!h->head)
		return NULL;
	for (size_t i = 0; i < h->nhead; i++)
		if (r == &h->head[i])
			return "head";
	return "base";
}

int cli_close_markers(struct cli_progress *h, const char *path, bool say)
{
	int err = h->markers_err;

	if (!h->markers)
		return 0;
	errno = 0;
	if (fclose(h->markers) != 0 && !err)
		err = errno ? errno : EIO;
	h->markers = NULL;
	if (!err || !say)
		return 0;
	return cli_error("%s: cannot write markers: %s", path, atomic_strerror(-err));
}

void cli_progress_event(const struct measure_event *ev, void *userdata)
{
	struct cli_progress *h = userdata;
	char *line;

	if (h->markers) {
		report_marker_line(h->markers, ev);
		if (!h->markers_err && ferror(h->markers))
			h->markers_err = errno ? errno : EIO;
	}
	if (h->journal && ev->kind == MEASURE_BENCH_END && ev->result && !ev->result->interrupted)
		report_journal_add(h->journal, ev->result);
	if (h->progress && ev->kind == MEASURE_BENCH_START)
		fprintf(stderr, "\r\033[K[%zu/%zu] %s", ++h->done, h->total, ev->name);
	if (h->lines && ev->kind == MEASURE_BENCH_END && ev->result && ev->result->interrupted)
		fprintf(stderr, "[%zu/%zu] %s  stopped: left out\n", ++h->ended, h->total,
			ev->name);
	else if (h->lines && ev->kind == MEASURE_BENCH_END && ev->result &&
		 report_progress_line(ev->result, ++h->ended, h->total,
				      progress_side(h, ev->result), &line) == 0) {
		fprintf(stderr, "%s\n", line);
		free(line);
	}
}

void cli_progress_end(struct cli_progress *h)
{
	if (h->progress)
		fputs("\r\033[K", stderr);
}

static bool cpu_allowed(int cpu)
{
	cpu_set_t set;

	return sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_ISSET(cpu, &set);
}

int cli_run_opts_init(struct cli_run_opts *o, int argc)
{
	size_t n;

	*o = (struct cli_run_opts){ .cpu = -1 };
	measure_plan_default(&o->plan);
	/* The first instrument is the default. */
	o->instrument = measure_instruments(&n);
	o->benches = calloc((size_t)argc + 1, sizeof(*o->benches));
	o->symbols = calloc((size_t)argc + 1, sizeof(*o->symbols));
	return o->benches && o->symbols ? 0 : -ENOMEM;
}

void cli_run_opts_clear(struct cli_run_opts *o)
{
	free(o->benches);
	free(o->symbols);
	*o = (struct cli_run_opts){ 0 };
}

int cli_run_option(const char *cmd, int c, struct cli_run_opts *o)
{
	/* In the order of enum measure_isolation. */
	static const char *const formats[] = { "text", "json", "markdown", NULL };
	static const char *const isolations[] = { "benchmark", "process", "shared", NULL };
	int v_choice;
	long v;

	switch (c) {
	case CLI_OPT_BENCH:
		o->benches[o->nbenches++] = optarg;
		return 0;
	case CLI_OPT_SYMBOL:
		o->symbols[o->nsymbols++] = optarg;
		return 0;
	case CLI_OPT_SHARD: {
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
			return cmd_error(cmd,
					 "--shard wants K/N with 1 <= K <= N <= 10000, "
					 "e.g. 2/4, not '%s'",
					 optarg);
		o->shard_k = (unsigned)k;
		o->shard_n = (unsigned)n;
		return 0;
	}
	case CLI_OPT_WARMUP:
		if (cli_parse_seconds(cmd, "--warmup", optarg, &o->plan.warmup_ns))
			return EXIT_USAGE;
		return 0;
	case CLI_OPT_TIME:
		if (cli_parse_seconds(cmd, "--time", optarg, &o->plan.time_ns))
			return EXIT_USAGE;
		return 0;
	case CLI_OPT_SAMPLE_TIME:
		if (cli_parse_seconds(cmd, "--sample-time", optarg, &o->plan.sample_target_ns))
			return EXIT_USAGE;
		if (o->plan.sample_target_ns < 1000)
			return cmd_error(cmd, "--sample-time must be at least 1e-6 s: a "
					      "sample must dwarf the clock's own cost");
		o->sample_time_set = true;
		return 0;
	case CLI_OPT_MIN_SAMPLES:
		if (cli_parse_count(cmd, "--min-samples", optarg, 1, 1000000, &v))
			return EXIT_USAGE;
		o->plan.min_samples = (size_t)v;
		o->min_samples_set = true;
		return 0;
	case CLI_OPT_MAX_SAMPLES:
		if (cli_parse_count(cmd, "--max-samples", optarg, 1, 1000000, &v))
			return EXIT_USAGE;
		o->plan.max_samples = (size_t)v;
		return 0;
	case CLI_OPT_TIMEOUT:
		o->timeout_set = true;
		if (cli_parse_seconds(cmd, "--timeout", optarg, &o->plan.timeout_ns))
			return EXIT_USAGE;
		if (o->plan.timeout_ns < 1000000)
			return cmd_error(cmd, "--timeout must be at least 0.001 s");
		return 0;
	case CLI_OPT_ISOLATION:
		if (cli_parse_choice(cmd, "--isolation", optarg, isolations, true, &v_choice))
			return EXIT_USAGE;
		o->isolation = (enum measure_isolation)v_choice;
		return 0;
	case CLI_OPT_ASLR:
		o->aslr = true;
		return 0;
	case CLI_OPT_CPU:
		if (cli_parse_count(cmd, "--cpu", optarg, 0, CPU_SETSIZE - 1, &v))
			return EXIT_USAGE;
		o->cpu = (int)v;
		if (!cpu_allowed(o->cpu))
			return cmd_error(cmd,
					 "--cpu %d: this machine (or this process's CPU "
					 "affinity) has no such CPU; see 'nproc' and "
					 "'taskset -p $$'",
					 o->cpu);
		return 0;
	case CLI_OPT_CLEAN_ENV:
		o->clean_env = true;
		return 0;
	case CLI_OPT_SHOW_OUTPUT:
		o->show_output = true;
		return 0;
	case CLI_OPT_INPUT: {
		struct stat st;

		/* Checked now, not when the first child starts. */
		if (strcmp(optarg, "-") != 0 &&
		    (stat(optarg, &st) != 0 || S_ISDIR(st.st_mode) || access(optarg, R_OK) != 0))
			return cmd_error(cmd,
					 "--input wants a readable file or '-' "
					 "(benchtrap's own input), '%s' is not one",
					 optarg);
		o->input = optarg;
		return 0;
	}
	case CLI_OPT_INSTRUMENT: {
		const char *names[16];
		char list[256];

		o->instrument = measure_instrument_find(optarg);
		if (o->instrument && o->instrument->run)
			return 0;
		instrument_names(names, 16, !o->instrument, 0);
		cli_join_or(names, false, list, sizeof(list));
		if (o->instrument)
			return cmd_error(cmd,
					 "the %s instrument is not in this version of "
					 "benchtrap; use %s",
					 optarg, list);
		return cmd_error(cmd, "unknown instrument '%s' (%s)", optarg, list);
	}
	case CLI_OPT_KEEP_PROFILES: {
		struct stat st;

		if (stat(optarg, &st) != 0 || !S_ISDIR(st.st_mode) || access(optarg, W_OK) != 0)
			return cmd_error(cmd,
					 "--keep-profiles wants a writable directory, "
					 "'%s' is not one (create it first)",
					 optarg);
		o->keep_profiles = optarg;
		return cli_check_out_dir(cmd, "--keep-profiles", optarg);
	}
	case CLI_OPT_WARMUP_CALLS:
		if (cli_parse_count(cmd, "--warmup-calls", optarg, 0, 1000000, &v))
			return EXIT_USAGE;
		o->warmup_calls = (unsigned long)v;
		o->warmup_calls_set = true;
		return 0;
	case CLI_OPT_ALLOC_STACKS: {
		struct stat st;

		if (stat(optarg, &st) != 0 || !S_ISDIR(st.st_mode))
			return cmd_error(cmd, "--alloc-stacks wants an existing directory for the "
					      "folded stacks, not '%s'",
					 optarg);
		o->alloc_stacks = optarg;
		return cli_check_out_dir(cmd, "--alloc-stacks", optarg);
	}
	case CLI_OPT_PROFILE: {
		struct stat st;

		if (stat(optarg, &st) != 0 || !S_ISDIR(st.st_mode) || access(optarg, W_OK) != 0)
			return cmd_error(cmd, "--profile wants a writable directory for the "
					      "flamegraphs, not '%s' (create it first)",
					 optarg);
		o->profile = optarg;
		return cli_check_out_dir(cmd, "--profile", optarg);
	}
	case CLI_OPT_CACHE_SIM:
		o->cache_sim = true;
		return 0;
	case CLI_OPT_QUIET:
		o->quiet = true;
		return 0;
	case CLI_OPT_THREADS: {
		struct measure_threads_bad bad;

		if (measure_threads_parse(optarg, &o->threads, &bad) == 0)
			return 0;
		if (bad.what == MEASURE_THREADS_REPEATED)
			return cmd_error(cmd,
					 "--threads gives %s twice: each count is a benchmark of "
					 "its own, give it once (e.g. 1,2,4)",
					 bad.item);
		if (bad.what == MEASURE_THREADS_EMPTY)
			return cmd_error(cmd,
					 "--threads wants thread counts from 1 to %d separated "
					 "by commas, e.g. 1,2,4; '%s' has an empty one",
					 MEASURE_MAX_THREADS, optarg);
		return cmd_error(cmd,
				 "--threads wants thread counts from 1 to %d separated by "
				 "commas, e.g. 1,2,4, not '%s'",
				 MEASURE_MAX_THREADS, bad.item);
	}
	case CLI_OPT_FORMAT:
		if (cli_parse_format(cmd, formats, optarg, &o->format))
			return EXIT_USAGE;
		return 0;
	case 'o':
	case CLI_OPT_OUTPUT:
		o->output = optarg;
		return 0;
	case CLI_OPT_MARKERS:
		o->markers = optarg;
		return 0;
	default:
		return -ENOENT;
	}
}

const char *cli_static_advice(const struct measure_instrument *in)
{
	if (in->id == MEASURE_MEMORY)
		return "build it dynamically linked to count its allocations";
	return "use --instrument callgrind";
}

/* The instruments that run benchmarks on several threads: "a, b or c". */
static void threads_instruments(char *list, size_t size)
{
	const char *names[16];

	instrument_names(names, 16, false, MEASURE_OPT_THREADS);
	cli_join_or(names, false, list, size);
}

/* The largest count of --threads, 0 without. */
static unsigned threads_max(const struct measure_threads *t)
{
	unsigned max = 0;

	for (size_t i = 0; i < t->n; i++)
		if (t->v[i] > max)
			max = t->v[i];
	return max;
}

int cli_select_threads(const char *cmd, const char *binary, const struct cli_run_opts *o,
		       struct measure_selection *sel)
{
	char list[256];

	if (measure_select_threads(sel, &o->threads) < 0)
		return cli_error("out of memory");
	/* Only a registration's own counts can get here: --threads is
	 * checked as it is read, and against the instrument. */
	for (size_t i = 0; i < sel->n; i++) {
		const struct bench_spec *s = &sel->v[i];

		if (s->threads > MEASURE_MAX_THREADS)
			return cli_error("%s: %s runs on %u threads (BENCHTRAP_THREADS), more than "
					 "the %d benchtrap runs at once; lower the count in the "
					 "program, or choose counts with --threads",
					 binary, s->name, s->threads, MEASURE_MAX_THREADS);
		if (s->threads > 1 && !(o->instrument->options & MEASURE_OPT_THREADS)) {
			threads_instruments(list, sizeof(list));
			return cmd_error(cmd,
					 "%s runs on %u threads (BENCHTRAP_THREADS), which "
					 "--instrument %s does not support; use --instrument %s, "
					 "or --threads 1",
					 s->name, s->threads, o->instrument->name, list);
		}
	}
	return 0;
}

/* The number in a suite's own option after "--", "--NAME=V" or "--NAME V";
 * -1 when absent or not a number. */
static double target_number(const struct cli_run_opts *o, const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < o->ntarget_args; i++) {
		const char *a = o->target_args[i], *v = NULL;
		char *end;
		double d;

		if (!strncmp(a, name, len) && a[len] == '=')
			v = a + len + 1;
		else if (!strcmp(a, name) && i + 1 < o->ntarget_args)
			v = o->target_args[i + 1];
		if (!v)
			continue;
		d = strtod(v, &end);
		/* 1.8's "100x" is iterations, not seconds */
		if (end != v && d >= 0 && *end != 'x')
			return d;
	}
	return -1;
}

/* --timeout when not given (measure_default_timeout): the repetitions
 * asked, by --min-samples or a Google Benchmark binary's own
 * --benchmark_repetitions, each as long as its --benchmark_min_time. */
static uint64_t default_timeout(const struct cli_run_opts *o)
{
	double reps = target_number(o, "--benchmark_repetitions");
	double min_s = target_number(o, "--benchmark_min_time");
	size_t n = o->min_samples_set ? o->plan.min_samples : 0;

	if (reps > (double)n && reps < 1e9)
		n = (size_t)reps;
	return measure_default_timeout(&o->plan, n,
				       min_s > 0 && min_s < 1e6 ? (uint64_t)(min_s * 1e9) : 0);
}

int cli_run_opts_check(const char *cmd, struct cli_run_opts *o)
{
	if (threads_max(&o->threads) > 1 && !(o->instrument->options & MEASURE_OPT_THREADS)) {
		char list[256];

		threads_instruments(list, sizeof(list));
		return cmd_error(cmd,
				 "--threads %u is not supported under --instrument %s; use "
				 "--instrument %s (or --threads 1)",
				 threads_max(&o->threads), o->instrument->name, list);
	}
	if (!option_applies(cmd, o->instrument, o->keep_profiles, MEASURE_OPT_KEEP_PROFILES,
			    "--keep-profiles") ||
	    !option_applies(cmd, o->instrument, o->cache_sim, MEASURE_OPT_CACHE_SIM, "--cache-sim") ||
	    !option_applies(cmd, o->instrument, o->warmup_calls_set, MEASURE_OPT_WARMUP_CALLS,
			    "--warmup-calls") ||
	    !option_applies(cmd, o->instrument, o->alloc_stacks, MEASURE_OPT_ALLOC_STACKS,
			    "--alloc-stacks") ||
	    !option_applies(cmd, o->instrument, o->profile, MEASURE_OPT_PROFILE, "--profile"))
		return EXIT_USAGE;
	/* --max-samples 5 alone lowers the default minimum with it. */
	if (!o->min_samples_set && o->plan.min_samples > o->plan.max_samples)
		o->plan.min_samples = o->plan.max_samples;
	if (o->plan.min_samples > o->plan.max_samples)
		return cmd_error(cmd, "--min-samples (%zu) is above --max-samples (%zu)",
				 o->plan.min_samples, o->plan.max_samples);
	if (!o->timeout_set)
		o->plan.timeout_ns = default_timeout(o);
	return 0;
}

int cli_measure_target(const char *binary, const struct elf_file *ef, const struct cli_run_opts *o,
		       struct measure_target *t, char ***ret_argv, char **ret_path)
{
	char **argv = calloc((size_t)o->ntarget_args + 2, sizeof(*argv));
	char *path = NULL;

	/* The file read is the file executed: a name without a slash is in
	 * the current directory, as for `list`, never looked up in PATH. */
	if (!argv || (!strchr(binary, '/') && asprintf(&path, "./%s", binary) < 0)) {
		free(argv);
		return -ENOMEM;
	}
	argv[0] = path ? path : (char *)binary;
	memcpy(argv + 1, o->target_args, (size_t)o->ntarget_args * sizeof(*argv));

	const struct elf_symbol *main_sym =
		elf_is_stripped(ef) ? NULL : elf_symbol_by_name(ef, "main");

	*t = (struct measure_target){
		.binary = binary,
		.argv = argv,
		.main_link = main_sym ? main_sym->addr : 0,
		.entry_link = elf_entry(ef),
		.aslr = o->aslr,
		.clean_env = o->clean_env,
		.cpu = o->cpu,
		.quiet_stdio = !o->show_output,
		.input = o->input,
	};
	*ret_argv = argv;
	*ret_path = path;
	return 0;
}
