/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_UTIL_FD_H
#define BENCHTRAP_UTIL_FD_H

#include <unistd.h>

/* Close 'fd' unless it is negative (never opened, or already given up);
 * on the paths that release a descriptor, where an error from close() has
 * nothing left to tell. */
static inline void fd_close(int fd)
{
	if (fd >= 0)
		close(fd);
}

#endif
