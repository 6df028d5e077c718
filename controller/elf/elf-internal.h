/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_ELF_INTERNAL_H
#define BENCHTRAP_ELF_INTERNAL_H

/* Shared by the files of the ELF module only: the layout of elf_file. */

#include <gelf.h>
#include <libelf.h>

#include "util/strutil.h"
#include "elf/elf.h"

struct elf_file {
	char *path;
	int fd;	    /* -1 for an image in memory */
	char *copy; /* that image, owned */
	Elf *elf;
	const char *image; /* the whole file, mapped by libelf */
	size_t image_size;
	GElf_Ehdr ehdr;

	struct elf_symbol *syms; /* sorted by address */
	size_t nsyms;
	char **demangled; /* owned demangled names, one per sym or NULL */
	char **escaped;	  /* owned printable raw names, one per sym or NULL */
	struct strv owned; /* other owned names ("memcpy@GLIBC_2.2.5") */
	bool stripped;
	bool calls_dlopen; /* .dynsym imports dlopen or dlmopen */

	struct elf_bench *benches;
	size_t nbenches;
	int registry_error; /* 0, or -ELF_E_REGISTRY: benches is then empty */

	char *build_id;
	const char *interp;   /* points into image */
	char *compiler;

	const char **needed; /* point into the dynamic string table */
	size_t nneeded;
	const char *rpath;
	const char *runpath;
};

/* Read the target-stub registry into ef->benches (registry.c). */
int elf_read_registry(struct elf_file *ef);
/* Read the symbol table into ef->syms (symbols.c). 0 or -errno. */
int elf_read_symbols(struct elf_file *ef);
/* Set the member field of ef->syms, sorted, from their names and the
 * file's DWARF (members.c). */
void elf_read_members(struct elf_file *ef);

/* A section by name, or NULL. */
Elf_Scn *elf_section_by_name(struct elf_file *ef, const char *name, GElf_Shdr *ret_shdr);

/* The data of the next section after '*scn' (NULL: from the first) of type
 * 'type' that has data, with *scn moved to it and its header in *ret_shdr;
 * NULL after the last. */
Elf_Data *elf_next_section_data(struct elf_file *ef, Elf_Scn **scn, GElf_Word type,
				GElf_Shdr *ret_shdr);

/* Read 'size' bytes at link-time address 'vaddr' from the file image;
 * -EFAULT when they are not all in one PT_LOAD's file-backed part. */
int elf_read_vaddr(const struct elf_file *ef, uint64_t vaddr, void *buf, size_t size);

#endif
