/* SPDX-License-Identifier: MIT */
/*
 * A driven process (driven.h): the list of functions in DIR/specs, the
 * process started in a group of its own, the driver's report read line by
 * line as it comes, alongside the process's pidfd, and a watchdog:
 *
 *   call    a call gets --timeout from the end of the one before it (the
 *           first from the start: start-up and constructors included);
 *           past it, the process is killed and the call failed
 *   serve   the server kills a child itself after --timeout; the
 *           controller allows it that plus WATCHDOG_SLACK_NS from each
 *           "start", and --timeout up to "server" and from each "end",
 *           and past it kills the server: the server died
 *   own     the whole process gets --timeout
 *
 * After each child of a server ends, the processes it left behind are
 * swept (launch_sweep), as after each process.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "measure/driven.h"
#include "measure/driver-env.h"
#include "util/fd.h"
#include "util/launch.h"

/* A --symbol call's arguments all reach the driver, and --threads. */
_Static_assert(MEASURE_MAX_ARGS <= DRIVER_MAX_ARGS, "the driver takes fewer arguments");
_Static_assert(MEASURE_MAX_THREADS <= DRIVER_MAX_THREADS, "the driver runs fewer threads");

/* How long past --timeout a server may take to kill and reap a child. */
#define WATCHDOG_SLACK_NS 5000000000ull

int driven_write_specs(int fd, enum driven_mode mode, const struct bench_spec *const *specs,
		       size_t n, uint64_t timeout_ns, unsigned long perf_calls,
		       unsigned long warmup_calls, unsigned alloc_frames)
{
	FILE *f;
	int r = 0;

	for (size_t i = 0; i < n; i++)
		if ((!specs[i]->in_main && strchr(specs[i]->object, '\n')) ||
		    specs[i]->threads > DRIVER_MAX_THREADS)
			return -EINVAL;
	fd = dup(fd);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		r = -errno;
		fd_close(fd);
		return r;
	}
	fprintf(f, DRIVER_SPEC_MAGIC " %s %zu %" PRIu64 " %lu %lu %u\n",
		mode == DRIVEN_SERVE ? "serve" : "call", n, timeout_ns / 1000000, perf_calls,
		warmup_calls, alloc_frames);
	for (size_t i = 0; i < n; i++) {
		const struct bench_spec *s = specs[i];

		/* Every argument, zeros included: the line's length does not
		 * depend on how many a function takes. */
		fprintf(f, "%016" PRIx64, s->link_addr);
		for (unsigned a = 0; a < DRIVER_MAX_ARGS; a++)
			fprintf(f, " %016" PRIx64, a < s->nargs ? (uint64_t)s->args[a] : 0);
		fprintf(f, " %04x", s->threads);
		if (!s->in_main)
			fprintf(f, " %s", s->object);
		fputc('\n', f);
	}
	if (ferror(f))
		r = -EIO;
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	return r;
}

/* A line of a word and numbers. */
static int parse_numbers(const char *s, struct driven_line *l)
{
	unsigned long long v[8];
	const char *p = s;
	size_t len = strcspn(s, " "), k = 0;

	*l = (struct driven_line){ 0 };
	/* A word, then unsigned decimal numbers (a wait status is 0..65535),
	 * one space before each. */
	for (p += len; *p == ' ' && k < 8; k++) {
		char *end;

		if (p[1] < '0' || p[1] > '9')
			return -EINVAL;
		errno = 0;
		v[k] = strtoull(p + 1, &end, 10);
		if (errno)
			return -EINVAL;
		p = end;
	}
	if (*p)
		return -EINVAL;
#define IS(word, n) (len == sizeof(word) - 1 && !strncmp(s, word, len) && k == (n))
	if (IS("server", 2)) {
		l->kind = DRIVEN_LINE_SERVER;
		l->threads = (long)v[0];
		l->pid = (pid_t)v[1];
	} else if (IS("start", 2) || IS("done", 2) || IS("exec", 2)) {
		l->kind = s[0] == 's' ? DRIVEN_LINE_START :
			  s[0] == 'd' ? DRIVEN_LINE_DONE :
					DRIVEN_LINE_EXEC;
		l->i = (size_t)v[0];
		l->pid = (pid_t)v[1];
	} else if (IS("end", 3) && v[1] <= 0xffff && v[2] <= DRIVEN_END_EXEC) {
		l->kind = DRIVEN_LINE_END;
		l->i = (size_t)v[0];
		l->status = (int)v[1];
		l->end = (enum driven_end)v[2];
		l->killed = l->end == DRIVEN_END_TIMEOUT;
	} else if (IS("perf", 5)) {
		l->kind = DRIVEN_LINE_PERF;
		l->i = (size_t)v[0];
		memcpy(l->perf, v + 1, sizeof(l->perf));
	} else if (IS("site", 5) && v[1] < DRIVER_SITES_MAX && v[4] <= DRIVER_STACK_MAX) {
		l->kind = DRIVEN_LINE_SITE;
		l->i = (size_t)v[0];
		l->rank = (size_t)v[1];
		l->bytes = v[2];
		l->count = v[3];
		l->n = (unsigned)v[4];
	} else if (IS("frame", 3) && v[1] < DRIVER_SITES_MAX) {
		l->kind = DRIVEN_LINE_FRAME;
		l->i = (size_t)v[0];
		l->rank = (size_t)v[1];
		l->pc = v[2];
	} else if (IS("lost", 1)) {
		l->kind = DRIVEN_LINE_LOST;
		l->i = (size_t)v[0];
	} else if (IS("maps", 1)) {
		l->kind = DRIVEN_LINE_MAPS;
		l->pid = (pid_t)v[0];
	} else if (IS("thread", 6) && v[1] < DRIVER_MAX_THREADS && v[2] > 0 && v[2] <= INT_MAX) {
		l->kind = DRIVEN_LINE_THREAD;
		l->i = (size_t)v[0];
		l->k = (unsigned)v[1];
		l->pid = (pid_t)v[2];
		memcpy(l->thread_mem, v + 3, sizeof(l->thread_mem));
	} else if (IS("mem", 8) && v[6] <= 1 && v[7] <= 1) {
		l->kind = DRIVEN_LINE_MEM;
		l->i = (size_t)v[0];
		memcpy(l->mem, v + 1, sizeof(l->mem));
	} else {
		return -EINVAL;
	}
#undef IS
	return 0;
}

int driven_parse_line(const char *s, struct driven_line *l)
{
	/* "exec <i> <pid> <path>": the path, the rest of the line, last. */
	if (!strncmp(s, "exec ", 5)) {
		const char *sp = strchr(s + 5, ' ');
		char head[64];

		sp = sp ? strchr(sp + 1, ' ') : NULL;
		if (!sp || !sp[1] || (size_t)(sp - s) >= sizeof(head))
			return -EINVAL;
		memcpy(head, s, (size_t)(sp - s));
		head[sp - s] = '\0';
		if (parse_numbers(head, l) < 0)
			return -EINVAL;
		snprintf(l->path, sizeof(l->path), "%s", sp + 1);
		return 0;
	}
	return parse_numbers(s, l);
}

struct run {
	const struct driven_job *j;
	struct driven_call *calls;
	struct driven_outcome *out;
	int err_fd;
	size_t next;	    /* call mode: the call running now */
	size_t current;	    /* serve: the child running now, or SIZE_MAX */
	size_t ended;	    /* serve: calls ended */
	bool server_said;   /* serve: the "server" line came */
	bool single;	    /* serve with more threads: call mode for call 0 */
	unsigned dumps;	    /* call mode: calls returned in this process */
	unsigned want_frames; /* the last site's frames still to come */
	char *maps;	      /* the process's /proc/PID/maps, for naming sites */
	int ack;	      /* DRIVER_ACK_FD's other end */
	uint64_t deadline;
};

static off_t err_size(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 ? st.st_size : 0;
}

static void start(struct run *r, size_t i, pid_t pid)
{
	struct driven_call *c = &r->calls[i];
	struct measure_event ev = { .kind = MEASURE_BENCH_START, .name = r->j->specs[i]->name };

	c->pid = pid;
	c->t_start_ns = measure_now_ns();
	c->err_from = err_size(r->err_fd);
	ev.pid = pid;
	ev.t_ns = c->t_start_ns;
	measure_emit(r->j->hooks, &ev);
}

static void settle(struct run *r, size_t i)
{
	struct driven_call *c = &r->calls[i];

	if (c->settled)
		return;
	/* Never started (its server died first): a start for its end. */
	if (!c->t_start_ns) {
		pid_t pid = c->pid;

		start(r, i, 0);
		c->pid = pid;
	}
	c->settled = true;
	c->process = r->out->pid;
	c->maps = r->maps;
	c->t_end_ns = measure_now_ns();
	if (r->j->settled)
		r->j->settled(r->j->ctx, i, c);
	free(c->sites);
	c->sites = NULL;
	c->nsites = 0;
	free(c->threads);
	c->threads = NULL;
	c->nthreads = 0;
}

static bool calling(const struct run *r)
{
	return r->j->mode != DRIVEN_SERVE || r->single;
}

static void arm(struct run *r, uint64_t extra)
{
	r->deadline = measure_now_ns() + r->j->timeout_ns + extra;
}

/* The process's mappings at main (it waits while they are read): what
 * names the sites of its calls, or of its children's, after it is gone. */
static void read_maps(struct run *r)
{
	char path[64], *buf = NULL;
	size_t size = 0;
	FILE *in, *out;
	int c;

	if (r->maps || !r->j->alloc_frames)
		return;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)r->out->pid);
	in = fopen(path, "re");
	out = in ? open_memstream(&buf, &size) : NULL;
	while (out && (c = getc(in)) != EOF)
		putc(c, out);
	if (out && fclose(out) == 0)
		r->maps = buf;
	else
		free(buf);
	if (in)
		fclose(in);
}

/* One line of the report. */
static void line(struct run *r, const char *s)
{
	const struct driven_job *j = r->j;
	struct driven_line l;

	if (driven_parse_line(s, &l) < 0 ||
	    (l.kind != DRIVEN_LINE_SERVER && l.kind != DRIVEN_LINE_MAPS && l.i >= j->n))
		return;
	switch (l.kind) {
	case DRIVEN_LINE_MAPS:
		/* It waits for this byte: it is alive while they are read. */
		if (l.pid == r->out->pid) {
			struct sigaction ign = { .sa_handler = SIG_IGN }, was;

			read_maps(r);
			/* Dead since it asked: EPIPE, not a SIGPIPE for us. */
			sigaction(SIGPIPE, &ign, &was);
			/* If it is gone, the process's end says so. */
			(void)!write(r->ack, "", 1);
			sigaction(SIGPIPE, &was, NULL);
		}
		break;
	case DRIVEN_LINE_SERVER:
		r->server_said = true;
		r->out->threads = l.threads;
		if (l.threads != 1) {
			/* The first function only, in the server itself. */
			r->single = true;
			start(r, 0, l.pid);
		}
		arm(r, 0);
		break;
	case DRIVEN_LINE_START:
		r->current = l.i;
		start(r, l.i, l.pid);
		arm(r, WATCHDOG_SLACK_NS);
		break;
	case DRIVEN_LINE_PERF:
		memcpy(r->calls[l.i].perf, l.perf, sizeof(l.perf));
		r->calls[l.i].have_perf = true;
		break;
	case DRIVEN_LINE_MEM:
		memcpy(r->calls[l.i].mem, l.mem, sizeof(l.mem));
		r->calls[l.i].have_mem = true;
		break;
	case DRIVEN_LINE_LOST:
		r->calls[l.i].sites_lost = true;
		break;
	case DRIVEN_LINE_SITE: {
		struct driven_call *c = &r->calls[l.i];

		if (!c->sites && !(c->sites = calloc(DRIVER_SITES_MAX, sizeof(*c->sites))))
			break;
		if (l.rank != c->nsites)
			break;
		c->sites[c->nsites++] = (struct driven_site){ .bytes = l.bytes, .count = l.count };
		r->want_frames = l.n;
		break;
	}
	case DRIVEN_LINE_FRAME: {
		struct driven_call *c = &r->calls[l.i];
		struct driven_site *site = c->nsites ? &c->sites[c->nsites - 1] : NULL;

		if (site && l.rank == c->nsites - 1 && site->n < r->want_frames)
			site->pc[site->n++] = l.pc;
		break;
	}
	case DRIVEN_LINE_THREAD: {
		struct driven_call *c = &r->calls[l.i];
		unsigned n = j->specs[l.i]->threads;

		/* In order, as many as the round has. */
		if (l.k != c->nthreads || l.k >= n)
			break;
		if (!c->threads && !(c->threads = calloc(n, sizeof(*c->threads))))
			break;
		c->threads[c->nthreads++] = (struct driven_thread){
			.tid = l.pid,
			.allocations = l.thread_mem[0],
			.frees = l.thread_mem[1],
			.bytes = l.thread_mem[2],
		};
		break;
	}
	case DRIVEN_LINE_DONE:
		/* From the process that calls it (a benchmark's forked copy
		 * that returns says nothing, but a line may not be trusted); a
		 * child may say it before its server says it started it. */
		if (calling(r) ? l.pid != r->out->pid :
				 r->calls[l.i].pid && l.pid != r->calls[l.i].pid)
			break;
		r->calls[l.i].returned = true;
		r->calls[l.i].pid = l.pid;
		if (r->single) {
			/* Settled when the server ends: its profile is
			 * written then. */
		} else if (calling(r)) {
			/* A round's threads dump one each. */
			r->calls[l.i].dump = r->dumps + 1;
			r->dumps += j->specs[l.i]->threads > 1 ? j->specs[l.i]->threads : 1;
			settle(r, l.i);
			r->next = l.i + 1;
			if (r->next < j->n)
				start(r, r->next, l.pid);
			arm(r, 0);
		}
		break;
	case DRIVEN_LINE_EXEC:
		if (r->calls[l.i].pid == l.pid)
			snprintf(r->calls[l.i].exec_path, sizeof(r->calls[l.i].exec_path), "%s",
				 l.path);
		break;
	case DRIVEN_LINE_END:
		r->calls[l.i].status = l.status;
		r->calls[l.i].status_known = true;
		r->calls[l.i].killed = l.killed;
		r->calls[l.i].execd = l.end == DRIVEN_END_EXEC;
		r->current = SIZE_MAX;
		r->ended = l.i + 1;
		/* What the child left behind goes with it. */
		launch_sweep();
		settle(r, l.i);
		arm(r, 0);
		break;
	}
}

/* Read what the report holds; false at its end. */
static bool drain(struct run *r, int fd, char *buf, size_t *used, size_t size)
{
	ssize_t k = read(fd, buf + *used, size - 1 - *used);
	char *nl;

	if (k < 0)
		return errno == EAGAIN || errno == EINTR;
	if (k == 0)
		return false;
	*used += (size_t)k;
	buf[*used] = '\0';
	while ((nl = strchr(buf, '\n'))) {
		*nl = '\0';
		line(r, buf);
		*used -= (size_t)(nl + 1 - buf);
		memmove(buf, nl + 1, *used + 1);
	}
	/* A line longer than the buffer is not the driver's. */
	if (*used == size - 1)
		*used = 0;
	return true;
}

/* The process ended (out->status): settle what is left. */
static void conclude(struct run *r)
{
	const struct driven_job *j = r->j;
	struct driven_outcome *o = r->out;

	if (j->mode == DRIVEN_OWN) {
		struct driven_call *c = &r->calls[0];

		c->pid = o->pid;
		c->status = o->status;
		c->status_known = true;
		c->killed = o->timed_out;
		c->returned = !o->timed_out && WIFEXITED(o->status) && !WEXITSTATUS(o->status);
		c->dump = 1;
		settle(r, 0);
		return;
	}
	if (calling(r)) {
		/* The call running when the process ended did not return. */
		if (r->next < j->n) {
			struct driven_call *c = &r->calls[r->next];

			if (!c->pid)
				c->pid = o->pid;
			c->status = o->status;
			c->status_known = true;
			c->killed = o->timed_out;
			settle(r, r->next);
		}
		return;
	}
	/* A server that ended before its last "end" died: its child, if
	 * any, went with it, and no other will be forked. When it died while
	 * a call ran (that call's doing, most likely: it signalled its parent
	 * or its group), only that call fails; the caller starts a server for
	 * the calls after it. One that died before it said it was ready fails
	 * them all (a program that cannot start would fail each again). */
	if (r->server_said && r->ended < j->n && !o->timed_out) {
		/* The call after the last that ended: its start may not have
		 * been said yet (a child can signal its parent before the
		 * parent reports it). */
		struct driven_call *c = &r->calls[r->ended];

		c->server_died = true;
		c->server_running = true;
		c->status = o->status;
		c->status_known = false;
		settle(r, r->ended);
		return;
	}
	for (size_t i = r->ended; i < j->n; i++) {
		struct driven_call *c = &r->calls[i];

		c->server_died = true;
		c->status = o->status;
		c->status_known = false;
		/* The watchdog killed what was running: the call, or the
		 * start-up before the first. */
		c->killed = o->timed_out && (i == r->current || (i == 0 && !r->server_said));
		if (!c->pid && i == 0 && !r->server_said)
			c->pid = o->pid;
		settle(r, i);
	}
}

static int set_up(const struct driven_job *j, int *spec_fd, int *err_fd, char **ret_error)
{
	char path[4096];
	int r;

	snprintf(path, sizeof(path), "%s/stderr", j->dir);
	*err_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	if (*err_fd < 0)
		goto fail;
	if (j->mode == DRIVEN_OWN)
		return 0;
	snprintf(path, sizeof(path), "%s/specs", j->dir);
	*spec_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (*spec_fd < 0)
		goto fail;
	r = driven_write_specs(*spec_fd, j->mode, j->specs, j->n, j->timeout_ns, j->perf_calls,
			       j->warmup_calls, j->alloc_frames);
	if (r == -EINVAL) {
		*ret_error = strdup("a library's path holds a newline: the driver cannot be told "
				    "to call its functions");
		return r;
	}
	if (r < 0) {
		errno = -r;
		goto fail;
	}
	return 0;
fail:
	r = -errno;
	if (asprintf(ret_error, "cannot set up a driven child in %s: %s", j->dir, strerror(-r)) <
	    0)
		*ret_error = NULL;
	return r;
}

static char **environment(const struct driven_job *j)
{
	char **extra = NULL, **env;
	size_t n = 0;
	int r = 0;

	for (size_t i = 0; j->extra_env && j->extra_env[i]; i++)
		r |= measure_env_push(&extra, &n, strdup(j->extra_env[i]));
	if (j->mode != DRIVEN_OWN) {
		char *s;

		if (asprintf(&s, "LD_PRELOAD=%s", j->driver) < 0)
			s = NULL;
		r |= measure_env_push(&extra, &n, s);
		if (asprintf(&s, DRIVER_ENV_EXE "=%s", j->exe) < 0)
			s = NULL;
		r |= measure_env_push(&extra, &n, s);
	}
	env = r ? NULL : measure_child_env((const char *const *)extra);
	measure_env_free(extra);
	return env;
}

int driven_run(const struct driven_job *j, struct driven_call *calls,
	       struct driven_outcome *out, char **ret_error)
{
	struct run r = { .j = j, .calls = calls, .out = out, .err_fd = -1, .ack = -1,
			 .current = SIZE_MAX };
	int spec_fd = -1, report[2] = { -1, -1 }, ack[2] = { -1, -1 }, devnull = -1, input = -1;
	int pfd = -1, rc;
	char **env = NULL, buf[4096];
	size_t used = 0;
	bool open_report = true;
	struct launch_opts lo;
	struct launch l;
	int exec_errno = 0;

	memset(calls, 0, j->n * sizeof(*calls));
	*out = (struct driven_outcome){ 0 };
	rc = set_up(j, &spec_fd, &r.err_fd, ret_error);
	if (rc < 0)
		goto out;
	env = environment(j);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	input = measure_open_input(j->t);
	if (!env || devnull < 0 || input < 0 || pipe2(report, O_CLOEXEC) < 0 ||
	    pipe2(ack, O_CLOEXEC) < 0) {
		rc = !env ? -ENOMEM : input < 0 && devnull >= 0 ? input : -errno;
		if (asprintf(ret_error, "cannot set up a driven child: %s%s%s", strerror(-rc),
			     input < 0 && j->t->input ? " (the input " : "",
			     input < 0 && j->t->input ? j->t->input : "") < 0)
			*ret_error = NULL;
		goto out;
	}
	launch_opts_init(&lo, j->exec, j->argv);
	lo.envp = env;
	lo.aslr = j->t->aslr;
	lo.cpu = j->t->cpu;
	lo.stdio[0] = input;
	if (j->t->quiet_stdio) {
		lo.stdio[1] = devnull;
		lo.stdio[2] = r.err_fd;
	}
	if (j->mode != DRIVEN_OWN) {
		lo.fds[0].from = spec_fd;
		lo.fds[0].to = DRIVER_SPEC_FD;
		lo.fds[1].from = report[1];
		lo.fds[1].to = DRIVER_REPORT_FD;
		lo.fds[2].from = ack[0];
		lo.fds[2].to = DRIVER_ACK_FD;
		lo.nfds = 3;
	}
	/* A group of its own, so that whatever the target forks can be
	 * killed with it. */
	lo.process_group = true;
	lo.server = j->mode == DRIVEN_SERVE;
	rc = launch_start(&lo, &l, &exec_errno);
	fd_close(report[1]);
	report[1] = -1;
	fd_close(ack[0]);
	ack[0] = -1;
	r.ack = ack[1];
	if (rc < 0) {
		if (rc == -LAUNCH_E_EXEC)
			rc = -exec_errno;
		if (asprintf(ret_error, "cannot execute %s: %s", j->exec, strerror(-rc)) < 0)
			*ret_error = NULL;
		goto out;
	}
	out->pid = l.pid;
	fcntl(report[0], F_SETFL, O_NONBLOCK);
	pfd = (int)syscall(SYS_pidfd_open, l.pid, 0);
	if (j->mode != DRIVEN_SERVE)
		start(&r, 0, l.pid);
	arm(&r, 0);
	for (;;) {
		struct pollfd p[2] = { { .fd = pfd, .events = POLLIN },
				       { .fd = open_report ? report[0] : -1, .events = POLLIN } };
		uint64_t now = measure_now_ns();
		int ms = now >= r.deadline ? 0 : (int)((r.deadline - now + 999999) / 1000000);
		siginfo_t si = { 0 };

		/* Without a pidfd (a kernel before 5.3), look every 50 ms. */
		if (poll(p, 2, pfd < 0 && ms > 50 ? 50 : ms) < 0 && errno != EINTR)
			break;
		if (open_report && (p[1].revents & (POLLIN | POLLHUP)))
			open_report = drain(&r, report[0], buf, &used, sizeof(buf));
		if (pfd >= 0 ? (p[0].revents & POLLIN) :
			       waitid(P_PID, (id_t)l.pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
				       si.si_pid == l.pid)
			break;
		if (measure_now_ns() >= r.deadline) {
			kill(-l.pid, SIGKILL);
			out->timed_out = true;
			break;
		}
	}
	while (waitpid(l.pid, &out->status, 0) < 0 && errno == EINTR)
		;
	/* No process the target started may outlive it; what they wrote
	 * before is in the pipe. */
	kill(-l.pid, SIGKILL);
	launch_forget(l.pid);
	launch_sweep();
	while (open_report && drain(&r, report[0], buf, &used, sizeof(buf)))
		if (poll(&(struct pollfd){ .fd = report[0], .events = POLLIN }, 1, 0) <= 0)
			break;
	conclude(&r);
	rc = 0;
out:
	/* Sites and threads of calls that were not settled (run again
	 * elsewhere). */
	for (size_t i = 0; i < j->n; i++) {
		free(calls[i].sites);
		calls[i].sites = NULL;
		calls[i].maps = NULL;
		free(calls[i].threads);
		calls[i].threads = NULL;
		calls[i].nthreads = 0;
	}
	free(r.maps);
	fd_close(pfd);
	fd_close(spec_fd);
	fd_close(report[0]);
	fd_close(report[1]);
	fd_close(ack[0]);
	fd_close(ack[1]);
	fd_close(devnull);
	fd_close(input);
	fd_close(r.err_fd);
	measure_env_free(env);
	return rc;
}

char *driven_end_words(const struct driven_call *c)
{
	int r = -1;
	char *s = NULL;

	/* The words of the trace engine (trace_failure_format). */
	if (c->execd)
		r = asprintf(&s, "executed another program%s%s%s", c->exec_path[0] ? " (" : "",
			     c->exec_path, c->exec_path[0] ? ")" : "");
	return r < 0 ? NULL : s;
}

char *driven_failure(const struct driven_call *c, uint64_t timeout_ns)
{
	int st = c->status, r;
	char *s = NULL;

	if (c->killed)
		r = asprintf(&s, "timed out after %" PRIu64 " ms and was killed", timeout_ns / 1000000);
	else if (c->execd)
		return driven_end_words(c);
	else if (c->server_running && WIFSIGNALED(st))
		r = asprintf(&s, "its fork server was killed by SIG%s while it ran",
			     sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st)) : "?");
	else if (c->server_running)
		r = asprintf(&s, "its fork server exited with status %d while it ran",
			     WEXITSTATUS(st));
	else if (c->server_died)
		r = asprintf(&s, "not measured: the process that forks the benchmarks ended (%s %d) "
				 "before this one did",
			     WIFSIGNALED(st) ? "signal" : "status",
			     WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		r = asprintf(&s, "SIG%s (%s)",
			     sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st)) : "?",
			     strsignal(WTERMSIG(st)));
	else if (WIFEXITED(st) && WEXITSTATUS(st) == DRIVER_EXIT_ERROR)
		r = asprintf(&s, "the driver library could not call it");
	else
		r = asprintf(&s, "exited with status %d before the benchmark returned",
			     WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return r < 0 ? NULL : s;
}

/* ---- a suite, natively ----------------------------------------------------- */

struct batch {
	const struct driven_native *nat;
	struct bench_result *results;
	const struct measure_hooks *hooks;
	size_t first;
};

/* Call j settled: the instrument fills its result, its end is said. */
static void batch_settled(void *ctx, size_t j, const struct driven_call *c)
{
	struct batch *b = ctx;
	struct bench_result *res = &b->results[b->first + j];

	res->pid = c->pid;
	res->t_end_ns = c->t_end_ns;
	b->nat->settled(b->nat->ctx, b->first + j, c);
	measure_emit_end(b->hooks, res, c->pid, c->t_end_ns);
}

int driven_native(const struct measure_target *t, const struct bench_spec *specs, size_t n,
		  const struct measure_plan *plan, enum measure_isolation iso,
		  const struct measure_hooks *hooks, const struct driven_native *nat,
		  struct bench_result *results, char **ret_error)
{
	const struct bench_spec **specv = NULL;
	struct driven_call *calls = NULL;
	struct batch b = { .nat = nat, .results = results, .hooks = hooks };
	char exe[PATH_MAX], dir[200];
	const char *tmpdir = getenv("TMPDIR");
	long threads = 0;
	int r;

	if (!realpath(t->binary, exe)) {
		r = -errno;
		if (asprintf(ret_error, "%s: %s", t->binary, strerror(-r)) < 0)
			*ret_error = NULL;
		return r;
	}
	/* $TMPDIR, as mkstemp users do, else /tmp. */
	if (!tmpdir || tmpdir[0] != '/')
		tmpdir = "/tmp";
	if (snprintf(dir, sizeof(dir), "%s/benchtrap-%s.XXXXXX", tmpdir, nat->instrument) >=
	    (int)sizeof(dir))
		r = -ENAMETOOLONG;
	else
		r = launch_temp_dir(dir);
	if (r < 0) {
		if (asprintf(ret_error, "cannot create a temporary directory: %s", strerror(-r)) < 0)
			*ret_error = NULL;
		return r;
	}
	specv = calloc(n ? n : 1, sizeof(*specv));
	calls = calloc(n ? n : 1, sizeof(*calls));
	if (!specv || !calls) {
		r = -ENOMEM;
		*ret_error = strdup("out of memory");
		goto out;
	}
	for (size_t i = 0; i < n;) {
		enum driven_mode dm = DRIVEN_SERVE;
		size_t k = n - i, done = 0;
		struct driven_outcome o;

		if (iso == MEASURE_ISOLATION_SHARED)
			dm = DRIVEN_CALL;
		else if (iso == MEASURE_ISOLATION_PROCESS || threads > 1)
			k = 1; /* a server for one */
		for (size_t j = 0; j < k; j++) {
			specv[j] = &specs[i + j];
			measure_result_begin(&results[i + j], &specs[i + j], nat->instrument,
					     nat->unit);
		}
		b.first = i;

		struct driven_job job = {
			.t = t,
			.exec = t->binary,
			.argv = t->argv,
			.dir = dir,
			.driver = nat->driver,
			.exe = exe,
			.mode = dm,
			.specs = specv,
			.n = k,
			.timeout_ns = plan->timeout_ns,
			.perf_calls = nat->perf_calls,
			.warmup_calls = nat->warmup_calls,
			.alloc_frames = nat->alloc_frames,
			.hooks = hooks,
			.settled = batch_settled,
			.ctx = &b,
		};

		launch_temp_dir_empty(dir);
		r = driven_run(&job, calls, &o, ret_error);
		if (r < 0) {
			for (size_t j = 0; j < k; j++)
				bench_result_clear(&results[i + j]);
			goto out;
		}
		if (dm == DRIVEN_SERVE && o.threads > 1)
			threads = o.threads;
		while (done < k && calls[done].settled)
			done++;
		if (!done) {
			results[i].status = BENCH_FAILED;
			results[i].error = strdup("the program ended before it ran");
			done = 1;
		}
		for (size_t j = 0; j < done && threads > 1 && iso == MEASURE_ISOLATION_BENCHMARK; j++)
			bench_result_diagnose(&results[i + j],
					      "ran in a fresh process: %ld threads when main starts (a "
					      "pool a constructor made?), which a fork would not copy",
					      threads);
		i += done;
	}
	r = 0;
out:
	launch_temp_dir_remove(dir);
	free(specv);
	free(calls);
	return r;
}
