/* SPDX-License-Identifier: MIT */
/*
 * The target-stub registry, read from the file alone.
 *
 * Every BENCHTRAP()/BENCHTRAP_ARGS()/BENCHTRAP_THREADS() emits one 32-byte
 * record into the section "benchtrap_registry" (see target-stub/benchtrap.h):
 *
 *   0  u32 magic           4  u32 nargs
 *   8  name  (char *)     16  fn (code address)     24  args (int64_t *)
 *
 * magic "BTR1": nargs arguments in args, one benchmark each ("fib[20]"), or
 * none (nargs 0, "empty"). magic "BTT1" (BENCHTRAP_THREADS): nargs > 0
 * thread counts in args, each from 1 to MAX_THREADS, one benchmark each
 * ("counter[threads=2]"; "counter" when the counts are 1 alone), a count
 * given twice listed once. Files written before "BTT1" existed hold "BTR1"
 * records only and read as they always did.
 *
 * The pointers are link-time addresses. In a fixed-address executable they
 * are stored in place; in a PIE or static-PIE each one has a dynamic
 * relocation (R_X86_64_RELATIVE: the value is the addend; with packed
 * DT_RELR relocations the value is stored in place again), so we look each
 * pointer up in the RELA sections first.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "elf/elf-internal.h"
#include "util/strutil.h"

#define REGISTRY_SECTION "benchtrap_registry"
#define REGISTRY_MAGIC 0x31525442u	   /* "BTR1" little-endian */
#define REGISTRY_MAGIC_THREADS 0x31545442u /* "BTT1" */
#define RECORD_SIZE 32
#define MAX_NAME 256
#define MAX_ARGS 4096
/* Beyond any machine's threads: a larger count is garbage, not a wish
 * (the command line refuses those above MEASURE_MAX_THREADS, saying so). */
#define MAX_THREADS 4096

#ifndef R_AARCH64_RELATIVE
#define R_AARCH64_RELATIVE 1027
#endif
#ifndef R_AARCH64_ABS64
#define R_AARCH64_ABS64 257
#endif

/* The relocated pointers inside the registry section, sorted by offset. */
struct reloc {
	uint64_t offset, value;
};

struct relocs {
	struct reloc *v;
	size_t n;
};

static int cmp_reloc(const void *a, const void *b)
{
	const struct reloc *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/*
 * One pass over the RELA sections, keeping the entries that land in
 * [lo, hi): a binary with many registrations and many relocations costs
 * O(R + B log B), not O(R * B).
 */
static int collect_relocs(struct elf_file *ef, uint64_t lo, uint64_t hi, struct relocs *ret)
{
	struct relocs rs = { 0 };
	size_t cap = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf_Data *data;

	while ((data = elf_next_section_data(ef, &scn, SHT_RELA, &sh))) {
		Elf_Data *symdata = NULL;

		if (sh.sh_entsize == 0)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela rela;
			GElf_Sym sym;
			uint64_t value;
			unsigned type;

			if (!gelf_getrela(data, (int)i, &rela) || rela.r_offset < lo ||
			    rela.r_offset >= hi)
				continue;
			type = GELF_R_TYPE(rela.r_info);
			if (type == R_X86_64_RELATIVE || type == R_AARCH64_RELATIVE) {
				value = (uint64_t)rela.r_addend;
			} else if (type == R_X86_64_64 || type == R_AARCH64_ABS64) {
				/* Symbolic: symbol value plus addend. */
				if (!symdata) {
					Elf_Scn *symscn = elf_getscn(ef->elf, sh.sh_link);

					symdata = symscn ? elf_getdata(symscn, NULL) : NULL;
				}
				if (!symdata ||
				    !gelf_getsym(symdata, (int)GELF_R_SYM(rela.r_info), &sym))
					continue;
				value = sym.st_value + (uint64_t)rela.r_addend;
			} else {
				continue;
			}
			if (array_grow((void **)&rs.v, &cap, rs.n + 1, sizeof(*rs.v)) < 0) {
				free(rs.v);
				return -ENOMEM;
			}
			rs.v[rs.n++] = (struct reloc){ rela.r_offset, value };
		}
	}
	if (rs.n)
		qsort(rs.v, rs.n, sizeof(*rs.v), cmp_reloc);
	*ret = rs;
	return 0;
}

/* The relocated value of the pointer stored at 'vaddr', if relocated. */
static bool reloc_value(const struct relocs *rs, uint64_t vaddr, uint64_t *ret)
{
	size_t lo = 0, hi = rs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rs->v[mid].offset == vaddr) {
			*ret = rs->v[mid].value;
			return true;
		}
		if (rs->v[mid].offset < vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static uint64_t read_pointer(const struct relocs *rs, const unsigned char *rec, uint64_t rec_vaddr,
			     size_t field)
{
	uint64_t v;

	if (reloc_value(rs, rec_vaddr + field, &v))
		return v;
	memcpy(&v, rec + field, sizeof(v));
	return v;
}

static int read_string(const struct elf_file *ef, uint64_t vaddr, char **ret)
{
	char buf[MAX_NAME + 1];
	size_t n = 0;

	for (; n < sizeof(buf); n++) {
		if (elf_read_vaddr(ef, vaddr + n, &buf[n], 1) < 0)
			return -ELF_E_REGISTRY;
		if (buf[n] == '\0')
			break;
	}
	if (n == 0 || n == sizeof(buf) || !str_is_printable(buf))
		return -ELF_E_REGISTRY;
	*ret = strdup(buf);
	return *ret ? 0 : -ENOMEM;
}

/* One benchmark of registration 'base': with an argument, at a thread
 * count (threads > 0, named unless 'plain'), or neither. */
static int push_bench(struct elf_file *ef, const char *base, uint64_t addr, bool has_arg,
		      int64_t arg, unsigned threads, bool plain, size_t *cap)
{
	struct elf_bench *b;
	int r;

	if (array_grow((void **)&ef->benches, cap, ef->nbenches + 1, sizeof(*ef->benches)) < 0)
		return -ENOMEM;
	b = &ef->benches[ef->nbenches];
	*b = (struct elf_bench){ .addr = addr, .has_arg = has_arg, .arg = arg, .threads = threads };
	b->base = strdup(base);
	if (has_arg)
		r = asprintf(&b->name, "%s[%" PRId64 "]", base, arg);
	else if (threads && !plain)
		r = asprintf(&b->name, "%s[threads=%u]", base, threads);
	else
		r = (b->name = strdup(base)) ? 0 : -1;
	if (!b->base || r < 0) {
		free(b->base);
		if (r >= 0)
			free(b->name);
		return -ENOMEM;
	}
	b->symbol = elf_symbol_at(ef, addr);
	if (b->symbol && b->symbol->addr != addr)
		b->symbol = NULL;
	ef->nbenches++;
	return 0;
}

/* The benchmarks of a BENCHTRAP_THREADS record: one per distinct count of
 * the nargs at args_ptr, in their order. */
static int push_threads(struct elf_file *ef, const char *name, uint64_t fn, uint64_t args_ptr,
			uint32_t nargs, size_t *cap)
{
	unsigned *counts = calloc(nargs, sizeof(*counts));
	size_t n = 0;
	int r = 0;

	if (!counts)
		return -ENOMEM;
	for (uint32_t i = 0; i < nargs && r == 0; i++) {
		int64_t v;
		bool seen = false;

		if (elf_read_vaddr(ef, args_ptr + 8 * i, &v, sizeof(v)) < 0 || v < 1 ||
		    v > MAX_THREADS) {
			r = -ELF_E_REGISTRY;
			break;
		}
		for (size_t j = 0; j < n; j++)
			seen = seen || counts[j] == (unsigned)v;
		if (!seen)
			counts[n++] = (unsigned)v;
	}
	for (size_t i = 0; i < n && r == 0; i++)
		r = push_bench(ef, name, fn, false, 0, counts[i], n == 1 && counts[0] == 1, cap);
	free(counts);
	return r;
}

int elf_read_registry(struct elf_file *ef)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_section_by_name(ef, REGISTRY_SECTION, &sh);
	struct relocs relocs = { 0 };
	Elf_Data *data;
	size_t cap = 0;
	int r = 0;

	if (!scn)
		return 0;
	if (sh.sh_type == SHT_NOBITS || sh.sh_size % RECORD_SIZE != 0)
		return -ELF_E_REGISTRY;
	data = elf_rawdata(scn, NULL);
	if (!data || data->d_size != sh.sh_size)
		return -ELF_E_REGISTRY;
	if (ef->ehdr.e_type == ET_DYN) {
		r = collect_relocs(ef, sh.sh_addr, sh.sh_addr + sh.sh_size, &relocs);
		if (r < 0)
			return r;
	}

	for (size_t off = 0; off < sh.sh_size && r == 0; off += RECORD_SIZE) {
		const unsigned char *rec = (const unsigned char *)data->d_buf + off;
		uint64_t vaddr = sh.sh_addr + off, name_ptr, fn, args_ptr;
		uint32_t magic, nargs;
		char *name = NULL;

		memcpy(&magic, rec, 4);
		memcpy(&nargs, rec + 4, 4);
		if ((magic != REGISTRY_MAGIC && magic != REGISTRY_MAGIC_THREADS) ||
		    nargs > MAX_ARGS || (magic == REGISTRY_MAGIC_THREADS && nargs == 0)) {
			r = -ELF_E_REGISTRY;
			break;
		}
		name_ptr = read_pointer(&relocs, rec, vaddr, 8);
		fn = read_pointer(&relocs, rec, vaddr, 16);
		args_ptr = read_pointer(&relocs, rec, vaddr, 24);
		r = read_string(ef, name_ptr, &name);
		if (r < 0)
			break;
		if (magic == REGISTRY_MAGIC_THREADS) {
			r = push_threads(ef, name, fn, args_ptr, nargs, &cap);
		} else if (nargs == 0) {
			r = push_bench(ef, name, fn, false, 0, 0, false, &cap);
		} else {
			for (uint32_t i = 0; i < nargs && r == 0; i++) {
				int64_t arg;

				r = elf_read_vaddr(ef, args_ptr + 8 * i, &arg, sizeof(arg));
				if (r < 0)
					r = -ELF_E_REGISTRY;
				else
					r = push_bench(ef, name, fn, true, arg, 0, false, &cap);
			}
		}
		free(name);
	}
	free(relocs.v);
	return r;
}
