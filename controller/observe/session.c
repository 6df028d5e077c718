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
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "arch/agent.h"
#include "util/array.h"
#include "unwind/unwind.h"
#include "util/clock.h"
#include "observe/session.h"

void observe_diagnose(struct session *s, const char *fmt, ...)
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

static int call_add(struct func *f, const struct observe_call *c)
{
	if (array_grow((void **)&f->calls, &f->cap, f->ncalls + 1, sizeof(*f->calls)) < 0)
		return -ENOMEM;
	f->calls[f->ncalls++] = *c;
	return 0;
}

void observe_fast_call(struct session *s, uint32_t fi, uint32_t thread, uint64_t t0, uint64_t t1)
{
	struct func *f = &s->funcs[fi];
	/* In counter readings until the results convert them (results.c). */
	struct observe_call c = {
		.t_start = (int64_t)t0,
		.t_end = (int64_t)t1,
		.tid = (pid_t)thread,
	};

	if (call_add(f, &c) < 0)
		observe_diagnose(s, "out of memory: calls of %s were lost", f->name);
	else if (!f->calib)
		s->calls++;
}

/* The stop accounting from now on, for the patched calls (results.c). */
static void checkpoint(struct session *s)
{
	if (!s->npatched)
		return;
	if (s->ncheckpoints && s->checkpoints[s->ncheckpoints - 1].stopped == s->stopped &&
	    s->checkpoints[s->ncheckpoints - 1].resumes == s->resumes)
		return;
	if (array_grow((void **)&s->checkpoints, &s->capcheckpoints, s->ncheckpoints + 1,
		       sizeof(*s->checkpoints)) < 0)
		return;
	s->checkpoints[s->ncheckpoints++] =
		(struct checkpoint){ clock_now_ns(), s->stopped, s->resumes };
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
	if (array_grow((void **)&s->deferred, &s->capdeferred, s->ndeferred + 1,
		       sizeof(*s->deferred)) < 0) {
		trace_bp_remove(s->p, addr);
		return;
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
			observe_diagnose(s, "out of memory: calls of %s were lost", f->name);
		if (!f->calib)
			s->calls++;
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

	if (!fr->ret_slot)
		return true; /* a register: nothing a later store changes */
	if (trace_read(s->p, fr->ret_slot, &word, sizeof(word)) < 0)
		return true;
	return word == addr;
}

static int on_breakpoint(struct session *s, const struct trace_event *ev, int64_t now)
{
	struct observe_stack *st = stack_of(s, ev->tid, false);
	const struct entry *en;
	struct arch_regs regs;
	size_t above;
	uint64_t sp;
	int r;

	if (s->calibrating && ev->addr == s->calib_end && ev->tid == s->calib_tid) {
		observe_calib_end(s, ev->tid, false);
		return 0;
	}
	if (ev->addr == s->dl_notify && s->dl_notify) {
		observe_profile_forget(s);
		r = observe_scan_maps(s);
		if (r < 0)
			observe_diagnose(s, "cannot read the process's memory map: %s",
					 strerror(-r));
		return 0;
	}
	for (size_t k = 0; k < 3; k++)
		if (ev->addr == s->unwind_start[k] && s->unwind_start[k])
			observe_fast_unwinding(s, ev->tid, true);
	if (ev->addr == s->unwind_catch && s->unwind_catch)
		observe_fast_unwinding(s, ev->tid, false);
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
		/* A coroutine's call returning beneath another's, open on
		 * another stack: those stay. */
		k = observe_stack_beneath(st, ev->addr, sp, &above);
		if (k && returned_through(s, &st->v[st->n - above - 1], ev->addr)) {
			struct observe_frame *keep = malloc(above * sizeof(*keep));

			if (!keep)
				return -ENOMEM;
			/* The other stacks' frames set aside, these completed,
			 * those put back on top. */
			memcpy(keep, &st->v[st->n - above], above * sizeof(*keep));
			st->n -= above;
			while (k--)
				pop_frame(s, st, true, now);
			memcpy(&st->v[st->n], keep, above * sizeof(*keep));
			st->n += above;
			free(keep);
			return 0;
		}
	}
	en = observe_entry_find(s, ev->addr);
	if (en) {
		struct func *f = &s->funcs[en->func];
		struct observe_frame fr = {
			.func = en->func,
			.sp_after = arch_entry_sp_after_return(&regs),
			.t_start = now,
			.stopped_start = s->stopped,
			.resumes_start = s->resumes,
		};

		if (arch_entry_return_address(&regs, &fr.ret_slot, &fr.ret_addr)) {
			r = trace_read(s->p, fr.ret_slot, &fr.ret_addr, sizeof(fr.ret_addr));
			if (r < 0)
				return r == -ESRCH ? 0 : r;
		}
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
			if (r == 0) {
				f->skipped++;
				s->calls++;
			}
			return r == -ESRCH ? 0 : r;
		}
		r = observe_bp_insert(s, fr.ret_addr);
		if (r < 0) {
			observe_diagnose(s, "a call of %s could not be followed to its return (%s)",
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
	observe_fast_drain(s);
	observe_fast_unpatch_all(s);
	observe_fast_quiesce(s);
	for (size_t i = 0; i < s->nfuncs; i++) {
		if (s->funcs[i].armed && !s->funcs[i].fast)
			trace_bp_remove(s->p, s->funcs[i].addr);
		s->funcs[i].armed = false;
	}
	s->nentries = 0;
	if (s->dl_notify)
		trace_bp_remove(s->p, s->dl_notify);
	s->dl_notify = 0;
	for (size_t k = 0; k < 3; k++)
		if (s->unwind_start[k])
			trace_bp_remove(s->p, s->unwind_start[k]);
	if (s->unwind_catch)
		trace_bp_remove(s->p, s->unwind_catch);
	memset(s->unwind_start, 0, sizeof(s->unwind_start));
	s->unwind_catch = 0;
	s->observing = false;
	s->prof_from = 0;
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

/* What the tick reports: the count kept per call, the functions armed
 * counted now (a tick is rare, arming has many paths). */
static void progress_now(const struct session *s, int64_t start, int64_t now,
			 struct observe_progress *ret)
{
	size_t armed = 0;

	for (size_t i = 0; i < s->nfuncs; i++)
		armed += s->funcs[i].armed && !s->funcs[i].calib;
	ret->calls = s->calls;
	ret->armed = armed;
	ret->elapsed_ns = now - start;
}

static int run_loop(struct session *s)
{
	int64_t start = clock_now_ns(), last_tick = start;
	int64_t deadline = s->o->duration_ns > 0 ? start + s->o->duration_ns : -1;
	int r = trace_resume(s->p);
	bool retried = false;

	s->resumes++;
	checkpoint(s);
	while (r == 0) {
		struct trace_event ev;
		/* The agent's ring is read every DRAIN_MS while calls are
		 * patched. */
		int64_t now, due, until, wait_ms = !s->npatched ? TICK_MS
						 : s->drain_ms	 ? s->drain_ms
								 : DRAIN_MS;
		bool pending = false;

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
		now = clock_now_ns();
		due = observe_profile_due(s);
		if (due >= 0 && now >= due && !trace_has_pending(s->p)) {
			/* A sample: a stop of its own, accounted as any stop.
			 * A thread that reached a breakpoint meanwhile goes
			 * first, and the sample is dropped. */
			r = trace_stop(s->p);
			if (r < 0)
				break;
			observe_profile_stopped(s, now);
			if (!trace_has_pending(s->p))
				observe_profile_sample(s);
			pending = trace_has_pending(s->p);
			r = trace_resume(s->p);
			s->stopped += clock_now_ns() - now;
			if (!pending) {
				s->resumes++;
				observe_profile_resumed(s, clock_now_ns());
			}
			checkpoint(s);
			continue;
		}
		until = now + wait_ms * 1000000;
		if (due >= 0 && due < until)
			until = due;
		r = trace_wait_until(s->p, until, &ev);
		now = clock_now_ns();
		s->drain_ms = observe_fast_drain(s) > AGENT_RING_RECORDS / 8 ? DRAIN_FAST_MS
									    : DRAIN_MS;
		if (r == 0)
			observe_profile_stopped(s, now);
		if (r == -ETIMEDOUT && due >= 0 && now >= due &&
		    now - last_tick < TICK_MS * 1000000) {
			r = 0;
			continue; /* the sample, at the top */
		}
		if (r == -ETIMEDOUT && now - last_tick < TICK_MS * 1000000) {
			r = 0;
			continue; /* a drain of the ring, not yet a tick */
		}
		if (r == -ETIMEDOUT || now - last_tick >= TICK_MS * 1000000) {
			struct observe_progress pr;

			last_tick = now;
			progress_now(s, start, now, &pr);
			/* The tick runs during the calibration too: under a
			 * storm of signals on a loaded machine it may never
			 * end, and benchtrap must still stop. Observing that
			 * stops ends it first (code of ours runs in the
			 * program's thread). */
			if (s->o->tick && s->o->tick(s->o->userdata, s->pid, s->observing, &pr)) {
				if (s->calibrating && !s->attached)
					observe_calib_end(s, s->calib_tid, true);
				if (s->attached) {
					r = 0; /* a timeout, or an event left for the detach */
					break;
				}
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
			observe_profile_resumed(s, clock_now_ns());
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
			memset(s->unwind_start, 0, sizeof(s->unwind_start));
			s->unwind_catch = 0;
			s->npatched = 0;
			s->observing = false;
			s->calibrating = false;
			observe_diagnose(
				s, "the program executed another program; observing stopped there");
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
			/* What the agent wrote up to the end; calls still
			 * open never returned. */
			observe_fast_drain(s);
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
		if (s->calibrating == false && s->calib_page && !s->res->calibrated)
			observe_calib_finish(s);
		if (s->observing)
			reconcile_threads(s);
		pending = trace_has_pending(s->p);
		r = trace_resume(s->p);
		s->stopped += clock_now_ns() - now;
		if (!pending) {
			s->resumes++;
			observe_profile_resumed(s, clock_now_ns());
		}
		checkpoint(s);
	}
	if (r == -ESRCH)
		return 0;
	return r;
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
		.calib_func = UINT32_MAX,
		.calib_fast_func = UINT32_MAX,
	};
	int64_t t0;
	int slack, r;

	res.pid = s.pid;
	res.attached = attached;
	s.pattern_hit = calloc(o->nsymbols + 1, sizeof(*s.pattern_hit));
	if (!s.pattern_hit)
		return -ENOMEM;
	s.thread_count = trace_thread_count(p);
	/* The current thread may sit on a breakpoint's address that is now
	 * armed again (main, when it is observed): run it, do not step it. */
	trace_thread_moved(p, trace_current_tid(p));
	s.no_patch = o->no_patch || o->profile_dir;
	if (!s.no_patch && (observe_fast_start(&s) < 0 || s.fast_off))
		observe_diagnose(&s, "no function is patched, every one has breakpoints: %s",
				 s.fast_off ? s.fast_off : "the agent could not be injected");
	r = observe_scan_maps(&s);
	if (r < 0)
		goto fail;
	r = observe_calib_start(&s);
	if (r < 0) {
		observe_diagnose(
			&s,
			"the cost of a stop could not be calibrated (%s): durations include "
			"it",
			trace_strerror(r));
		r = 0;
	}
	/* A sample falls due a few microseconds ahead, inside a short call:
	 * woken the default 50 µs late, the loop would find the call over. */
	slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	if (o->profile_dir)
		prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	t0 = clock_now_ns();
	r = run_loop(&s);
	if (o->profile_dir && slack > 0)
		prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0);
	res.observed_s =
		(double)((s.t_stopped_observing ? s.t_stopped_observing : clock_now_ns()) - t0) /
		1e9;
	res.events = s.events;
	if (r < 0)
		goto fail;
	if (!res.calibrated && s.calib_page)
		observe_calib_finish(&s);
	if (attached && trace_alive(p)) {
		int64_t unused;
		uint64_t args[6] = { s.calib_page, 4096, 0, 0, 0, 0 };

		/* The loop may have ended with the process running. */
		trace_stop(p);
		remove_all(&s);
		drop_stale_events(&s);
		if (s.calibrating)
			observe_calib_end(&s, s.calib_tid, true);
		if (s.calib_page) {
			r = trace_syscall(p, SYS_munmap, args, &unused);
			if (r < 0)
				observe_diagnose(&s,
						 "the calibration page could not be unmapped: %s",
						 trace_strerror(r));
		}
		observe_verify_code(&s);
		res.end = OBSERVE_DETACHED;
		r = trace_detach(p);
		if (r < 0)
			observe_diagnose(&s, "detaching did not go cleanly: %s", trace_strerror(r));
		r = 0;
	}
	r = observe_build_results(&s, o->symbols, o->nsymbols);
	if (r < 0)
		goto fail;
	observe_session_free(&s);
	*ret = res;
	return 0;
fail:
	/* An attached process runs on whatever went wrong: its patched
	 * entries are put back here (the agent stays, harmless), and the
	 * caller's trace_proc_free() writes back the original bytes of every
	 * breakpoint that remains, then detaches. */
	if (s.agent && trace_alive(p) && trace_stop(p) == 0) {
		observe_fast_unpatch_all(&s);
		observe_fast_quiesce(&s);
	}
	observe_session_free(&s);
	observe_result_clear(&res);
	return r;
}
