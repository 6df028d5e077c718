// SPDX-License-Identifier: MIT
/* Reading /proc/PID/maps: which files are mapped where (observe.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "observe/observe.h"

void observe_objects_free(struct observe_object *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].path);
	free(v);
}

static struct observe_object *find(struct observe_object *v, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].path, path))
			return &v[i];
	return NULL;
}

int observe_parse_maps(const char *text, struct observe_object **ret, size_t *ret_n)
{
	struct observe_object *v = NULL, *o;
	size_t n = 0;
	const char *line = text;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[4096 + 256], perms[8], path[4096];
		uint64_t lo, hi, off;
		int pos = 0;

		if (len >= sizeof(buf))
			goto next;
		memcpy(buf, line, len);
		buf[len] = '\0';
		path[0] = '\0';
		if (sscanf(buf, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &lo, &hi,
			   perms, &off, &pos) < 4 ||
		    pos == 0)
			goto next;
		snprintf(path, sizeof(path), "%s", buf + pos);
		if (path[0] != '/')
			goto next;
		if (len > 10 && !strcmp(buf + len - 10, " (deleted)"))
			goto next;
		o = find(v, n, path);
		if (!o) {
			struct observe_object *nv = realloc(v, (n + 1) * sizeof(*v));

			if (!nv)
				goto oom;
			v = nv;
			o = &v[n];
			memset(o, 0, sizeof(*o));
			o->path = strdup(path);
			if (!o->path)
				goto oom;
			o->lo = lo;
			o->hi = hi;
			o->base = UINT64_MAX;
			n++;
		}
		if (off == 0 && o->base == UINT64_MAX)
			o->base = lo;
		if (lo < o->lo)
			o->lo = lo;
		if (hi > o->hi)
			o->hi = hi;
		if (strchr(perms, 'x'))
			o->exec = true;
	next:
		line = nl ? nl + 1 : NULL;
	}
	/* A file mapped without its offset 0 (a data file mapped in part) is
	 * no loaded object. */
	for (size_t i = 0; i < n;) {
		if (v[i].base == UINT64_MAX) {
			free(v[i].path);
			memmove(&v[i], &v[i + 1], (n - i - 1) * sizeof(*v));
			n--;
		} else {
			i++;
		}
	}
	*ret = v;
	*ret_n = n;
	return 0;
oom:
	observe_objects_free(v, n);
	return -ENOMEM;
}
