/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_ELF_H
#define BENCHTRAP_ELF_H

/*
 * The ELF layer: everything benchtrap knows about a binary before it runs it.
 *
 * An elf_file is one opened object (executable or shared library): its
 * function symbols (from .symtab, or .dynsym when the file is stripped),
 * demangled names, build-id, whether it is position independent, the
 * benchmarks registered with target-stub, and the libraries it needs.
 *
 * libelf stays inside this module: no libelf type appears here. Functions
 * return 0 or a negative error code (a negated errno, or one of the
 * ELF_E* codes below; elf_strerror() turns either into words) and never
 * print.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Error codes beyond errno, returned negated. */
enum {
	ELF_E_NOT_ELF = 0x10000, /* no ELF magic */
	ELF_E_TRUNCATED,	 /* the headers point past the end of the file */
	ELF_E_CLASS,		 /* 32-bit ELF */
	ELF_E_MACHINE,		 /* ELF for another architecture */
	ELF_E_TYPE,		 /* not an executable or shared object (a .o, a core) */
	ELF_E_REGISTRY,		 /* a malformed target-stub registry */
};

/* What elf_strerror() says for 'err' (negative); for ELF_E_MACHINE and
 * ELF_E_CLASS the file itself is named by elf_describe_foreign(). */
const char *elf_strerror(int err);

enum elf_binding {
	ELF_BIND_LOCAL,
	ELF_BIND_GLOBAL,
	ELF_BIND_WEAK,
};

/*
 * What a function symbol is, by the suffix gcc gives the name of a piece
 * or a copy of a function ("f.cold", "_Z1fl.constprop.0", demangled
 * "f(long) [clone .constprop.0]").
 */
enum elf_fn_kind {
	ELF_FN_PLAIN, /* a function */
	/* a copy specialized for its callers (.constprop.N, .isra.N): it may
	 * ignore arguments or take other ones than its name says */
	ELF_FN_CLONE,
	/* a piece split off a function (.cold, .cold.N, .part.N) that runs in
	 * the middle of it: not a function that can be called */
	ELF_FN_FRAGMENT,
};

/* The kind of the function whose raw symbol name is 'raw' (a fragment when
 * any suffix says so, else a clone when any does). */
enum elf_fn_kind elf_fn_kind_of(const char *raw);

/*
 * Whether a function is a non-static member function of a class, which
 * needs an object ('this') to be called.
 */
enum elf_member {
	ELF_MEMBER_NO, /* not a member function, or a static one */
	/* a non-static member: cv- or ref-qualified by its mangled name
	 * (_ZNK..., _ZNR..., _ZNO...), or so by the file's DWARF */
	ELF_MEMBER_YES,
	/* a function in a namespace or a class, in a file without DWARF: the
	 * mangled name of a member function without qualifiers is the same
	 * whether it is static or not */
	ELF_MEMBER_MAYBE,
};

/* From the raw name alone: YES for a cv- or ref-qualified member function,
 * MAYBE for another nested name (_ZN...), NO otherwise. */
enum elf_member elf_member_of(const char *raw);

/* One function symbol. Addresses are link-time virtual addresses as in the
 * file; for a position-independent object add the load bias to get a
 * run-time address. */
struct elf_symbol {
	const char *name;      /* raw (mangled) name */
	const char *demangled; /* demangled name, or == name when not mangled */
	uint64_t addr;
	uint64_t size;
	enum elf_binding binding;
	bool dynamic; /* found in .dynsym (exported), not only in .symtab */
	bool ifunc;   /* STT_GNU_IFUNC: addr is a resolver that returns the function */
	enum elf_fn_kind kind;
	enum elf_member member;
};

/* One benchmark registered with target-stub's BENCHTRAP(), BENCHTRAP_ARGS()
 * or BENCHTRAP_THREADS(). A parameterized registration yields one
 * elf_bench per argument, a threaded one one per thread count. */
struct elf_bench {
	char *name;	  /* display name: "empty", "fib[20]", "counter[threads=2]" */
	char *base;	  /* registered name without the argument or count: "fib" */
	uint64_t addr;	  /* link-time address of the benchmark function */
	bool has_arg;	  /* called with one integer argument */
	int64_t arg;	  /* that argument */
	unsigned threads; /* BENCHTRAP_THREADS: run on this many threads (1 or more,
			     "counter" when 1 is its only count); 0 otherwise */
	const struct elf_symbol *symbol; /* function symbol at addr, or NULL */
};

struct elf_file;

/* Open 'path' and read its symbols, registry and dynamic section (a
 * malformed registry is not an error here: see elf_registry_error()).
 * Returns -ENOENT, -EISDIR, -EACCES, ELF_E_* and so on. On ELF_E_CLASS or
 * ELF_E_MACHINE, 'ret_what' (if not NULL) receives a static description of
 * what the file is instead ("32-bit ELF", "ELF for AArch64"). */
int elf_open(const char *path, struct elf_file **ret, const char **ret_what);
/* Open an ELF image held in memory (the vDSO read from a child), copied;
 * 'name' is what elf_path() returns. */
int elf_open_memory(const char *name, const void *image, size_t size, struct elf_file **ret);
void elf_close(struct elf_file *ef);

const char *elf_path(const struct elf_file *ef);
/* true for ET_DYN (PIE executables and shared libraries): loaded at a bias */
bool elf_is_pic(const struct elf_file *ef);
/* true when there is no .symtab and symbols come from .dynsym alone */
bool elf_is_stripped(const struct elf_file *ef);
/* true when the file imports dlopen or dlmopen: it may load libraries that
 * are not among those it needs */
bool elf_calls_dlopen(const struct elf_file *ef);
/* true when the file has a PT_INTERP (is started by the dynamic loader) */
bool elf_is_dynamic(const struct elf_file *ef);
/* The ELF entry point (link-time address). */
uint64_t elf_entry(const struct elf_file *ef);
/* Lower-case hex build-id, or NULL when the file has none. */
const char *elf_build_id(const struct elf_file *ef);
/* The program interpreter (PT_INTERP), or NULL for a static binary. */
const char *elf_interp(const struct elf_file *ef);
/* The compiler that built it, from .comment ("GCC: (Debian 12.2.0-14) 12.2.0"), or NULL. */
const char *elf_compiler(const struct elf_file *ef);

/* Function symbols (STT_FUNC and STT_GNU_IFUNC, defined, nonzero address),
 * sorted by address, duplicates of the same name and address removed. */
size_t elf_symbol_count(const struct elf_file *ef);
const struct elf_symbol *elf_symbol(const struct elf_file *ef, size_t i);
/* The function symbol whose [addr, addr + size) holds 'addr', or NULL. */
const struct elf_symbol *elf_symbol_at(const struct elf_file *ef, uint64_t addr);
/* The function symbol named 'name' (raw or demangled), or NULL. */
const struct elf_symbol *elf_symbol_by_name(const struct elf_file *ef, const char *name);

/* 0, or -ELF_E_REGISTRY when the file's benchtrap_registry section is
 * malformed: the file still opens with its symbols, but no benchmark
 * (elf_bench_count() is 0). */
int elf_registry_error(const struct elf_file *ef);

/* The benchmarks registered with target-stub, in registration order. */
size_t elf_bench_count(const struct elf_file *ef);
const struct elf_bench *elf_bench(const struct elf_file *ef, size_t i);

/* DT_NEEDED entries, in order, as written in the file ("liblzma.so.5"). */
size_t elf_needed_count(const struct elf_file *ef);
const char *elf_needed(const struct elf_file *ef, size_t i);

/* Map a link-time virtual address to a file offset through the PT_LOAD
 * segments; -EFAULT when no segment holds it. */
int elf_vaddr_to_offset(const struct elf_file *ef, uint64_t vaddr, uint64_t *ret_offset);

/* How the libraries of a binary were found. */
enum elf_libs_how {
	ELF_LIBS_NONE,	    /* not looked for (elf_scope_open without libs) */
	ELF_LIBS_STATIC,    /* no PT_INTERP: a static binary loads no library */
	ELF_LIBS_LOADER,    /* listed by the binary's own dynamic loader */
	ELF_LIBS_SEARCHED,  /* its loader could not be asked (not glibc's, or it
			       failed): searched for as the loader searches */
	ELF_LIBS_NO_INTERP, /* its PT_INTERP is not on this machine: it cannot
			       run here, and no library was looked for */
};

/*
 * The libraries 'ef' loads, in the loader's order, as its own dynamic
 * loader resolves them: the PT_INTERP started on the binary in trace mode
 * (LD_TRACE_LOADED_OBJECTS=1, what ldd does; nothing of the program runs),
 * with the controller's environment, so LD_LIBRARY_PATH and LD_PRELOAD
 * count as they would for the program. Only glibc's loader, owned by root
 * and writable by no one else, is started.
 *
 * Returns -ENOENT when the interpreter does not exist, -ENOEXEC when it is
 * not such a loader or failed, -ETIMEDOUT when it hung, -EINVAL for a static
 * binary or one in memory. On success *ret_libs is an array of *ret_n
 * opened libraries, named by their real paths (the caller closes each and
 * frees the array), and *ret_missing the names the loader did not find
 * (NULL-terminated; free with elf_strv_free).
 */
int elf_loader_needed(const struct elf_file *ef, struct elf_file ***ret_libs, size_t *ret_n,
		      char ***ret_missing);

/*
 * The same found without the loader, by following its search order:
 * DT_RPATH (when there is no DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH,
 * /etc/ld.so.cache's directories (/etc/ld.so.conf and its includes) and
 * the default directories, taking only objects of the same class and
 * machine, $ORIGIN expanded, breadth first. It does not know the
 * glibc-hwcaps/ and hardware-capability subdirectories or LD_PRELOAD.
 */
int elf_search_needed(const struct elf_file *ef, struct elf_file ***ret_libs, size_t *ret_n,
		      char ***ret_missing);

/*
 * elf_loader_needed(), or elf_search_needed() when the loader cannot be
 * asked; nothing (and no error) for a static binary or a missing
 * interpreter. *ret_how (if not NULL) says which.
 */
int elf_resolve_needed(const struct elf_file *ef, struct elf_file ***ret_libs, size_t *ret_n,
		       char ***ret_missing, enum elf_libs_how *ret_how);
void elf_strv_free(char **v);

/*
 * The binary and the libraries it needs, in the loader's search order: what
 * a symbol name can refer to. objs[0] is the binary (borrowed, not closed by
 * elf_scope_close); with 'libs' false it is alone.
 */
struct elf_scope {
	struct elf_file **objs;
	size_t n;
	char **missing; /* sonames not found, NULL-terminated */
	enum elf_libs_how how;
};

int elf_scope_open(struct elf_file *binary, bool libs, struct elf_scope *ret);
void elf_scope_close(struct elf_scope *s);
/* Every function's demangled name in the scope (pointers into it), for
 * suggestions: a malloc'ed array of *ret_n entries, or NULL. */
const char **elf_scope_names(const struct elf_scope *s, size_t *ret_n);

/* Demangle a C++ (Itanium) or Rust (legacy or v0) symbol name. Returns a
 * malloc'ed string, or NULL when 'name' is not mangled. */
char *elf_demangle(const char *name);

/* A Rust legacy name demangled with its hash kept
 * ("crate::f::h0123456789abcdef"), malloc'ed; NULL for any other name. */
char *elf_demangle_hashed(const char *name);

/*
 * Make the demangled names of one file's functions tell them apart: the
 * instances of a generic Rust function, mangled the legacy way, demangle to
 * one name ("crate::f") and differ only by the hash of their raw names, so
 * each of a run of equal demangled names from two or more raw names keeps
 * its hash ("crate::f::h0123456789abcdef") when it has one.
 * 'demangled[i]' is the malloc'ed demangled form of raw[i], or NULL when it
 * is not mangled; names are replaced in place. 0 or -ENOMEM (some names
 * may then be replaced, each still valid).
 */
int elf_demangle_disambiguate(const char *const *raw, char **demangled, size_t n);

#endif
