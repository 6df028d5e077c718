// SPDX-License-Identifier: MIT
/*
 * Arming an observing session (session.h): the selected functions of every
 * object mapped into the process get an entry breakpoint, once their code
 * in memory is checked against the file; objects unmapped are disarmed.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/array.h"
#include "util/match.h"
#include "util/procmaps.h"
#include "observe/session.h"

static void touch(struct session *s, uint64_t addr)
{
	for (size_t i = 0; i < s->ntouched; i++)
		if (s->touched[i] == addr)
			return;
	if (array_grow((void **)&s->touched, &s->captouched, s->ntouched + 1, sizeof(*s->touched)) <
	    0)
		return;
	s->touched[s->ntouched++] = addr;
}

int observe_bp_insert(struct session *s, uint64_t addr)
{
	int r = trace_bp_insert(s->p, addr);

	if (r == 0 && s->attached)
		touch(s, addr);
	return r;
}

/* ---- functions and entries -------------------------------------------------- */

const struct entry *observe_entry_find(const struct session *s, uint64_t addr)
{
	size_t lo = array_lower_bound_u64(s->entries, s->nentries, sizeof(*s->entries),
					  offsetof(struct entry, addr), addr);

	return lo < s->nentries && s->entries[lo].addr == addr ? &s->entries[lo] : NULL;
}

int observe_entry_add(struct session *s, uint64_t addr, uint32_t func)
{
	size_t i = 0;

	if (array_grow((void **)&s->entries, &s->capentries, s->nentries + 1, sizeof(*s->entries)) <
	    0)
		return -ENOMEM;
	while (i < s->nentries && s->entries[i].addr < addr)
		i++;
	memmove(&s->entries[i + 1], &s->entries[i], (s->nentries - i) * sizeof(*s->entries));
	s->entries[i] = (struct entry){ addr, func };
	s->nentries++;
	return 0;
}

void observe_entry_del(struct session *s, uint64_t addr)
{
	for (size_t i = 0; i < s->nentries; i++) {
		if (s->entries[i].addr == addr) {
			memmove(&s->entries[i], &s->entries[i + 1],
				(s->nentries - i - 1) * sizeof(*s->entries));
			s->nentries--;
			return;
		}
	}
}

int observe_func_add(struct session *s, const char *name, const char *symbol, const char *object,
		     uint64_t addr, bool skip, uint32_t *ret)
{
	struct func *f;

	if (array_grow((void **)&s->funcs, &s->capfuncs, s->nfuncs + 1, sizeof(*s->funcs)) < 0)
		return -ENOMEM;
	f = &s->funcs[s->nfuncs];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	f->symbol = symbol ? strdup(symbol) : NULL;
	f->object = strdup(object);
	f->addr = addr;
	f->skip = skip;
	if (!f->name || !f->object || (symbol && !f->symbol)) {
		free(f->name);
		free(f->symbol);
		free(f->object);
		return -ENOMEM;
	}
	*ret = (uint32_t)s->nfuncs++;
	return 0;
}

/* ---- objects: arming what is mapped ----------------------------------------- */

/* The file bytes behind run-time address 'addr' of object o. */
static int file_bytes(struct obj *o, uint64_t addr, void *buf, size_t len)
{
	uint64_t bias = elf_is_pic(o->ef) ? o->base : 0, off;
	ssize_t n;
	int fd, r;

	r = elf_vaddr_to_offset(o->ef, addr - bias, &off);
	if (r < 0)
		return r;
	fd = open(o->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, buf, len, (off_t)off);
	close(fd);
	return n == (ssize_t)len ? 0 : -EIO;
}

static bool matches_any(const char *const *pats, size_t n, const struct elf_symbol *sym, bool *hit)
{
	bool any = false;

	/* A piece of a function (.cold, .part) is part of the function's
	 * call, and a pattern that names the function ("f") matches it too;
	 * a .cold piece is entered by a jump, without a return address of its
	 * own to bound a call by. */
	if (sym->kind == ELF_FN_FRAGMENT)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (match_function(pats[i], sym->name, sym->demangled)) {
			any = true;
			if (hit)
				hit[i] = true;
		}
	}
	return any;
}

static bool func_at(const struct session *s, uint64_t addr)
{
	if (observe_entry_find(s, addr))
		return true;
	/* A function that could not be armed has no entry, but its row; a
	 * patched one neither. */
	for (size_t i = 0; i < s->nfuncs; i++)
		if ((s->funcs[i].unarmed || s->funcs[i].fast) && s->funcs[i].addr == addr)
			return true;
	return false;
}

/*
 * Why the code at run-time address 'addr' of object o cannot carry an entry
 * breakpoint, or NULL when it is the file's: otherwise the load address was
 * guessed wrong, or something changed the code in memory, and a trap would
 * corrupt it. A trap instruction over the file's first bytes is another
 * program's breakpoint: a debugger's, or a kernel uprobe (perf probe,
 * bpftrace), which the kernel writes into every process that maps the file,
 * including those started later. Its hits never reach a tracer.
 */
static const char *code_mismatch(struct session *s, struct obj *o, uint64_t addr)
{
	uint8_t mem[VERIFY_LEN], file[VERIFY_LEN];

	_Static_assert(VERIFY_LEN >= ARCH_TRAP_MAX, "VERIFY_LEN holds a trap");
	if (trace_read(s->p, addr, mem, sizeof(mem)) < 0)
		return "its code in memory could not be read";
	if (file_bytes(o, addr, file, sizeof(file)) < 0)
		return "its code could not be read from the file";
	if (!memcmp(mem, file, sizeof(mem)))
		return NULL;
	if (!memcmp(mem, arch_trap_insn, arch_trap_len) &&
	    !memcmp(mem + arch_trap_len, file + arch_trap_len, sizeof(mem) - arch_trap_len))
		return "another program's breakpoint is at its entry (a debugger's, or a kernel "
		       "uprobe such as perf probe or bpftrace set), whose hits never reach "
		       "benchtrap";
	return "its code in memory differs from the file (patched at run time)";
}

/*
 * Functions a patched entry would break, by name: those that return twice
 * (the second return finds its frame gone: setjmp saved the exit stub's
 * address, a vfork child returned through it first) or switch stacks
 * under their caller, and those entered other than by a call.
 */
static const char *const unpatchable[] = {
	"setjmp",
	"_setjmp",
	"__setjmp",
	"sigsetjmp",
	"__sigsetjmp",
	"savectx",
	"vfork",
	"__vfork",
	"getcontext",
	"__getcontext",
	"swapcontext",
	"__swapcontext",
	"setcontext",
	"__setcontext",
	"_start",
	"_dl_start",
	"_dl_start_user",
	"__restore_rt",
	"_dl_runtime_resolve*",
	"_dl_runtime_profile*",
	"__clone*",
	"clone*",
};

static bool returns_oddly(const char *name)
{
	for (size_t i = 0; i < sizeof(unpatchable) / sizeof(unpatchable[0]); i++)
		if (!fnmatch(unpatchable[i], name, 0))
			return true;
	return false;
}

/* Largest function whose code is read whole to patch it. */
#define PATCH_MAX_SIZE (1u << 20)

/* Largest object code scanned whole for jumps (a larger one's functions
 * keep breakpoints). */
#define SCAN_MAX_SIZE (256u << 20)

/* Object o's rel32 jump targets (arch_jump_targets), built the first
 * time a function of it is to be patched. */
static int object_targets(struct obj *o, uint64_t bias)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	uint8_t *code;
	int r;

	if (o->jt_built)
		return o->jt_failed ? -EIO : 0;
	o->jt_built = true;
	o->jt_failed = true;
	for (size_t i = 0; i < elf_symbol_count(o->ef); i++) {
		const struct elf_symbol *sym = elf_symbol(o->ef, i);

		if (!sym->size)
			continue;
		if (sym->addr < lo)
			lo = sym->addr;
		if (sym->addr + sym->size > hi)
			hi = sym->addr + sym->size;
	}
	if (lo >= hi || hi - lo > SCAN_MAX_SIZE)
		return -EFBIG;
	code = malloc(hi - lo);
	if (!code)
		return -ENOMEM;
	r = file_bytes(o, bias + lo, code, hi - lo);
	if (r == 0)
		r = arch_jump_targets(code, hi - lo, bias + lo, &o->jt, &o->njt);
	free(code);
	if (r == 0)
		o->jt_failed = false;
	return r;
}

/* Whether a direct jump of the functions just before and after 'sym'
 * (decoded whole) lands in (lo, hi): a short jump reaches 128 bytes. */
static bool neighbour_jumps_into(struct obj *o, uint64_t bias, const struct elf_symbol *sym,
				 uint64_t lo, uint64_t hi)
{
	const struct elf_symbol *prev = NULL, *next = NULL;

	for (size_t i = 0; i < elf_symbol_count(o->ef); i++) {
		const struct elf_symbol *c = elf_symbol(o->ef, i);

		if (!c->size || c->addr == sym->addr)
			continue;
		if (c->addr < sym->addr && (!prev || c->addr > prev->addr))
			prev = c;
		if (c->addr > sym->addr && (!next || c->addr < next->addr))
			next = c;
	}
	for (int k = 0; k < 2; k++) {
		const struct elf_symbol *n = k ? next : prev;
		uint8_t *code;
		bool hit;

		if (!n || n->size > PATCH_MAX_SIZE)
			continue;
		if (k ? n->addr > sym->addr + sym->size + 256 : n->addr + n->size + 256 < sym->addr)
			continue; /* beyond a short jump's reach */
		code = malloc(n->size);
		if (!code)
			return true;
		hit = file_bytes(o, bias + n->addr, code, n->size) < 0 ||
		      arch_patch_jumps_into(code, n->size, bias + n->addr, lo, hi);
		free(code);
		if (hit)
			return true;
	}
	return false;
}

/*
 * Patch function 'sym' of object o, at 'addr' and just added as funcs[fi]:
 * its entry jumps to a trampoline (fast.c). Otherwise its row says why it
 * has breakpoints instead, and a negative errno is returned.
 */
static int arm_patched(struct session *s, struct obj *o, const struct elf_symbol *sym, uint32_t fi,
		       uint64_t addr)
{
	struct func *f = &s->funcs[fi];
	struct arch_patch pt;
	char why[192] = "";
	const char *w = NULL;
	uint8_t *code = NULL;
	uint64_t at;
	int r;

	if (returns_oddly(sym->name)) {
		w = "it returns twice, switches stacks or is not entered by a call (setjmp, "
		    "vfork, the context functions, the loader's and the kernel's entry points)";
		r = -EINVAL;
		goto out;
	}
	if (!sym->size) {
		w = "its size is unknown (its symbol has none), so its code cannot be checked";
		r = -EINVAL;
		goto out;
	}
	if (sym->size > PATCH_MAX_SIZE) {
		w = "it is too large to check its code";
		r = -EFBIG;
		goto out;
	}
	code = malloc(sym->size);
	if (!code)
		return -ENOMEM;
	r = file_bytes(o, addr, code, sym->size);
	if (r < 0) {
		w = "its code could not be read from the file";
		goto out;
	}
	r = observe_fast_slot(s, o, &at);
	if (r < 0) {
		w = "no room for a trampoline within reach of its code";
		goto out;
	}
	r = arch_patch_plan(code, sym->size, addr, at, &pt, why, sizeof(why));
	if (r < 0)
		goto out;
	{
		uint64_t bias = elf_is_pic(o->ef) ? o->base : 0;

		r = object_targets(o, bias);
		if (r < 0) {
			w = "its object's code could not be scanned for jumps into its first bytes";
			goto out;
		}
		if (arch_targets_into(o->jt, o->njt, addr, addr + pt.displaced) ||
		    neighbour_jumps_into(o, bias, sym, addr, addr + pt.displaced)) {
			snprintf(why, sizeof(why),
				 "a jump from elsewhere may land in its first %zu bytes",
				 pt.displaced);
			r = -EINVAL;
			goto out;
		}
	}
	r = observe_fast_install(s, o, fi, at, &pt, &w);
	if (r == 0 && s->attached)
		touch(s, addr);
out:
	free(code);
	if (r < 0 && (w || why[0]))
		f->fallback = strdup(w ? w : why);
	return r;
}

/* Function 'sym' of object o, at 'addr' and just added as funcs[fi] (the
 * last), is selected but cannot be armed: its row says why, and the
 * results' diagnostics too. */
static void unarmed(struct session *s, struct obj *o, const struct elf_symbol *sym, uint32_t fi,
		    const char *why)
{
	struct func *f = &s->funcs[fi];

	observe_diagnose(s, "%s in %s was not armed: %s", sym->demangled, o->path, why);
	if (asprintf(&f->unarmed, "not armed, none of its calls was observed: %s", why) >= 0)
		return;
	/* Without its reason the row would pass for never called. */
	free(f->name);
	free(f->symbol);
	free(f->object);
	s->nfuncs--;
}

static void arm_object(struct session *s, struct obj *o)
{
	uint64_t bias;

	o->armed = true;
	if (!o->opened) {
		o->opened = true;
		if (elf_open(o->path, &o->ef, NULL) < 0)
			o->ef = NULL;
	}
	if (!o->ef)
		return;
	bias = elf_is_pic(o->ef) ? o->base : 0;
	if (!s->dl_notify) {
		const struct elf_symbol *dl = elf_symbol_by_name(o->ef, "_dl_debug_state");

		if (dl && observe_bp_insert(s, bias + dl->addr) == 0)
			s->dl_notify = bias + dl->addr;
	}
	if (s->agent) {
		static const char *const starts[] = { "_Unwind_RaiseException",
						      "_Unwind_ForcedUnwind",
						      "_Unwind_Resume_or_Rethrow" };

		for (size_t k = 0; k < 3; k++) {
			const struct elf_symbol *u = elf_symbol_by_name(o->ef, starts[k]);

			if (u && !s->unwind_start[k] && observe_bp_insert(s, bias + u->addr) == 0)
				s->unwind_start[k] = bias + u->addr;
		}
		{
			const struct elf_symbol *c = elf_symbol_by_name(o->ef, "__cxa_begin_catch");

			if (c && !s->unwind_catch && observe_bp_insert(s, bias + c->addr) == 0)
				s->unwind_catch = bias + c->addr;
		}
	}
	for (size_t i = 0; i < elf_symbol_count(o->ef); i++) {
		const struct elf_symbol *sym = elf_symbol(o->ef, i);
		uint64_t addr = bias + sym->addr;
		const char *why;
		bool skip;
		uint32_t fi;
		int r;

		skip = matches_any(s->o->skips, s->o->nskips, sym, NULL);
		if (!skip && !matches_any(s->o->symbols, s->o->nsymbols, sym, s->pattern_hit))
			continue;
		if (func_at(s, addr))
			continue; /* another name of a function armed already */
		if (observe_func_add(s, sym->demangled, sym->name, o->path, addr, skip, &fi) < 0) {
			observe_diagnose(s, "out of memory while arming %s", sym->demangled);
			return;
		}
		/* Every selected function keeps a row, armed or not. */
		why = code_mismatch(s, o, addr);
		if (why) {
			unarmed(s, o, sym, fi, why);
			continue;
		}
		if (s->agent && !skip) {
			r = arm_patched(s, o, sym, fi, addr);
			if (r == -ENOMEM) {
				observe_diagnose(s, "out of memory while arming %s",
						 sym->demangled);
				return;
			}
			if (r == 0) {
				s->funcs[fi].armed = true;
				continue;
			}
		}
		r = observe_bp_insert(s, addr);
		if (r == 0) {
			r = observe_entry_add(s, addr, fi);
			if (r < 0)
				trace_bp_remove(s->p, addr);
		}
		if (r < 0) {
			unarmed(s, o, sym, fi, "its breakpoint could not be written");
			continue;
		}
		s->funcs[fi].armed = true;
	}
}

/* An object went away (dlclose): its breakpoints vanished with its code. */
static void disarm_object(struct session *s, struct obj *o)
{
	for (size_t i = 0; i < s->nfuncs; i++) {
		struct func *f = &s->funcs[i];

		if (!f->armed || f->addr < o->lo || f->addr >= o->hi)
			continue;
		f->armed = false;
		if (f->fast)
			continue;
		trace_bp_forget(s->p, f->addr);
		observe_entry_del(s, f->addr);
	}
	observe_fast_forget(s, o->lo, o->hi);
	for (size_t k = 0; k < 3; k++)
		if (s->unwind_start[k] >= o->lo && s->unwind_start[k] < o->hi) {
			trace_bp_forget(s->p, s->unwind_start[k]);
			s->unwind_start[k] = 0;
		}
	if (s->unwind_catch >= o->lo && s->unwind_catch < o->hi) {
		trace_bp_forget(s->p, s->unwind_catch);
		s->unwind_catch = 0;
	}
	if (s->dl_notify >= o->lo && s->dl_notify < o->hi) {
		trace_bp_forget(s->p, s->dl_notify);
		s->dl_notify = 0;
	}
}

/* Read the maps again: arm new objects, disarm vanished ones. */
int observe_scan_maps(struct session *s)
{
	struct observe_object *v = NULL;
	size_t n = 0;
	char *text;
	int r;

	r = procmaps_read(s->pid, &text);
	if (r < 0)
		return r;
	r = observe_parse_maps(text, &v, &n);
	free(text);
	if (r < 0)
		return r;
	for (size_t i = 0; i < s->nobjs; i++)
		s->objs[i].present = false;
	for (size_t i = 0; i < n; i++) {
		struct obj *o = NULL;

		for (size_t j = 0; j < s->nobjs && !o; j++)
			if (!strcmp(s->objs[j].path, v[i].path) && s->objs[j].base == v[i].base)
				o = &s->objs[j];
		if (!o) {
			struct obj *nv = realloc(s->objs, (s->nobjs + 1) * sizeof(*nv));

			if (!nv) {
				r = -ENOMEM;
				break;
			}
			s->objs = nv;
			o = &s->objs[s->nobjs++];
			memset(o, 0, sizeof(*o));
			o->path = v[i].path;
			v[i].path = NULL;
			o->base = v[i].base;
		}
		o->lo = v[i].lo;
		o->hi = v[i].hi;
		o->present = true;
		if (!o->armed && v[i].exec)
			arm_object(s, o);
	}
	for (size_t i = 0; i < s->nobjs; i++) {
		if (s->objs[i].armed && !s->objs[i].present) {
			disarm_object(s, &s->objs[i]);
			s->objs[i].armed = false;
		}
	}
	observe_objects_free(v, n);
	return r;
}

static struct obj *obj_at(struct session *s, uint64_t addr)
{
	for (size_t i = 0; i < s->nobjs; i++)
		if (s->objs[i].present && addr >= s->objs[i].lo && addr < s->objs[i].hi)
			return &s->objs[i];
	return NULL;
}

/* Attached: with every breakpoint removed, the code must be the files'. */
void observe_verify_code(struct session *s)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)s->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	observe_scan_maps(s);
	for (size_t i = 0; i < s->ntouched; i++) {
		uint8_t mem[VERIFY_LEN], file[VERIFY_LEN];
		struct obj *o = obj_at(s, s->touched[i]);

		if (!o || !o->ef)
			continue;
		if (pread(fd, mem, sizeof(mem), (off_t)s->touched[i]) != (ssize_t)sizeof(mem) ||
		    file_bytes(o, s->touched[i], file, sizeof(file)) < 0)
			continue;
		s->res->restored_bytes += sizeof(mem);
		if (memcmp(mem, file, sizeof(mem)))
			s->res->restored_mismatch++;
	}
	close(fd);
}
