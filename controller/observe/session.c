// SPDX-License-Identifier: MIT
/*
 * An observing session (observe.h): arm entry breakpoints in every mapped
 * object, follow each call to its return, keep the stop accounting, and
 * turn the calls into figures.
 *
 * Per event:
 *
 *   trace_wait() ── a = now ──▶ handle (entry: push frame, arm its return
 *        ▲                       address; return: pop frames) ──▶
 *        └──── b = now ◀── trace_resume() (steps over, resumes all)
 *
 * 'stopped' accumulates b - a over all events and 'resumes' counts the
 * resumes that let the process run; a call's duration is its a-to-a time
 * minus the stopped time and the calibrated latency of each resume inside.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "elf/elf.h"
#include "unwind/unwind.h"
#include "util/clock.h"
#include "util/match.h"
#include "util/procmaps.h"
#include "observe/observe.h"

/* How often the tick callback runs when nothing happens, and at least. */
#define TICK_MS 100
/* Bytes compared per breakpoint address at detach. */
#define VERIFY_LEN 8

struct func {
	char *name, *symbol, *object;
	uint64_t addr;
	bool skip, calib, armed;
	struct observe_call *calls;
	size_t ncalls, cap;
	uint64_t skipped, unmatched;
};

struct entry {
	uint64_t addr;
	uint32_t func;
};

struct obj {
	char *path;
	uint64_t base, lo, hi;
	struct elf_file *ef; /* NULL: not an ELF object we can read */
	bool opened, armed, present;
};

struct session {
	struct trace_proc *p;
	pid_t pid;
	const struct observe_opts *o;
	bool attached, observing;
	struct func *funcs;
	size_t nfuncs, capfuncs;
	struct entry *entries; /* sorted by addr */
	size_t nentries, capentries;
	struct obj *objs;
	size_t nobjs;
	struct observe_stack *stacks;
	size_t nstacks;
	size_t thread_count;
	bool *pattern_hit;  /* per --symbol pattern */
	uint64_t dl_notify; /* the loader's _dl_debug_state, or 0 */
	struct deferred {
		uint64_t addr;
		uint64_t resumes; /* s->resumes when it was queued */
	} * deferred;		  /* return breakpoints to remove (see remove_later) */
	size_t ndeferred, capdeferred;
	uint64_t *touched; /* every address a breakpoint was put at */
	size_t ntouched, captouched;
	int64_t stopped;
	uint64_t resumes, events;
	/* calibration */
	uint64_t calib_page, calib_end;
	uint32_t calib_func;
	pid_t calib_tid;
	struct arch_regs calib_saved;
	bool calibrating;
	uint64_t open_at_end;
	int64_t t_stopped_observing; /* when remove_all() ran, or 0 */
	struct observe_result *res;
};

static void diagnose(struct session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void diagnose(struct session *s, const char *fmt, ...)
{
	struct observe_result *r = s->res;
	char **v, *msg;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg)
		return;
	for (size_t i = 0; i < r->ndiagnostics; i++) {
		if (!strcmp(r->diagnostics[i], msg)) {
			free(msg);
			return;
		}
	}
	v = realloc(r->diagnostics, (r->ndiagnostics + 1) * sizeof(*v));
	if (!v) {
		free(msg);
		return;
	}
	r->diagnostics = v;
	r->diagnostics[r->ndiagnostics++] = msg;
}

static void touch(struct session *s, uint64_t addr)
{
	for (size_t i = 0; i < s->ntouched; i++)
		if (s->touched[i] == addr)
			return;
	if (s->ntouched == s->captouched) {
		size_t cap = s->captouched ? s->captouched * 2 : 64;
		uint64_t *v = realloc(s->touched, cap * sizeof(*v));

		if (!v)
			return;
		s->touched = v;
		s->captouched = cap;
	}
	s->touched[s->ntouched++] = addr;
}

static int bp_insert(struct session *s, uint64_t addr)
{
	int r = trace_bp_insert(s->p, addr);

	if (r == 0 && s->attached)
		touch(s, addr);
	return r;
}

/* ---- functions and entries -------------------------------------------------- */

static const struct entry *entry_find(const struct session *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nentries;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->entries[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nentries && s->entries[lo].addr == addr ? &s->entries[lo] : NULL;
}

static int entry_add(struct session *s, uint64_t addr, uint32_t func)
{
	size_t i = 0;

	if (s->nentries == s->capentries) {
		size_t cap = s->capentries ? s->capentries * 2 : 64;
		struct entry *v = realloc(s->entries, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->entries = v;
		s->capentries = cap;
	}
	while (i < s->nentries && s->entries[i].addr < addr)
		i++;
	memmove(&s->entries[i + 1], &s->entries[i], (s->nentries - i) * sizeof(*s->entries));
	s->entries[i] = (struct entry){ addr, func };
	s->nentries++;
	return 0;
}

static void entry_del(struct session *s, uint64_t addr)
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

static int func_add(struct session *s, const char *name, const char *symbol, const char *object,
		    uint64_t addr, bool skip, uint32_t *ret)
{
	struct func *f;

	if (s->nfuncs == s->capfuncs) {
		size_t cap = s->capfuncs ? s->capfuncs * 2 : 16;
		struct func *v = realloc(s->funcs, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->funcs = v;
		s->capfuncs = cap;
	}
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

static int call_add(struct func *f, const struct observe_call *c)
{
	if (f->ncalls == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		struct observe_call *v = realloc(f->calls, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		f->calls = v;
		f->cap = cap;
	}
	f->calls[f->ncalls++] = *c;
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
	return entry_find(s, addr) != NULL;
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

		if (dl && bp_insert(s, bias + dl->addr) == 0)
			s->dl_notify = bias + dl->addr;
	}
	for (size_t i = 0; i < elf_symbol_count(o->ef); i++) {
		const struct elf_symbol *sym = elf_symbol(o->ef, i);
		uint64_t addr = bias + sym->addr;
		uint8_t mem[VERIFY_LEN], file[VERIFY_LEN];
		bool skip;
		uint32_t fi;

		skip = matches_any(s->o->skips, s->o->nskips, sym, NULL);
		if (!skip && !matches_any(s->o->symbols, s->o->nsymbols, sym, s->pattern_hit))
			continue;
		if (func_at(s, addr))
			continue; /* another name of a function armed already */
		/* The code in memory must be the file's: otherwise the load
		 * address was guessed wrong, and a trap would corrupt code. */
		if (trace_read(s->p, addr, mem, sizeof(mem)) < 0 ||
		    file_bytes(o, addr, file, sizeof(file)) < 0 || memcmp(mem, file, sizeof(mem))) {
			diagnose(s,
				 "%s in %s was not armed: its code in memory differs from the file",
				 sym->demangled, o->path);
			continue;
		}
		if (func_add(s, sym->demangled, sym->name, o->path, addr, skip, &fi) < 0) {
			diagnose(s, "out of memory while arming %s", sym->demangled);
			return;
		}
		if (bp_insert(s, addr) < 0 || entry_add(s, addr, fi) < 0) {
			diagnose(s, "%s in %s could not be armed", sym->demangled, o->path);
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
		trace_bp_forget(s->p, f->addr);
		entry_del(s, f->addr);
		f->armed = false;
	}
	if (s->dl_notify >= o->lo && s->dl_notify < o->hi) {
		trace_bp_forget(s->p, s->dl_notify);
		s->dl_notify = 0;
	}
}

/* Read the maps again: arm new objects, disarm vanished ones. */
static int scan_maps(struct session *s)
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

/* ---- frames ------------------------------------------------------------------ */

static struct observe_stack *stack_of(struct session *s, pid_t tid, bool create)
{
	struct observe_stack *v;

	for (size_t i = 0; i < s->nstacks; i++)
		if (s->stacks[i].tid == tid)
			return &s->stacks[i];
	if (!create)
		return NULL;
	v = realloc(s->stacks, (s->nstacks + 1) * sizeof(*v));
	if (!v)
		return NULL;
	s->stacks = v;
	memset(&v[s->nstacks], 0, sizeof(*v));
	v[s->nstacks].tid = tid;
	return &s->stacks[s->nstacks++];
}

/*
 * A return breakpoint no call needs any more is removed only after the
 * process has been resumed once: another thread may have executed its trap
 * just before it was stopped, and reports it when it runs again. Until then
 * the breakpoint must still be there for that report to be recognized.
 * Alone, the thread removes it at once (its own resume then needs no step
 * over the trap).
 */
static void remove_later(struct session *s, uint64_t addr)
{
	if (trace_thread_count(s->p) <= 1) {
		trace_bp_remove(s->p, addr);
		return;
	}
	if (s->ndeferred == s->capdeferred) {
		size_t cap = s->capdeferred ? s->capdeferred * 2 : 64;
		struct deferred *v = realloc(s->deferred, cap * sizeof(*v));

		if (!v) {
			trace_bp_remove(s->p, addr);
			return;
		}
		s->deferred = v;
		s->capdeferred = cap;
	}
	s->deferred[s->ndeferred++] = (struct deferred){ addr, s->resumes };
}

/* Remove the deferred breakpoints queued before the last resume (all). */
static void remove_deferred(struct session *s, bool all)
{
	size_t keep = 0;

	for (size_t i = 0; i < s->ndeferred; i++) {
		if (all || s->deferred[i].resumes < s->resumes)
			trace_bp_remove(s->p, s->deferred[i].addr);
		else
			s->deferred[keep++] = s->deferred[i];
	}
	s->ndeferred = keep;
}

/* Pop the top frame: completed at 'now' when 'done', else unmatched. */
static void pop_frame(struct session *s, struct observe_stack *st, bool done, int64_t now)
{
	struct observe_frame *fr = &st->v[--st->n];
	struct func *f = &s->funcs[fr->func];

	if (done) {
		struct observe_call c = {
			.t_start = fr->t_start,
			.t_end = now,
			.stopped_start = fr->stopped_start,
			.stopped_end = s->stopped,
			.resumes_start = fr->resumes_start,
			.resumes_end = s->resumes,
			.tid = st->tid,
		};

		if (call_add(f, &c) < 0)
			diagnose(s, "out of memory: calls of %s were lost", f->name);
	} else {
		f->unmatched++;
	}
	if (s->observing)
		remove_later(s, fr->ret_addr);
}

/* Threads that exited with open calls: those calls never returned. */
static void reconcile_threads(struct session *s)
{
	size_t n = trace_thread_count(s->p);

	if (n == s->thread_count)
		return;
	s->thread_count = n;
	for (size_t i = 0; i < s->nstacks; i++) {
		struct observe_stack *st = &s->stacks[i];
		bool alive = false;

		if (!st->n)
			continue;
		for (size_t k = 0; k < n && !alive; k++)
			alive = trace_thread_tid(s->p, k) == st->tid;
		while (!alive && st->n)
			pop_frame(s, st, false, 0);
	}
}

static void end_calibration(struct session *s, pid_t tid)
{
	trace_set_regs(s->p, tid, &s->calib_saved);
	trace_thread_moved(s->p, tid);
	trace_bp_remove(s->p, s->calib_end);
	if (s->funcs[s->calib_func].armed) {
		trace_bp_remove(s->p, s->funcs[s->calib_func].addr);
		entry_del(s, s->funcs[s->calib_func].addr);
		s->funcs[s->calib_func].armed = false;
	}
	s->calibrating = false;
}

/*
 * A return instruction leaves the return address it popped in the slot
 * above the stack pointer (the red zone keeps signal frames off it). Code
 * that reaches the return address by a jump at the same stack depth (after
 * a call the compiler knew would not return, such as one that longjmps) finds
 * another value there, left by a later call or store: no return.
 */
static bool returned_through(struct session *s, const struct observe_frame *fr, uint64_t addr)
{
	uint64_t word;

	if (trace_read(s->p, fr->ret_slot, &word, sizeof(word)) < 0)
		return true;
	return word == addr;
}

static int on_breakpoint(struct session *s, const struct trace_event *ev, int64_t now)
{
	struct observe_stack *st = stack_of(s, ev->tid, false);
	const struct entry *en;
	struct arch_regs regs;
	uint64_t sp;
	int r;

	if (s->calibrating && ev->addr == s->calib_end && ev->tid == s->calib_tid) {
		end_calibration(s, ev->tid);
		return 0;
	}
	if (ev->addr == s->dl_notify && s->dl_notify) {
		r = scan_maps(s);
		if (r < 0)
			diagnose(s, "cannot read the process's memory map: %s", strerror(-r));
		return 0;
	}
	r = trace_get_regs(s->p, ev->tid, &regs);
	if (r < 0)
		return r == -ESRCH ? 0 : r;
	sp = arch_sp(&regs);
	/* A return: the thread is at the return address with its caller's
	 * stack pointer. Frames below that stack pointer are dead. */
	if (st && st->n) {
		size_t dead = observe_stack_dead(st, ev->addr, sp, OBSERVE_NO_FUNC), k;

		while (dead--)
			pop_frame(s, st, false, now);
		k = observe_stack_returning(st, ev->addr, sp);
		if (k && returned_through(s, &st->v[st->n - 1], ev->addr)) {
			while (k--)
				pop_frame(s, st, true, now);
			return 0;
		}
	}
	en = entry_find(s, ev->addr);
	if (en) {
		struct func *f = &s->funcs[en->func];
		struct observe_frame fr = {
			.func = en->func,
			.sp_after = arch_entry_sp_after_return(&regs),
			.ret_slot = arch_entry_ret_slot(&regs),
			.t_start = now,
			.stopped_start = s->stopped,
			.resumes_start = s->resumes,
		};

		r = trace_read(s->p, fr.ret_slot, &fr.ret_addr, sizeof(fr.ret_addr));
		if (r < 0)
			return r == -ESRCH ? 0 : r;
		st = stack_of(s, ev->tid, true);
		if (!st)
			return -ENOMEM;
		for (size_t dead = observe_stack_dead(st, fr.ret_addr, fr.sp_after, en->func);
		     dead--;)
			pop_frame(s, st, false, now);
		if (f->skip) {
			arch_return_now(&regs, fr.ret_addr, 0);
			r = trace_set_regs(s->p, ev->tid, &regs);
			if (r == 0)
				r = trace_thread_moved(s->p, ev->tid);
			if (r == 0)
				f->skipped++;
			return r == -ESRCH ? 0 : r;
		}
		r = bp_insert(s, fr.ret_addr);
		if (r < 0) {
			diagnose(s, "a call of %s could not be followed to its return (%s)",
				 f->name, strerror(-r));
			return 0;
		}
		r = observe_stack_push(st, &fr);
		if (r < 0) {
			trace_bp_remove(s->p, fr.ret_addr);
			return r;
		}
	}
	return 0;
}

static bool fatal_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
	       sig == SIGABRT || sig == SIGSYS;
}

/* A signal that may kill the program: keep where it happened, in case it
 * does (a handler may also take it). */
static void on_signal(struct session *s, const struct trace_event *ev)
{
	struct trace_failure *f;
	char *buf;

	if (!fatal_signal(ev->sig))
		return;
	f = calloc(1, sizeof(*f));
	buf = malloc(8192);
	if (!f || !buf) {
		free(f);
		free(buf);
		return;
	}
	f->kind = TRACE_FAIL_SIGNAL;
	f->tid = ev->tid;
	f->sig = ev->sig;
	f->code = ev->code;
	f->addr = ev->addr;
	f->pc = ev->pc;
	unwind_backtrace(s->pid, ev->tid, f->frames, UNWIND_MAX_FRAMES, &f->nframes);
	trace_failure_format(f, buf, 8192);
	free(s->res->crash);
	s->res->crash = buf;
	s->res->sig = ev->sig;
	free(f);
}

/* ---- calibration ------------------------------------------------------------- */

/*
 * Inject loop(n) over the empty function into the current thread, with the
 * empty function armed like any observed one; the event loop times its
 * calls and end_calibration() restores the thread when loop returns.
 */
static int start_calibration(struct session *s)
{
	uint64_t page, push_addr, push_val, arg;
	struct arch_regs regs;
	bool push;
	uint32_t fi;
	pid_t tid = trace_current_tid(s->p);
	int r;

	r = trace_get_regs(s->p, tid, &s->calib_saved);
	if (r < 0)
		return r;
	r = trace_map_exec(s->p, 4096, &page, NULL);
	if (r < 0)
		return r;
	s->calib_page = page;
	r = trace_write(s->p, page, arch_code_calib, arch_code_calib_len);
	if (r < 0)
		return r;
	r = func_add(s, "[calibration]", NULL, "[benchtrap]", page + arch_code_calib_fn_off, false,
		     &fi);
	if (r < 0)
		return r;
	s->calib_func = fi;
	s->calib_end = page + arch_code_calib_len;
	r = trace_bp_insert(s->p, s->funcs[fi].addr);
	if (r == 0)
		r = entry_add(s, s->funcs[fi].addr, fi);
	if (r == 0)
		r = trace_bp_insert(s->p, s->calib_end);
	if (r < 0)
		return r;
	s->funcs[fi].armed = true;
	s->funcs[fi].calib = true;
	regs = s->calib_saved;
	arg = s->o->calib_calls ? s->o->calib_calls : OBSERVE_CALIB_CALLS_DEFAULT;
	r = arch_setup_call(&regs, page + arch_code_calib_loop_off, s->calib_end, &arg, 1, &push,
			    &push_addr, &push_val);
	if (r == 0 && push)
		r = trace_write(s->p, push_addr, &push_val, sizeof(push_val));
	if (r == 0)
		r = trace_set_regs(s->p, tid, &regs);
	if (r == 0)
		r = trace_thread_moved(s->p, tid);
	if (r < 0)
		return r;
	s->calib_tid = tid;
	s->calibrating = true;
	return 0;
}

static void finish_calibration(struct session *s)
{
	struct func *f = &s->funcs[s->calib_func];
	double *active = NULL, *stopped = NULL;
	uint64_t *res = NULL;

	if (!f->ncalls)
		return;
	active = malloc(f->ncalls * sizeof(*active));
	stopped = malloc(f->ncalls * sizeof(*stopped));
	res = malloc(f->ncalls * sizeof(*res));
	if (active && stopped && res) {
		for (size_t i = 0; i < f->ncalls; i++) {
			const struct observe_call *c = &f->calls[i];

			stopped[i] = (double)(c->stopped_end - c->stopped_start);
			active[i] = (double)(c->t_end - c->t_start) - stopped[i];
			res[i] = c->resumes_end - c->resumes_start;
		}
		if (observe_calibrate(active, res, f->ncalls, stopped, &s->res->calib) == 0)
			s->res->calibrated = true;
	}
	free(active);
	free(stopped);
	free(res);
}

/* ---- the loop ------------------------------------------------------------------ */

/* Every breakpoint out; the process is stopped. */
static void remove_all(struct session *s)
{
	trace_settle(s->p);
	remove_deferred(s, true);
	for (size_t i = 0; i < s->nstacks; i++) {
		struct observe_stack *st = &s->stacks[i];

		s->open_at_end += st->n;
		while (st->n)
			trace_bp_remove(s->p, st->v[--st->n].ret_addr);
	}
	for (size_t i = 0; i < s->nfuncs; i++) {
		if (s->funcs[i].armed)
			trace_bp_remove(s->p, s->funcs[i].addr);
		s->funcs[i].armed = false;
	}
	s->nentries = 0;
	if (s->dl_notify)
		trace_bp_remove(s->p, s->dl_notify);
	s->dl_notify = 0;
	s->observing = false;
	s->t_stopped_observing = clock_now_ns();
}

/*
 * Events held for threads at breakpoints that were removed since are
 * dropped by trace_wait(), but while they are held trace_resume() resumes
 * nothing. Take them out of the way (a real event among them, a signal,
 * stays with its thread and is delivered on resume).
 */
static void drop_stale_events(struct session *s)
{
	struct trace_event ev;

	for (int i = 0; i < 1024 && trace_has_pending(s->p); i++)
		if (trace_wait(s->p, 0, &ev) < 0)
			break;
}

/* A command observed no longer (--duration): every breakpoint out while
 * the process is stopped, then it runs on. */
static int stop_observing(struct session *s)
{
	int r = trace_stop(s->p);

	if (r < 0)
		return r;
	remove_all(s);
	drop_stale_events(s);
	return trace_resume(s->p);
}

/* Attached: with every breakpoint removed, the code must be the files'. */
static void verify_code(struct session *s)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)s->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	scan_maps(s);
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

static int run_loop(struct session *s)
{
	int64_t start = clock_now_ns(), last_tick = start;
	int64_t deadline = s->o->duration_ns > 0 ? start + s->o->duration_ns : -1;
	int r = trace_resume(s->p);
	bool retried = false;

	s->resumes++;
	while (r == 0) {
		struct trace_event ev;
		int64_t now, wait_ms = TICK_MS;
		bool pending;

		if (deadline >= 0 && s->observing) {
			int64_t left = (deadline - clock_now_ns()) / 1000000;

			if (left <= 0 && !s->calibrating) {
				if (s->attached)
					break;
				r = stop_observing(s);
				continue;
			}
			if (left >= 0 && left < wait_ms)
				wait_ms = left > 0 ? left : 1;
		}
		r = trace_wait(s->p, (int)wait_ms, &ev);
		now = clock_now_ns();
		if (r == -ETIMEDOUT || now - last_tick >= TICK_MS * 1000000) {
			last_tick = now;
			/* A signal for the program waits until the calibration
			 * (code of ours running in its thread) is over. */
			if (!s->calibrating && s->o->tick &&
			    s->o->tick(s->o->userdata, s->pid, s->observing)) {
				if (s->attached)
					break;
				if (s->observing && r == -ETIMEDOUT) {
					r = stop_observing(s);
					continue;
				}
				if (s->observing)
					remove_all(s); /* stopped at an event already */
			}
			if (r == -ETIMEDOUT) {
				r = 0;
				continue;
			}
		}
		if (r == -TRACE_E_STATE && trace_alive(s->p) && !retried) {
			/* Only stale events were held: nothing ran. */
			retried = true;
			r = trace_resume(s->p);
			continue;
		}
		if (r < 0)
			break;
		retried = false;
		s->events++;
		if (s->ndeferred)
			remove_deferred(s, false);
		switch (ev.kind) {
		case TRACE_EV_BREAKPOINT:
			if (s->observing)
				r = on_breakpoint(s, &ev, now);
			break;
		case TRACE_EV_SIGNAL:
			on_signal(s, &ev);
			break;
		case TRACE_EV_EXEC:
			/* A new program: the old one's breakpoints are gone. */
			for (size_t i = 0; i < s->nstacks; i++)
				s->stacks[i].n = 0;
			for (size_t i = 0; i < s->nfuncs; i++)
				s->funcs[i].armed = false;
			s->nentries = 0;
			s->dl_notify = 0;
			s->observing = false;
			s->calibrating = false;
			diagnose(s,
				 "the program executed another program; observing stopped there");
			break;
		case TRACE_EV_EXITED:
		case TRACE_EV_KILLED:
			s->res->end = ev.kind == TRACE_EV_EXITED ? OBSERVE_EXITED : OBSERVE_KILLED;
			if (s->attached)
				s->res->end = OBSERVE_GONE;
			s->res->exit_code = ev.code;
			if (ev.kind == TRACE_EV_KILLED) {
				if (s->res->sig != ev.sig) {
					free(s->res->crash);
					s->res->crash = NULL;
				}
				s->res->sig = ev.sig;
			} else {
				free(s->res->crash);
				s->res->crash = NULL;
				s->res->sig = 0;
			}
			/* Calls still open never returned. */
			for (size_t i = 0; i < s->nstacks; i++)
				while (s->stacks[i].n) {
					s->stacks[i].n--;
					s->funcs[s->stacks[i].v[s->stacks[i].n].func].unmatched++;
				}
			s->observing = false;
			return 0;
		case TRACE_EV_EXITING:
			break;
		}
		if (r < 0)
			break;
		if (s->calibrating == false && s->calib_page && !s->res->calibrated &&
		    s->funcs[s->calib_func].ncalls)
			finish_calibration(s);
		if (s->observing)
			reconcile_threads(s);
		pending = trace_has_pending(s->p);
		r = trace_resume(s->p);
		s->stopped += clock_now_ns() - now;
		if (!pending)
			s->resumes++;
	}
	if (r == -ESRCH)
		return 0;
	return r;
}

/* ---- results ------------------------------------------------------------------- */

static int func_result(struct session *s, struct func *f, struct observe_func_result *out)
{
	double lat = s->res->calibrated ? s->res->calib.latency : 0;
	double half = s->res->calibrated
			      ? (s->res->calib.latency_p90 - s->res->calib.latency_p10) / 2
			      : 0;
	double *res = NULL;
	int r;

	out->name = f->name;
	out->symbol = f->symbol;
	out->object = f->object;
	f->name = f->symbol = f->object = NULL;
	out->addr = f->addr;
	out->skip = f->skip;
	out->unmatched = f->unmatched;
	if (f->skip) {
		out->calls = f->skipped;
		return 0;
	}
	out->calls = f->ncalls;
	if (!f->ncalls)
		return 0;
	out->ns = malloc(f->ncalls * sizeof(*out->ns));
	res = malloc(f->ncalls * sizeof(*res));
	if (!out->ns || !res) {
		free(res);
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->ncalls; i++) {
		const struct observe_call *c = &f->calls[i];

		out->ns[i] =
			observe_corrected(c->t_start, c->t_end, c->stopped_end - c->stopped_start,
					  c->resumes_end - c->resumes_start, lat);
		out->hist[observe_hist_bucket(out->ns[i])]++;
		res[i] = (double)(c->resumes_end - c->resumes_start);
	}
	observe_summarize(out->ns, f->ncalls, &out->sum);
	{
		struct observe_summary rs;

		observe_summarize(res, f->ncalls, &rs);
		out->uncertainty = rs.median * half;
	}
	free(res);
	r = observe_rounds(f->calls, f->ncalls, lat, &out->round_ns, &out->rounds,
			   &out->round_max_threads);
	if (r < 0)
		return r;
	return observe_summarize(out->round_ns, out->rounds, &out->round_sum);
}

static int build_results(struct session *s, const char *const *pats, size_t npats)
{
	struct observe_result *res = s->res;
	int r = 0;

	res->funcs = calloc(s->nfuncs ? s->nfuncs : 1, sizeof(*res->funcs));
	if (!res->funcs)
		return -ENOMEM;
	for (size_t i = 0; i < s->nfuncs && r == 0; i++) {
		if (s->funcs[i].calib)
			continue;
		r = func_result(s, &s->funcs[i], &res->funcs[res->nfuncs++]);
	}
	for (size_t i = 0; i < npats; i++)
		if (!s->pattern_hit[i])
			diagnose(s,
				 "no function matched '%s' in the program or the libraries it "
				 "loaded",
				 pats[i]);
	if (s->open_at_end)
		diagnose(s, "%" PRIu64 " call%s still running when observing ended %s not counted",
			 s->open_at_end, s->open_at_end == 1 ? " was" : "s were",
			 s->open_at_end == 1 ? "and is" : "and are");
	if (res->attached && res->restored_mismatch)
		diagnose(s, "after detaching, %zu breakpoint address%s not hold the file's code",
			 res->restored_mismatch, res->restored_mismatch == 1 ? " does" : "es do");
	return r;
}

void observe_result_clear(struct observe_result *r)
{
	for (size_t i = 0; i < r->nfuncs; i++) {
		free(r->funcs[i].name);
		free(r->funcs[i].symbol);
		free(r->funcs[i].object);
		free(r->funcs[i].ns);
		free(r->funcs[i].round_ns);
	}
	free(r->funcs);
	for (size_t i = 0; i < r->ndiagnostics; i++)
		free(r->diagnostics[i]);
	free(r->diagnostics);
	free(r->crash);
	memset(r, 0, sizeof(*r));
}

static void session_free(struct session *s)
{
	for (size_t i = 0; i < s->nfuncs; i++) {
		free(s->funcs[i].name);
		free(s->funcs[i].symbol);
		free(s->funcs[i].object);
		free(s->funcs[i].calls);
	}
	free(s->funcs);
	free(s->entries);
	for (size_t i = 0; i < s->nobjs; i++) {
		free(s->objs[i].path);
		elf_close(s->objs[i].ef);
	}
	free(s->objs);
	for (size_t i = 0; i < s->nstacks; i++)
		observe_stack_free(&s->stacks[i]);
	free(s->stacks);
	free(s->pattern_hit);
	free(s->deferred);
	free(s->touched);
}

int observe_session(struct trace_proc *p, bool attached, const struct observe_opts *o,
		    struct observe_result *ret)
{
	struct observe_result res = { 0 };
	struct session s = {
		.p = p,
		.pid = trace_pid(p),
		.o = o,
		.attached = attached,
		.observing = true,
		.res = &res,
	};
	int64_t t0;
	int r;

	res.pid = s.pid;
	res.attached = attached;
	s.pattern_hit = calloc(o->nsymbols + 1, sizeof(*s.pattern_hit));
	if (!s.pattern_hit)
		return -ENOMEM;
	s.thread_count = trace_thread_count(p);
	/* The current thread may sit on a breakpoint's address that is now
	 * armed again (main, when it is observed): run it, do not step it. */
	trace_thread_moved(p, trace_current_tid(p));
	r = scan_maps(&s);
	if (r < 0)
		goto fail;
	r = start_calibration(&s);
	if (r < 0) {
		diagnose(&s,
			 "the cost of a stop could not be calibrated (%s): durations include "
			 "it",
			 trace_strerror(r));
		r = 0;
	}
	t0 = clock_now_ns();
	r = run_loop(&s);
	res.observed_s =
		(double)((s.t_stopped_observing ? s.t_stopped_observing : clock_now_ns()) - t0) / 1e9;
	res.events = s.events;
	if (r < 0)
		goto fail;
	if (!res.calibrated && s.calib_page && s.funcs[s.calib_func].ncalls)
		finish_calibration(&s);
	if (attached && trace_alive(p)) {
		int64_t unused;
		uint64_t args[6] = { s.calib_page, 4096, 0, 0, 0, 0 };

		/* The loop may have ended with the process running. */
		trace_stop(p);
		remove_all(&s);
		drop_stale_events(&s);
		if (s.calibrating)
			end_calibration(&s, s.calib_tid);
		if (s.calib_page) {
			r = trace_syscall(p, SYS_munmap, args, &unused);
			if (r < 0)
				diagnose(&s, "the calibration page could not be unmapped: %s",
					 trace_strerror(r));
		}
		verify_code(&s);
		res.end = OBSERVE_DETACHED;
		r = trace_detach(p);
		if (r < 0)
			diagnose(&s, "detaching did not go cleanly: %s", trace_strerror(r));
		r = 0;
	}
	r = build_results(&s, o->symbols, o->nsymbols);
	if (r < 0)
		goto fail;
	session_free(&s);
	*ret = res;
	return 0;
fail:
	/* An attached process runs on whatever went wrong: the caller's
	 * trace_proc_free() writes back the original bytes of every
	 * breakpoint that remains, then detaches. */
	session_free(&s);
	observe_result_clear(&res);
	return r;
}
