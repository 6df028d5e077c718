/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the ELF layer: the input is an ELF image, opened from
 * memory as the vDSO is, and everything a user of the layer can reach is
 * walked: symbols and their demangled names, lookups by address and name,
 * the target-stub registry, DT_NEEDED entries, build-id, interpreter,
 * compiler comment, and the scope's name list. Resolving the needed
 * libraries on disk is left out: it reads the machine, not the input.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Read every byte of a string the layer hands out, so that ASan sees a
 * dangling or unterminated one. */
static size_t touch(const char *s)
{
	return s ? strlen(s) : 0;
}

static void walk(struct elf_file *ef)
{
	size_t n = elf_symbol_count(ef), sum = 0;
	uint64_t off;

	sum += touch(elf_path(ef)) + touch(elf_build_id(ef)) + touch(elf_interp(ef)) +
	       touch(elf_compiler(ef));
	sum += elf_is_pic(ef) + elf_is_stripped(ef) + elf_is_dynamic(ef);
	(void)elf_vaddr_to_offset(ef, elf_entry(ef), &off);

	for (size_t i = 0; i < n; i++) {
		const struct elf_symbol *s = elf_symbol(ef, i);

		sum += touch(s->name) + touch(s->demangled);
		(void)elf_symbol_at(ef, s->addr);
		if (s->size)
			(void)elf_symbol_at(ef, s->addr + s->size - 1);
		(void)elf_vaddr_to_offset(ef, s->addr, &off);
		/* Lookups by name are linear: a few suffice. */
		if (i < 16) {
			(void)elf_symbol_by_name(ef, s->name);
			(void)elf_symbol_by_name(ef, s->demangled);
		}
	}
	/* what the walltime instrument asks of a child's vDSO */
	(void)elf_symbol_by_name(ef, "__vdso_clock_gettime");
	(void)elf_symbol_by_name(ef, "main");
	(void)elf_symbol_at(ef, 0);
	(void)elf_symbol_at(ef, UINT64_MAX);

	for (size_t i = 0; i < elf_bench_count(ef); i++) {
		const struct elf_bench *b = elf_bench(ef, i);

		sum += touch(b->name) + touch(b->base) + b->has_arg;
		if (b->symbol)
			sum += touch(b->symbol->name);
		(void)elf_vaddr_to_offset(ef, b->addr, &off);
	}

	for (size_t i = 0; i < elf_needed_count(ef); i++)
		sum += touch(elf_needed(ef, i));

	struct elf_scope scope;

	if (elf_scope_open(ef, false, &scope) == 0) {
		size_t nn = 0;
		const char **names = elf_scope_names(&scope, &nn);

		for (size_t i = 0; names && i < nn; i++)
			sum += touch(names[i]);
		free((void *)names);
		elf_scope_close(&scope);
	}
	/* keep the reads from being optimized away */
	__asm__ volatile("" : : "r"(sum));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_file *ef;

	if (elf_open_memory("fuzz", data, size, &ef) == 0) {
		walk(ef);
		elf_close(ef);
	}
	return 0;
}
