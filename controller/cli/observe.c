/* SPDX-License-Identifier: MIT */
/* benchtrap observe: time every call of chosen functions in a real run. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elf.h"
#include "measure/measure.h"
#include "observe/observe.h"
#include "report/progress.h"
#include "report/report.h"
#include "trace/trace.h"
#include "util/atomic.h"
#include "util/launch.h"
#include "util/match.h"
#include "util/strutil.h"
#include "cli/cli.h"
#include "cli/runopts.h"

static const char usage[] =
	"usage: benchtrap observe [--symbol GLOB]... [--skip GLOB]... [options]\n"
	"                         (--pid PID | -- COMMAND [ARGS...])\n"
	"\n"
	"Time every call of chosen functions while a program does its own work: a\n"
	"real binary, unmodified. Each function's entry is patched with a jump to a\n"
	"small agent injected into the process, which reads the clock at the entry\n"
	"and at the return of every call, on every thread, recursion included, with\n"
	"no stop (about 0.1 µs a call); a function that cannot be patched safely\n"
	"(the table says why) is timed by breakpoints at its entry and its return\n"
	"instead. Functions of shared libraries are armed when the library is mapped,\n"
	"dlopen included. What the agent and the stops cost is measured in the same\n"
	"run and removed; the figures carry the remaining uncertainty (the ± column).\n"
	"\n"
	"selection (raw or demangled names, shell globs; repeatable):\n"
	"  --symbol GLOB       functions to time: 'parse_*', 'lzma_code'\n"
	"  --skip GLOB         functions whose calls return 0 at once, without running\n"
	"                      their body (measure one benchmark of a harness alone)\n"
	"\n"
	"target:\n"
	"  -- COMMAND ARGS     run COMMAND (searched in PATH) and observe it from main\n"
	"                      to its exit; its stdin, stdout and stderr are its own,\n"
	"                      signals reach it, and benchtrap exits with its status\n"
	"  --pid PID           attach to every thread of running process PID; observe\n"
	"                      for --duration or until Ctrl-C, then put the original\n"
	"                      code back and detach: the process runs on\n"
	"  --duration SEC      stop observing after SEC seconds (a command then runs\n"
	"                      on to its end unobserved)\n"
	"  --calibration N     calls of the injected empty function that measure the\n"
	"                      cost of a stop (200)\n"
	"  --profile DIR       also sample the stacks of every observed function's\n"
	"                      calls (every millisecond) into DIR/NNN-<name>.folded\n"
	"                      and .svg (a flamegraph); DIR must exist; implies\n"
	"                      --no-patch\n"
	"  --no-patch          time every call by breakpoints (two stops a call, tens\n"
	"                      of µs each), patching no function\n"
	"\n"
	"output (the table goes to stderr when a command runs, so that the program's\n"
	"stdout stays its own; to stdout with --pid):\n"
	"  --format FMT        text (default), markdown, or json: the results document\n"
	"                      on stdout, after anything the program wrote there\n"
	"  --quiet             no progress on stderr: by default, with --format text, a\n"
	"                      terminal shows one line while observing, rewritten in\n"
	"                      place and erased at the end (observing: 1,234 calls of\n"
	"                      2 functions, 4.2 s); nothing when stderr is not one\n"
	"  -o, --output FILE   also write the results document to FILE (in a directory\n"
	"                      that exists), checked before the program starts: a\n"
	"                      file is replaced atomically, a device, FIFO or\n"
	"                      /dev/stdout written through, another user's symbolic\n"
	"                      link in /tmp not followed\n"
	"                      (instrument \"observe\"; docs/observe.md), read by\n"
	"                      compare (against another observe file) and export\n"
	"  -h, --help          show this help\n"
	"\n"
	"examples:\n"
	"  benchtrap observe --symbol 'lzma_*' -- xz -k -f data.bin\n"
	"  benchtrap observe --symbol parse --output obs.json -- ./server --once\n"
	"  benchtrap observe --symbol 'bench_*' --skip 'setup_*' -- ./harness\n"
	"  benchtrap observe --symbol handle_request --pid 4242 --duration 10\n"
	"\n"
	"exit status: with a command, the command's own status (128 + N when killed\n"
	"by signal N, reported with a backtrace); with --pid, 0 once detached; 1 when\n"
	"observing itself failed; 2 bad usage or bad input (a --symbol or --skip\n"
	"pattern that matches no function of the program or its libraries, unless\n"
	"one of them calls dlopen)\n";

enum {
	OPT_SYMBOL = 0x100,
	OPT_SKIP,
	OPT_PID,
	OPT_DURATION,
	OPT_CALIBRATION,
	OPT_FORMAT,
	OPT_OUTPUT,
	OPT_PROFILE,
	OPT_QUIET,
	OPT_NO_PATCH,
};


struct observe_cli {
	const char **symbols, **skips;
	size_t nsymbols, nskips;
	pid_t pid;
	double duration_s;
	long calib;
	enum report_format format;
	const char *output;
	const char *profile;
	char **command;
	bool quiet;
	bool no_patch;
};

/* ---- progress -------------------------------------------------------------------
 * On a terminal, with text output: one line rewritten in place while the
 * program is observed, from what each tick reports, erased when observing
 * stops. The program's own output may share the terminal; only a line drawn
 * is erased, so that a partial line of the program's is left alone when
 * none was. */
#define PROGRESS_REFRESH_NS 250000000LL

struct observe_live {
	bool on;	  /* a terminal, text, no --quiet */
	bool shown;	  /* a line is on the screen now */
	bool done;	  /* observing stopped: no more lines */
	int64_t drawn_at; /* elapsed_ns of the last line drawn, or -1 */
};

static void live_erase(struct observe_live *l)
{
	if (l->shown)
		fputs("\r\033[K", stderr);
	l->shown = false;
}

static void live_update(struct observe_live *l, bool observing, const struct observe_progress *now)
{
	char line[128];

	if (!l->on || l->done)
		return;
	if (!observing) {
		live_erase(l);
		l->done = true;
		return;
	}
	if (l->drawn_at >= 0 && now->elapsed_ns - l->drawn_at < PROGRESS_REFRESH_NS)
		return;
	if (report_observe_progress(now->calls, now->armed, now->elapsed_ns, line, sizeof(line)))
		return;
	fprintf(stderr, "\r\033[K%s", line);
	l->shown = true;
	l->drawn_at = now->elapsed_ns;
}

/*
 * A command that is a script (a "#!" line): the code that runs is its
 * interpreter's, so say which to observe instead of "not an ELF binary".
 * A version manager's shim (pyenv's python3 is a bash script that execs the
 * real one) is said as such. Returns the exit status when it is a script
 * (the one line said), 0 otherwise.
 */
static int script_error(const char *path, const char *typed)
{
	char line[512], *interp, *end;
	FILE *f = fopen(path, "re");
	bool shim;

	if (!f)
		return 0;
	if (!fgets(line, sizeof(line), f) || strncmp(line, "#!", 2) != 0) {
		fclose(f);
		return 0;
	}
	fclose(f);
	interp = line + 2 + strspn(line + 2, " \t");
	end = interp + strcspn(interp, "\r\n");
	*end = '\0';
	shim = strstr(path, "/shims/") != NULL;
	if (shim) {
		const char *name = strrchr(typed, '/') ? strrchr(typed, '/') + 1 : typed;

		return cli_error("observe: %s is a shim, a script (#!%s) that runs another "
				 "program: observe that one (`pyenv which %s`, `rbenv which %s` "
				 "or `command -v` in its environment name it)",
				 path, interp, name, name);
	}
	return cli_error("observe: %s is a script (#!%s): observe its interpreter, as in "
			 "`benchtrap observe --symbol ... -- %s %s`",
			 path, interp, interp, typed);
}

/* ---- signals ------------------------------------------------------------------
 * With a command, a signal sent to benchtrap is passed on to the program (one
 * typed at the terminal reaches it directly: same process group). With --pid,
 * SIGINT, SIGTERM and SIGHUP end observing: the process is detached cleanly. */
static volatile sig_atomic_t got_signal, got_signal_user;
static bool attached_mode;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	got_signal = sig;
	got_signal_user = si && si->si_code != SI_KERNEL;
}

static void install_signal_handlers(void)
{
	/* SA_RESTART: the engine's system calls must not fail with EINTR; the
	 * signal is polled by tick() between events. */
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO | SA_RESTART };
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/*
 * With a command, a signal for the program is passed on once observing has
 * stopped (every breakpoint removed): a process group dying of a signal
 * while its threads hit breakpoints raced with the engine's all-stop.
 */
static bool tick(void *userdata, pid_t pid, bool observing, const struct observe_progress *now)
{
	int sig = got_signal;

	live_update(userdata, observing, now);
	if (!sig)
		return false;
	if (attached_mode) {
		got_signal = 0;
		return true;
	}
	if (observing && got_signal_user)
		return true; /* stop observing first; forwarded at the next tick */
	got_signal = 0;
	/* benchtrap itself was killed (the worker's parent is gone): the
	 * program it started must not outlive it. */
	if (launch_orphaned())
		sig = SIGKILL;
	if (got_signal_user)
		kill(pid, sig);
	return false;
}

/* ---- options --------------------------------------------------------------------- */

static int parse_options(int argc, char **argv, struct observe_cli *o)
{
	static const char *const formats[] = { "text", "json", "markdown", NULL };
	static const struct option longopts[] = {
		{ "symbol", required_argument, NULL, OPT_SYMBOL },
		{ "skip", required_argument, NULL, OPT_SKIP },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "calibration", required_argument, NULL, OPT_CALIBRATION },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ "no-patch", no_argument, NULL, OPT_NO_PATCH },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char *end;
	long v;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SYMBOL:
			o->symbols[o->nsymbols++] = optarg;
			break;
		case OPT_SKIP:
			o->skips[o->nskips++] = optarg;
			break;
		case OPT_PID:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v <= 0 || v > INT_MAX)
				return cli_error("observe: --pid wants a process id, not '%s'",
						 optarg);
			o->pid = (pid_t)v;
			break;
		case OPT_DURATION:
			errno = 0;
			o->duration_s = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(o->duration_s) ||
			    o->duration_s <= 0 || o->duration_s > 1e6)
				return cli_error(
					"observe: --duration wants seconds, e.g. 2.5, not '%s'",
					optarg);
			break;
		case OPT_CALIBRATION:
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 10 || v > 1000000)
				return cli_error(
					"observe: --calibration wants a whole number from 10 "
					"to 1000000, not '%s'",
					optarg);
			o->calib = v;
			break;
		case OPT_FORMAT:
			if (cli_parse_format("observe", formats, optarg, &o->format))
				return EXIT_USAGE;
			break;
		case OPT_QUIET:
			o->quiet = true;
			break;
		case OPT_NO_PATCH:
			o->no_patch = true;
			break;
		case 'o':
		case OPT_OUTPUT:
			o->output = optarg;
			break;
		case OPT_PROFILE: {
			struct stat st;

			if (stat(optarg, &st) != 0 || !S_ISDIR(st.st_mode) ||
			    access(optarg, W_OK) != 0)
				return cli_error(
					"observe: --profile wants a writable directory for "
					"the flamegraphs, not '%s' (create it first)",
					optarg);
			if (cli_check_out_dir("observe", "--profile", optarg))
				return EXIT_USAGE;
			o->profile = optarg;
			break;
		}
		default:
			return cli_help_or_bad_option("observe", usage, "ho:", c, -1, argc, argv);
		}
	}
	if (optind < argc)
		return cli_error("observe: unexpected argument '%s' (the command goes after '--')",
				 argv[optind]);
	if (!o->nsymbols && !o->nskips)
		return cli_error("observe: which functions? give --symbol GLOB (`benchtrap list "
				 "BINARY --symbols` shows them)");
	if (o->pid && o->command)
		return cli_error("observe: give either --pid PID or '-- COMMAND', not both");
	if (!o->pid && !o->command)
		return cli_error("observe: what to observe? give '-- COMMAND [ARGS]' or --pid PID");
	return 0;
}

/*
 * A pattern that matches no function of the program or of the libraries it
 * needs is refused, as run refuses it, before the program starts or is
 * attached to: a typo must not pass as an empty table. Only when one of
 * those objects calls dlopen may a library loaded later define it; then it
 * is no error, and once the target is held ('notes') a note says so.
 */
static int check_patterns(const struct observe_cli *o, struct elf_file *ef, const char *what,
			  bool notes)
{
	struct elf_scope scope;
	const char *const *lists[2] = { o->symbols, o->skips };
	size_t counts[2] = { o->nsymbols, o->nskips };
	bool later = false;
	int r = 0;

	if (elf_scope_open(ef, true, &scope) < 0)
		return cli_error("out of memory");
	for (size_t j = 0; j < scope.n; j++)
		later |= elf_calls_dlopen(scope.objs[j]);
	for (int l = 0; l < 2 && r == 0; l++) {
		for (size_t k = 0; k < counts[l] && r == 0; k++) {
			struct measure_miss miss = { 0 };
			bool found = false;

			for (size_t j = 0; j < scope.n && !found; j++)
				for (size_t i = 0; i < elf_symbol_count(scope.objs[j]) && !found;
				     i++) {
					const struct elf_symbol *s = elf_symbol(scope.objs[j], i);

					found = match_function(lists[l][k], s->name, s->demangled);
				}
			if (found || (later && !notes))
				continue;
			if (measure_miss_symbol(&scope, lists[l][k], &miss) < 0) {
				r = cli_error("out of memory");
				break;
			}
			if (!later)
				r = cli_say_miss("observe", what, &miss);
			else if (miss.suggest[0])
				cli_note("no function of %s or its libraries matches '%s' (did you "
					 "mean %s?); it is armed if a library loaded later defines "
					 "it",
					 what, lists[l][k], miss.suggest);
			else
				cli_note("no function of %s or its libraries matches '%s'; it is "
					 "armed if a library loaded later defines it",
					 what, lists[l][k]);
			measure_miss_clear(&miss);
		}
	}
	elf_scope_close(&scope);
	return r;
}

/* Why the target could not be had, in words. */
static void target_error(const struct observe_cli *o, const struct observe_failure *f)
{
	int pid = (int)o->pid;
	char buf[8192];

	switch (f->kind) {
	case OBSERVE_FAIL_NO_PROGRAM:
		cli_error("observe: process %d runs no program to observe (a kernel thread, or a "
			  "process that has exited)",
			  pid);
		break;
	case OBSERVE_FAIL_NO_PROCESS:
		cli_error("observe: no process %d (check the id with ps)", pid);
		break;
	case OBSERVE_FAIL_INSPECT:
		cli_error("observe: cannot inspect process %d: %s", pid, strerror(f->err));
		break;
	case OBSERVE_FAIL_SELF:
		cli_error("observe: %d is benchtrap itself", pid);
		break;
	case OBSERVE_FAIL_NOT_ALLOWED:
		cli_error("observe: not allowed to trace process %d (another tracer, or run as its "
			  "user or root; see /proc/sys/kernel/yama/ptrace_scope)",
			  pid);
		break;
	case OBSERVE_FAIL_GONE:
		cli_error("observe: process %d is gone", pid);
		break;
	case OBSERVE_FAIL_ATTACH:
		cli_error("observe: cannot attach to process %d: %s", pid, trace_strerror(f->err));
		break;
	case OBSERVE_FAIL_NOT_FOUND:
		cli_error("%s: command not found (give a path, or check PATH)", o->command[0]);
		break;
	case OBSERVE_FAIL_EXEC:
		cli_error("cannot execute %s: %s", o->command[0], strerror(f->err));
		break;
	case OBSERVE_FAIL_ENDED:
		/* It ended before main: its end is passed on, a crash told. */
		if (f->trace && f->trace->kind != TRACE_FAIL_EXIT) {
			trace_failure_format(f->trace, buf, sizeof(buf));
			fprintf(stderr, "benchtrap: %s failed before main: %s", o->command[0], buf);
		}
		break;
	case OBSERVE_FAIL_TO_MAIN:
		cli_error("%s: cannot run it to main: %s", o->command[0], trace_strerror(f->err));
		break;
	case OBSERVE_FAIL_NOMEM:
		cli_error("out of memory");
		break;
	}
}

int cli_observe(int argc, char **argv)
{
	struct observe_cli o = { 0 };
	struct observe_opts oo = { 0 };
	struct observe_result res = { 0 };
	struct report_observe rep = { 0 };
	struct trace_proc *p = NULL;
	struct elf_file *ef = NULL;
	struct observe_failure fail = { 0 };
	struct observe_live live = { .drawn_at = -1 };
	char exe[PATH_MAX];
	int nopts, r, exit_code = EXIT_USAGE;
	FILE *out;

	o.symbols = calloc((size_t)argc + 1, sizeof(*o.symbols));
	o.skips = calloc((size_t)argc + 1, sizeof(*o.skips));
	if (!o.symbols || !o.skips) {
		cli_error("out of memory");
		goto out;
	}
	nopts = cli_find_dashdash(argc, argv);
	if (nopts < argc) {
		if (nopts + 1 >= argc) {
			cli_error("observe: '--' must be followed by the command to run");
			goto out;
		}
		o.command = argv + nopts + 1;
	}
	r = parse_options(nopts, argv, &o);
	if (r != 0) {
		exit_code = r < 0 ? EXIT_OK : r;
		goto out;
	}
	/* Checked before the program runs, not after. */
	if (cli_check_output(o.output))
		goto out;

	r = o.pid ? observe_target_pid(o.pid, exe, sizeof(exe), &fail)
		  : observe_target_command(o.command[0], exe, sizeof(exe), &fail);
	if (r < 0) {
		target_error(&o, &fail);
		goto out;
	}
	if (!o.pid && script_error(exe, o.command[0]))
		goto out;
	if (cli_open_binary_symbols(exe, &ef) != 0)
		goto out;
	/* A pattern that matches nothing is refused before the program starts
	 * or is stopped; the notes of those a library loaded later may still
	 * define are printed only once the target is held: bad input must stay
	 * one line, not a note and an error. */
	if (check_patterns(&o, ef, o.pid ? exe : o.command[0], false) != 0)
		goto out;

	oo.symbols = o.symbols;
	oo.nsymbols = o.nsymbols;
	oo.skips = o.skips;
	oo.nskips = o.nskips;
	oo.duration_ns = (int64_t)(o.duration_s * 1e9);
	oo.calib_calls = (unsigned)o.calib;
	oo.tick = tick;
	oo.userdata = &live;
	/* As run's live line: not under JSON or markdown, which a terminal
	 * usually shows on the same screen. */
	live.on = !o.quiet && o.format == REPORT_TEXT && isatty(STDERR_FILENO);
	oo.profile_dir = o.profile;
	oo.no_patch = o.no_patch;
	attached_mode = o.pid != 0;
	install_signal_handlers();

	r = o.pid ? observe_attach(o.pid, &p, &fail)
		  : observe_start_command(o.command, ef, &p, &fail);
	if (r < 0) {
		exit_code = observe_failure_exit_code(&fail);
		target_error(&o, &fail);
		observe_failure_clear(&fail);
		goto out;
	}
	/* From here on, trace_proc_free() lets the target go on every path:
	 * an attached process is detached and runs on. */
	if (check_patterns(&o, ef, o.pid ? exe : o.command[0], true) != 0)
		goto out;
	r = observe_session(p, o.pid != 0, &oo, &res);
	live_erase(&live);
	if (r < 0) {
		if (o.pid)
			fprintf(stderr, "benchtrap: observing process %d failed: %s\n", (int)o.pid,
				trace_strerror(r));
		else
			fprintf(stderr, "benchtrap: observing %s failed: %s\n", o.command[0],
				trace_strerror(r));
		exit_code = EXIT_FAILED;
		goto out;
	}

	r = report_env_collect(ef, true, BENCHTRAP_VERSION, &rep.env);
	if (r < 0) {
		cli_error("out of memory");
		goto out;
	}
	rep.argv = argv;
	rep.argc = argc;
	rep.target_argv = o.command;
	rep.duration_s = o.duration_s;
	rep.res = &res;

	exit_code = observe_result_exit_code(&res);
	/* The results document is for programs: stdout, as run's. The table
	 * is for the reader, on stderr beside a command's own output. */
	out = o.pid || o.format == REPORT_JSON ? stdout : stderr;
	if (res.end == OBSERVE_KILLED)
		fprintf(stderr, "benchtrap: %s was killed by SIG%s%s%s", o.command[0],
			sigabbrev_np(res.sig) ? sigabbrev_np(res.sig) : "?",
			res.crash ? ": " : "\n", res.crash ? res.crash : "");
	if (res.end == OBSERVE_GONE)
		cli_note("process %d ended while observed", (int)o.pid);
	if (o.format == REPORT_JSON) {
		r = report_observe_json(&rep, out);
		if (r < 0)
			exit_code =
				cli_error("cannot write the results document: %s", str_errno(-r));
	} else {
		bool color = o.format == REPORT_TEXT && cli_color(out);

		report_observe_table(
			&rep, out, o.format, color);
	}
	fflush(out);
	if (o.output) {
		r = report_observe_json_file(&rep, o.output);
		if (r < 0)
			exit_code = cli_results_unwritable(o.output, r);
	}
	/* A profile asked for and not written is an output not written, as
	 * --output's: one line (the first), exit 2. */
	for (size_t i = 0; exit_code != EXIT_USAGE && i < res.nfuncs; i++)
		if (res.funcs[i].profile_err)
			exit_code = cli_error("observe: %s: %s", res.funcs[i].name,
					      res.funcs[i].profile_note
						      ? res.funcs[i].profile_note
						      : atomic_strerror(res.funcs[i].profile_err));
out:
	trace_proc_free(p);
	observe_result_clear(&res);
	results_env_clear(&rep.env);
	elf_close(ef);
	free(o.symbols);
	free(o.skips);
	return exit_code;
}
