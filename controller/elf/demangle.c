/* SPDX-License-Identifier: MIT */
/*
 * Demangling through libiberty, the implementation binutils and gdb use:
 * Itanium C++ ("_Z..."), Rust legacy ("_ZN...17h<hash>E", which is valid
 * Itanium too and is told apart by its hash) and Rust v0 ("_R...").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "elf/elf.h"

char *elf_demangle(const char *name)
{
	int opts = DMGL_PARAMS | DMGL_ANSI;
	char *d;

	if (strncmp(name, "_R", 2) == 0) {
		d = cplus_demangle(name, opts | DMGL_RUST);
	} else if (strncmp(name, "_Z", 2) == 0) {
		/* Rust legacy names demangle as Rust first: that drops the hash
		 * segment and decodes $LT$-style escapes. A C++ name fails it. */
		d = cplus_demangle(name, opts | DMGL_RUST);
		if (!d)
			d = cplus_demangle(name, opts | DMGL_GNU_V3);
	} else {
		return NULL;
	}
	if (d && strcmp(d, name) == 0) {
		free(d);
		return NULL;
	}
	return d;
}

char *elf_demangle_hashed(const char *name)
{
	int opts = DMGL_PARAMS | DMGL_ANSI | DMGL_RUST;
	char *plain, *hashed;

	/* Only a legacy name: v0 names have no hash, and verbose v0 names
	 * gain their crates' disambiguators instead ("crate[3c1c0]::f"). */
	if (strncmp(name, "_ZN", 3) != 0)
		return NULL;
	plain = cplus_demangle(name, opts);
	hashed = plain ? cplus_demangle(name, opts | DMGL_VERBOSE) : NULL;
	if (hashed && strcmp(plain, hashed) == 0) {
		free(hashed);
		hashed = NULL;
	}
	free(plain);
	return hashed;
}

static int cmp_name(const void *pa, const void *pb, void *arg)
{
	char *const *d = arg;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = strcmp(d[a] ? d[a] : "", d[b] ? d[b] : "");

	return c ? c : (a > b) - (a < b);
}

int elf_demangle_disambiguate(const char *const *raw, char **demangled, size_t n)
{
	size_t *order;

	if (n < 2)
		return 0;
	order = malloc(n * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), cmp_name, demangled);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		bool distinct = false;

		while (j < n && demangled[order[i]] && demangled[order[j]] &&
		       !strcmp(demangled[order[i]], demangled[order[j]]))
			distinct |= strcmp(raw[order[i]], raw[order[j++]]) != 0;
		/* A run of one name from two raw names (one raw name twice is
		 * one function, named once per table): keep the hashes. */
		for (size_t k = i; distinct && k < j; k++) {
			char *h = elf_demangle_hashed(raw[order[k]]);

			if (!h)
				continue;
			free(demangled[order[k]]);
			demangled[order[k]] = h;
		}
		i = j;
	}
	free(order);
	return 0;
}
