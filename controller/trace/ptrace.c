// SPDX-License-Identifier: MIT
/*
 * Every ptrace request of the engine goes through these wrappers.
 */
#include <elf.h>
#include <errno.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include "trace/internal.h"

static int call(enum __ptrace_request req, pid_t tid, void *addr, void *data)
{
	errno = 0;
	if (ptrace(req, tid, addr, data) == -1 && errno != 0)
		return -errno;
	return 0;
}

int trace_pt_seize(pid_t pid, unsigned long options)
{
	return call(PTRACE_SEIZE, pid, NULL, (void *)options);
}

int trace_pt_cont(pid_t tid, int sig)
{
	return call(PTRACE_CONT, tid, NULL, (void *)(long)sig);
}

int trace_pt_syscall(pid_t tid, int sig)
{
	return call(PTRACE_SYSCALL, tid, NULL, (void *)(long)sig);
}

int trace_pt_syscall_info(pid_t tid, struct __ptrace_syscall_info *ret)
{
	struct __ptrace_syscall_info info;

	errno = 0;
	if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof(info), &info) < 0)
		return -errno;
	*ret = info;
	return 0;
}

int trace_pt_step(pid_t tid, int sig)
{
	return call(PTRACE_SINGLESTEP, tid, NULL, (void *)(long)sig);
}

int trace_pt_interrupt(pid_t tid)
{
	return call(PTRACE_INTERRUPT, tid, NULL, NULL);
}

int trace_pt_detach(pid_t tid, int sig)
{
	return call(PTRACE_DETACH, tid, NULL, (void *)(long)sig);
}

int trace_pt_getregs(pid_t tid, struct arch_regs *ret)
{
	struct arch_regs regs;
	struct iovec iov = { .iov_base = &regs.r, .iov_len = sizeof(regs.r) };
	int r = call(PTRACE_GETREGSET, tid, (void *)(long)NT_PRSTATUS, &iov);

	if (r < 0)
		return r;
	*ret = regs;
	return 0;
}

int trace_pt_setregs(pid_t tid, const struct arch_regs *regs)
{
	struct iovec iov = { .iov_base = (void *)&regs->r, .iov_len = sizeof(regs->r) };

	return call(PTRACE_SETREGSET, tid, (void *)(long)NT_PRSTATUS, &iov);
}

int trace_pt_getfpregs(pid_t tid, struct trace_fpregs *ret)
{
	struct iovec iov = { .iov_base = ret->buf, .iov_len = sizeof(ret->buf) };
	int r = call(PTRACE_GETREGSET, tid, (void *)(long)NT_PRFPREG, &iov);

	if (r < 0)
		return r;
	ret->len = iov.iov_len;
	return 0;
}

int trace_pt_setfpregs(pid_t tid, const struct trace_fpregs *f)
{
	struct iovec iov = { .iov_base = (void *)f->buf, .iov_len = f->len };

	return call(PTRACE_SETREGSET, tid, (void *)(long)NT_PRFPREG, &iov);
}

int trace_pt_getsiginfo(pid_t tid, siginfo_t *ret)
{
	siginfo_t si;
	int r = call(PTRACE_GETSIGINFO, tid, NULL, &si);

	if (r < 0)
		return r;
	*ret = si;
	return 0;
}

int trace_pt_geteventmsg(pid_t tid, unsigned long *ret)
{
	unsigned long msg;
	int r = call(PTRACE_GETEVENTMSG, tid, NULL, &msg);

	if (r < 0)
		return r;
	*ret = msg;
	return 0;
}
