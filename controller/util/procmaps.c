// SPDX-License-Identifier: MIT
/* Reading /proc/PID/maps (procmaps.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/procmaps.h"

int procmaps_read(pid_t pid, char **ret_text)
{
	size_t len = 0, cap = 0;
	char path[64], *buf = NULL;
	int fd, r = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *nb = realloc(buf, cap + 65536);

			if (!nb) {
				r = -ENOMEM;
				break;
			}
			buf = nb;
			cap += 65536;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			r = -errno;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	buf[len] = '\0';
	*ret_text = buf;
	return 0;
}

void procmaps_iter_init(struct procmaps_iter *it, const char *text)
{
	it->next = text;
}

bool procmaps_next(struct procmaps_iter *it, struct procmaps_entry *ret)
{
	while (it->next && *it->next) {
		const char *line = it->next, *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		int pos = 0;

		it->next = nl ? nl + 1 : NULL;
		if (len >= sizeof(it->line))
			continue;
		memcpy(it->line, line, len);
		it->line[len] = '\0';
		if (sscanf(it->line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &ret->lo,
			   &ret->hi, ret->perms, &ret->off, &pos) < 4)
			continue;
		ret->path = pos ? it->line + pos : "";
		return true;
	}
	return false;
}

size_t procmaps_size_at(pid_t pid, uint64_t lo)
{
	struct procmaps_iter *it = malloc(sizeof(*it));
	struct procmaps_entry e;
	size_t size = 0;
	char *text = NULL;

	if (it && procmaps_read(pid, &text) == 0) {
		procmaps_iter_init(it, text);
		while (procmaps_next(it, &e)) {
			if (e.lo == lo) {
				size = (size_t)(e.hi - e.lo);
				break;
			}
		}
	}
	free(text);
	free(it);
	return size;
}

int procmaps_file_base(pid_t pid, const char *path, uint64_t *ret)
{
	struct procmaps_iter *it;
	struct procmaps_entry e;
	char real[PATH_MAX], *text;
	int r;

	if (!realpath(path, real))
		return -errno;
	r = procmaps_read(pid, &text);
	if (r < 0)
		return r;
	it = malloc(sizeof(*it));
	r = it ? -ENOENT : -ENOMEM;
	if (it)
		procmaps_iter_init(it, text);
	while (it && procmaps_next(it, &e)) {
		if (e.off == 0 && !strcmp(e.path, real)) {
			*ret = e.lo;
			r = 0;
			break;
		}
	}
	free(it);
	free(text);
	return r;
}

int procmaps_free_near(pid_t pid, uint64_t lo, uint64_t hi, size_t size, uint64_t reach,
		       uint64_t *ret)
{
	struct procmaps_iter it;
	struct procmaps_entry e;
	uint64_t prev_hi = 0x10000, best = 0, best_dist = UINT64_MAX;
	char *text;
	int r = procmaps_read(pid, &text);

	if (r < 0)
		return r;
	procmaps_iter_init(&it, text);
	for (bool more = true; more;) {
		uint64_t gap_lo = prev_hi, gap_hi;

		more = procmaps_next(&it, &e);
		gap_hi = more ? e.lo : 0x7fffffffe000ull - 0x100000000ull;
		if (gap_hi > gap_lo && gap_hi - gap_lo >= size + 2 * 4096) {
			/* the end of a gap below the object, the start of one
			 * above it, a page away from the neighbours */
			uint64_t cand = gap_hi <= lo ? gap_hi - 4096 - size : gap_lo + 4096;
			uint64_t dist = cand < lo ? hi - cand : cand + size - lo;

			if (dist < reach && dist < best_dist) {
				best = cand;
				best_dist = dist;
			}
		}
		if (more && e.hi > prev_hi)
			prev_hi = e.hi;
	}
	free(text);
	if (!best)
		return -ENOSPC;
	*ret = best & ~4095ull;
	return 0;
}
