/* SPDX-License-Identifier: MIT */
/*
 * valgrind's command line and log, for every callgrind run (valgrind.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/launch.h"
#include "util/strutil.h"
#include "measure/callgrind.h"
#include "measure/failure.h"
#include "measure/measure.h"
#include "measure/driver-env.h"
#include "measure/valgrind.h"

int valgrind_callgrind_argv(char ***argv, size_t *na, const char *valgrind, const char *dir,
			    const char *const *fns, size_t nfns, bool dump_after)
{
	int r = 0;

	r |= measure_env_push(argv, na, strdup(valgrind));
	r |= measure_env_push(argv, na, strdup("--tool=callgrind"));
	r |= measure_env_push(argv, na, strdup("--vgdb=no"));
	r |= measure_env_push(argv, na, str_fmt("--log-file=%s/valgrind.log", dir));
	r |= measure_env_push(argv, na, str_fmt("--callgrind-out-file=%s/callgrind.out.%%p", dir));
	r |= measure_env_push(argv, na, strdup("--collect-atstart=no"));
	for (size_t i = 0; i < nfns && r == 0; i++) {
		bool seen = false;

		for (size_t k = 0; k < i; k++)
			seen |= !strcmp(fns[k], fns[i]);
		if (seen)
			continue;
		r |= measure_env_push(argv, na, str_fmt("--toggle-collect=%s", fns[i]));
		if (dump_after)
			r |= measure_env_push(argv, na, str_fmt("--dump-after=%s", fns[i]));
	}
	return r ? -ENOMEM : 0;
}

void valgrind_log_append(char **buf, const char *path, off_t from, size_t all, pid_t pid)
{
	char prefix[32];
	size_t plen = pid ? (size_t)snprintf(prefix, sizeof(prefix), "==%d==", (int)pid) : 0;

	FILE *f = fopen(path, "re");
	char *line = NULL, **keep = NULL;
	size_t cap = 0, nkeep = 0;
	bool in_fatal = false, in_panic = false;
	ssize_t len;

	if (!f)
		return;
	if (from > 0 && fseeko(f, from, SEEK_SET) != 0) {
		fclose(f);
		return;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		char *text = line;

		line[strcspn(line, "\n")] = '\0';
		/* valgrind's own panic ("valgrind: the 'impossible' happened:",
		 * then its reason, indented: "Max number of threads is too
		 * low") carries no prefix; a server runs one call at a time, so
		 * it is the call's. */
		if (plen && text[0] != '=') {
			if (!strncmp(text, "valgrind:", 9))
				in_panic = true;
			else if (!in_panic || text[0] != ' ')
				in_panic = false;
			if (!in_panic)
				continue;
		} else if (plen && strncmp(text, prefix, plen) != 0) {
			/* One log for a server and its children: this process's lines. */
			continue;
		}
		if (text[0] == '=' && text[1] == '=') {
			char *end = strstr(text + 2, "== ");

			if (end)
				text = end + 3;
			else if ((end = strstr(text + 2, "==")) && !end[2])
				text = end + 2;
		}
		if (!all) {
			if (strstr(text, "Process terminating"))
				in_fatal = true;
			else if (in_fatal && (!*text || strstr(text, "If you believe")))
				in_fatal = false;
			if (!in_fatal && !in_panic && strncmp(text, "valgrind:", 9) != 0)
				continue;
		}
		char **nk = realloc(keep, (nkeep + 1) * sizeof(*nk));

		if (!nk)
			break;
		keep = nk;
		keep[nkeep] = strdup(text);
		if (keep[nkeep])
			nkeep++;
	}
	for (size_t i = 0; i < nkeep; i++) {
		if (!all || i + all >= nkeep) {
			char *nb = str_fmt("%s\n  %s", *buf ? *buf : "", keep[i]);

			if (nb) {
				free(*buf);
				*buf = nb;
			}
		}
		free(keep[i]);
	}
	free(keep);
	free(line);
	fclose(f);
}

char *valgrind_timeout_words(uint64_t timeout_ns)
{
	return str_fmt("timed out after %" PRIu64 " ms under valgrind and was killed",
		       timeout_ns / 1000000);
}

char *valgrind_signal_words(int sig)
{
	return str_fmt("SIG%s (%s) under valgrind", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?",
		       strsignal(sig));
}

bool valgrind_launcher_line(const char *path, char **ret_line)
{
	char line[1024];
	FILE *f = fopen(path, "re");
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "valgrind: ", 10)) {
			line[strcspn(line, "\n")] = '\0';
			if (ret_line)
				*ret_line = strdup(line + 10);
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

int valgrind_run(char *const *argv, char *const *env, int cpu, int input, int devnull,
		 const char *dir, uint64_t deadline, uint64_t timeout_ns,
		 char *(*said)(const char *path), struct bench_result *res)
{
	char errpath[PATH_MAX + 16], logpath[PATH_MAX + 16], *acc = NULL;
	struct launch_opts lo;
	struct launch l;
	int errfd, exec_errno = 0, st = 0, r;
	bool killed = false;

	snprintf(errpath, sizeof(errpath), "%s/stderr", dir);
	snprintf(logpath, sizeof(logpath), "%s/valgrind.log", dir);
	errfd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (errfd < 0) {
		bench_result_fail(res, str_fmt("cannot create %s: %s", errpath, strerror(errno)));
		return 0;
	}
	launch_opts_init(&lo, argv[0], argv);
	lo.envp = env;
	lo.stdio[0] = input;
	lo.stdio[1] = devnull;
	lo.stdio[2] = errfd;
	lo.process_group = true;
	lo.cpu = cpu;
	r = launch_start(&lo, &l, &exec_errno);
	close(errfd);
	if (r < 0) {
		bench_result_fail(res, str_fmt("cannot execute %s: %s", argv[0],
					       strerror(r == -LAUNCH_E_EXEC ? exec_errno : -r)));
		return 0;
	}
	res->pid = l.pid;
	r = launch_wait_until(l.pid, deadline, &st, &killed);
	if (r < 0) {
		bench_result_fail(res, str_fmt("lost valgrind's process: %s", strerror(-r)));
		return 0;
	}
	if (killed) {
		bench_result_fail(res, valgrind_timeout_words(timeout_ns));
		return 0;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 1;
	/* valgrind's account of a fatal signal, or its own panic; for a
	 * signal, what the program said before is its progress, not why. */
	valgrind_log_append(&acc, logpath, 0, 0, 0);
	if (WIFSIGNALED(st)) {
		char *words = valgrind_signal_words(WTERMSIG(st));

		bench_result_fail(res, words ? str_fmt("%s%s", words, acc ? acc : "") : NULL);
		free(words);
	} else {
		char *last = said ? said(errpath) : str_tail_lines(errpath, 3);

		bench_result_fail(res, str_fmt("exited with status %d under valgrind%s%s%s",
					       WEXITSTATUS(st), acc ? acc : "",
					       last ? "; its last words:" : "", last ? last : ""));
		free(last);
	}
	free(acc);
	return 0;
}

static int cmp_dump(const void *a, const void *b)
{
	const struct valgrind_dump *x = a, *y = b;

	return x->n < y->n ? -1 : x->n > y->n;
}

int valgrind_read_dumps(const char *dir, pid_t pid, int (*kind)(const char *trigger),
			struct valgrind_dump *v, size_t max, size_t *ret_n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;
	int r = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		unsigned dump, thread;
		char path[PATH_MAX + 300];
		struct callgrind_profile prof;
		int ir, k;

		if (!callgrind_part_name(e->d_name, pid, &dump, &thread) || dump == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		r = callgrind_parse_file(path, NULL, NULL, &prof);
		if (r < 0)
			goto out;
		k = kind(prof.trigger);
		if (k < 0)
			continue;
		ir = callgrind_event_index(&prof, "Ir");
		if (ir < 0) {
			r = -EINVAL;
			goto out;
		}
		if (n == max) {
			r = -E2BIG;
			goto out;
		}
		v[n++] = (struct valgrind_dump){ dump, prof.totals[ir], k };
	}
	qsort(v, n, sizeof(*v), cmp_dump);
	*ret_n = n;
out:
	closedir(d);
	return r;
}

int valgrind_dumps_argv(char ***argv, size_t *na, const char *valgrind, const char *dir,
			const char *const *names, size_t n)
{
	int r = valgrind_callgrind_argv(argv, na, valgrind, dir, NULL, 0, false);

	if (r == 0)
		r = measure_env_push(argv, na, strdup("--collect-atstart=yes"));
	for (size_t i = 0; i < n && r == 0; i++) {
		bool seen = false;

		for (size_t k = 0; k < i; k++)
			seen |= !strcmp(names[k], names[i]);
		if (seen)
			continue;
		r = measure_env_push(argv, na, str_fmt("--dump-before=%s", names[i]));
		if (r == 0)
			r = measure_env_push(argv, na, str_fmt("--dump-after=%s", names[i]));
	}
	return r < 0 ? -ENOMEM : 0;
}
