// SPDX-License-Identifier: MIT
/*
 * Getting hold of what to observe (observe.h, "targets"): a running process
 * by its id, or a command started from PATH and run to main.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elf.h"
#include "util/launch.h"
#include "util/strutil.h"
#include "observe/observe.h"

static int fail(struct observe_failure *f, enum observe_fail_kind kind, int err)
{
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->err = err;
	return err > 0 ? -err : err < 0 ? err : -EIO;
}

int observe_target_pid(pid_t pid, char *exe, size_t size, struct observe_failure *f)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, size - 1);
	if (n < 0) {
		int err = errno;

		snprintf(link, sizeof(link), "/proc/%d", (int)pid);
		/* /proc/PID there but no exe: a kernel thread or a zombie. */
		if (err == ENOENT && access(link, F_OK) == 0)
			return fail(f, OBSERVE_FAIL_NO_PROGRAM, err);
		if (err == ENOENT)
			return fail(f, OBSERVE_FAIL_NO_PROCESS, err);
		return fail(f, OBSERVE_FAIL_INSPECT, err);
	}
	exe[n] = '\0';
	if (pid == getpid() || pid == launch_front())
		return fail(f, OBSERVE_FAIL_SELF, EINVAL);
	return 0;
}

int observe_target_command(const char *name, char *exe, size_t size, struct observe_failure *f)
{
	if (str_find_in_path(name, exe, size) < 0)
		return fail(f, OBSERVE_FAIL_NOT_FOUND, ENOENT);
	return 0;
}

int observe_attach(pid_t pid, struct trace_proc **ret, struct observe_failure *f)
{
	int r = trace_attach(pid, ret);

	if (r == -EPERM)
		return fail(f, OBSERVE_FAIL_NOT_ALLOWED, r);
	if (r == -ESRCH)
		return fail(f, OBSERVE_FAIL_GONE, r);
	if (r < 0)
		return fail(f, OBSERVE_FAIL_ATTACH, r);
	return 0;
}

int observe_start_command(char *const *argv, struct elf_file *ef, struct trace_proc **ret,
			  struct observe_failure *f)
{
	const struct elf_symbol *main_sym =
		elf_is_stripped(ef) ? NULL : elf_symbol_by_name(ef, "main");
	struct trace_failure *tf = calloc(1, sizeof(*tf));
	struct trace_spawn_opts so;
	struct trace_proc *p = NULL;
	uint64_t main_addr;
	int err = 0, r;

	if (!tf)
		return fail(f, OBSERVE_FAIL_NOMEM, -ENOMEM);
	trace_spawn_opts_init(&so, argv);
	so.aslr = true; /* the program runs as it would alone */
	r = trace_spawn(&so, &p, &err);
	if (r == -TRACE_E_EXEC) {
		free(tf);
		return fail(f, OBSERVE_FAIL_EXEC, err);
	}
	if (r == 0)
		r = trace_run_to_main(p, main_sym ? main_sym->addr : 0, elf_entry(ef), -1,
				      &main_addr, tf);
	if (r == -TRACE_E_FAILED) {
		/* It ended before main: its end is passed on. */
		trace_proc_free(p);
		fail(f, OBSERVE_FAIL_ENDED, r);
		f->trace = tf;
		return r;
	}
	free(tf);
	if (r < 0) {
		trace_proc_free(p);
		return fail(f, OBSERVE_FAIL_TO_MAIN, r);
	}
	*ret = p;
	return 0;
}

int observe_failure_exit_code(const struct observe_failure *f)
{
	if (f->kind != OBSERVE_FAIL_ENDED || !f->trace)
		return OBSERVE_EXIT_BAD_INPUT;
	if (f->trace->kind == TRACE_FAIL_EXIT)
		return f->trace->code;
	return 128 + (f->trace->sig ? f->trace->sig : SIGKILL);
}

void observe_failure_clear(struct observe_failure *f)
{
	free(f->trace);
	f->trace = NULL;
}

int observe_result_exit_code(const struct observe_result *r)
{
	if (r->attached)
		return 0;
	if (r->end == OBSERVE_EXITED)
		return r->exit_code;
	return 128 + r->sig;
}
