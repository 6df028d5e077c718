/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/arch.h"
#include "measure/measure.h"
#include "util/atomic.h"
#include "util/launch.h"
#include "util/strutil.h"
#include "results/results.h"
#include "cli/cli.h"

/* One line on stderr, whatever the arguments hold: a path or pattern with a
 * newline or an escape sequence is printed escaped. */
static void vmessage(const char *prefix, const char *fmt, va_list ap)
{
	char *msg = NULL, *esc;

	if (vasprintf(&msg, fmt, ap) < 0) {
		fprintf(stderr, "%s(out of memory)\n", prefix);
		return;
	}
	esc = str_escape(msg);
	fprintf(stderr, "%s%s\n", prefix, esc ? esc : msg);
	free(esc);
	free(msg);
}

int cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("benchtrap: ", fmt, ap);
	va_end(ap);
	return EXIT_USAGE;
}

void cli_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("benchtrap: note: ", fmt, ap);
	va_end(ap);
}

int cli_find_dashdash(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--"))
			return i;
	return argc;
}

int cli_results_unwritable(const char *path, int err)
{
	return cli_error("%s: cannot write results: %s", path, atomic_strerror(err));
}

int cli_check_output(const char *path)
{
	int r = path ? atomic_check(path) : 0;

	return r < 0 ? cli_results_unwritable(path, r) : 0;
}

int cli_check_out_dir(const char *cmd, const char *opt, const char *dir)
{
	int r = atomic_check_dir(dir);

	return r < 0 ? cli_error("%s: %s %s: cannot write in it: %s", cmd, opt, dir,
				 atomic_strerror(r))
		     : 0;
}

int cli_unwritten(const struct bench_result *res, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (res[i].unwritten_err)
			return cli_error("%s: cannot write: %s", res[i].unwritten,
					 atomic_strerror(res[i].unwritten_err));
	return 0;
}

int cli_open_markers(const char *path, FILE **ret)
{
	int r = path ? atomic_open_stream(path, ret) : 0;

	if (r < 0)
		return cli_error("%s: cannot write markers: %s", path, atomic_strerror(r));
	/* A line per event, written as it happens (docs/results.md). */
	if (path)
		setvbuf(*ret, NULL, _IOLBF, 0);
	return 0;
}

bool cli_color(FILE *out)
{
	return isatty(fileno(out)) && !getenv("NO_COLOR");
}

int cli_bad_option(const char *cmd, const char *shorts, int argc, char **argv)
{
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	const char *known = optopt > 0 && optopt < 256 ? strchr(shorts, optopt) : NULL;

	if (strncmp(arg, "--", 2) == 0) {
		size_t len = strcspn(arg, "=");

		if (arg[len] == '=')
			return cli_error("%s: option '%.*s' takes no value (see 'benchtrap %s "
					 "--help')",
					 cmd, (int)len, arg, cmd);
		if (optopt)
			return cli_error(
				"%s: option '%s' needs a value (see 'benchtrap %s --help')", cmd,
				arg, cmd);
		return cli_error("%s: unknown option '%s' (see 'benchtrap %s --help')", cmd, arg,
				 cmd);
	}
	/* A short option getopt knows fails only for want of its value. */
	if (known && known[1] == ':')
		return cli_error("%s: option '-%c' needs a value (see 'benchtrap %s --help')", cmd,
				 optopt, cmd);
	return cli_error("%s: unknown option '-%c' (see 'benchtrap %s --help')", cmd,
			 optopt ? optopt : '?', cmd);
}

int cli_help_or_bad_option(const char *cmd, const char *usage, const char *shorts, int c,
			   int help_code, int argc, char **argv)
{
	if (c == 'h') {
		fputs(usage, stdout);
		return help_code;
	}
	return cli_bad_option(cmd, shorts, argc, argv);
}

int cli_parse_format(const char *cmd, const char *const *choices, const char *arg,
		     enum report_format *ret)
{
	static const char *const names[] = {
		[REPORT_TEXT] = "text",
		[REPORT_MARKDOWN] = "markdown",
		[REPORT_JSON] = "json",
	};
	int i, r = cli_parse_choice(cmd, "--format", arg, choices, false, &i);

	if (r != 0)
		return r;
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (!strcmp(arg, names[k])) {
			*ret = (enum report_format)k;
			return 0;
		}
	return cli_error("%s: --format %s is not a format benchtrap knows", cmd, arg);
}

static void on_fatal_signal(int sig)
{
	launch_terminate();
	atomic_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static volatile sig_atomic_t stop_signal;
static bool stderr_tty;

static void on_stop_signal(int sig)
{
	static const char msg[] = "benchtrap: stopping: the benchmarks measured are kept (a second "
				  "signal ends benchtrap at once)\n";
	int saved = errno;

	if (stop_signal) {
		on_fatal_signal(sig);
		return;
	}
	stop_signal = sig;
	/* On a terminal, after the progress line. */
	if (write(STDERR_FILENO, "\r\n", stderr_tty ? 2 : 0) < 0 ||
	    write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing to be done about stderr */
	}
	launch_stop();
	errno = saved; /* the code it interrupted may be about to read errno */
}

int cli_stopped(void)
{
	return stop_signal;
}

void cli_stop_signals(void)
{
	static const int stops[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa = { .sa_handler = on_stop_signal };

	cli_fatal_signals();
	stderr_tty = isatty(STDERR_FILENO);
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGQUIT);
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		sigaddset(&sa.sa_mask, stops[i]);
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		sigaction(stops[i], &sa, NULL);
}

void cli_fatal_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa = { .sa_handler = on_fatal_signal };

	/* One handler at a time: a second signal waits for the first to
	 * finish cleaning up (it then dies of the first). */
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

int cli_open_binary(const char *path, struct elf_file **ret)
{
	struct elf_file *ef;
	int r = cli_open_binary_symbols(path, &ef);

	if (r != 0)
		return r;
	if (elf_registry_error(ef) < 0) {
		elf_close(ef);
		return cli_error("%s: its benchtrap_registry section is corrupt, so its benchmarks "
				 "cannot be read (rebuild it with this benchtrap's target-stub; "
				 "`benchtrap list %s --symbols` still lists its functions)",
				 path, path);
	}
	*ret = ef;
	return 0;
}

int cli_check_interp(const char *path, const struct elf_file *ef)
{
	const char *interp = elf_interp(ef);

	/* exec() would fail with ENOENT, which reads as if the binary
	 * itself were missing. */
	if (!interp || access(interp, F_OK) == 0)
		return 0;
	return cli_error("%s: its interpreter %s is not on this machine, so it cannot run here "
			 "(build it for this system, or install that dynamic loader)",
			 path, interp);
}

int cli_open_binary_symbols(const char *path, struct elf_file **ret)
{
	const char *what = NULL;
	int r = elf_open(path, ret, &what);

	if (r == 0)
		return 0;
	switch (-r) {
	case ENOENT:
		return cli_error("%s: no such file (check the path, or build the binary first)",
				 path);
	case EISDIR:
		return cli_error("%s: is a directory, not a binary", path);
	case EACCES:
		return cli_error("%s: permission denied (check the permissions of the file and "
				 "its directories)",
				 path);
	case ENOTDIR:
		return cli_error("%s: a component of the path is not a directory", path);
	case ELOOP:
		return cli_error("%s: too many levels of symbolic links (a link loop?)", path);
	case ELF_E_NOT_ELF:
		return cli_error("%s: not an ELF binary (a script, a data file, a device or "
				 "a FIFO?)",
				 path);
	case ELF_E_CLASS:
	case ELF_E_MACHINE:
		return cli_error("%s: %s; benchtrap drives 64-bit %s binaries on this machine",
				 path, what ? what : elf_strerror(r), arch_name);
	default:
		return cli_error("%s: %s", path, elf_strerror(r));
	}
}

/* ---- option values shared by the subcommands ---------------------------- */

static void join(const char *const *words, bool quote, const char *last, char *buf, size_t size)
{
	const char *q = quote ? "'" : "";
	size_t n = 0, len = 0;

	while (words[n])
		n++;
	buf[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++) {
		const char *sep = i == 0 ? "" : i + 1 == n ? last : ", ";
		int k = snprintf(buf + len, size - len, "%s%s%s%s", sep, q, words[i], q);

		if (k < 0)
			break;
		len += (size_t)k;
	}
}

void cli_join_or(const char *const *words, bool quote, char *buf, size_t size)
{
	join(words, quote, " or ", buf, size);
}

void cli_join_and(const char *const *words, char *buf, size_t size)
{
	join(words, false, " and ", buf, size);
}

int cli_parse_seconds(const char *cmd, const char *opt, const char *arg, uint64_t *ret_ns)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	/* Written so that NaN and infinity fail too. */
	if (errno || end == arg || *end || !(v >= 0 && v <= 1e6))
		return cli_error("%s: %s wants seconds, e.g. 0.5, not '%s'", cmd, opt, arg);
	*ret_ns = (uint64_t)(v * 1e9);
	return 0;
}

int cli_parse_count(const char *cmd, const char *opt, const char *arg, long min, long max,
		    long *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max)
		return cli_error("%s: %s wants a whole number from %ld to %ld, not '%s'", cmd, opt,
				 min, max, arg);
	*ret = v;
	return 0;
}

int cli_load_results(const char *path, bool keep_doc, struct results_file **ret)
{
	char *msg = NULL;
	int r = results_load(path, ret, &msg);

	if (r == 0) {
		if (!keep_doc)
			results_release_doc(*ret);
		return 0;
	}
	if (r == -ENOMEM && !msg)
		return cli_error("out of memory");
	cli_error("%s", msg ? msg : path);
	free(msg);
	return EXIT_USAGE;
}

int cli_parse_percent(const char *cmd, const char *opt, const char *arg, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || (*end && strcmp(end, "%")) || !(v >= 0 && v <= 10000))
		return cli_error("%s: %s wants a percentage from 0 to 10000, e.g. 5, not '%s'", cmd,
				 opt, arg);
	*ret = v / 100.0;
	return 0;
}

int cli_parse_choice(const char *cmd, const char *opt, const char *arg, const char *const *choices,
		     bool quote, int *ret_index)
{
	char list[256];

	for (int i = 0; choices[i]; i++) {
		if (!strcmp(arg, choices[i])) {
			*ret_index = i;
			return 0;
		}
	}
	cli_join_or(choices, quote, list, sizeof(list));
	return cli_error("%s: %s is %s, not '%s'", cmd, opt, list, arg);
}
