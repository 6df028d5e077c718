// SPDX-License-Identifier: MIT
/*
 * Calibration of an observing session (session.h): an empty function
 * injected into the process and observed like any other measures what a
 * stop costs.
 */
#include <errno.h>
#include <stdlib.h>

#include "observe/session.h"

void observe_calib_end(struct session *s, pid_t tid)
{
	trace_set_regs(s->p, tid, &s->calib_saved);
	trace_thread_moved(s->p, tid);
	trace_bp_remove(s->p, s->calib_end);
	if (s->funcs[s->calib_func].armed) {
		trace_bp_remove(s->p, s->funcs[s->calib_func].addr);
		observe_entry_del(s, s->funcs[s->calib_func].addr);
		s->funcs[s->calib_func].armed = false;
	}
	s->calibrating = false;
}

/* ---- calibration ------------------------------------------------------------- */

/*
 * Inject loop(n) over the empty function into the current thread, with the
 * empty function armed like any observed one; the event loop times its
 * calls and observe_calib_end() restores the thread when loop returns.
 */
int observe_calib_start(struct session *s)
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
	r = observe_func_add(s, "[calibration]", NULL, "[benchtrap]", page + arch_code_calib_fn_off,
			     false, &fi);
	if (r < 0)
		return r;
	s->calib_func = fi;
	s->calib_end = page + arch_code_calib_len;
	r = trace_bp_insert(s->p, s->funcs[fi].addr);
	if (r == 0)
		r = observe_entry_add(s, s->funcs[fi].addr, fi);
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

void observe_calib_finish(struct session *s)
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
