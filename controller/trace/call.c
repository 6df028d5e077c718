// SPDX-License-Identifier: MIT
/*
 * Running code in the child: remote system calls, the scratch page, injected
 * calls, running to main, and the reports of a child that fails meanwhile.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "util/clock.h"
#include "util/procmaps.h"
#include "trace/internal.h"

/* Scratch page layout: the system call template at 0, the return trap of
 * injected calls at RET_OFF. */
#define RET_OFF 16
#define STUB_SIZE 4096

static struct trace_thread *current_stopped(struct trace_proc *p)
{
	struct trace_thread *t = trace_thread_find(p, p->cur);

	if (!t || t->state != TH_STOPPED)
		return NULL;
	return t;
}

/* The registers to put back after borrowing t (trace_borrow_regs); at a
 * stop it cannot judge, the registers as they are. */
static int saved_regs(struct trace_proc *p, struct trace_thread *t, struct arch_regs *ret)
{
	int r = trace_borrow_regs(p, t->tid, ret);

	return r == -TRACE_E_STATE ? trace_pt_getregs(t->tid, ret) : r;
}

/* The thread a system call is made in (trace_syscall_tid), or the current
 * one when none can be borrowed as it is. */
static struct trace_thread *syscall_thread(struct trace_proc *p)
{
	pid_t tid = trace_syscall_tid(p);
	struct trace_thread *t = tid ? trace_thread_find(p, tid) : NULL;

	return t ? t : current_stopped(p);
}

static bool fatal_signal(int sig)
{
	switch (sig) {
	case SIGSEGV:
	case SIGBUS:
	case SIGILL:
	case SIGFPE:
	case SIGABRT:
	case SIGSYS:
	case SIGTRAP:
		return true;
	default:
		return false;
	}
}

/*
 * true when thread 'tid' has a handler for 'sig' (SigCgt in its status): a
 * JIT or a garbage collector catches SIGSEGV on purpose, and a program may
 * handle SIGTRAP or SIGFPE; those signals are delivered, not failures.
 */
static bool handler_installed(pid_t tid, int sig)
{
	char path[64], line[256];
	bool caught = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long mask;

		if (sscanf(line, "SigCgt: %llx", &mask) == 1) {
			caught = sig > 0 && sig <= 64 && (mask >> (sig - 1)) & 1;
			break;
		}
	}
	fclose(f);
	return caught;
}

int trace_fill_backtrace(struct trace_proc *p, pid_t tid, struct trace_failure *f)
{
	size_t n = 0;
	int r = unwind_backtrace(p->pid, tid, f->frames, UNWIND_MAX_FRAMES, &n);

	if (r < 0)
		return r;
	/* Name the engine's own frame and stop there. */
	for (size_t i = 0; i < n; i++) {
		if (p->stub && f->frames[i].pc >= p->stub && f->frames[i].pc < p->stub + p->stub_size) {
			snprintf(f->frames[i].func, sizeof(f->frames[i].func), "[injected call]");
			f->frames[i].module[0] = '\0';
			f->frames[i].offset = 0;
			n = i + 1;
			break;
		}
	}
	f->nframes = n;
	return 0;
}

static void fail_init(struct trace_failure *f, enum trace_failure_kind kind, pid_t tid)
{
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->tid = tid;
}

/* A fatal signal event as a failure, with the backtrace of its thread. */
static void fail_signal(struct trace_proc *p, struct trace_failure *f, const struct trace_event *ev)
{
	fail_init(f, TRACE_FAIL_SIGNAL, ev->tid);
	f->sig = ev->sig;
	f->code = ev->code;
	f->addr = ev->addr;
	f->pc = ev->pc;
	trace_fill_backtrace(p, ev->tid, f);
}

/*
 * Hold every thread but 'run' stopped (unless all), resume, and wait until
 * 'run' traps at 'trap_at'. Fills ret_regs with run's registers at the
 * trap. On failure the child is killed and *f says why.
 */
/* How long a process may take to follow one of its threads' exit stops
 * (exit_group) before the thread is taken to have ended alone. */
#define WATCH_GRACE_MS 1000

/* Whether exit information f is of a thread that was waiting in the idle
 * code of o (ended by another's exit, not ending itself). */
static bool idle_exit(const struct trace_call_opts *o, const struct trace_failure *f)
{
	return o && f->nframes && f->frames[0].pc >= o->idle_lo && f->frames[0].pc < o->idle_hi;
}

/* The thread a timeout is blamed on (trace_call_opts.blame), or 'tid'. */
static pid_t blamed(struct trace_proc *p, const struct trace_call_opts *o, pid_t tid)
{
	pid_t first = 0;

	for (size_t i = 0; o && i < o->nblame; i++) {
		struct arch_regs regs;
		uint64_t pc;

		if (!trace_thread_find(p, o->blame[i]) || trace_pt_getregs(o->blame[i], &regs) < 0)
			continue;
		pc = arch_pc(&regs);
		if (pc < o->idle_lo || pc >= o->idle_hi)
			return o->blame[i];
		if (!first)
			first = o->blame[i];
	}
	return first ? first : tid;
}

/* How long the threads a timeout is reported with may take to stop. */
#define BLAME_STOP_MS 5000

/* Stop the threads a timeout may be blamed on ('tid' and o->blame), and
 * only those: a program with thousands of threads is killed at once,
 * without first stopping every one of them. */
static int stop_blamed(struct trace_proc *p, const struct trace_call_opts *o, pid_t tid)
{
	size_t n = o ? o->nblame : 0;
	pid_t *want = calloc(n + 1, sizeof(*want));
	int r;

	if (!want)
		return -ENOMEM;
	want[0] = tid;
	if (n)
		memcpy(want + 1, o->blame, n * sizeof(*want));
	r = trace_stop_threads(p, want, n + 1, BLAME_STOP_MS);
	free(want);
	return r;
}

static int run_until_trap(struct trace_proc *p, struct trace_thread *run, uint64_t trap_at,
			  bool all, int64_t deadline, int timeout_ms,
			  const struct trace_call_opts *o, struct arch_regs *ret_regs,
			  struct trace_failure *f)
{
	pid_t tid = run->tid;
	struct trace_failure exitinfo;
	bool exiting = false;
	/* A watched thread (o->blame) at its exit stop: if the process does
	 * not follow it within WATCH_GRACE_MS, that thread alone ended, and a
	 * call waiting for it would wait until the deadline. */
	int64_t grace = -1;
	int r;

	for (size_t i = 0; i < p->nthreads; i++)
		p->threads[i]->held = !all && p->threads[i]->tid != tid &&
				     p->threads[i]->state == TH_STOPPED;
	run->deliver = 0;
	p->report_exit = tid;
	if (o) {
		p->watch_exit = o->blame;
		p->nwatch_exit = o->nblame;
	}
	r = trace_resume(p);
	while (r == 0) {
		struct trace_event ev;
		struct trace_thread *t;

		r = trace_wait_until(p, grace >= 0 && (deadline < 0 || grace < deadline) ? grace
											: deadline,
				     &ev);
		if (r == -ETIMEDOUT && grace >= 0 && (deadline < 0 || grace < deadline)) {
			*f = exitinfo;
			f->kind = TRACE_FAIL_THREAD_EXIT;
			r = -TRACE_E_FAILED;
			break;
		}
		if (r == -ETIMEDOUT) {
			if (stop_blamed(p, o, tid) == 0)
				tid = blamed(p, o, tid);
			fail_init(f, TRACE_FAIL_TIMEOUT, tid);
			f->timeout_ms = timeout_ms;
			if (trace_thread_find(p, tid)) {
				struct arch_regs regs;

				if (trace_pt_getregs(tid, &regs) == 0)
					f->pc = arch_pc(&regs);
				trace_fill_backtrace(p, tid, f);
			}
			r = -TRACE_E_FAILED;
			break;
		}
		if (r < 0)
			break;
		switch (ev.kind) {
		case TRACE_EV_BREAKPOINT:
			r = trace_resume(p);
			continue;
		case TRACE_EV_SIGNAL:
			t = trace_thread_find(p, ev.tid);
			if (ev.tid == tid && ev.sig == SIGTRAP && ev.code == SI_KERNEL &&
			    arch_trap_addr(ev.pc) == trap_at) {
				t->deliver = 0;
				r = trace_pt_getregs(tid, ret_regs);
				goto out;
			}
			if (!fatal_signal(ev.sig) || handler_installed(ev.tid, ev.sig)) {
				p->signals++;
				r = trace_resume(p);
				continue;
			}
			fail_signal(p, f, &ev);
			r = -TRACE_E_FAILED;
			goto out;
		case TRACE_EV_EXITING:
			/* Where exit was called from: the thread's stack is
			 * still there at its exit stop. The first watched
			 * thread to exit is where the process was ended from,
			 * rather than the calling thread waiting for it. */
			if (!exiting ||
			    (ev.tid != tid && (exitinfo.tid == tid || idle_exit(o, &exitinfo)))) {
				fail_init(&exitinfo, TRACE_FAIL_EXIT, ev.tid);
				exitinfo.code = ev.code;
				exitinfo.sig = ev.sig;
				trace_fill_backtrace(p, ev.tid, &exitinfo);
				exiting = true;
			}
			if (ev.tid != tid && grace < 0)
				grace = clock_now_ns() + (int64_t)WATCH_GRACE_MS * 1000000;
			r = trace_resume(p);
			continue;
		case TRACE_EV_EXITED:
		case TRACE_EV_KILLED:
			if (exiting) {
				*f = exitinfo;
				if (ev.kind == TRACE_EV_EXITED)
					f->code = ev.code;
			} else {
				fail_init(f, TRACE_FAIL_EXIT, tid);
				f->code = ev.code;
			}
			if (ev.kind == TRACE_EV_KILLED) {
				f->kind = TRACE_FAIL_KILLED;
				f->sig = ev.sig;
			}
			r = -TRACE_E_FAILED;
			goto out;
		case TRACE_EV_EXEC:
			fail_init(f, TRACE_FAIL_EXEC, ev.tid);
			r = -TRACE_E_FAILED;
			goto out;
		}
	}
out:
	p->report_exit = 0;
	p->watch_exit = NULL;
	p->nwatch_exit = 0;
	for (size_t i = 0; i < p->nthreads; i++)
		p->threads[i]->held = false;
	if (r == -TRACE_E_FAILED)
		trace_kill(p);
	return r;
}

/* Run a system call in t with the syscall template at 'insn'. */
static int syscall_at(struct trace_proc *p, struct trace_thread *t, uint64_t insn, long nr,
		      const uint64_t args[6], int64_t *ret_result)
{
	struct arch_regs saved, regs, after;
	struct trace_failure f;
	bool at_bp = t->at_bp;
	pid_t cur = p->cur;
	int r;

	r = saved_regs(p, t, &saved);
	if (r < 0)
		return r;
	regs = saved;
	arch_setup_syscall(&regs, insn, nr, args);
	r = trace_pt_setregs(t->tid, &regs);
	if (r < 0)
		return r;
	t->at_bp = false;
	r = run_until_trap(p, t, insn + arch_code_syscall_len - arch_trap_len, false, -1, -1, NULL,
			   &after, &f);
	if (r < 0)
		return r;
	r = trace_pt_setregs(t->tid, &saved);
	if (r < 0)
		return r;
	t->at_bp = at_bp;
	p->cur = cur; /* the thread borrowed may not be the current one */
	*ret_result = (int64_t)arch_retval(&after);
	return 0;
}

int trace_syscall(struct trace_proc *p, long nr, const uint64_t args[6], int64_t *ret_result)
{
	struct trace_thread *t;
	uint8_t saved[16];
	struct arch_regs regs;
	uint64_t pc;
	int r, r2;

	if (p->dead)
		return -ESRCH;
	t = syscall_thread(p);
	if (!t)
		return -TRACE_E_STATE;
	if (p->stub)
		return syscall_at(p, t, p->stub, nr, args, ret_result);
	/* No scratch page yet: borrow the code at the thread's pc (every thread
	 * is stopped), raw, traps included, and put it back. */
	r = trace_pt_getregs(t->tid, &regs);
	if (r < 0)
		return r;
	pc = arch_pc(&regs);
	r = trace_mem_read(&p->mem, pc, saved, arch_code_syscall_len);
	if (r < 0)
		return r;
	r = trace_mem_write(&p->mem, pc, arch_code_syscall, arch_code_syscall_len);
	if (r < 0)
		return r;
	r = syscall_at(p, t, pc, nr, args, ret_result);
	if (p->dead)
		return r;
	r2 = trace_mem_write(&p->mem, pc, saved, arch_code_syscall_len);
	return r < 0 ? r : r2;
}

int trace_map_exec(struct trace_proc *p, size_t size, uint64_t *ret_addr, bool *ret_writable)
{
	uint64_t args[6] = { 0, size, PROT_READ | PROT_WRITE | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0 };
	bool writable = true;
	int64_t res;
	int r;

	r = trace_syscall(p, SYS_mmap, args, &res);
	if (r < 0)
		return r;
	if (res == -EACCES || res == -EPERM) {
		/* W^X policy: executable only; /proc/PID/mem still writes it. */
		args[2] = PROT_READ | PROT_EXEC;
		writable = false;
		r = trace_syscall(p, SYS_mmap, args, &res);
		if (r < 0)
			return r;
	}
	if (res < 0 && res > -4096)
		return (int)res;
	*ret_addr = (uint64_t)res;
	if (ret_writable)
		*ret_writable = writable;
	return 0;
}

int trace_map_near(struct trace_proc *p, uint64_t lo, uint64_t hi, size_t size, uint64_t reach,
		   uint64_t *ret_addr)
{
	uint64_t at;
	int64_t res;
	int r = procmaps_free_near(trace_pid(p), lo, hi, size, reach, &at);

	if (r < 0)
		return r;
	r = trace_syscall(p, SYS_mmap,
			  (const uint64_t[6]){ at, size, PROT_READ | PROT_EXEC,
					       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
					       (uint64_t)-1, 0 },
			  &res);
	if (r < 0)
		return r;
	if (res < 0 && res > -4096)
		return (int)res;
	if ((uint64_t)res != at) {
		/* A kernel before MAP_FIXED_NOREPLACE took it as a hint. */
		trace_syscall(p, SYS_munmap, (const uint64_t[6]){ (uint64_t)res, size }, &res);
		return -ENOSPC;
	}
	*ret_addr = at;
	return 0;
}

static int ensure_stub(struct trace_proc *p)
{
	uint64_t addr;
	int r;

	if (p->stub)
		return 0;
	r = trace_map_exec(p, STUB_SIZE, &addr, NULL);
	if (r < 0)
		return r;
	r = trace_mem_write(&p->mem, addr, arch_code_syscall, arch_code_syscall_len);
	if (r == 0)
		r = trace_mem_write(&p->mem, addr + RET_OFF, arch_code_trap, arch_code_trap_len);
	if (r < 0)
		return r;
	p->stub = addr;
	p->stub_size = STUB_SIZE;
	return 0;
}

int trace_call(struct trace_proc *p, uint64_t fn, const uint64_t *args, unsigned nargs,
	       const struct trace_call_opts *o, uint64_t *ret_value, struct trace_failure *failure)
{
	struct trace_call_opts defaults = { .timeout_ms = -1 };
	struct arch_regs saved, regs, after;
	struct trace_fpregs fpsaved;
	struct trace_failure local;
	struct trace_call_counts before;
	struct trace_thread *t;
	uint64_t push_addr, push_val, trap_at;
	bool push, at_bp;
	int64_t deadline;
	int r;

	if (!o)
		o = &defaults;
	if (p->dead)
		return -ESRCH;
	if (nargs > ARCH_MAX_ARGS)
		return -E2BIG;
	if (!current_stopped(p))
		return -TRACE_E_STATE;
	r = ensure_stub(p);
	if (r < 0)
		return r;
	t = current_stopped(p);
	if (!t)
		return -TRACE_E_STATE;
	r = saved_regs(p, t, &saved);
	if (r < 0)
		return r;
	/* The floating-point control state too: a called function that
	 * changes the rounding mode (MXCSR, the x87 control word) must not
	 * leave it changed for the program or for the next call. */
	r = trace_pt_getfpregs(t->tid, &fpsaved);
	if (r < 0)
		return r;
	regs = saved;
	trap_at = p->stub + RET_OFF;
	r = arch_setup_call(&regs, fn, trap_at, args, nargs, &push, &push_addr, &push_val);
	if (r < 0)
		return r;
	if (push) {
		r = trace_mem_write(&p->mem, push_addr, &push_val, sizeof(push_val));
		if (r < 0)
			return r;
	}
	r = trace_pt_setregs(t->tid, &regs);
	if (r < 0)
		return r;
	at_bp = t->at_bp;
	t->at_bp = false;
	deadline = o->timeout_ms <= 0 ? -1 : clock_now_ns() + (int64_t)o->timeout_ms * 1000000;
	before = (struct trace_call_counts){ p->clones, p->forks, p->signals };
	t->count_syscalls = o->syscalls != NULL;
	p->syscalls = o->syscalls;
	r = run_until_trap(p, t, trap_at, o->all_threads, deadline, o->timeout_ms, o, &after,
			   failure ? failure : &local);
	t->count_syscalls = false;
	p->syscalls = NULL;
	if (r < 0)
		return r;
	if (o->counts)
		*o->counts = (struct trace_call_counts){ p->clones - before.clones,
							 p->forks - before.forks,
							 p->signals - before.signals };
	r = trace_pt_setregs(t->tid, &saved);
	if (r == 0)
		r = trace_pt_setfpregs(t->tid, &fpsaved);
	if (r < 0)
		return r;
	t->at_bp = at_bp;
	p->cur = t->tid;
	if (ret_value)
		*ret_value = arch_retval(&after);
	return 0;
}

/* ---- run to main ------------------------------------------------------------ */

/* Resume until some thread stops at breakpoint 'addr'. */
static int run_to_bp(struct trace_proc *p, uint64_t addr, int64_t deadline, int timeout_ms,
		     struct trace_failure *f)
{
	int r = trace_resume(p);

	while (r == 0) {
		struct trace_event ev;

		r = trace_wait_until(p, deadline, &ev);
		if (r == -ETIMEDOUT) {
			fail_init(f, TRACE_FAIL_TIMEOUT, p->pid);
			f->timeout_ms = timeout_ms;
			if (trace_stop_threads(p, &p->pid, 1, BLAME_STOP_MS) == 0 &&
			    trace_thread_find(p, p->pid))
				trace_fill_backtrace(p, p->pid, f);
			trace_kill(p);
			return -TRACE_E_FAILED;
		}
		if (r < 0)
			return r;
		switch (ev.kind) {
		case TRACE_EV_BREAKPOINT:
			if (ev.addr == addr)
				return 0;
			break;
		case TRACE_EV_SIGNAL:
			if (!fatal_signal(ev.sig) || handler_installed(ev.tid, ev.sig))
				break;
			fail_signal(p, f, &ev);
			trace_kill(p);
			return -TRACE_E_FAILED;
		case TRACE_EV_EXITED:
		case TRACE_EV_KILLED:
		case TRACE_EV_EXITING:
			fail_init(f, ev.kind == TRACE_EV_KILLED ? TRACE_FAIL_KILLED : TRACE_FAIL_EXIT,
				  p->pid);
			f->code = ev.code;
			f->sig = ev.sig;
			trace_kill(p);
			return -TRACE_E_FAILED;
		case TRACE_EV_EXEC:
			break;
		}
		r = trace_resume(p);
	}
	return r;
}

/* Insert a breakpoint at 'addr' and resume until some thread stops there;
 * the breakpoint stays. */
static int stop_at(struct trace_proc *p, uint64_t addr, int64_t deadline, int timeout_ms,
		   struct trace_failure *f)
{
	int r = trace_bp_insert(p, addr);

	if (r < 0)
		return r;
	return run_to_bp(p, addr, deadline, timeout_ms, f);
}

/* Single-step the current thread until it has executed a call; its first
 * argument is main (glibc's _start calls __libc_start_main(main, ...)). */
#define MAX_ENTRY_STEPS 64

static int find_main_by_stepping(struct trace_proc *p, uint64_t *ret_main)
{
	pid_t tid = p->cur;

	for (int i = 0; i < MAX_ENTRY_STEPS; i++) {
		struct arch_regs before, after;
		struct trace_status st;
		uint64_t word;
		int status, r;

		r = trace_pt_getregs(tid, &before);
		if (r < 0)
			return r;
		r = trace_pt_step(tid, 0);
		if (r < 0)
			return r;
		r = trace_wait_tid(tid, &status);
		if (r < 0)
			return r;
		trace_status_classify(status, &st);
		if (st.kind != TRACE_ST_SIGNAL || st.code != SIGTRAP) {
			/* Anything but a step this early: give up (and reap). */
			trace_kill(p);
			return -TRACE_E_NOMAIN;
		}
		r = trace_pt_getregs(tid, &after);
		if (r < 0)
			return r;
		r = trace_mem_read(&p->mem, arch_sp(&after), &word, sizeof(word));
		if (r < 0)
			return r;
		if (arch_step_was_call(&before, &after, word)) {
			uint64_t main_addr = arch_arg(&after, 0);

			if (main_addr == 0)
				return -TRACE_E_NOMAIN;
			*ret_main = main_addr;
			return 0;
		}
	}
	return -TRACE_E_NOMAIN;
}

int trace_run_to_main(struct trace_proc *p, uint64_t main_link, uint64_t entry_link,
		      int timeout_ms, uint64_t *ret_main, struct trace_failure *failure)
{
	int64_t deadline = timeout_ms <= 0 ? -1 : clock_now_ns() + (int64_t)timeout_ms * 1000000;
	struct trace_failure local;
	struct trace_failure *f = failure ? failure : &local;
	uint64_t entry, main_addr = 0;
	int r;

	if (p->dead)
		return -ESRCH;
	r = trace_auxv(p, AT_ENTRY, &entry);
	if (r < 0)
		return r;
	if (main_link) {
		main_addr = main_link + (entry - entry_link);
	} else {
		r = stop_at(p, entry, deadline, timeout_ms, f);
		if (r < 0)
			return r;
		trace_bp_remove(p, entry);
		r = find_main_by_stepping(p, &main_addr);
		if (r < 0)
			return r;
	}
	r = stop_at(p, main_addr, deadline, timeout_ms, f);
	if (r < 0)
		return r;
	r = trace_bp_remove(p, main_addr);
	if (r < 0)
		return r;
	*ret_main = main_addr;
	return 0;
}

/* ---- reports -------------------------------------------------------------------- */

static size_t append(char *buf, size_t size, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static size_t append(char *buf, size_t size, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (len >= size)
		return len;
	va_start(ap, fmt);
	n = vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
	return n < 0 ? len : len + (size_t)n;
}

static const char *sig_abbrev(int sig)
{
	const char *s = sigabbrev_np(sig);

	return s ? s : "?";
}

char *trace_failure_format(const struct trace_failure *f, char *buf, size_t size)
{
	size_t len = 0;

	if (size == 0)
		return buf;
	buf[0] = '\0';
	switch (f->kind) {
	case TRACE_FAIL_SIGNAL:
		/* si_code <= 0: sent (kill, raise, abort), and si_addr's
		 * place holds the sender's pid, not an address. */
		if (f->code <= 0)
			len = append(buf, size, len, "SIG%s (%s) sent by pid %u, pc 0x%llx",
				     sig_abbrev(f->sig),
				     sigdescr_np(f->sig) ? sigdescr_np(f->sig) : "?",
				     (unsigned)(f->addr & 0xffffffffu),
				     (unsigned long long)f->pc);
		else
			len = append(buf, size, len, "SIG%s (%s) at address 0x%llx, pc 0x%llx",
				     sig_abbrev(f->sig),
				     sigdescr_np(f->sig) ? sigdescr_np(f->sig) : "?",
				     (unsigned long long)f->addr, (unsigned long long)f->pc);
		break;
	case TRACE_FAIL_EXIT:
		if (f->sig)
			len = append(buf, size, len, "exited by SIG%s", sig_abbrev(f->sig));
		else
			len = append(buf, size, len, "exited with status %d", f->code);
		break;
	case TRACE_FAIL_KILLED:
		len = append(buf, size, len, "killed by SIG%s", sig_abbrev(f->sig));
		break;
	case TRACE_FAIL_TIMEOUT:
		len = append(buf, size, len, "timed out after %d ms and was killed", f->timeout_ms);
		break;
	case TRACE_FAIL_EXEC:
		len = append(buf, size, len, "executed another program");
		break;
	case TRACE_FAIL_THREAD_EXIT:
		len = append(buf, size, len,
			     "thread %d ended inside the call (pthread_exit, or cancelled), "
			     "which then could not return; the process was killed",
			     (int)f->tid);
		break;
	}
	len = append(buf, size, len, "\n");
	for (size_t i = 0; i < f->nframes; i++) {
		const struct unwind_frame *fr = &f->frames[i];
		const char *slash = strrchr(fr->module, '/');
		char *demangled = unwind_frame_demangled(fr);
		const char *func = demangled ? demangled : fr->func;

		len = append(buf, size, len, "  #%zu 0x%llx", i, (unsigned long long)fr->pc);
		if (func[0] && !fr->module[0])
			len = append(buf, size, len, " %s", func);
		else if (func[0])
			len = append(buf, size, len, " %s+0x%llx", func,
				     (unsigned long long)fr->offset);
		free(demangled);
		if (fr->file[0])
			len = append(buf, size, len, " (%s:%d)", fr->file, fr->line);
		if (fr->module[0])
			len = append(buf, size, len, " [%s]", slash ? slash + 1 : fr->module);
		len = append(buf, size, len, "\n");
	}
	return buf;
}
