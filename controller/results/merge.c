/* SPDX-License-Identifier: MIT */
/* Shards of a selection, and merging the results files of shards (results.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "util/atomic.h"
#include "util/strutil.h"
#include "results/internal.h"
#include "results/json.h"
#include "results/results.h"

uint64_t results_fnv1a64(const char *s)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

unsigned results_shard_of(const char *name, unsigned nshards)
{
	return nshards ? (unsigned)(results_fnv1a64(name) % nshards) : 0;
}

static int set_error(char **ret_error, int r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int set_error(char **ret_error, int r, const char *fmt, ...)
{
	va_list ap;

	if (!ret_error)
		return r;
	va_start(ap, fmt);
	if (vasprintf(ret_error, fmt, ap) < 0)
		*ret_error = NULL;
	va_end(ap);
	return r;
}

static bool differs(const char *a, const char *b)
{
	return (!a || !b) ? a != b : strcmp(a, b) != 0;
}

/* What makes shards of one run: the same binary (build-id), machine type
 * and settings. Hostnames and dates differ between CI machines. */
static int check_mismatch(const struct results_file *a, const struct results_file *b,
			  char **ret_error)
{
	char *diff = NULL;
	const char *what = NULL, *va = NULL, *vb = NULL;

	if (differs(a->env.build_id, b->env.build_id))
		what = "build_id", va = a->env.build_id, vb = b->env.build_id;
	else if (differs(a->instrument, b->instrument))
		what = "run.instrument", va = a->instrument, vb = b->instrument;
	else if (differs(a->isolation, b->isolation) &&
		 !(a->isolation && b->isolation && results_isolation_alike(a->isolation, b->isolation)))
		what = "run.isolation", va = a->isolation, vb = b->isolation;
	if (what)
		return set_error(ret_error, -EXDEV,
				 "%s: %s differs from %s ('%s' vs '%s'); merge shards of one "
				 "build and one command, or pass --allow-mismatch",
				 b->path, what, a->path, va ? va : "unknown", vb ? vb : "unknown");
	if (results_env_diff(&a->env, &b->env, &diff) < 0)
		return -ENOMEM;
	if (diff) {
		int r = set_error(ret_error, -EXDEV,
				  "%s: measured in another environment than %s: %s; pass "
				  "--allow-mismatch to merge anyway (the first file's environment "
				  "is kept)",
				  b->path, a->path, diff);

		free(diff);
		return r;
	}
	return 0;
}

/* A benchmark found twice, reported at its first repeat in file order. */
static int check_duplicates(struct results_file *const *files, size_t n, char **ret_error)
{
	const struct results_ref *dup, *first = NULL;
	struct results_index ix;
	int r = 0;

	if (results_index_build((const struct results_file *const *)files, n, &ix) < 0)
		return -ENOMEM;
	dup = results_index_first_duplicate(&ix, &first);
	if (dup && first->file == dup->file)
		r = set_error(ret_error, -EEXIST,
			      "%s: %s (%s) appears twice; pass --allow-duplicates to keep both",
			      files[dup->file]->path, dup->bench->name, dup->bench->instrument);
	else if (dup)
		r = set_error(ret_error, -EEXIST,
			      "%s (%s) is in both %s and %s: were the shards given the same "
			      "--shard? pass --allow-duplicates to keep both",
			      dup->bench->name, dup->bench->instrument, files[first->file]->path,
			      files[dup->file]->path);
	results_index_clear(&ix);
	return r;
}

/* The first file's environment, written as a run writes one; fields this
 * benchtrap does not know are kept. */
static int write_env(json_t *doc, const struct results_env *e)
{
	json_t *env = results_json_env(e), *old = json_object_get(doc, "environment");

	if (!env)
		return -ENOMEM;
	if (json_is_object(old) && json_object_update_missing(env, old) < 0) {
		json_decref(env);
		return -ENOMEM;
	}
	return json_object_set_new(doc, "environment", env) < 0 ? -ENOMEM : 0;
}

/* The benchmarks of every file in turn, each read again from its text:
 * one benchmark's tree at a time (results_json_next_fn). */
struct merge_source {
	struct results_file *const *files;
	size_t n, file, pos;
};

static int next_bench(void *ctx, json_t **ret)
{
	struct merge_source *m = ctx;
	bool nomem;

	for (; m->file < m->n; m->file++, m->pos = 0) {
		const struct results_doc *d = m->files[m->file]->doc;

		if (m->pos < results_doc_nbench(d)) {
			/* It was read once: only memory can fail now. */
			*ret = results_doc_bench(d, m->pos++, &nomem);
			return *ret ? 1 : -ENOMEM;
		}
	}
	return 0;
}

/* A member of 'doc' that is an object, replaced by a copy of itself (its
 * members shared) so that setting one of them leaves the input as it was;
 * NULL when it is not an object. */
static json_t *own_object(json_t *doc, const char *key)
{
	json_t *v = json_object_get(doc, key), *c;

	if (!json_is_object(v))
		return NULL;
	c = json_copy(v);
	if (!c || json_object_set_new(doc, key, c) < 0)
		return NULL;
	return c;
}

int results_merge(struct results_file *const *files, size_t n, const char *output, unsigned flags,
		  char **ret_error)
{
	struct merge_source src = { files, n, 0, 0 };
	json_t *doc = NULL, *from = NULL, *run, *placeholder;
	int r;

	if (!files || n == 0 || !output)
		return -EINVAL;
	if (!(flags & RESULTS_MERGE_ALLOW_MISMATCH))
		for (size_t i = 1; i < n; i++) {
			r = check_mismatch(files[0], files[i], ret_error);
			if (r < 0)
				return r;
		}
	if (!(flags & RESULTS_MERGE_ALLOW_DUPLICATES)) {
		r = check_duplicates(files, n, ret_error);
		if (r < 0)
			return r;
	}

	for (size_t i = 1; i < n; i++)
		if (!files[i]->paired_base != !files[0]->paired_base)
			return set_error(ret_error, -EXDEV,
					 "%s is a paired comparison (compare BASE_BINARY "
					 "HEAD_BINARY --output) and %s is not: merge one kind",
					 files[files[0]->paired_base ? 0 : i]->path,
					 files[files[0]->paired_base ? i : 0]->path);

	for (size_t i = 0; i < n; i++)
		if (!files[i]->doc)
			return -EINVAL; /* released: nothing to write */

	/*
	 * The first file's document, its members shared, not copied: what is
	 * set here is set on copies of the objects it changes. Its benchmarks
	 * are those of every file, streamed into the output one by one.
	 */
	doc = json_copy(files[0]->doc->root);
	from = json_array();
	placeholder = json_array();
	if (!doc || !from || json_object_set_new(doc, "benchmarks", placeholder) < 0 ||
	    write_env(doc, &files[0]->env) < 0)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(from, json_string(files[i]->path)) < 0)
			goto nomem;
	/* Paired comparisons: their base sides are merged alike (a tree, kept
	 * whole by the reader). */
	if (files[0]->paired_base) {
		json_t *paired = own_object(doc, "paired");
		json_t *base = paired ? own_object(paired, "base") : NULL;
		json_t *bb = json_array();

		for (size_t i = 0; bb && i < n; i++) {
			json_t *p = json_object_get(files[i]->doc->root, "paired");

			if (json_array_extend(bb, json_object_get(json_object_get(p, "base"),
								  "benchmarks")) < 0) {
				json_decref(bb);
				bb = NULL;
			}
		}
		if (!bb || !base || json_object_set_new(base, "benchmarks", bb) < 0)
			goto nomem;
	}
	run = own_object(doc, "run");
	if (!run) {
		run = json_object();
		if (!run || json_object_set_new(doc, "run", run) < 0)
			goto nomem;
	}
	r = json_object_set_new(run, "merged_from", from);
	from = NULL;
	if (r < 0)
		goto nomem;
	r = results_json_dump_stream_file(doc, "benchmarks", next_bench, &src, output);
	if (r < 0)
		return set_error(ret_error, r, "%s: cannot write the merged results: %s", output,
				 atomic_strerror(r));
	return 0;
nomem:
	json_decref(doc);
	json_decref(from);
	return -ENOMEM;
}
