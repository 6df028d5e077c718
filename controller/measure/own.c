// SPDX-License-Identifier: MIT
/* The list of a suite that runs its own main, by running it: measure/own.h. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "measure/measure.h"
#include "measure/own.h"
#include "util/launch.h"
#include "util/strutil.h"

/* Why the listing child failed, in one line for the caller's message. */
static char *refusal(const struct own_list *q, int st, const char *errpath, const char *outpath)
{
	char *said = q->said ? q->said(errpath, outpath) : str_tail_lines(errpath, 1);
	char *nl, *msg;

	/* One line: the command line says it on one. */
	if (said && (nl = strchr(said + 1, '\n')))
		*nl = '\0';
	if (WIFSIGNALED(st))
		msg = str_fmt("%s %s died of SIG%s", q->t->binary, q->asked,
			      str_signal_abbrev(WTERMSIG(st)));
	else
		msg = str_fmt("%s %s exited with status %d%s%s", q->t->binary, q->asked,
			      WEXITSTATUS(st), said ? ":" : "",
			      said ? said + 2 : " (are the arguments after '--' ones it takes?)");
	free(said);
	return msg;
}

int own_list_run(const struct own_list *q, char ***ret_names, size_t *ret_n, char **ret_error)
{
	char out[PATH_MAX + 16], errpath[PATH_MAX + 16], *text = NULL;
	int fd, errfd, devnull, st = 0, exec_errno = 0, r;
	size_t len = 0;
	bool killed = false;
	struct launch l;
	struct launch_opts lo;

	*ret_error = NULL;
	snprintf(out, sizeof(out), "%s/list", q->dir);
	snprintf(errpath, sizeof(errpath), "%s/stderr", q->dir);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	errfd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || errfd < 0 || devnull < 0) {
		r = -errno;
		*ret_error =
			str_fmt("cannot ask %s for its benchmarks: %s", q->t->binary, strerror(-r));
		goto out;
	}
	launch_opts_init(&lo, q->argv[0], q->argv);
	lo.envp = q->envp;
	lo.stdio[0] = devnull;
	lo.stdio[1] = fd;
	lo.stdio[2] = errfd;
	lo.process_group = true;
	lo.aslr = q->t->aslr;
	r = launch_start(&lo, &l, &exec_errno);
	if (r < 0) {
		*ret_error = str_fmt("cannot execute %s: %s", q->t->binary,
				     strerror(r == -LAUNCH_E_EXEC ? exec_errno : -r));
		goto out;
	}
	r = launch_wait_until(l.pid, measure_now_ns() + q->timeout_ns, &st, &killed);
	if (r == 0 && killed) {
		*ret_error = str_fmt("%s %s did not end in %" PRIu64 " s", q->t->binary, q->asked,
				     q->timeout_ns / 1000000000);
		r = -ETIMEDOUT;
	} else if (r == 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
		*ret_error = refusal(q, st, errpath, out);
		r = -EINVAL;
	}
	if (r < 0)
		goto out;
	text = str_read_file(out, &len);
	if (!text) {
		r = -ENOMEM;
		*ret_error = str_fmt("cannot read the list of %s", q->t->binary);
		goto out;
	}
	r = q->parse(text, len, ret_names, ret_n);
	if (r == -EINVAL)
		*ret_error =
			str_fmt("%s listed a %s with a control character", q->t->binary, q->noun);
out:
	if (fd >= 0)
		close(fd);
	if (errfd >= 0)
		close(errfd);
	if (devnull >= 0)
		close(devnull);
	free(text);
	return r;
}
