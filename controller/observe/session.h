/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_OBSERVE_SESSION_H
#define BENCHTRAP_OBSERVE_SESSION_H

/*
 * Shared between the files of an observing session; not for other modules.
 *
 *   session.c  the event loop: entries, returns, frames, signals, the end
 *   arm.c      functions, entry breakpoints, objects mapped and unmapped
 *   calib.c    the injected empty function that measures a stop's cost
 *   results.c  the figures of every function, and freeing
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "elf/elf.h"
#include "util/folded.h"
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
	/* Why it is selected but was never armed (its code in memory is not
	 * the file's, its breakpoint could not be written), or NULL. Such a
	 * function keeps its row: a failed one that says this. */
	char *unarmed;
	struct folded prof; /* --profile: stacks sampled inside its calls */
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
	uint64_t calls; /* returned or skipped, the calibration's not: progress */
	/* calibration */
	uint64_t calib_page, calib_end;
	uint32_t calib_func;
	pid_t calib_tid;
	struct arch_regs calib_saved;
	bool calibrating;
	uint64_t open_at_end;
	int64_t t_stopped_observing; /* when remove_all() ran, or 0 */
	/* --profile (profile.c): one unwinder per thread sampled */
	struct prof_thread {
		pid_t tid;
		struct unwind_session *us;
	} * prof;
	size_t nprof;
	struct unwind_frame *prof_frames;
	int64_t prof_left; /* ns of running inside calls until the next sample */
	int64_t prof_from; /* since when the process runs inside some call, or 0 */
	uint64_t prof_stops;
	struct observe_result *res;
};

/* A diagnostic for the results, once (printf-style). */
void observe_diagnose(struct session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- arm.c ---- */
/* Insert a breakpoint, remembered (attached) for the check at detach. */
int observe_bp_insert(struct session *s, uint64_t addr);
const struct entry *observe_entry_find(const struct session *s, uint64_t addr);
int observe_entry_add(struct session *s, uint64_t addr, uint32_t func);
void observe_entry_del(struct session *s, uint64_t addr);
int observe_func_add(struct session *s, const char *name, const char *symbol, const char *object,
		     uint64_t addr, bool skip, uint32_t *ret);
/* Read the maps again: arm new objects, disarm vanished ones. */
int observe_scan_maps(struct session *s);
/* Attached: with every breakpoint removed, the code must be the files'. */
void observe_verify_code(struct session *s);

/* ---- calib.c ---- */
int observe_calib_start(struct session *s);
/* The injected loop returned in thread 'tid': its registers back. */
void observe_calib_end(struct session *s, pid_t tid);
/* The calibration figures from the empty function's calls. */
void observe_calib_finish(struct session *s);

/* ---- profile.c ---- */
/* The process was resumed at 'now': when it runs inside some observed
 * call, the samples' clock runs (observe_profile_spend). */
void observe_profile_resumed(struct session *s, int64_t now);
/* The process stopped at 'now' (an event, or a stop for a sample): the
 * samples' clock stops. */
void observe_profile_stopped(struct session *s, int64_t now);
/* When the next sample is due (CLOCK_MONOTONIC ns), or -1: none while the
 * process runs as it does now. */
int64_t observe_profile_due(const struct session *s);
/* The process is stopped: unwind every thread inside an observed call and
 * add the stack to each function it is inside. */
void observe_profile_sample(struct session *s);
/* The code changed (a library mapped or unmapped): unwinders start again. */
void observe_profile_forget(struct session *s);
/* Write function f's stacks as DIR/NNN-<name>.folded and .svg, or say why not. */
int observe_profile_write(struct session *s, struct func *f, size_t index,
			  struct observe_func_result *out);
void observe_profile_free(struct session *s);

/* ---- results.c ---- */
int observe_build_results(struct session *s, const char *const *pats, size_t npats);
void observe_session_free(struct session *s);

#endif
