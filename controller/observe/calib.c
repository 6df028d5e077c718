// SPDX-License-Identifier: MIT
/*
 * Calibration of an observing session (session.h): an empty function
 * injected into the process and observed like any other measures what a
 * stop costs.
 */
#include <errno.h>
#include <stdlib.h>

#include "observe/session.h"

/* Functions that time calls with breakpoints: their stops need the
 * calibration by breakpoints too. */
static bool traps_needed(const struct session *s)
{
	for (size_t i = 0; i < s->nfuncs; i++)
		if (s->funcs[i].armed && !s->funcs[i].fast && !s->funcs[i].calib &&
		    !s->funcs[i].skip)
			return true;
	return false;
}

static int start_loop(struct session *s, pid_t tid)
{
	uint64_t push_addr, push_val, arg;
	struct arch_regs regs = s->calib_saved;
	bool push;
	int r;

	arg = s->o->calib_calls ? s->o->calib_calls : OBSERVE_CALIB_CALLS_DEFAULT;
	r = arch_setup_call(&regs, s->calib_page + arch_code_calib_loop_off, s->calib_end, &arg, 1,
			    &push, &push_addr, &push_val);
	if (r == 0 && push)
		r = trace_write(s->p, push_addr, &push_val, sizeof(push_val));
	if (r == 0)
		r = trace_set_regs(s->p, tid, &regs);
	if (r == 0)
		r = trace_thread_moved(s->p, tid);
	return r;
}

/* The empty function with an entry breakpoint, for the second round of
 * calls (or the only one, without the agent). */
static int arm_traps(struct session *s)
{
	uint32_t fi;
	int r;

	r = trace_write(s->p, s->calib_page, arch_code_calib, arch_code_calib_len);
	if (r == 0)
		r = observe_func_add(s, "[calibration]", NULL, "[benchtrap]",
				     s->calib_page + arch_code_calib_fn_off, false, &fi);
	if (r < 0)
		return r;
	s->calib_func = fi;
	r = trace_bp_insert(s->p, s->funcs[fi].addr);
	if (r == 0)
		r = observe_entry_add(s, s->funcs[fi].addr, fi);
	if (r < 0)
		return r;
	s->funcs[fi].armed = true;
	s->funcs[fi].calib = true;
	return 0;
}

/* The empty function patched, for the calls through the agent. */
static int arm_patched(struct session *s)
{
	struct arch_patch pt;
	const char *why = NULL;
	char buf[128];
	uint64_t at, fn = s->calib_page + arch_code_calib_fn_off;
	uint32_t fi;
	int r;

	r = trace_write(s->p, s->calib_page, arch_code_calib, arch_code_calib_len);
	if (r == 0)
		r = trace_write(s->p, fn, arch_code_calib_roomy_fn, arch_code_calib_roomy_fn_len);
	if (r == 0)
		r = observe_func_add(s, "[calibration, patched]", NULL, "[benchtrap]", fn, false,
				     &fi);
	if (r < 0)
		return r;
	s->funcs[fi].calib = true;
	s->calib_obj.lo = s->calib_page;
	s->calib_obj.hi = s->calib_page + 4096;
	r = observe_fast_slot(s, &s->calib_obj, &at);
	if (r == 0)
		r = arch_patch_plan(arch_code_calib_roomy_fn, arch_code_calib_roomy_fn_len, fn, at,
				    &pt, buf, sizeof(buf));
	if (r == 0)
		r = observe_fast_install(s, &s->calib_obj, fi, at, &pt, &why);
	if (r < 0)
		return r;
	s->funcs[fi].armed = true;
	s->calib_fast_func = fi;
	return 0;
}

void observe_calib_end(struct session *s, pid_t tid, bool abort)
{
	if (s->calib_fast_func != UINT32_MAX && s->funcs[s->calib_fast_func].armed) {
		observe_fast_drain(s);
		observe_fast_unpatch(s, s->calib_fast_func);
		if (!abort && traps_needed(s) && arm_traps(s) == 0 && start_loop(s, tid) == 0)
			return; /* the second round */
	}
	trace_set_regs(s->p, tid, &s->calib_saved);
	trace_thread_moved(s->p, tid);
	trace_bp_remove(s->p, s->calib_end);
	if (s->calib_func != UINT32_MAX && s->funcs[s->calib_func].armed) {
		trace_bp_remove(s->p, s->funcs[s->calib_func].addr);
		observe_entry_del(s, s->funcs[s->calib_func].addr);
		s->funcs[s->calib_func].armed = false;
	}
	s->calibrating = false;
}

/* ---- calibration ------------------------------------------------------------- */

/*
 * Inject loop(n) over the empty function into the current thread: first
 * with the function patched, when there is an agent, then with an entry
 * breakpoint, when some function has breakpoints (or there is no agent).
 * The event loop times its calls; observe_calib_end() starts the second
 * round, and restores the thread when the last one returns.
 */
int observe_calib_start(struct session *s)
{
	uint64_t page;
	pid_t tid = trace_inject_tid(s->p);
	int r;

	/* A thread that can be borrowed and given back as it was: not one
	 * in the middle of a clone, whose thread would be made twice. */
	if (!tid)
		return -TRACE_E_STATE;
	r = trace_borrow_regs(s->p, tid, &s->calib_saved);
	if (r < 0)
		return r;
	r = trace_map_exec(s->p, 4096, &page, NULL);
	if (r < 0)
		return r;
	s->calib_page = page;
	s->calib_end = page + arch_code_calib_len;
	r = s->agent ? arm_patched(s) : -ENOENT;
	if (r < 0 && s->agent)
		observe_diagnose(s, "the cost of a patched call could not be calibrated (%s)",
				 trace_strerror(r));
	if (r < 0)
		r = arm_traps(s);
	if (r == 0)
		r = trace_bp_insert(s->p, s->calib_end);
	if (r == 0)
		r = start_loop(s, tid);
	if (r < 0)
		return r;
	s->calib_tid = tid;
	s->calibrating = true;
	return 0;
}

void observe_calib_finish(struct session *s)
{
	struct func *f;
	double *active = NULL, *stopped = NULL;
	uint64_t *res = NULL;

	if (s->calib_func == UINT32_MAX || !s->funcs[s->calib_func].ncalls)
		return;
	f = &s->funcs[s->calib_func];
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
