// SPDX-License-Identifier: MIT
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdwfl.h>
#include <libunwind-ptrace.h>

#include "elf/elf.h"
#include "unwind/unwind.h"

static void copy_str(char *dst, size_t size, const char *src)
{
	if (!src)
		src = "";
	snprintf(dst, size, "%s", src);
}

static Dwfl *dwfl_for(pid_t pid)
{
	static const Dwfl_Callbacks callbacks = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
	};
	Dwfl *dwfl = dwfl_begin(&callbacks);

	if (!dwfl)
		return NULL;
	if (dwfl_linux_proc_report(dwfl, pid) != 0 || dwfl_report_end(dwfl, NULL, NULL) != 0) {
		dwfl_end(dwfl);
		return NULL;
	}
	return dwfl;
}

/*
 * Name the code at 'pc'. 'lookup' is the address to look up: pc itself for
 * the innermost frame, pc - 1 for callers (a return address may be the first
 * byte after the calling function). Returns false when no module covers it.
 */
static bool symbolize(Dwfl *dwfl, uint64_t pc, uint64_t lookup, struct unwind_frame *f)
{
	Dwfl_Module *mod;
	GElf_Sym sym;
	GElf_Off off = 0;
	const char *name, *modname;
	Dwfl_Line *line;

	memset(f, 0, sizeof(*f));
	f->pc = pc;
	if (!dwfl)
		return true;
	mod = dwfl_addrmodule(dwfl, lookup);
	if (!mod)
		return false;
	modname = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	copy_str(f->module, sizeof(f->module), modname);
	name = dwfl_module_addrinfo(mod, lookup, &off, &sym, NULL, NULL, NULL);
	if (name) {
		copy_str(f->func, sizeof(f->func), name);
		f->name = name;
		f->offset = off + (pc - lookup);
	}
	line = dwfl_module_getsrc(mod, lookup);
	if (line) {
		int lineno = 0;
		const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

		copy_str(f->file, sizeof(f->file), file);
		f->line = lineno;
	}
	return true;
}

const char *unwind_frame_name(const struct unwind_frame *f)
{
	return f->name ? f->name : f->func;
}

char *unwind_frame_demangled(const struct unwind_frame *f)
{
	return f->func[0] ? elf_demangle(unwind_frame_name(f)) : NULL;
}

int unwind_symbolize(pid_t pid, uint64_t pc, struct unwind_frame *ret)
{
	Dwfl *dwfl = dwfl_for(pid);
	struct unwind_frame f;

	if (!dwfl)
		return -ESRCH;
	symbolize(dwfl, pc, pc, &f);
	f.name = NULL; /* dwfl's, ended here */
	dwfl_end(dwfl);
	*ret = f;
	return 0;
}

int unwind_symbolize_maps(const char *maps, const uint64_t *pcs, size_t n,
			  struct unwind_frame *ret)
{
	static const Dwfl_Callbacks callbacks = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
	};
	FILE *f = fmemopen((void *)maps, strlen(maps), "r");
	Dwfl *dwfl = f ? dwfl_begin(&callbacks) : NULL;
	int r = dwfl ? dwfl_linux_proc_maps_report(dwfl, f) : -1;

	if (f)
		fclose(f);
	if (r != 0 || dwfl_report_end(dwfl, NULL, NULL) != 0) {
		if (dwfl)
			dwfl_end(dwfl);
		return -EINVAL;
	}
	/* Return addresses: looked up inside the call that made them. */
	for (size_t i = 0; i < n; i++) {
		symbolize(dwfl, pcs[i], pcs[i] ? pcs[i] - 1 : 0, &ret[i]);
		ret[i].name = NULL; /* dwfl's, ended here */
	}
	dwfl_end(dwfl);
	return 0;
}

/* Walk the stack under cursor, naming frames with dwfl (may be NULL);
 * 'keep' when dwfl outlives the frames, whose 'name' then points into it. */
static size_t walk(unw_cursor_t *cursor, Dwfl *dwfl, bool keep, struct unwind_frame *frames,
		   size_t max)
{
	size_t n = 0;

	do {
		unw_word_t ip = 0;

		if (unw_get_reg(cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		if (!symbolize(dwfl, ip, n == 0 ? ip : ip - 1, &frames[n]) && n > 0) {
			/* No module holds it: injected code, end of the walk. */
			n++;
			break;
		}
		if (!keep)
			frames[n].name = NULL;
		n++;
	} while (n < max && unw_step(cursor) > 0);
	return n;
}

struct unwind_session {
	pid_t tid;
	unw_addr_space_t as;
	void *upt;
	Dwfl *dwfl;
};

struct unwind_session *unwind_session_new(pid_t pid, pid_t tid)
{
	struct unwind_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->tid = tid;
	s->as = unw_create_addr_space(&_UPT_accessors, 0);
	s->upt = _UPT_create(tid);
	if (!s->as || !s->upt) {
		unwind_session_free(s);
		return NULL;
	}
	unw_set_caching_policy(s->as, UNW_CACHE_GLOBAL);
	s->dwfl = dwfl_for(pid);
	return s;
}

int unwind_session_backtrace(struct unwind_session *s, struct unwind_frame *frames, size_t max,
			     size_t *ret_n)
{
	unw_cursor_t cursor;

	if (unw_init_remote(&cursor, s->as, s->upt) < 0)
		return kill(s->tid, 0) < 0 && errno == ESRCH ? -ESRCH : -EIO;
	*ret_n = walk(&cursor, s->dwfl, true, frames, max);
	return 0;
}

void unwind_session_free(struct unwind_session *s)
{
	if (!s)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	if (s->upt)
		_UPT_destroy(s->upt);
	if (s->as)
		unw_destroy_addr_space(s->as);
	free(s);
}

int unwind_backtrace(pid_t pid, pid_t tid, struct unwind_frame *frames, size_t max,
		     size_t *ret_n)
{
	unw_addr_space_t as;
	unw_cursor_t cursor;
	void *upt;
	Dwfl *dwfl;
	size_t n = 0;
	int r = 0;

	as = unw_create_addr_space(&_UPT_accessors, 0);
	if (!as)
		return -ENOMEM;
	upt = _UPT_create(tid);
	if (!upt) {
		r = -ENOMEM;
		goto out_as;
	}
	if (unw_init_remote(&cursor, as, upt) < 0) {
		r = kill(tid, 0) < 0 && errno == ESRCH ? -ESRCH : -EIO;
		goto out_upt;
	}
	/* Symbols are optional: a backtrace of bare addresses still helps. */
	dwfl = dwfl_for(pid);
	n = walk(&cursor, dwfl, false, frames, max);
	if (dwfl)
		dwfl_end(dwfl);
	*ret_n = n;
out_upt:
	_UPT_destroy(upt);
out_as:
	unw_destroy_addr_space(as);
	return r;
}
