/* SPDX-License-Identifier: MIT */
/*
 * Demangling through libiberty, the implementation binutils and gdb use:
 * Itanium C++ ("_Z..."), Rust legacy ("_ZN...17h<hash>E", which is valid
 * Itanium too and is told apart by its hash) and Rust v0 ("_R...").
 */
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
