// SPDX-License-Identifier: MIT
/*
 * observe --profile (session.h): where the calls of each observed function
 * spend their time, by call stack, sampled while the program runs.
 *
 * Every OBSERVE_PROFILE_PERIOD_MS of the time the program ran inside
 * observed calls (observe_profile_spend: never the time benchtrap held it
 * at a breakpoint, nor the time before a resumed thread is back in its own
 * code), the loop stops the process (trace_stop), and for each such thread
 * unwinds its stack once and adds it, cut at the function's outermost
 * frame, to every observed function the thread is inside (a call of 'a'
 * inside a call of 'b' counts for both: b's flamegraph holds a's). The
 * time stopped is added to the session's stopped time and the resume to its
 * resumes, so that it is removed from the calls it falls in, like any stop.
 *
 * A clock of wall time would not do: the stops at breakpoints take far
 * longer than a short function's own code, so a sample falls due while the
 * thread is held at one, and is taken right after the resume, where the
 * thread still stands on the function's first instructions. Its callees,
 * where the time goes, would seldom be seen.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf.h"
#include "report/flamegraph.h"
#include "unwind/unwind.h"
#include "util/atomic.h"
#include "util/clock.h"
#include "util/strutil.h"
#include "observe/session.h"

#define OBSERVE_PROFILE_PERIOD_MS 1 /* between two samples */
#define OBSERVE_PROFILE_FRAMES 128  /* frames of one stack at most */
#define PERIOD_NS (OBSERVE_PROFILE_PERIOD_MS * 1000000LL)

size_t observe_profile_cut(const struct unwind_frame *frames, size_t n, uint64_t addr)
{
	for (size_t i = n; i-- > 0;)
		if (frames[i].func[0] && frames[i].pc - frames[i].offset == addr)
			return i + 1;
	return 0;
}

/* Whether some thread is inside an observed call. */
static bool inside_some_call(const struct session *s)
{
	for (size_t i = 0; i < s->nstacks; i++)
		for (size_t k = 0; k < s->stacks[i].n; k++)
			if (!s->funcs[s->stacks[i].v[k].func].calib)
				return true;
	return false;
}

int64_t observe_profile_spend(int64_t left, int64_t from, int64_t now, int64_t period)
{
	if (now > from)
		left -= now - from;
	while (left <= 0)
		left += period;
	return left;
}

void observe_profile_resumed(struct session *s, int64_t now)
{
	int64_t latency = s->res->calibrated ? (int64_t)s->res->calib.latency : 0;

	s->prof_from = 0;
	if (!s->o->profile_dir || !s->observing || s->calibrating || !inside_some_call(s))
		return;
	if (s->prof_left <= 0)
		s->prof_left = PERIOD_NS;
	s->prof_from = now + latency;
}

void observe_profile_stopped(struct session *s, int64_t now)
{
	if (!s->prof_from)
		return;
	s->prof_left = observe_profile_spend(s->prof_left, s->prof_from, now, PERIOD_NS);
	s->prof_from = 0;
}

int64_t observe_profile_due(const struct session *s)
{
	return s->prof_from ? s->prof_from + s->prof_left : -1;
}

static struct unwind_session *unwinder(struct session *s, pid_t tid)
{
	struct prof_thread *v;

	for (size_t i = 0; i < s->nprof; i++)
		if (s->prof[i].tid == tid)
			return s->prof[i].us;
	v = realloc(s->prof, (s->nprof + 1) * sizeof(*v));
	if (!v)
		return NULL;
	s->prof = v;
	v[s->nprof].tid = tid;
	v[s->nprof].us = unwind_session_new(s->pid, tid);
	if (!v[s->nprof].us)
		return NULL;
	return v[s->nprof++].us;
}

/* frames[0..n), innermost first, as one path of f's stacks. */
static int add_path(struct folded *f, const struct unwind_frame *frames, size_t n)
{
	const char *names[OBSERVE_PROFILE_FRAMES] = { 0 };
	char *owned[OBSERVE_PROFILE_FRAMES] = { 0 };
	char unknown[OBSERVE_PROFILE_FRAMES][48];
	size_t k = 0;
	int r;

	for (size_t i = n; i-- > 0;) {
		if (frames[i].func[0]) {
			owned[i] = unwind_frame_demangled(&frames[i]);
			names[k++] = owned[i] ? owned[i] : unwind_frame_name(&frames[i]);
		} else {
			snprintf(unknown[i], sizeof(unknown[i]), "[%s]",
				 frames[i].module[0] ? str_basename(frames[i].module) : "unknown");
			names[k++] = unknown[i];
		}
	}
	r = folded_add(f, names, k, 1);
	for (size_t i = 0; i < n; i++)
		free(owned[i]);
	return r;
}

void observe_profile_sample(struct session *s)
{
	if (!s->prof_frames) {
		s->prof_frames = calloc(OBSERVE_PROFILE_FRAMES, sizeof(*s->prof_frames));
		if (!s->prof_frames)
			return;
	}
	s->prof_stops++;
	for (size_t i = 0; i < s->nstacks; i++) {
		const struct observe_stack *st = &s->stacks[i];
		struct unwind_session *us;
		size_t n = 0;

		if (!st->n)
			continue;
		us = unwinder(s, st->tid);
		if (!us ||
		    unwind_session_backtrace(us, s->prof_frames, OBSERVE_PROFILE_FRAMES, &n) < 0)
			continue;
		/* Stopped before it was back in its own code: where benchtrap
		 * left it, not where it spends its time. */
		if (n && trace_thread_unmoved(s->p, st->tid, s->prof_frames[0].pc))
			continue;
		/* Just past a trap whose stop the kernel has not reported yet
		 * (it does when the thread runs again), or on one: at an inner
		 * observed call's entry or return, a stop, not the program's
		 * time. */
		if (n && (trace_bp_present(s->p, arch_trap_addr(s->prof_frames[0].pc)) ||
			  trace_bp_present(s->p, s->prof_frames[0].pc)))
			continue;
		for (size_t k = 0; k < st->n; k++) {
			struct func *f = &s->funcs[st->v[k].func];
			bool seen = false;
			size_t cut;

			/* Once per function, however often it is open. */
			for (size_t j = 0; j < k && !seen; j++)
				seen = st->v[j].func == st->v[k].func;
			if (seen || f->calib || f->skip)
				continue;
			cut = observe_profile_cut(s->prof_frames, n, f->addr);
			if (cut && add_path(&f->prof, s->prof_frames, cut) < 0)
				observe_diagnose(s, "out of memory: stacks of %s were lost",
						 f->name);
		}
	}
}

void observe_profile_forget(struct session *s)
{
	for (size_t i = 0; i < s->nprof; i++)
		unwind_session_free(s->prof[i].us);
	s->nprof = 0;
}

int observe_profile_write(struct session *s, struct func *f, size_t index,
			  struct observe_func_result *out)
{
	char base[96], title[256], *paths[2] = { 0 };
	int r = 0;

	if (f->skip || out->error)
		return 0; /* not run, or not seen: its row says which */
	if (!f->prof.total) {
		if (asprintf(&out->profile_note,
			     "not profiled: no stack was recorded inside its calls (%s)",
			     f->ncalls || f->unmatched
				     ? "each was shorter than the sampling period, or none "
				       "could be unwound"
				     : "it was never called") < 0) {
			out->profile_note = NULL;
			return -ENOMEM;
		}
		return 0;
	}
	report_profile_basename(out->name, base, sizeof(base));
	snprintf(title, sizeof(title), "%s (observe)", out->name);
	for (size_t i = 0; i < 2; i++) {
		const char *dir = s->o->profile_dir;

		if (asprintf(&paths[i], "%s/%03zu-%s.%s", dir, index, base, i ? "svg" : "folded") <
		    0) {
			paths[i] = NULL;
			r = -ENOMEM;
			break;
		}
		r = report_profile_write(&f->prof, dir, paths[i] + strlen(dir) + 1,
					 i ? title : NULL, "samples");
		if (r < 0)
			break;
	}
	if (r < 0) {
		if (asprintf(&out->profile_note, "not profiled: cannot write %s: %s",
			     paths[0] && !paths[1] ? paths[0]
			     : paths[1]		   ? paths[1]
						   : "the profile",
			     atomic_strerror(r)) < 0)
			out->profile_note = NULL;
		out->profile_err = r;
		free(paths[0]);
		free(paths[1]);
		return r == -ENOMEM ? r : 0;
	}
	out->profile_folded = paths[0];
	out->profile_svg = paths[1];
	return 0;
}

void observe_profile_free(struct session *s)
{
	observe_profile_forget(s);
	free(s->prof);
	free(s->prof_frames);
	for (size_t i = 0; i < s->nfuncs; i++)
		folded_free(&s->funcs[i].prof);
}
