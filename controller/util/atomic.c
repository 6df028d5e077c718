/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/atomic.h"

static mode_t creation_mode(const char *path)
{
	struct stat st;
	mode_t mask;

	if (stat(path, &st) == 0)
		return st.st_mode & 07777;
	mask = umask(0);
	umask(mask);
	return 0666 & ~mask;
}

static void sync_directory(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int atomic_write(const char *path, int (*fill)(FILE *f, void *ctx), void *ctx)
{
	char tmp[PATH_MAX];
	FILE *f;
	int fd, r;

	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		unlink(tmp);
		return r;
	}
	r = fchmod(fd, creation_mode(path)) < 0 ? -errno : 0;
	if (r == 0)
		r = fill(f, ctx);
	if (fflush(f) != 0 || fsync(fd) != 0)
		r = r ? r : -errno;
	if (fclose(f) != 0)
		r = r ? r : -errno;
	if (r == 0 && rename(tmp, path) != 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	else
		sync_directory(path);
	return r;
}
