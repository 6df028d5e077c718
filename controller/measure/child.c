/* SPDX-License-Identifier: MIT */
/*
 * A running child's symbols, by its mappings (child.h).
 */
#include <stdlib.h>
#include <string.h>

#include "elf/elf.h"
#include "util/procmaps.h"
#include "measure/child.h"

uint64_t measure_child_symbol(pid_t pid, const char *name)
{
	struct procmaps_iter it;
	struct procmaps_entry e;
	char *text, *seen = NULL;
	uint64_t addr = 0;

	if (procmaps_read(pid, &text) < 0)
		return 0;
	procmaps_iter_init(&it, text);
	while (!addr && procmaps_next(&it, &e)) {
		struct elf_file *ef = NULL;
		const struct elf_symbol *s;
		const char *what;

		/* Each object once, at its first mapping (offset 0). */
		if (e.off != 0 || e.path[0] != '/' || (seen && !strcmp(seen, e.path)))
			continue;
		free(seen);
		seen = strdup(e.path);
		if (elf_open(e.path, &ef, &what) < 0)
			continue;
		s = elf_symbol_by_name(ef, name);
		if (s && !s->ifunc)
			addr = (elf_is_pic(ef) ? e.lo : 0) + s->addr;
		elf_close(ef);
	}
	free(seen);
	free(text);
	return addr;
}
