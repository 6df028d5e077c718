/* SPDX-License-Identifier: MIT */
/*
 * Which functions are non-static member functions, which cannot be called
 * without an object. A cv- or ref-qualified one says so in its mangled
 * name; for the others the mangled name is the same whether static or not,
 * and only the DWARF of the file tells: a member function's 'this' is its
 * first, artificial, parameter.
 */
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "elf/elf-internal.h"

enum elf_member elf_member_of(const char *raw)
{
	/* _ZN [r][V][K] [R|O] <prefix>: the qualifiers of 'this'. */
	if (strncmp(raw, "_ZN", 3) != 0)
		return ELF_MEMBER_NO;
	return strchr("rVKRO", raw[3]) && raw[3] ? ELF_MEMBER_YES : ELF_MEMBER_MAYBE;
}

/* Whether subprogram 'die' has a 'this': an object pointer, or a first
 * parameter that is artificial, on it or on the declaration it defines or
 * the abstract instance it is a copy of. */
static bool has_this(Dwarf_Die *die, int depth)
{
	Dwarf_Attribute a;
	Dwarf_Die child, origin;

	if (dwarf_attr(die, DW_AT_object_pointer, &a))
		return true;
	if (dwarf_child(die, &child) == 0) {
		do {
			Dwarf_Attribute art;
			bool artificial = false;

			if (dwarf_tag(&child) != DW_TAG_formal_parameter)
				continue;
			return dwarf_attr_integrate(&child, DW_AT_artificial, &art) &&
			       dwarf_formflag(&art, &artificial) == 0 && artificial;
		} while (dwarf_siblingof(&child, &child) == 0);
	}
	if (depth < 4 &&
	    (dwarf_attr(die, DW_AT_specification, &a) ||
	     dwarf_attr(die, DW_AT_abstract_origin, &a)) &&
	    dwarf_formref_die(&a, &origin))
		return has_this(&origin, depth + 1);
	return false;
}

/* The first symbol at or after addr. */
static size_t first_at(const struct elf_file *ef, uint64_t addr)
{
	size_t lo = 0, hi = ef->nsyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ef->syms[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void mark(struct elf_file *ef, uint64_t addr)
{
	for (size_t i = first_at(ef, addr); i < ef->nsyms && ef->syms[i].addr == addr; i++)
		ef->syms[i].member = ELF_MEMBER_YES;
}

/* The functions of a unit that has DWARF: what the walk does not call a
 * member is not one. Those of units without (a static library built
 * without -g) stay unknown. */
static void described(struct elf_file *ef, Dwarf_Die *cudie)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(cudie, off, &base, &start, &end)) > 0)
		for (size_t i = first_at(ef, start); i < ef->nsyms && ef->syms[i].addr < end; i++)
			if (ef->syms[i].member == ELF_MEMBER_MAYBE)
				ef->syms[i].member = ELF_MEMBER_NO;
}

/* The definitions under 'die' (namespaces, classes, and functions, which
 * may hold local classes). */
static void walk(struct elf_file *ef, Dwarf_Die *die, int depth)
{
	Dwarf_Die child;

	if (depth > 64 || dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_subprogram && has_this(&child, 0)) {
			Dwarf_Addr base, start, end;
			ptrdiff_t off = 0;

			/* Every range, so the entry of a function split in
			 * hot and cold parts too. */
			while ((off = dwarf_ranges(&child, off, &base, &start, &end)) > 0)
				mark(ef, start);
		}
		if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
		    tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
		    tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block)
			walk(ef, &child, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

void elf_read_members(struct elf_file *ef)
{
	bool nested = false;
	Dwarf *dbg;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;

	for (size_t i = 0; i < ef->nsyms; i++) {
		ef->syms[i].member = elf_member_of(ef->syms[i].name);
		nested |= ef->syms[i].member == ELF_MEMBER_MAYBE;
	}
	/* C has no members: its files are not read further. */
	if (!nested || !elf_section_by_name(ef, ".debug_info", NULL))
		return;
	dbg = dwarf_begin_elf(ef->elf, DWARF_C_READ, NULL);
	if (!dbg)
		return;
	while (dwarf_get_units(dbg, cu, &cu, NULL, &unit_type, &cudie, NULL) == 0) {
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial)
			continue;
		described(ef, &cudie);
		walk(ef, &cudie, 0);
	}
	dwarf_end(dbg);
}
