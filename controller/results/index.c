/* SPDX-License-Identifier: MIT */
/* Benchmarks sorted by name and instrument, for pairing and duplicates (results.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "results/results.h"

static int cmp_key(const char *name, const char *instrument, const struct results_bench *b)
{
	int c = strcmp(name, b->name);

	return c ? c : strcmp(instrument, b->instrument);
}

static int cmp_order(const struct results_ref *a, const struct results_ref *b)
{
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return (a->pos > b->pos) - (a->pos < b->pos);
}

static int cmp_refs(const void *pa, const void *pb)
{
	const struct results_ref *a = pa, *b = pb;
	int c = cmp_key(a->bench->name, a->bench->instrument, b->bench);

	return c ? c : cmp_order(a, b);
}

int results_index_build(const struct results_file *const *files, size_t nfiles,
			struct results_index *ret)
{
	struct results_index ix = { 0 };
	size_t total = 0;

	for (size_t i = 0; i < nfiles; i++)
		total += files[i]->n;
	ix.refs = calloc(total + 1, sizeof(*ix.refs));
	if (!ix.refs)
		return -ENOMEM;
	for (size_t i = 0; i < nfiles; i++)
		for (size_t j = 0; j < files[i]->n; j++)
			ix.refs[ix.n++] = (struct results_ref){ &files[i]->benches[j], i, j };
	qsort(ix.refs, ix.n, sizeof(*ix.refs), cmp_refs);
	*ret = ix;
	return 0;
}

void results_index_clear(struct results_index *ix)
{
	free(ix->refs);
	*ix = (struct results_index){ 0 };
}

const struct results_ref *results_index_find(const struct results_index *ix, const char *name,
					     const char *instrument)
{
	size_t lo = 0, hi = ix->n;

	/* The lower bound: the first ref not below the key. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_key(name, instrument, ix->refs[mid].bench) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ix->n && cmp_key(name, instrument, ix->refs[lo].bench) == 0)
		return &ix->refs[lo];
	return NULL;
}

const struct results_ref *results_index_first_duplicate(const struct results_index *ix,
							const struct results_ref **ret_first)
{
	const struct results_ref *dup = NULL, *first = NULL;

	/* In each run of one key, the second ref is its earliest repeat. */
	for (size_t i = 0; i + 1 < ix->n; i++) {
		const struct results_ref *a = &ix->refs[i], *b = &ix->refs[i + 1];

		if (cmp_key(a->bench->name, a->bench->instrument, b->bench) != 0)
			continue;
		if (!dup || cmp_order(b, dup) < 0) {
			dup = b;
			first = a;
		}
		/* Skip the rest of this run. */
		while (i + 1 < ix->n &&
		       cmp_key(a->bench->name, a->bench->instrument, ix->refs[i + 1].bench) == 0)
			i++;
	}
	if (dup && ret_first)
		*ret_first = first;
	return dup;
}
