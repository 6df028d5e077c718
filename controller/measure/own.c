// SPDX-License-Identifier: MIT
/*
 * Suites that run their own main (measure/own.h): the list by running the
 * binary, and the loop over a cell's instances, each in fresh processes.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/auxv.h>

#include "measure/callgrind.h"
#include "measure/driver-env.h"
#include "measure/failure.h"
#include "measure/measure.h"
#include "elf/elf.h"
#include "measure/own.h"
#include "trace/trace.h"
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

int own_capture(const struct own_list *q, char **ret_text, size_t *ret_len, char **ret_error)
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
		*ret_error = str_fmt("cannot read what %s %s printed", q->t->binary, q->asked);
		goto out;
	}
	*ret_text = text;
	*ret_len = len;
out:
	if (fd >= 0)
		close(fd);
	if (errfd >= 0)
		close(errfd);
	if (devnull >= 0)
		close(devnull);
	return r;
}

int own_list_run(const struct own_list *q, char ***ret_names, size_t *ret_n, char **ret_error)
{
	char *text = NULL;
	size_t len = 0;
	int r = own_capture(q, &text, &len, ret_error);

	if (r < 0)
		return r;
	r = q->parse(text, len, ret_names, ret_n);
	if (r == -EINVAL)
		*ret_error =
			str_fmt("%s listed a %s with a control character", q->t->binary, q->noun);
	free(text);
	return r;
}

int own_list(const struct own_lister *l, const struct suite_ctx *c, char ***ret_names,
	     size_t *ret_n, char **ret_error)
{
	struct own_list q = { .t = c->t,
			      .asked = l->asked,
			      .noun = l->noun,
			      .timeout_ns = c->list_timeout_ns,
			      .said = l->said,
			      .parse = l->parse };
	char dir[PATH_MAX], **argv = NULL, **env = NULL;
	int r = own_temp_dir(dir, sizeof(dir), l->tag);

	*ret_error = NULL;
	if (r < 0) {
		*ret_error = str_fmt("cannot create a temporary directory: %s", strerror(-r));
		return r;
	}
	q.dir = dir;
	r = l->argv(c, dir, &argv, &env);
	q.argv = argv;
	q.envp = env;
	if (r == 0)
		r = own_list_run(&q, ret_names, ret_n, ret_error);
	if (r == 0 && l->then) {
		r = l->then(c, &q, ret_names, ret_n, ret_error);
		if (r < 0)
			str_free_n(*ret_names, *ret_n);
	}
	if (r == -ENOMEM && !*ret_error)
		*ret_error = str_fmt("cannot ask %s for its benchmarks: %s", c->t->binary,
				     strerror(-r));
	measure_env_free(argv);
	measure_env_free(env);
	launch_temp_dir_remove(dir);
	return r;
}

/* ---- the loop over a cell's instances ------------------------------------------ */

bool own_has_arg(char *const *argv, const char *flag)
{
	size_t l = strlen(flag);

	for (size_t i = 1; argv[i]; i++)
		if (!strncmp(argv[i], flag, l) && (argv[i][l] == '=' || !argv[i][l]))
			return true;
	return false;
}

int own_temp_dir(char *dir, size_t size, const char *tag)
{
	const char *tmpdir = getenv("TMPDIR");

	if (!tmpdir || tmpdir[0] != '/')
		tmpdir = "/tmp";
	if (snprintf(dir, size, "%s/benchtrap-%s.XXXXXX", tmpdir, tag) >= (int)size)
		return -ENAMETOOLONG;
	return launch_temp_dir(dir);
}

/* What one build's instances share (own_run), made for c: its directory
 * in dir[PATH_MAX]. 0, or -errno with *ret_error; own_close() either way. */
static int own_open(const struct own_cell *c, const struct measure_target *t,
		    const struct measure_plan *plan, const struct bench_spec *first,
		    struct own_run *r, char *dir, char **ret_error)
{
	char *valgrind = NULL;
	struct elf_file *ef = NULL;
	const char *what = NULL;
	int e;

	*r = (struct own_run){ .t = t, .plan = plan, .input = -1, .devnull = -1 };
	dir[0] = '\0';
	if (c->valgrind) {
		valgrind = callgrind_find_program("valgrind");
		if (!valgrind) {
			*ret_error = strdup("valgrind is not installed (the callgrind instrument "
					    "runs the binary under it: apt install valgrind)");
			return -ENOENT;
		}
		r->valgrind = valgrind;
	}
	e = own_temp_dir(dir, PATH_MAX, c->tag);
	if (e < 0) {
		dir[0] = '\0';
		*ret_error = str_fmt("cannot create a temporary directory: %s", strerror(-e));
		return e;
	}
	r->dir = dir;
	r->input = measure_open_input(t);
	r->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (r->input < 0 || r->devnull < 0) {
		e = r->input < 0 ? r->input : -errno;
		*ret_error = str_fmt("cannot open the child's input: %s", strerror(-e));
		return e;
	}
	if (!c->find)
		return 0;
	e = elf_open(first->object, &ef, &what);
	if (e == 0)
		e = c->find(ef, first->object, &r->data);
	elf_close(ef);
	if (e < 0)
		*ret_error = str_fmt("%s: cannot find %s: %s", first->object, c->sought,
				     what ? what
				     : e == -ENOENT ? "it is not among the symbols"
						    : strerror(-e));
	return e;
}

static void own_close(const struct own_cell *c, struct own_run *r)
{
	if (r->data && c->release)
		c->release(r->data);
	if (r->input >= 0)
		close(r->input);
	if (r->devnull >= 0)
		close(r->devnull);
	if (r->dir)
		launch_temp_dir_remove(r->dir);
	free((char *)r->valgrind);
	*r = (struct own_run){ .input = -1, .devnull = -1 };
}

static void own_begin(const struct bench_spec *s, const struct measure_instrument *in,
		      const struct measure_hooks *hooks, struct bench_result *res)
{
	measure_result_begin(res, s, in->name, in->unit);
	measure_emit(hooks, &(struct measure_event){ .kind = MEASURE_BENCH_START,
						     .name = s->name,
						     .t_ns = res->t_start_ns });
}

static void own_end(enum measure_instrument_id in, const struct measure_hooks *hooks,
		    struct bench_result *res)
{
	/* A time of none at all: the figure says nothing (measure_no_time). */
	if (in == MEASURE_WALLTIME && res->status == BENCH_OK && res->value <= 0)
		res->no_time = true;
	res->t_end_ns = measure_now_ns();
	measure_emit_end(hooks, res, res->pid, res->t_end_ns);
}

int own_measure(const struct own_cell *c, enum measure_instrument_id in,
		const struct measure_target *t, const struct bench_spec *specs, size_t n,
		const struct measure_plan *plan, const struct measure_hooks *hooks,
		struct bench_result *results, char **ret_error)
{
	const struct measure_instrument *ins = measure_instrument_of(in);
	struct own_run run;
	char dir[PATH_MAX];
	int r = 0;

	*ret_error = NULL;
	if (n == 0)
		return 0;
	r = own_open(c, t, plan, &specs[0], &run, dir, ret_error);
	for (size_t i = 0; r == 0 && i < n; i++) {
		own_begin(&specs[i], ins, hooks, &results[i]);
		r = c->one(&run, &specs[i], &results[i]);
		if (r < 0) {
			*ret_error = str_fmt("cannot run %s: %s", specs[i].name, strerror(-r));
			break;
		}
		own_end(in, hooks, &results[i]);
		launch_temp_dir_empty(run.dir);
	}
	own_close(c, &run);
	return r;
}

int own_measure_paired(const struct own_cell *c, enum measure_instrument_id in,
		       const struct measure_target *base, const struct measure_target *head,
		       const struct bench_spec *bspecs, const struct bench_spec *hspecs, size_t n,
		       const struct measure_plan *plan, const struct measure_hooks *hooks,
		       struct bench_result *bres, struct bench_result *hres, char **ret_error)
{
	const struct measure_instrument *ins = measure_instrument_of(in);
	const struct measure_target *t[2] = { base, head };
	struct own_run run[2];
	char dir[2][PATH_MAX];
	int r = 0;

	*ret_error = NULL;
	if (n == 0)
		return 0;
	for (int k = 0; k < 2; k++)
		run[k] = (struct own_run){ .input = -1, .devnull = -1 };
	for (int k = 0; r == 0 && k < 2; k++)
		r = own_open(c, t[k], plan, k ? &hspecs[0] : &bspecs[0], &run[k], dir[k],
			     ret_error);
	for (size_t i = 0; r == 0 && i < n; i++) {
		const struct own_run *const rr[2] = { &run[0], &run[1] };
		const struct bench_spec *const s[2] = { &bspecs[i], &hspecs[i] };
		struct bench_result *const res[2] = { &bres[i], &hres[i] };

		for (int k = 0; k < 2; k++)
			own_begin(s[k], ins, hooks, res[k]);
		r = c->pair(rr, s, res);
		if (r < 0) {
			*ret_error = str_fmt("cannot run %s: %s", hspecs[i].name, strerror(-r));
			break;
		}
		for (int k = 0; k < 2; k++) {
			own_end(in, hooks, res[k]);
			launch_temp_dir_empty(run[k].dir);
		}
	}
	for (int k = 0; k < 2; k++)
		own_close(c, &run[k]);
	return r;
}

int own_start_traced(const struct own_run *run, char *const *argv, char *const *envp, int out,
		     struct trace_proc **ret, uint64_t *ret_bias, pid_t *ret_pid, char **ret_why)
{
	const struct measure_target *t = run->t;
	char path[PATH_MAX + 16];
	struct trace_spawn_opts so;
	struct trace_proc *p = NULL;
	struct trace_failure *f = calloc(1, sizeof(*f));
	uint64_t at_entry = 0, main_addr;
	int exec_errno = 0, errfd = -1, r;

	if (!f)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/stderr", run->dir);
	errfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	trace_spawn_opts_init(&so, argv);
	so.envp = envp;
	so.clean_env = t->clean_env;
	so.aslr = t->aslr;
	so.cpu = t->cpu;
	so.stdio[0] = run->input;
	so.stdio[1] = out;
	so.stdio[2] = errfd >= 0 ? errfd : run->devnull;
	so.process_group = true;
	r = trace_spawn(&so, &p, &exec_errno);
	if (r < 0) {
		*ret_why = str_fmt("cannot execute %s: %s", t->binary,
				   r == -TRACE_E_EXEC ? strerror(exec_errno) : trace_strerror(r));
		r = r == -ENOMEM ? r : 0;
		goto out;
	}
	if (ret_pid)
		*ret_pid = trace_pid(p);
	/* At main every library is mapped. */
	r = trace_run_to_main(p, t->main_link, t->entry_link, (int)(run->plan->timeout_ns / 1000000),
			      &main_addr, f);
	if (r == 0)
		r = trace_auxv(p, AT_ENTRY, &at_entry);
	if (r < 0) {
		*ret_why = r == -TRACE_E_FAILED ? measure_failure_line(f)
						: str_fmt("cannot run %s to main: %s", t->binary,
							  trace_strerror(r));
		r = 0;
		goto out;
	}
	*ret = p;
	*ret_bias = at_entry - t->entry_link;
	p = NULL;
out:
	if (errfd >= 0)
		close(errfd);
	trace_proc_free(p);
	free(f);
	return r;
}

char *own_said_rust(const char *path)
{
	char *text = str_read_file(path, NULL), *out = NULL;

	for (char *line = text, *end; line && *line && !out; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		if (end)
			*end = '\0';
		if (!strncmp(line, "thread '", 8) && end && line[strlen(line) - 1] == ':') {
			char *msg = end + 1, *next = strchr(msg, '\n');

			if (next)
				*next = '\0';
			*end = ' ';
			end = next;
		}
		if (!str_has_control(line) &&
		    (!strncmp(line, "error: ", 7) || !strncmp(line, "thread '", 8)))
			out = str_fmt("\n  %s", line);
	}
	free(text);
	return out ? out : str_tail_lines(path, 3);
}


int own_watch_init(struct own_watch *w, uint64_t deadline_ns, uint64_t timeout_ns,
		   const char *stderr_path, char *(*said)(const char *path))
{
	*w = (struct own_watch){ .deadline_ns = deadline_ns,
				 .timeout_ns = timeout_ns,
				 .stderr_path = stderr_path,
				 .said = said,
				 .pending = calloc(1, sizeof(*w->pending)) };
	return w->pending ? 0 : -ENOMEM;
}

void own_watch_clear(struct own_watch *w)
{
	free(w->pending);
	w->pending = NULL;
}

int own_next(struct trace_proc *p, struct own_watch *w, struct bench_result *res,
	     struct trace_event *ev)
{
	struct trace_failure *f = w->pending;

	for (;;) {
		uint64_t now = measure_now_ns();
		int ms = now >= w->deadline_ns ? 0 : (int)((w->deadline_ns - now) / 1000000 + 1);
		int r = trace_resume(p);

		if (r == 0)
			r = ms > 0 ? trace_wait(p, ms, ev) : -ETIMEDOUT;
		if (r == -ETIMEDOUT) {
			measure_failure_timeout(p, w->timeout_ns, f);
			bench_result_fail_with(res, f);
			return 0;
		}
		if (r < 0) {
			bench_result_fail(res, str_fmt("lost the child: %s", trace_strerror(r)));
			return 0;
		}
		switch (ev->kind) {
		case TRACE_EV_SIGNAL:
			/* Its backtrace now, while the thread is where the fault
			 * happened; the signal is delivered as it would be, and
			 * only when the process dies of it is this its end. */
			if (!measure_fatal_signal(ev->sig))
				return 1;
			measure_failure_signal(p, ev, f);
			w->have_pending = true;
			continue;
		case TRACE_EV_KILLED:
			if (!w->have_pending || f->sig != ev->sig) {
				memset(f, 0, sizeof(*f));
				f->kind = TRACE_FAIL_KILLED;
				f->sig = ev->sig;
			}
			bench_result_fail_with(res, f);
			return 0;
		case TRACE_EV_EXITED:
			if (ev->code != 0)
				bench_result_fail_exit(res, ev->code, w->stderr_path, w->said);
			return 0;
		default:
			return 1;
		}
	}
}
