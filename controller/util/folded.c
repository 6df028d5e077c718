/* SPDX-License-Identifier: MIT */
/* Folded stacks (folded.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/folded.h"

/* ';' separates frames and a line ends the path: neither may be in a
 * frame. Spaces may (C++ names hold them): readers take the count after
 * the last space of a line. */
static char clean(char c)
{
	if (c == ';')
		return ':';
	if ((unsigned char)c < ' ' || c == 0x7f)
		return '_';
	return c;
}

static int push(struct folded *f, char *path, uint64_t count)
{
	if (f->n == f->cap) {
		size_t nc = f->cap ? f->cap * 2 : 64;
		struct folded_stack *v = realloc(f->v, nc * sizeof(*v));

		if (!v)
			return -ENOMEM;
		f->v = v;
		f->cap = nc;
	}
	f->v[f->n].path = path;
	f->v[f->n].count = count;
	f->n++;
	f->total += count;
	f->sorted = 0;
	return 0;
}

int folded_add(struct folded *f, const char *const *frames, size_t n, uint64_t count)
{
	size_t len = 0, k = 0;
	char *path;

	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		len += (frames[i][0] ? strlen(frames[i]) : 1) + 1;
	path = malloc(len);
	if (!path)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *s = frames[i];

		if (i)
			path[k++] = ';';
		if (!*s)
			path[k++] = '?';
		for (; *s; s++)
			path[k++] = clean(*s);
	}
	path[k] = '\0';
	if (push(f, path, count) < 0) {
		free(path);
		return -ENOMEM;
	}
	return 0;
}

int folded_add_line(struct folded *f, const char *line)
{
	size_t len = strcspn(line, "\n");
	const char *sp;
	char *end, *path;
	uint64_t count;

	while (len && (line[len - 1] == ' ' || line[len - 1] == '\r'))
		len--;
	sp = memrchr(line, ' ', len);
	if (!sp || sp == line || sp + 1 == line + len)
		return -EINVAL;
	errno = 0;
	count = strtoull(sp + 1, &end, 10);
	if (errno || end != line + len || sp[1] == '-')
		return -EINVAL;
	path = strndup(line, (size_t)(sp - line));
	if (!path)
		return -ENOMEM;
	if (push(f, path, count) < 0) {
		free(path);
		return -ENOMEM;
	}
	return 0;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct folded_stack *)a)->path,
		      ((const struct folded_stack *)b)->path);
}

void folded_merge(struct folded *f)
{
	size_t k = 0;

	if (f->sorted)
		return;
	if (f->n)
		qsort(f->v, f->n, sizeof(*f->v), cmp_path);
	for (size_t i = 0; i < f->n; i++) {
		if (k && strcmp(f->v[k - 1].path, f->v[i].path) == 0) {
			f->v[k - 1].count += f->v[i].count;
			free(f->v[i].path);
			continue;
		}
		f->v[k++] = f->v[i];
	}
	f->n = k;
	f->sorted = 1;
}

int folded_write(struct folded *f, FILE *out)
{
	folded_merge(f);
	for (size_t i = 0; i < f->n; i++)
		if (fprintf(out, "%s %" PRIu64 "\n", f->v[i].path, f->v[i].count) < 0)
			return -EIO;
	return fflush(out) == 0 ? 0 : -EIO;
}

void folded_free(struct folded *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i].path);
	free(f->v);
	memset(f, 0, sizeof(*f));
}
