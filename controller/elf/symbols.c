/* SPDX-License-Identifier: MIT */
/* The symbol table of an ELF file: .symtab (or .dynsym), versions,
 * demangled names, and lookups by address and by name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/strutil.h"
#include "elf/elf-internal.h"

static int cmp_sym(const void *a, const void *b)
{
	const struct elf_symbol *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Globals before weak before locals at one address, so that
	 * elf_symbol_at() names a function the way its users know it. */
	if (x->binding != y->binding)
		return x->binding == ELF_BIND_GLOBAL ? -1 :
		       y->binding == ELF_BIND_GLOBAL ? 1 :
		       x->binding == ELF_BIND_WEAK   ? -1 :
						       1;
	return strcmp(x->name, y->name);
}

/*
 * Symbol versions of .dynsym. A library may define one function under
 * several versions (glibc's memcpy@GLIBC_2.2.5 and memcpy@@GLIBC_2.14); the
 * default one keeps its plain name, the others are named "name@VERSION", as
 * the tools print them, so that selecting "memcpy" means what a program
 * linked today calls.
 */
struct versions {
	Elf_Data *versym;
	const char *names[256]; /* by version index; NULL: unknown */
};

static void read_versions(struct elf_file *ef, struct versions *v)
{
	Elf_Scn *scn = NULL;

	*v = (struct versions){ 0 };
	while ((scn = elf_nextscn(ef->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		GElf_Verdef vd;
		GElf_Verdaux va;
		size_t off = 0;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_GNU_versym) {
			v->versym = elf_getdata(scn, NULL);
			continue;
		}
		if (sh.sh_type != SHT_GNU_verdef || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_info && gelf_getverdef(data, (int)off, &vd); i++) {
			if (vd.vd_ndx < 256 && gelf_getverdaux(data, (int)(off + vd.vd_aux), &va))
				v->names[vd.vd_ndx] = elf_strptr(ef->elf, sh.sh_link, va.vda_name);
			if (!vd.vd_next)
				break;
			off += vd.vd_next;
		}
	}
}

/* The version of dynamic symbol i when it is not the default one. */
static const char *hidden_version(const struct versions *v, size_t i)
{
	GElf_Versym vs;

	if (!v->versym || !gelf_getversym(v->versym, (int)i, &vs) || !(vs & 0x8000) ||
	    (vs & 0x7fff) >= 256)
		return NULL;
	return v->names[vs & 0x7fff];
}

enum elf_fn_kind elf_fn_kind_of(const char *raw)
{
	/* The suffixes are dot-separated words after the name, before any
	 * "@VERSION": "f.part.0", "f.isra.0.cold". A mangled name has no dot
	 * of its own. */
	size_t len = strcspn(raw, "@");
	const char *p = memchr(raw, '.', len), *end = raw + len;
	enum elf_fn_kind kind = ELF_FN_PLAIN;

	while (p && p < end) {
		const char *w = p + 1;
		size_t n = strcspn(w, ".@");

		if ((n == 4 && !memcmp(w, "cold", 4)) || (n == 4 && !memcmp(w, "part", 4)))
			return ELF_FN_FRAGMENT;
		if ((n == 9 && !memcmp(w, "constprop", 9)) || (n == 4 && !memcmp(w, "isra", 4)))
			kind = ELF_FN_CLONE;
		p = w + n < end && w[n] == '.' ? w + n : NULL;
	}
	return kind;
}

static int add_symbols(struct elf_file *ef, Elf_Scn *scn, const GElf_Shdr *sh, bool dynamic,
		       size_t *cap)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	struct versions versions = { 0 };
	size_t n;

	if (dynamic)
		read_versions(ef, &versions);

	if (!data || sh->sh_entsize == 0)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym s;
		const char *name;
		int type;

		if (!gelf_getsym(data, (int)i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		if (dynamic && s.st_shndx == SHN_UNDEF && !ef->calls_dlopen) {
			name = elf_strptr(ef->elf, sh->sh_link, s.st_name);
			ef->calls_dlopen = name && (strcmp(name, "dlopen") == 0 ||
						    strcmp(name, "dlmopen") == 0);
		}
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
		    s.st_value == 0)
			continue;
		name = elf_strptr(ef->elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		const char *ver = dynamic ? hidden_version(&versions, i) : NULL;

		if (ver) {
			char *vname;

			if (asprintf(&vname, "%s@%s", name, ver) < 0)
				return -ENOMEM;
			if (strv_push(&ef->owned, vname) < 0) {
				free(vname);
				return -ENOMEM;
			}
			name = vname;
		}
		if (array_grow((void **)&ef->syms, cap, ef->nsyms + 1, sizeof(*ef->syms)) < 0)
			return -ENOMEM;
		ef->syms[ef->nsyms++] = (struct elf_symbol){
			.name = name,
			.addr = s.st_value,
			.size = s.st_size,
			.binding = GELF_ST_BIND(s.st_info) == STB_LOCAL ? ELF_BIND_LOCAL :
				   GELF_ST_BIND(s.st_info) == STB_WEAK	? ELF_BIND_WEAK :
									  ELF_BIND_GLOBAL,
			.dynamic = dynamic,
			.ifunc = type == STT_GNU_IFUNC,
			.kind = elf_fn_kind_of(name),
		};
	}
	return 0;
}

int elf_read_symbols(struct elf_file *ef)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0;
	int r;

	ef->stripped = true;
	while ((scn = elf_nextscn(ef->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) {
			if (sh.sh_type == SHT_SYMTAB)
				ef->stripped = false;
			r = add_symbols(ef, scn, &sh, sh.sh_type == SHT_DYNSYM, &cap);
			if (r < 0)
				return r;
		}
	}
	if (ef->nsyms == 0)
		return 0;
	qsort(ef->syms, ef->nsyms, sizeof(*ef->syms), cmp_sym);

	/* Merge a function listed in both tables into one entry that is
	 * marked dynamic (exported). */
	size_t out = 0;

	for (size_t i = 0; i < ef->nsyms; i++) {
		struct elf_symbol *s = &ef->syms[i];
		bool dup = false;

		for (size_t j = out; j-- > 0 && ef->syms[j].addr == s->addr;) {
			if (strcmp(ef->syms[j].name, s->name) == 0) {
				ef->syms[j].dynamic |= s->dynamic;
				dup = true;
				break;
			}
		}
		if (!dup)
			ef->syms[out++] = *s;
	}
	ef->nsyms = out;
	elf_read_members(ef);

	/* Names are shown to people and written to JSON: a control character
	 * or a byte that is not UTF-8 is escaped (\xNN), in both forms. */
	ef->demangled = calloc(ef->nsyms, sizeof(*ef->demangled));
	ef->escaped = calloc(ef->nsyms, sizeof(*ef->escaped));
	if (!ef->demangled || !ef->escaped)
		return -ENOMEM;
	for (size_t i = 0; i < ef->nsyms; i++) {
		struct elf_symbol *s = &ef->syms[i];

		const char *at = strchr(s->name, '@');

		if (at) {
			char *base = strndup(s->name, (size_t)(at - s->name));
			char *d = base ? elf_demangle(base) : NULL;

			if (d && asprintf(&ef->demangled[i], "%s%s", d, at) < 0)
				ef->demangled[i] = NULL;
			free(d);
			free(base);
		} else {
			ef->demangled[i] = elf_demangle(s->name);
		}
	}
	/* Instances of a generic Rust function that share a demangled name
	 * keep their hashes, so that every function has a name of its own
	 * (by the raw names, not yet escaped). */
	const char **raw = malloc(ef->nsyms * sizeof(*raw));

	if (!raw)
		return -ENOMEM;
	for (size_t i = 0; i < ef->nsyms; i++)
		raw[i] = ef->syms[i].name;
	r = elf_demangle_disambiguate(raw, ef->demangled, ef->nsyms);

	free(raw);
	if (r < 0)
		return r;
	for (size_t i = 0; i < ef->nsyms; i++) {
		struct elf_symbol *s = &ef->syms[i];

		if (ef->demangled[i]) {
			char *e = str_escape(ef->demangled[i]);

			if (e) {
				free(ef->demangled[i]);
				ef->demangled[i] = e;
			}
		}
		ef->escaped[i] = str_escape(s->name);
		if (ef->escaped[i])
			s->name = ef->escaped[i];
		s->demangled = ef->demangled[i] ? ef->demangled[i] : s->name;
	}
	return 0;
}

/* Read everything from ef->elf, which holds the file's image. */

size_t elf_symbol_count(const struct elf_file *ef)
{
	return ef->nsyms;
}

const struct elf_symbol *elf_symbol(const struct elf_file *ef, size_t i)
{
	return i < ef->nsyms ? &ef->syms[i] : NULL;
}

const struct elf_symbol *elf_symbol_at(const struct elf_file *ef, uint64_t addr)
{
	size_t lo = 0, hi = ef->nsyms;

	/* The last symbol starting at or below addr... */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ef->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ...walking back over a run of symbols at the same address to the
	 * preferred one, and over nested sizes to one that holds addr. */
	for (size_t i = lo; i-- > 0;) {
		const struct elf_symbol *s = &ef->syms[i];

		if (s->addr == addr) {
			while (i > 0 && ef->syms[i - 1].addr == addr)
				i--;
			return &ef->syms[i];
		}
		if (addr - s->addr < s->size) {
			while (i > 0 && ef->syms[i - 1].addr == s->addr)
				i--;
			return &ef->syms[i];
		}
		if (s->size != 0 || addr - s->addr > (1u << 20))
			break;
	}
	return NULL;
}

const struct elf_symbol *elf_symbol_by_name(const struct elf_file *ef, const char *name)
{
	const struct elf_symbol *found = NULL;

	for (size_t i = 0; i < ef->nsyms; i++) {
		const struct elf_symbol *s = &ef->syms[i];

		if (strcmp(s->name, name) != 0 && strcmp(s->demangled, name) != 0)
			continue;
		/* A global definition wins over a local of the same name. */
		if (!found || (found->binding == ELF_BIND_LOCAL && s->binding != ELF_BIND_LOCAL))
			found = s;
	}
	return found;
}
