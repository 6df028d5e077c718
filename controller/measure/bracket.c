// SPDX-License-Identifier: MIT
/*
 * The program's own main, traced, each call of a batch function bounded by
 * benchtrap's clock in the child (bracket.h):
 *
 *   caller ── call f ──► f: int3 ─(controller: [rsp] = exit stub k, r11 = slot k,
 *                                  pc = enter stub)
 *   enter stub: t0 ─► f's first instruction (displaced) ─► f+len ... ret
 *   exit stub k: r11 = slot k ─► exit: t1 ─► trap ─(controller: reads t0, t1,
 *                                               pc = the real return address)
 *
 * A framework's own clock (BRACKET_RESUME, BRACKET_PAUSE, BRACKET_FINISH):
 *
 *   ResumeTiming: int3 ─(controller: [rsp] = slot stub k, slot k's next =
 *                        the start stub, its resume = the real return)
 *     ... ret ─► slot stub k ─► start: t0 into slot k ─► the caller
 *   the benchmark's loop                                  (no trap)
 *   PauseTiming: jmp trampoline ─► call end: t1 on the stack ─► end trap
 *     ─(controller: t1, and t0 of the thread's slots whose calls returned;
 *       pc past the trap) ─► the moved instructions ─► PauseTiming+n
 *
 * Pages in the child: code (the stubs of arch/bracket.h, a system-call
 * clock, one slot stub per slot, one trampoline per function), data (the
 * slots, one per call in progress, of any thread), and next to each object
 * whose function's entry is patched, a page of its trampolines (within
 * reach of a 32-bit jump).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/agent.h"
#include "arch/bracket.h"
#include "arch/harness.h"
#include "arch/patch.h"
#include "stats/stats.h"
#include "unwind/unwind.h"
#include "util/array.h"
#include "util/fd.h"
#include "util/procmaps.h"
#include "util/strutil.h"
#include "measure/failure.h"
#include "measure/harness.h"
#include "measure/bracket.h"

#define NSLOTS 128
#define CODE_SIZE (2 * PAGE)
#define DATA_SIZE (NSLOTS * ARCH_BRACKET_SLOT)
#define SYSCLOCK_AT 0x300 /* a copy of the harness, for its system-call clock */
#define STUBS_AT 0x400
#define TRAMPS_AT PAGE
#define MAX_FNS (PAGE / ARCH_BRACKET_TRAMP_LEN)
/* Loading and constructors before main. */
#define TO_MAIN_MS 60000

#define MAX_NEAR 8 /* objects with patched entries */
#define NEAR_REACH (1ull << 30)
#define MAX_CODE (64u << 10) /* the most of a function's code read to patch it */

_Static_assert(SYSCLOCK_AT + 0x100 <= STUBS_AT, "the harness copy fits");
_Static_assert(STUBS_AT + NSLOTS * ARCH_BRACKET_STUB_LEN <= TRAMPS_AT, "the exit stubs fit");

struct bfn {
	uint64_t addr;	/* run-time address of its entry */
	uint64_t tramp; /* its trampoline, or 0: not displaced */
	enum bracket_role role;
	uint64_t patched; /* PAUSE, FINISH: its patched entry's trampoline */
	unsigned arg;	  /* SIZE: the count's argument */
	bool clocked;	  /* CALL: timed by the clock inside it */
	bool clocked_once; /* ... where it ran once */
	uint64_t size;	  /* its code's size, 0: not known */
};

/* One call in progress. */
struct bslot {
	bool used;
	bool start; /* a RESUME call: the start stub reads t0 at its return */
	unsigned fn;
	pid_t tid;
	uint64_t ret_at; /* where its return address is (the slot stub's now) */
	uint64_t ret;	 /* the real return address */
	bool bp_removed; /* its function's breakpoint is out while it runs */
};

/* A thread's batch by the framework's clock, while it runs. */
struct bloop {
	pid_t tid; /* 0: free */
	uint64_t first, last, sum;
	unsigned intervals;
};

/* The iterations a thread's batch was given (SIZE). */
struct bsize {
	pid_t tid; /* 0: free */
	uint64_t n;
};

/* A page of trampolines next to an object's code. */
struct bnear {
	uint64_t lo, hi; /* the object's mapping it serves */
	uint64_t page;
	size_t used;
};

struct bracket_run {
	struct trace_proc *p;
	struct bfn *fns;
	size_t nfns;
	uint64_t code, data, exit_trap;
	struct bslot slots[NSLOTS];
	struct bloop loops[NSLOTS];
	struct bsize sizes[NSLOTS];
	uint64_t count;	  /* bracket_set_count(), 0: none */
	pid_t size_tid;	  /* a thread held at SIZE function size_fn's entry, its */
	unsigned size_fn; /* count set when it goes on (after the batches ended) */
	struct bnear near[MAX_NEAR];
	size_t nnear;
	uint64_t end_trap;
	char **diags;
	size_t ndiags;
	bool said_unbracketed;
	struct trace_failure *pending; /* a fatal signal seen, which may end it */
	bool have_pending;
	/*
	 * Batches that ended, given out at the thread's next stop outside
	 * the library's clock (the next batch's start, the exit): a child
	 * held at a batch's end would have the library's clock run over the
	 * hold (read after the end's trap), and its batches stop growing
	 * while the other side of a paired compare runs.
	 */
	struct bracket_call *ended;
	size_t nended, capended;
	bool exited; /* ... and after them, its exit with exit_status */
	int exit_status;
};

static int fail_with(char **ret_error, int r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail_with(char **ret_error, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(ret_error, fmt, ap) < 0)
		*ret_error = NULL;
	va_end(ap);
	return r;
}

static void diagnose(struct bracket_run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void diagnose(struct bracket_run *r, const char *fmt, ...)
{
	char **v = realloc(r->diags, (r->ndiags + 1) * sizeof(*v));
	va_list ap;

	if (!v)
		return;
	r->diags = v;
	va_start(ap, fmt);
	if (vasprintf(&v[r->ndiags], fmt, ap) >= 0)
		r->ndiags++;
	va_end(ap);
}

const char *const *bracket_diagnostics(const struct bracket_run *r, size_t *ret_n)
{
	*ret_n = r->ndiags;
	return (const char *const *)r->diags;
}

pid_t bracket_pid(const struct bracket_run *r)
{
	return trace_pid(r->p);
}

bool bracket_owns(const struct bracket_run *r, uint64_t pc)
{
	for (size_t i = 0; i < r->nnear; i++)
		if (pc >= r->near[i].page && pc - r->near[i].page < PAGE)
			return true;
	return (r->code && pc >= r->code && pc - r->code < CODE_SIZE) ||
	       (r->data && pc >= r->data && pc - r->data < DATA_SIZE);
}

void bracket_free(struct bracket_run *r)
{
	if (!r)
		return;
	trace_proc_free(r->p);
	for (size_t i = 0; i < r->ndiags; i++)
		free(r->diags[i]);
	free(r->diags);
	free(r->fns);
	free(r->pending);
	free(r->ended);
	free(r);
}

static int map_data(struct trace_proc *p, uint64_t size, uint64_t *ret_addr)
{
	int64_t m;
	int r = trace_syscall(p, SYS_mmap,
			      (const uint64_t[6]){ 0, size, PROT_READ | PROT_WRITE,
						   MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0 },
			      &m);

	if (r == 0 && m < 0 && m > -4096)
		r = (int)m;
	if (r == 0)
		*ret_addr = (uint64_t)m;
	return r;
}

/* Whether paths a and b name one file. */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Place the stubs, the slots' constant words and the exit's breakpoint. */
static int inject(struct bracket_run *r, uint64_t clock)
{
	uint8_t *code = calloc(1, CODE_SIZE), *data = calloc(1, DATA_SIZE);
	int e = code && data ? 0 : -ENOMEM;

	if (e == 0) {
		memset(code, arch_trap_insn[0], CODE_SIZE);
		memcpy(code, arch_bracket_code, arch_bracket_len);
		memcpy(code + SYSCLOCK_AT, arch_harness_code, arch_harness_len);
		uint64_t exit = r->code + arch_bracket_exit_off;

		if (!clock)
			clock = r->code + SYSCLOCK_AT + arch_harness_sysclock;
		memcpy(code + arch_bracket_clock_word_off, &clock, sizeof(clock));
		for (size_t k = 0; k < NSLOTS; k++) {
			uint8_t *slot = data + k * ARCH_BRACKET_SLOT;

			arch_bracket_slot_stub(code + STUBS_AT + k * ARCH_BRACKET_STUB_LEN,
					       r->data + k * ARCH_BRACKET_SLOT);
			memcpy(slot + ARCH_BRACKET_CLOCK, &clock, sizeof(clock));
			memcpy(slot + ARCH_BRACKET_NEXT, &exit, sizeof(exit));
		}
		e = trace_write(r->p, r->code, code, CODE_SIZE);
	}
	if (e == 0)
		e = trace_write(r->p, r->data, data, DATA_SIZE);
	r->exit_trap = r->code + arch_bracket_trap_off;
	r->end_trap = r->code + arch_bracket_end_trap_off;
	if (e == 0)
		e = trace_bp_insert(r->p, r->exit_trap);
	if (e == 0)
		e = trace_bp_insert(r->p, r->end_trap);
	free(code);
	free(data);
	return e;
}

/* Room for one trampoline within reach of [lo, hi): its address. */
static int near_slot(struct bracket_run *r, uint64_t lo, uint64_t hi, uint64_t *ret)
{
	struct bnear *n = NULL;

	for (size_t i = 0; i < r->nnear && !n; i++)
		if (r->near[i].lo <= lo && hi <= r->near[i].hi &&
		    r->near[i].used + AGENT_TRAMP_LEN <= PAGE)
			n = &r->near[i];
	if (!n) {
		struct procmaps_iter it;
		struct procmaps_entry m;
		uint64_t at, olo = lo, ohi = hi;
		char *text;
		int e;

		if (r->nnear == MAX_NEAR)
			return -ENOSPC;
		/* the whole mapping of the code, so that one page serves it */
		if (procmaps_read(trace_pid(r->p), &text) == 0) {
			procmaps_iter_init(&it, text);
			while (procmaps_next(&it, &m))
				if (m.lo <= lo && hi <= m.hi) {
					olo = m.lo;
					ohi = m.hi;
				}
			free(text);
		}
		e = trace_map_near(r->p, olo, ohi, PAGE, NEAR_REACH, &at);
		if (e < 0)
			return e;
		n = &r->near[r->nnear++];
		*n = (struct bnear){ .lo = olo, .hi = ohi, .page = at };
	}
	*ret = n->page + n->used;
	n->used += AGENT_TRAMP_LEN;
	return 0;
}

/* Function i (PAUSE, FINISH): its entry replaced by a jump to a
 * trampoline that calls the end stub. The child is at main: no other
 * thread, so none can be inside the bytes replaced. */
static int patch_entry(struct bracket_run *r, const struct bracket_fn *f, size_t i,
		       char **ret_error)
{
	struct bfn *b = &r->fns[i];
	struct arch_patch pt;
	uint8_t tramp[AGENT_TRAMP_LEN], *code;
	size_t size = f->size < MAX_CODE ? (size_t)f->size : MAX_CODE;
	char why[256];
	uint64_t at;
	int e;

	if (size == 0)
		return fail_with(ret_error, -ENOTSUP,
				 "the size of the function at %#llx of %s is not known",
				 (unsigned long long)f->link_addr, f->object);
	code = malloc(size);
	if (!code)
		return fail_with(ret_error, -ENOMEM, "out of memory");
	e = trace_read(r->p, b->addr, code, size);
	if (e < 0) {
		free(code);
		return fail_with(ret_error, e,
				 "cannot read the code of the function at %#llx of %s",
				 (unsigned long long)f->link_addr, f->object);
	}
	e = near_slot(r, b->addr, b->addr + size, &at);
	if (e < 0) {
		free(code);
		return fail_with(ret_error, -ENOTSUP,
				 "no room for a trampoline within reach of %s: %s", f->object,
				 strerror(-e));
	}
	e = arch_patch_plan(code, size, b->addr, at, &pt, why, sizeof(why));
	free(code);
	if (e < 0)
		return fail_with(ret_error, -ENOTSUP,
				 "the entry of the function at %#llx of %s cannot be patched: %s",
				 (unsigned long long)f->link_addr, f->object, why);
	arch_tramp_build(tramp, at, r->code + arch_bracket_end_off, (uint32_t)i, &pt);
	e = trace_write(r->p, at, tramp, sizeof(tramp));
	if (e == 0)
		e = trace_write(r->p, b->addr, pt.entry, pt.displaced);
	if (e < 0)
		return fail_with(ret_error, e, "cannot patch the child: %s", trace_strerror(e));
	b->patched = at;
	return 0;
}

/* Function i's address, trampoline and breakpoint. */
static int arm(struct bracket_run *r, const struct measure_target *t, const struct bracket_fn *f,
	       size_t i, uint64_t bias, char **ret_error)
{
	struct bfn *b = &r->fns[i];
	uint8_t insn[16], tramp[ARCH_BRACKET_TRAMP_LEN];
	uint64_t base = 0;
	size_t len, tl;
	int e;

	if (same_file(f->object, t->binary)) {
		b->addr = bias + f->link_addr;
	} else {
		e = procmaps_file_base(trace_pid(r->p), f->object, &base);
		if (e < 0)
			return fail_with(ret_error, -ENOENT,
					 "%s is not loaded when main starts, so its function at "
					 "%#llx cannot be timed",
					 f->object, (unsigned long long)f->link_addr);
		b->addr = base + f->link_addr;
	}
	for (size_t k = 0; k < i; k++)
		if (r->fns[k].addr == b->addr)
			return fail_with(ret_error, -EINVAL,
					 "the function at %#llx of %s is given twice",
					 (unsigned long long)f->link_addr, f->object);
	b->role = f->role;
	b->arg = f->arg;
	b->clocked = f->clocked;
	b->clocked_once = f->clocked_once;
	b->size = f->size;
	if (f->role == BRACKET_PAUSE || f->role == BRACKET_FINISH || f->role == BRACKET_TOGGLE)
		return patch_entry(r, f, i, ret_error);
	e = trace_read(r->p, b->addr, insn, sizeof(insn));
	if (e < 0)
		return fail_with(ret_error, e,
				 "cannot read the code of the function at %#llx of %s",
				 (unsigned long long)f->link_addr, f->object);
	len = arch_displace_len(insn, sizeof(insn));
	tl = len ? arch_bracket_trampoline(tramp, insn, len, b->addr + len) : 0;
	if (tl) {
		b->tramp = r->code + TRAMPS_AT + i * ARCH_BRACKET_TRAMP_LEN;
		e = trace_write(r->p, b->tramp, tramp, tl);
		if (e < 0)
			return fail_with(ret_error, e, "cannot write a trampoline in the child");
	} else if (f->role != BRACKET_SIZE) { /* a SIZE entry is stepped over */
		diagnose(r,
			 "the first instruction of the function at %#llx of %s cannot run "
			 "elsewhere: its breakpoint is removed while a call runs, so calls "
			 "other threads make meanwhile are not timed",
			 (unsigned long long)f->link_addr, f->object);
	}
	e = trace_bp_insert(r->p, b->addr);
	if (e < 0)
		return fail_with(ret_error, e, "cannot set a breakpoint in the child: %s",
				 trace_strerror(e));
	return 0;
}

int bracket_start(const struct measure_target *t, char *const *argv, const struct bracket_fn *fns,
		  size_t nfns, int out_fd, int err_fd, struct bracket_run **ret, char **ret_error)
{
	struct trace_spawn_opts so;
	struct trace_failure *f = NULL;
	struct bracket_run *r;
	uint64_t main_addr, at_entry, clock;
	bool writable;
	int exec_errno = 0, devnull = -1, input = -1, e;

	*ret_error = NULL;
	if (nfns > MAX_FNS)
		return fail_with(ret_error, -E2BIG, "at most %d functions can be timed at once",
				 (int)MAX_FNS);
	r = calloc(1, sizeof(*r));
	if (r) {
		r->fns = calloc(nfns ? nfns : 1, sizeof(*r->fns));
		r->pending = calloc(1, sizeof(*r->pending));
		f = calloc(1, sizeof(*f));
	}
	if (!r || !r->fns || !r->pending || !f) {
		e = -ENOMEM;
		*ret_error = strdup("out of memory");
		goto fail;
	}
	r->nfns = nfns;
	trace_spawn_opts_init(&so, argv);
	so.aslr = t->aslr;
	so.clean_env = t->clean_env;
	so.envp = t->envp;
	so.cpu = t->cpu;
	/* What it forks runs on untraced; its process group makes sure it
	 * dies with the child. */
	so.process_group = true;
	input = measure_open_input(t);
	if (input < 0) {
		e = fail_with(ret_error, input, "cannot open the input %s: %s", t->input,
			      strerror(-input));
		goto fail;
	}
	if (out_fd < 0 || err_fd < 0)
		devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	so.stdio[0] = input;
	so.stdio[1] = out_fd >= 0 ? out_fd : devnull;
	so.stdio[2] = err_fd >= 0 ? err_fd : devnull;
	e = trace_spawn(&so, &r->p, &exec_errno);
	if (e == -TRACE_E_EXEC) {
		fail_with(ret_error, e, "cannot execute %s: %s", t->binary, strerror(exec_errno));
		goto fail;
	}
	if (e < 0) {
		fail_with(ret_error, e, "cannot start %s: %s", t->binary, trace_strerror(e));
		goto fail;
	}
	e = trace_run_to_main(r->p, t->main_link, t->entry_link, TO_MAIN_MS, &main_addr, f);
	if (e == -TRACE_E_FAILED) {
		char buf[8192];

		fail_with(ret_error, e, "%s failed before main: %s", t->binary,
			  trace_failure_format(f, buf, sizeof(buf)));
		goto fail;
	}
	if (e == 0)
		e = trace_auxv(r->p, AT_ENTRY, &at_entry);
	if (e < 0) {
		fail_with(ret_error, e, "cannot run %s to main: %s", t->binary, trace_strerror(e));
		goto fail;
	}
	e = trace_map_exec(r->p, CODE_SIZE, &r->code, &writable);
	if (e == 0)
		e = map_data(r->p, DATA_SIZE, &r->data);
	clock = e == 0 ? harness_vdso_clock(r->p) : 0;
	if (e == 0 && !clock)
		diagnose(r, "the child has no vDSO: the clock was read with the clock_gettime "
			    "system call (slower, coarser)");
	if (e == 0)
		e = inject(r, clock);
	if (e < 0) {
		fail_with(ret_error, e, "cannot put the timing stubs in the child: %s",
			  trace_strerror(e));
		goto fail;
	}
	for (size_t i = 0; i < nfns; i++) {
		e = arm(r, t, &fns[i], i, at_entry - t->entry_link, ret_error);
		if (e < 0)
			goto fail;
	}
	fd_close(devnull);
	close(input);
	free(f);
	*ret = r;
	return 0;
fail:
	fd_close(devnull);
	if (input >= 0)
		close(input);
	free(f);
	bracket_free(r);
	return e;
}

/* ---- running ------------------------------------------------------------- */

static uint64_t ts_ns(const int64_t ts[2])
{
	return (uint64_t)ts[0] * 1000000000u + (uint64_t)ts[1];
}

static struct bslot *slot_at(struct bracket_run *r, uint64_t addr)
{
	if (addr < r->data || addr >= r->data + DATA_SIZE || (addr - r->data) % ARCH_BRACKET_SLOT)
		return NULL;
	return &r->slots[(addr - r->data) / ARCH_BRACKET_SLOT];
}

static uint64_t slot_addr(const struct bracket_run *r, const struct bslot *s)
{
	return r->data + (uint64_t)(s - r->slots) * ARCH_BRACKET_SLOT;
}

static uint64_t stub_addr(const struct bracket_run *r, const struct bslot *s)
{
	return r->code + STUBS_AT + (uint64_t)(s - r->slots) * ARCH_BRACKET_STUB_LEN;
}

/* Thread tid's calls in progress get their real return addresses back
 * (restore) or the exit stubs' again: a backtrace taken in between walks
 * through to the callers. */
static void return_addresses(struct bracket_run *r, pid_t tid, bool restore)
{
	for (size_t k = 0; k < NSLOTS; k++) {
		struct bslot *s = &r->slots[k];
		uint64_t v = restore ? s->ret : stub_addr(r, s), was = 0;

		if (!s->used || (tid != 0 && s->tid != tid))
			continue;
		/* Only where the stack still holds the other: a RESUME call's
		 * slot outlives its return, and its frame may be reused. */
		if (trace_read(r->p, s->ret_at, &was, sizeof(was)) == 0 &&
		    was == (restore ? stub_addr(r, s) : s->ret))
			trace_write(r->p, s->ret_at, &v, sizeof(v));
	}
}

static void backtrace_of(struct bracket_run *r, pid_t tid, struct trace_failure *f)
{
	size_t nf = 0;

	return_addresses(r, tid, true);
	if (unwind_backtrace(trace_pid(r->p), tid, f->frames, UNWIND_MAX_FRAMES, &nf) == 0)
		f->nframes = nf;
	return_addresses(r, tid, false);
	for (size_t i = 0; i < f->nframes; i++) {
		struct unwind_frame *u = &f->frames[i];

		if (!bracket_owns(r, u->pc))
			continue;
		snprintf(u->func, sizeof(u->func), "[benchtrap timing stub]");
		u->offset = 0;
		u->module[0] = '\0';
		u->file[0] = '\0';
		u->line = 0;
	}
}

/* Where a thread stopped at function i's breakpoint goes on: its
 * displaced first instruction, or (0) over the breakpoint. */
static int run_on(struct bracket_run *r, pid_t tid, unsigned i, struct arch_regs *regs)
{
	int e;

	if (!r->fns[i].tramp)
		return 0;
	arch_set_pc(regs, r->fns[i].tramp);
	e = trace_set_regs(r->p, tid, regs);
	return e < 0 ? e : trace_thread_moved(r->p, tid);
}

/* A call of function i with no slot left: not timed, said once. */
static int unslotted(struct bracket_run *r, pid_t tid, unsigned i, struct arch_regs *regs)
{
	if (!r->said_unbracketed)
		diagnose(r,
			 "more than %d calls were in progress at once: calls past that were "
			 "not timed",
			 NSLOTS);
	r->said_unbracketed = true;
	return run_on(r, tid, i, regs);
}

/*
 * The framework's clock runs from the return of RESUME function i's call
 * by thread tid, whose return address 'ret' is the word at ret_at: the
 * return goes through a slot stub to the start stub. 1 when it does, 0
 * when no slot was left (said once), or a negative error.
 */
static int start_clock(struct bracket_run *r, pid_t tid, unsigned i, uint64_t ret_at, uint64_t ret)
{
	struct bslot *s = NULL;
	uint64_t zero[2] = { 0 }, next = r->code + arch_bracket_start_off, stub;
	int e;

	for (size_t k = 0; k < NSLOTS && !s; k++)
		if (!r->slots[k].used)
			s = &r->slots[k];
	/* The thread's resuming calls that returned are superseded: the
	 * clock runs from the latest return (a framework that reads its
	 * clock without stopping it would otherwise fill the slots). */
	for (size_t k = 0; k < NSLOTS; k++) {
		struct bslot *o = &r->slots[k];
		int64_t st[2] = { 0, 0 };

		if (o->used && o->start && o->tid == tid &&
		    trace_read(r->p, slot_addr(r, o) + ARCH_BRACKET_T0, st, sizeof(st)) == 0 &&
		    (st[0] || st[1])) {
			o->used = false;
			if (!s)
				s = o;
		}
	}
	if (!s) {
		if (!r->said_unbracketed)
			diagnose(r,
				 "more than %d calls were in progress at once: calls past that "
				 "were not timed",
				 NSLOTS);
		r->said_unbracketed = true;
		return 0;
	}
	stub = stub_addr(r, s);
	e = trace_write(r->p, slot_addr(r, s) + ARCH_BRACKET_T0, zero, sizeof(zero));
	if (e == 0)
		e = trace_write(r->p, slot_addr(r, s) + ARCH_BRACKET_RESUME, &ret, sizeof(ret));
	if (e == 0)
		e = trace_write(r->p, slot_addr(r, s) + ARCH_BRACKET_NEXT, &next, sizeof(next));
	if (e == 0)
		e = trace_write(r->p, ret_at, &stub, sizeof(stub));
	if (e < 0)
		return e;
	*s = (struct bslot){
		.used = true, .start = true, .fn = i, .tid = tid, .ret_at = ret_at, .ret = ret
	};
	return 1;
}

/* A thread at RESUME function i's entry: the clock runs from its return. */
static int on_resume(struct bracket_run *r, const struct trace_event *ev, unsigned i,
		     struct arch_regs *regs)
{
	uint64_t ret_at = 0, ret = 0;
	int e;

	if (!arch_entry_return_address(regs, &ret_at, &ret))
		return -ENOTSUP;
	e = trace_read(r->p, ret_at, &ret, sizeof(ret));
	if (e < 0)
		return e;
	/* A stopping function that reads the clock (criterion's
	 * Instant::elapsed calls Instant::now) does not start it again. */
	for (size_t k = 0; k < r->nfns; k++) {
		const struct bfn *p = &r->fns[k];

		if ((p->role == BRACKET_PAUSE || p->role == BRACKET_FINISH) && p->size &&
		    ret >= p->addr && ret < p->addr + p->size)
			return run_on(r, ev->tid, i, regs);
	}
	e = start_clock(r, ev->tid, i, ret_at, ret);
	return e < 0 ? e : run_on(r, ev->tid, i, regs);
}

/* The iterations thread tid's batch was given: its entry (add: made). */
static struct bsize *size_of(struct bracket_run *r, pid_t tid, bool add)
{
	struct bsize *free_one = NULL;

	for (size_t k = 0; k < NSLOTS; k++) {
		if (r->sizes[k].tid == tid)
			return &r->sizes[k];
		if (!r->sizes[k].tid && !free_one)
			free_one = &r->sizes[k];
	}
	if (free_one && add)
		*free_one = (struct bsize){ .tid = tid };
	return add ? free_one : NULL;
}

/* ... taken when its batch ends (a framework may start a thread a batch). */
static uint64_t count_of(struct bracket_run *r, pid_t tid)
{
	struct bsize *z = size_of(r, tid, false);
	uint64_t n = z ? z->n : 0;

	if (z)
		z->tid = 0;
	return n;
}

/* Thread tid at SIZE function i's entry, its count argument made the one
 * set (bracket_set_count), and what it is kept for its batch. */
static int on_size(struct bracket_run *r, pid_t tid, unsigned i)
{
	struct arch_regs regs;
	struct bsize *z;
	int e = trace_get_regs(r->p, tid, &regs);

	if (e < 0)
		return e;
	if (r->count) {
		arch_set_arg(&regs, r->fns[i].arg, r->count);
		e = trace_set_regs(r->p, tid, &regs);
		if (e < 0)
			return e;
	}
	z = size_of(r, tid, true);
	if (z)
		z->n = arch_arg(&regs, r->fns[i].arg);
	return run_on(r, tid, i, &regs);
}

void bracket_set_count(struct bracket_run *r, uint64_t n)
{
	r->count = n;
}

/* The batch thread tid runs by the framework's clock (NULL: no room). */
static struct bloop *loop_of(struct bracket_run *r, pid_t tid)
{
	struct bloop *free_one = NULL;

	for (size_t k = 0; k < NSLOTS; k++) {
		if (r->loops[k].tid == tid)
			return &r->loops[k];
		if (!r->loops[k].tid && !free_one)
			free_one = &r->loops[k];
	}
	if (free_one)
		*free_one = (struct bloop){ .tid = tid };
	return free_one;
}

/*
 * A thread at the end trap: a PAUSE or FINISH function was entered. The
 * clock ran from the latest return of the thread's RESUME calls (their
 * slots, freed now) to the reading on the stack. 1 with *ret_call when a
 * FINISH ended a batch that ran, else 0.
 */
static int on_end_trap(struct bracket_run *r, const struct trace_event *ev,
		       struct bracket_call *ret_call)
{
	struct arch_regs regs;
	struct bloop *l;
	int64_t ts[2];
	uint64_t caller = 0, t1, t0 = 0;
	unsigned fn = UINT_MAX;
	int e;

	e = trace_get_regs(r->p, ev->tid, &regs);
	if (e == 0)
		e = trace_read(r->p, arch_bracket_end_reading(&regs), ts, sizeof(ts));
	if (e == 0)
		e = trace_read(r->p, arch_bracket_end_caller(&regs), &caller, sizeof(caller));
	if (e < 0)
		return e;
	for (unsigned i = 0; i < r->nfns; i++)
		if (r->fns[i].patched && r->fns[i].patched + AGENT_TRAMP_CALL_LEN == caller)
			fn = i;
	if (fn == UINT_MAX)
		return -EPROTO;
	arch_set_pc(&regs, r->end_trap + 1);
	e = trace_set_regs(r->p, ev->tid, &regs);
	if (e == 0)
		e = trace_thread_moved(r->p, ev->tid);
	if (e < 0)
		return e;
	if (r->fns[fn].role == BRACKET_TOGGLE) {
		uint64_t at = arch_bracket_end_arg(&regs, r->fns[fn].arg), arg = 0, ret_at, ret;

		e = at ? trace_read(r->p, at, &arg, sizeof(arg)) : -EINVAL;
		if (e < 0)
			return e;
		/* A start: the reading is of no use, the clock runs from the
		 * call's return. (A bool argument: its low byte.) */
		if (arg & 0xff) {
			ret_at = arch_bracket_end_entry_sp(&regs);
			e = trace_read(r->p, ret_at, &ret, sizeof(ret));
			if (e == 0)
				e = start_clock(r, ev->tid, fn, ret_at, ret);
			return e < 0 ? e : 0;
		}
	}
	t1 = ts_ns(ts);
	for (size_t k = 0; k < NSLOTS; k++) {
		struct bslot *s = &r->slots[k];
		int64_t st[2] = { 0, 0 };

		if (!s->used || !s->start || s->tid != ev->tid)
			continue;
		if (trace_read(r->p, slot_addr(r, s) + ARCH_BRACKET_T0, st, sizeof(st)) < 0 ||
		    (st[0] == 0 && st[1] == 0))
			continue; /* not returned yet */
		if (ts_ns(st) > t0)
			t0 = ts_ns(st);
		s->used = false;
	}
	l = loop_of(r, ev->tid);
	if (!l)
		return 0;
	if (t0 && t1 >= t0) {
		if (!l->intervals)
			l->first = t0;
		l->last = t1;
		l->sum += t1 - t0;
		l->intervals++;
	}
	if ((r->fns[fn].role != BRACKET_FINISH && r->fns[fn].role != BRACKET_TOGGLE) ||
	    !l->intervals) {
		if (!l->intervals)
			l->tid = 0;
		return 0;
	}
	*ret_call = (struct bracket_call){ .fn = fn,
					   .tid = ev->tid,
					   .t0_ns = l->first,
					   .t1_ns = l->last,
					   .timed_ns = l->sum,
					   .intervals = l->intervals,
					   .count = count_of(r, ev->tid) };
	l->tid = 0;
	return 1;
}

/* A thread at function i's entry: bracket the call. */
static int on_entry(struct bracket_run *r, const struct trace_event *ev, unsigned i)
{
	struct bfn *b = &r->fns[i];
	struct arch_regs regs;
	struct bslot *s = NULL;
	uint64_t ret_at = 0, ret = 0, zero[4] = { 0 };
	int e;

	if (b->role == BRACKET_SIZE) {
		/* After the batches that ended are given out: the caller may
		 * set the count of the batch this one begins. */
		if (r->nended) {
			r->size_tid = ev->tid;
			r->size_fn = i;
			return 0;
		}
		return on_size(r, ev->tid, i);
	}
	e = trace_get_regs(r->p, ev->tid, &regs);
	if (e < 0)
		return e;
	if (b->role == BRACKET_RESUME)
		return on_resume(r, ev, i, &regs);
	for (size_t k = 0; k < NSLOTS; k++) {
		struct bslot *o = &r->slots[k];

		/* Re-entered: the outer call's interval holds it. */
		if (o->used && o->tid == ev->tid && o->fn == i)
			return run_on(r, ev->tid, i, &regs);
		if (!o->used && !s)
			s = o;
	}
	if (!arch_entry_return_address(&regs, &ret_at, &ret))
		return -ENOTSUP;
	e = trace_read(r->p, ret_at, &ret, sizeof(ret));
	if (e < 0)
		return e;
	if (!s)
		return unslotted(r, ev->tid, i, &regs);
	uint64_t resume = b->tramp ? b->tramp : b->addr, stub = stub_addr(r, s);

	e = trace_write(r->p, slot_addr(r, s) + ARCH_BRACKET_T0, zero, sizeof(zero));
	if (e == 0)
		e = trace_write(r->p, slot_addr(r, s) + ARCH_BRACKET_RESUME, &resume,
				sizeof(resume));
	if (e == 0)
		e = trace_write(r->p, ret_at, &stub, sizeof(stub));
	if (e < 0)
		return e;
	*s = (struct bslot){ .used = true, .fn = i, .tid = ev->tid, .ret_at = ret_at, .ret = ret };
	if (b->clocked) {
		/* Its clock's intervals from here on. */
		struct bloop *l = loop_of(r, ev->tid);

		if (l)
			*l = (struct bloop){ .tid = ev->tid };
	}
	arch_bracket_enter(&regs, r->code, slot_addr(r, s));
	e = trace_set_regs(r->p, ev->tid, &regs);
	if (e == 0)
		e = trace_thread_moved(r->p, ev->tid);
	if (e == 0 && !b->tramp) {
		/* The function runs its own first instruction: without its
		 * breakpoint until the call ends. */
		trace_settle(r->p);
		e = trace_bp_remove(r->p, b->addr);
		s->bp_removed = e == 0;
	}
	return e;
}

/* A thread at the exit trap: the call in its slot ended. */
static int on_exit_trap(struct bracket_run *r, const struct trace_event *ev,
			struct bracket_call *ret_call)
{
	struct arch_regs regs;
	struct bslot *s;
	int64_t ts[4];
	int e;

	e = trace_get_regs(r->p, ev->tid, &regs);
	if (e < 0)
		return e;
	s = slot_at(r, arch_bracket_slot(&regs));
	if (!s || !s->used)
		return -EPROTO;
	e = trace_read(r->p, slot_addr(r, s) + ARCH_BRACKET_T0, ts, sizeof(ts));
	if (e < 0)
		return e;
	arch_set_pc(&regs, s->ret);
	e = trace_set_regs(r->p, ev->tid, &regs);
	if (e == 0)
		e = trace_thread_moved(r->p, ev->tid);
	if (e == 0 && s->bp_removed)
		e = trace_bp_insert(r->p, r->fns[s->fn].addr);
	if (e < 0)
		return e;
	*ret_call = (struct bracket_call){ .fn = s->fn,
					   .tid = s->tid,
					   .t0_ns = ts_ns(&ts[0]),
					   .t1_ns = ts_ns(&ts[2]),
					   .intervals = 1,
					   .count = count_of(r, s->tid) };
	ret_call->timed_ns =
		ret_call->t1_ns > ret_call->t0_ns ? ret_call->t1_ns - ret_call->t0_ns : 0;
	if (r->fns[s->fn].clocked) {
		struct bloop *l = loop_of(r, s->tid);

		if (l && l->intervals && (!r->fns[s->fn].clocked_once || l->intervals == 1)) {
			ret_call->timed_ns = l->sum;
			ret_call->intervals = l->intervals;
			ret_call->clocked = true;
		}
		if (l)
			l->tid = 0;
	}
	s->used = false;
	return 1;
}

static bool fatal_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
	       sig == SIGABRT || sig == SIGSYS || sig == SIGTRAP;
}

/* The child is still running at the deadline: where it was, then killed. */
static int timed_out(struct bracket_run *r, int64_t deadline_ns, struct trace_failure *f)
{
	memset(f, 0, sizeof(*f));
	f->kind = TRACE_FAIL_TIMEOUT;
	(void)deadline_ns;
	if (trace_stop(r->p) == 0) {
		struct arch_regs regs;

		f->tid = trace_current_tid(r->p);
		if (trace_get_regs(r->p, f->tid, &regs) == 0)
			f->pc = arch_pc(&regs);
		backtrace_of(r, f->tid, f);
	}
	trace_kill(r->p);
	return -TRACE_E_FAILED;
}

/* A batch's end, kept until the thread stops outside the clock. */
static int defer_ended(struct bracket_run *r, const struct bracket_call *c)
{
	if (r->nended == r->capended) {
		size_t cap = r->capended ? 2 * r->capended : 8;
		struct bracket_call *v = realloc(r->ended, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->ended = v;
		r->capended = cap;
	}
	r->ended[r->nended++] = *c;
	return 0;
}

/* The oldest batch kept by defer_ended, into *ret: 1, or 0 when none. */
static int pop_ended(struct bracket_run *r, struct bracket_call *ret)
{
	if (!r->nended)
		return 0;
	*ret = r->ended[0];
	memmove(r->ended, r->ended + 1, --r->nended * sizeof(*r->ended));
	return 1;
}

int bracket_next(struct bracket_run *r, int64_t deadline_ns, struct bracket_call *ret_call,
		 int *ret_status, struct trace_failure *ret_failure)
{
	if (pop_ended(r, ret_call))
		return 1;
	if (r->exited) {
		*ret_status = r->exit_status;
		return 0;
	}
	if (r->size_tid) {
		pid_t tid = r->size_tid;
		int e;

		r->size_tid = 0;
		e = on_size(r, tid, r->size_fn);
		if (e < 0 && e != -ESRCH)
			return e;
	}
	for (;;) {
		struct trace_event ev;
		int e = trace_resume(r->p);

		if (e == 0)
			e = trace_wait_until(r->p, deadline_ns, &ev);
		if (e == -ETIMEDOUT)
			return timed_out(r, deadline_ns, ret_failure);
		if (e < 0)
			return e;
		switch (ev.kind) {
		case TRACE_EV_BREAKPOINT:
			if (ev.addr == r->exit_trap)
				return on_exit_trap(r, &ev, ret_call);
			if (ev.addr == r->end_trap) {
				e = on_end_trap(r, &ev, ret_call);
				if (e == 1)
					e = defer_ended(r, ret_call);
				if (e != 0 && e != -ESRCH)
					return e;
				continue;
			}
			for (unsigned i = 0; i < r->nfns; i++) {
				if (r->fns[i].addr == ev.addr) {
					e = on_entry(r, &ev, i);
					if (e == -ESRCH)
						break;
					if (e < 0)
						return e;
					break;
				}
			}
			/* Stopped outside the clock (the library's clock starts
			 * after a resuming function's entry). */
			if (pop_ended(r, ret_call))
				return 1;
			continue;
		case TRACE_EV_SIGNAL:
			/* Where it happened, now: only when the process dies of
			 * it is it the end (a handler may take it). */
			if (fatal_signal(ev.sig)) {
				struct trace_failure *f = r->pending;

				memset(f, 0, sizeof(*f));
				f->kind = TRACE_FAIL_SIGNAL;
				f->tid = ev.tid;
				f->sig = ev.sig;
				f->code = ev.code;
				f->addr = ev.addr;
				f->pc = ev.pc;
				backtrace_of(r, ev.tid, f);
				r->have_pending = true;
			}
			continue;
		case TRACE_EV_KILLED:
			if (r->have_pending && r->pending->sig == ev.sig) {
				*ret_failure = *r->pending;
			} else {
				memset(ret_failure, 0, sizeof(*ret_failure));
				ret_failure->kind = TRACE_FAIL_KILLED;
				ret_failure->sig = ev.sig;
			}
			return -TRACE_E_FAILED;
		case TRACE_EV_EXEC:
			memset(ret_failure, 0, sizeof(*ret_failure));
			ret_failure->kind = TRACE_FAIL_EXEC;
			ret_failure->tid = ev.tid;
			trace_kill(r->p);
			return -TRACE_E_FAILED;
		case TRACE_EV_EXITED:
			if (pop_ended(r, ret_call)) {
				r->exited = true;
				r->exit_status = ev.code;
				return 1;
			}
			*ret_status = ev.code;
			return 0;
		default:
			continue;
		}
	}
}

int bracket_batch_spans(const struct bracket_call *c, size_t nc, unsigned threads, bool inner,
			uint64_t *ret)
{
	if (threads == 0 || nc % threads)
		return -EINVAL;
	for (size_t k = 0; k < nc / threads; k++) {
		uint64_t lo = UINT64_MAX, hi = 0, last_in = 0, first_out = UINT64_MAX;

		for (size_t j = k * threads; j < (k + 1) * threads; j++) {
			lo = c[j].t0_ns < lo ? c[j].t0_ns : lo;
			hi = c[j].t1_ns > hi ? c[j].t1_ns : hi;
			last_in = c[j].t0_ns > last_in ? c[j].t0_ns : last_in;
			first_out = c[j].t1_ns < first_out ? c[j].t1_ns : first_out;
		}
		if (inner && first_out > last_in)
			ret[k] = first_out - last_in;
		else
			ret[k] = hi > lo ? hi - lo : 0;
	}
	return 0;
}

int bracket_batch_timed(const struct bracket_call *c, size_t nc, unsigned threads, uint64_t *ret)
{
	if (threads == 0 || nc % threads)
		return -EINVAL;
	for (size_t k = 0; k < nc / threads; k++) {
		uint64_t sum = 0;

		for (size_t j = k * threads; j < (k + 1) * threads; j++)
			sum += c[j].timed_ns;
		ret[k] = sum / threads;
	}
	return 0;
}

int bracket_side_next(struct bracket_side *s, char *(*said)(const char *stderr_path),
		      struct trace_failure *f)
{
	struct bracket_call c;
	int status = 0, r;

	if (!s->live)
		return 0;
	r = bracket_next(s->br, (int64_t)s->deadline, &c, &status, f);
	if (r == 1) {
		if (array_grow((void **)&s->calls, &s->capcalls, s->ncalls + 1, sizeof(c)) < 0)
			return -ENOMEM;
		s->calls[s->ncalls++] = c;
		return 1;
	}
	s->live = false;
	if (r == 0 && status == 0) {
		s->exited = true;
	} else if (r == 0) {
		char path[PATH_MAX + 16];

		snprintf(path, sizeof(path), "%s/stderr", s->dir);
		bench_result_fail_exit(s->res, status, path, said);
	} else if (r == -TRACE_E_FAILED) {
		if (f->kind == TRACE_FAIL_TIMEOUT)
			f->timeout_ms =
				(int)(s->timeout_ns / 1000000 > INT_MAX ? INT_MAX
									: s->timeout_ns / 1000000);
		bench_result_fail_with(s->res, f);
	} else {
		bench_result_fail(s->res, str_fmt("lost the child: %s", trace_strerror(r)));
	}
	return r == -ENOMEM ? r : 0;
}

int bracket_side_diagnose(const struct bracket_side *s, struct bench_result *res)
{
	size_t nd = 0;
	const char *const *d = s->br ? bracket_diagnostics(s->br, &nd) : NULL;

	for (size_t i = 0; i < nd; i++)
		if (bench_result_diagnose(res, "%s", d[i]) < 0)
			return -ENOMEM;
	return 0;
}

int bracket_side_take_samples(const struct bracket_side *s, struct bench_result *res, double *v,
			      size_t n)
{
	struct stats_options so = stats_options_default();

	if (bracket_side_diagnose(s, res) < 0)
		return -ENOMEM;
	if (!v)
		return 0;
	free(res->samples);
	res->samples = v;
	res->nsamples = n;
	if (stats_summarize(res->samples, n, &so, &res->stats) < 0) {
		res->status = BENCH_FAILED;
		free(res->error);
		res->error = strdup("no usable samples");
		return res->error ? 0 : -ENOMEM;
	}
	res->value = res->stats.median;
	return 1;
}
