// SPDX-License-Identifier: MIT
/*
 * System call names, from libseccomp's tables: they follow the kernel's
 * numbering on every architecture it knows (AUDIT_ARCH_* is its token),
 * which a table of our own would have to keep up with.
 */
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>

#include "trace/trace.h"

const char *trace_syscall_name(uint32_t arch, long nr, char *buf, size_t size)
{
	char *name =
		nr >= 0 && nr <= INT32_MAX ? seccomp_syscall_resolve_num_arch(arch, (int)nr) : NULL;

	if (name)
		snprintf(buf, size, "%s", name);
	else
		snprintf(buf, size, "syscall_%ld", nr);
	free(name);
	return buf;
}
