// SPDX-License-Identifier: MIT
/*
 * Tracee lifecycle: spawning, killing, freeing, and the queries and memory
 * and breakpoint calls that need nothing but the trace_proc. The wait loop
 * and all-stop are in wait.c, the thread table in threads.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/launch.h"
#include "util/strutil.h"
#include "trace/internal.h"

/* ---- live tracees ------------------------------------------------------------
 * Children are started and registered for killing by the launcher
 * (util/launch.h), as every process benchtrap starts. */

void trace_kill_all(void)
{
	launch_kill_all();
}

size_t trace_live_count(void)
{
	return launch_live_count();
}

/* ---- spawning ------------------------------------------------------------- */

void trace_spawn_opts_init(struct trace_spawn_opts *o, char *const *argv)
{
	memset(o, 0, sizeof(*o));
	o->argv = argv;
	o->cpu = -1;
	o->stdio[0] = o->stdio[1] = o->stdio[2] = -1;
}

int trace_spawn(const struct trace_spawn_opts *o, struct trace_proc **ret, int *ret_errno)
{
	static char *const clean_env[] = { "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", NULL };
	const unsigned long options = PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
				      PTRACE_O_TRACEVFORK | PTRACE_O_TRACEVFORKDONE |
				      PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT |
				      PTRACE_O_TRACESYSGOOD;
	struct launch_opts lo;
	struct launch l;
	struct trace_proc *p;
	char path[PATH_MAX];
	int r, status;

	if (!o->argv || !o->argv[0])
		return -EINVAL;
	r = str_find_in_path(o->argv[0], path, sizeof(path));
	if (r < 0) {
		if (ret_errno)
			*ret_errno = -r;
		return -TRACE_E_EXEC;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->mem.fd = -1;
	launch_opts_init(&lo, path, o->argv);
	lo.envp = o->envp ? o->envp : o->clean_env ? clean_env : NULL;
	lo.aslr = o->aslr;
	lo.cpu = o->cpu;
	memcpy(lo.stdio, o->stdio, sizeof(lo.stdio));
	lo.process_group = o->process_group;
	/* Seized before it executes anything of the program. */
	lo.hold = true;
	r = launch_start(&lo, &l, NULL);
	if (r < 0)
		goto out_free;
	p->pid = l.pid;
	p->spawned = true;
	p->group = o->process_group;

	r = trace_pt_seize(l.pid, options);
	if (r < 0) {
		launch_abort(&l);
		goto out_free;
	}
	r = launch_release(&l, ret_errno);
	if (r == -LAUNCH_E_EXEC) {
		r = -TRACE_E_EXEC;
		goto out_free;
	}
	if (r < 0)
		goto out_free;
	/* exec succeeded (the pipe closed on exec): collect its event stop. */
	for (;;) {
		struct trace_status st;

		r = trace_wait_tid(p->pid, &status);
		if (r < 0) {
			launch_kill_reap(p->pid, false);
			goto out_free;
		}
		trace_status_classify(status, &st);
		if (st.kind == TRACE_ST_EXEC)
			break;
		if (st.kind == TRACE_ST_EXITED || st.kind == TRACE_ST_KILLED) {
			launch_forget(p->pid);
			r = -ECHILD;
			goto out_free;
		}
		trace_pt_cont(p->pid, st.kind == TRACE_ST_SIGNAL ? st.code : 0);
	}
	p->mem.pid = p->pid;
	trace_bpt_init(&p->bpt, &trace_mem_ops, &p->mem);
	if (!trace_thread_add(p, p->pid)) {
		r = -ENOMEM;
		launch_kill_reap(p->pid, false);
		goto out_free;
	}
	p->threads[0]->state = TH_STOPPED;
	p->threads[0]->stop = TRACE_ST_EXEC;
	p->cur = p->pid;
	*ret = p;
	return 0;

out_free:
	trace_proc_release(p);
	return r;
}

int trace_kill(struct trace_proc *p)
{
	if (!p || p->dead)
		return 0;
	p->report_exit = 0;
	if (p->group)
		kill(-p->pid, SIGKILL);
	kill(p->pid, SIGKILL);
	/* The threads it knows of first, each waited for alone: waitpid(-1)
	 * goes through every traced thread in the kernel, once per thread
	 * reaped, seconds for 10,000 threads. The leader cannot be reaped
	 * before the others, and threads not announced yet are waited for
	 * below. */
	for (size_t i = 0; i < p->nthreads && !p->dead; i++) {
		struct trace_thread *t = p->threads[i];

		while (t->tid != p->pid && t->state != TH_GONE && !p->dead) {
			int status;

			if (trace_wait_tid(t->tid, &status) < 0) {
				t->state = TH_GONE;
				break;
			}
			p->stopping = true;
			trace_dispatch(p, t, status);
			p->stopping = false;
			if (t->state == TH_STOPPED)
				trace_pt_cont(t->tid, 0);
		}
	}
	while (!p->dead) {
		struct trace_thread *t;
		int status;
		int r = trace_take_status_dying(p, &t, &status);

		if (r < 0) {
			/* ECHILD: someone else reaped it. */
			struct trace_status st = { .kind = TRACE_ST_KILLED, .code = SIGKILL };

			trace_process_gone(p, &st);
			break;
		}
		p->stopping = true; /* no restarts: it is dying */
		trace_dispatch(p, t, status);
		p->stopping = false;
		if (t->state == TH_STOPPED)
			trace_pt_cont(t->tid, 0);
	}
	return 0;
}

void trace_proc_free(struct trace_proc *p)
{
	if (!p)
		return;
	if (!p->spawned) {
		/* Attached: it runs on, without a breakpoint left in it. */
		trace_detach(p);
		trace_proc_release(p);
		return;
	}
	trace_kill(p);
	if (p->spawned) {
		/* What it forked may have outlived it (a group member
		 * re-parented to us, or one that left with setsid()). */
		if (p->group)
			kill(-p->pid, SIGKILL);
		launch_forget(p->pid);
		launch_sweep();
	}
	trace_proc_release(p);
}

pid_t trace_pid(const struct trace_proc *p)
{
	return p->pid;
}

bool trace_alive(const struct trace_proc *p)
{
	return !p->dead;
}

pid_t trace_current_tid(const struct trace_proc *p)
{
	return p->cur;
}

int trace_auxv(struct trace_proc *p, unsigned long type, uint64_t *ret)
{
	uint64_t buf[2 * 64];
	char path[64];
	ssize_t n;
	int fd;

	if (p->dead)
		return -ESRCH;
	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return -EIO;
	for (size_t i = 0; i + 1 < (size_t)n / sizeof(uint64_t); i += 2) {
		if (buf[i] == type) {
			*ret = buf[i + 1];
			return 0;
		}
	}
	return -ENOENT;
}

int trace_read(struct trace_proc *p, uint64_t addr, void *buf, size_t len)
{
	if (p->dead)
		return -ESRCH;
	return trace_bpt_read(&p->bpt, addr, buf, len);
}

int trace_write(struct trace_proc *p, uint64_t addr, const void *buf, size_t len)
{
	if (p->dead)
		return -ESRCH;
	return trace_bpt_write(&p->bpt, addr, buf, len);
}

int trace_bp_insert(struct trace_proc *p, uint64_t addr)
{
	if (p->dead)
		return -ESRCH;
	return trace_bpt_insert(&p->bpt, addr);
}

int trace_bp_remove(struct trace_proc *p, uint64_t addr)
{
	if (p->dead)
		return -ESRCH;
	return trace_bpt_remove(&p->bpt, addr);
}

bool trace_bp_present(const struct trace_proc *p, uint64_t addr)
{
	return trace_bpt_find(&p->bpt, addr) != NULL;
}

const char *trace_strerror(int err)
{
	switch (-err) {
	case TRACE_E_FAILED:
		return "the traced process failed";
	case TRACE_E_STATE:
		return "the traced process is not stopped";
	case TRACE_E_NOMAIN:
		return "cannot locate main";
	case TRACE_E_EXEC:
		return "cannot execute the program";
	case ESRCH:
		return "the traced process is gone";
	default:
		return strerror(-err);
	}
}
