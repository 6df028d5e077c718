// SPDX-License-Identifier: MIT
/*
 * Raw remote memory. process_vm_readv/writev first: one system call, no
 * file descriptor. They honour page protections, so code pages (read-only)
 * and pages the kernel refuses fall back to /proc/PID/mem, which writes
 * through protections as ptrace does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/fd.h"
#include "trace/internal.h"

static int open_mem(struct trace_mem *m)
{
	char path[64];

	if (m->fd >= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)m->pid);
	m->fd = open(path, O_RDWR | O_CLOEXEC);
	if (m->fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return 0;
}

static int proc_mem_io(struct trace_mem *m, bool write, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;
	int r = open_mem(m);

	if (r < 0)
		return r;
	while (done < len) {
		ssize_t n = write ? pwrite(m->fd, (char *)buf + done, len - done, (off_t)(addr + done))
				  : pread(m->fd, (char *)buf + done, len - done, (off_t)(addr + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EIO ? -EFAULT : -errno;
		if (n == 0)
			return -EFAULT; /* the process has no memory any more */
		done += (size_t)n;
	}
	return 0;
}

static int vm_io(struct trace_mem *m, bool write, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n = write ? process_vm_writev(m->pid, &local, 1, &remote, 1, 0)
			  : process_vm_readv(m->pid, &local, 1, &remote, 1, 0);

	if (n == (ssize_t)len)
		return 0;
	/* A partial transfer, a protected page, or no such system call:
	 * let /proc/PID/mem try the whole range. */
	if (n >= 0 || errno == EFAULT || errno == EPERM || errno == ENOSYS || errno == EACCES)
		return proc_mem_io(m, write, addr, buf, len);
	return -errno;
}

int trace_mem_read(void *mem, uint64_t addr, void *buf, size_t len)
{
	if (len == 0)
		return 0;
	return vm_io(mem, false, addr, buf, len);
}

int trace_mem_write(void *mem, uint64_t addr, const void *buf, size_t len)
{
	if (len == 0)
		return 0;
	return vm_io(mem, true, addr, (void *)buf, len);
}

void trace_mem_close(struct trace_mem *m)
{
	fd_close(m->fd);
	m->fd = -1;
}

const struct trace_mem_ops trace_mem_ops = {
	.read = trace_mem_read,
	.write = trace_mem_write,
};
