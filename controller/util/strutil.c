/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

size_t str_distance(const char *a, const char *b, size_t cap)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la > lb ? la - lb >= cap : lb - la >= cap)
		return cap;

	/* Two rows of the Wagner-Fischer table. */
	size_t *prev = malloc((lb + 1) * sizeof(*prev));
	size_t *cur = malloc((lb + 1) * sizeof(*cur));
	size_t d = cap;

	if (!prev || !cur)
		goto out;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t row_min;

		cur[0] = row_min = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			size_t m = sub < del ? sub : del;

			cur[j] = m < ins ? m : ins;
			if (cur[j] < row_min)
				row_min = cur[j];
		}
		if (row_min >= cap)
			goto out;
		size_t *t = prev;
		prev = cur;
		cur = t;
	}
	d = prev[lb] < cap ? prev[lb] : cap;
out:
	free(prev);
	free(cur);
	return d;
}

bool str_has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

const char *str_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int strv_push(struct strv *sv, char *s)
{
	if (sv->n + 2 > sv->cap) {
		size_t cap = sv->cap ? sv->cap * 2 : 8;
		char **v = realloc(sv->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		sv->v = v;
		sv->cap = cap;
	}
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
	return 0;
}

bool strv_contains(const struct strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return true;
	return false;
}

void strv_clear(struct strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	*sv = (struct strv){ 0 };
}
