// SPDX-License-Identifier: MIT
/* Reading /proc/PID/maps: which files are mapped where (observe.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/procmaps.h"
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
	struct procmaps_iter *it = malloc(sizeof(*it));
	struct procmaps_entry e;
	size_t n = 0;

	if (!it)
		return -ENOMEM;
	procmaps_iter_init(it, text);
	while (procmaps_next(it, &e)) {
		size_t len = strlen(e.path);

		if (e.path[0] != '/')
			continue;
		if (len > 10 && !strcmp(e.path + len - 10, " (deleted)"))
			continue;
		o = find(v, n, e.path);
		if (!o) {
			struct observe_object *nv = realloc(v, (n + 1) * sizeof(*v));

			if (!nv)
				goto oom;
			v = nv;
			o = &v[n];
			memset(o, 0, sizeof(*o));
			o->path = strdup(e.path);
			if (!o->path)
				goto oom;
			o->lo = e.lo;
			o->hi = e.hi;
			o->base = UINT64_MAX;
			n++;
		}
		if (e.off == 0 && o->base == UINT64_MAX)
			o->base = e.lo;
		if (e.lo < o->lo)
			o->lo = e.lo;
		if (e.hi > o->hi)
			o->hi = e.hi;
		if (strchr(e.perms, 'x'))
			o->exec = true;
	}
	free(it);
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
	free(it);
	observe_objects_free(v, n);
	return -ENOMEM;
}
