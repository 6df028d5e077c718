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
#include "arch/patch.h"
#include "observe/observe.h"

/* How often the tick callback runs when nothing happens, and at least. */
#define TICK_MS 100
/* How often the agent's ring is read while functions are patched. */
#define DRAIN_MS 10
/* ... and every DRAIN_FAST_MS while a read found it an eighth full. */
#define DRAIN_FAST_MS 1
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
	/* Patched (fast.c): its calls are timed by the agent, without a
	 * stop; else why it has breakpoints instead (NULL: patching was off,
	 * or it is --skip). */
	bool fast;
	char *fallback;
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
	uint64_t tramp;	   /* its trampolines' region (fast.c), or 0 */
	size_t tramp_used;
	/* where a rel32 jump in its code could land (patching checks that
	 * none lands inside the bytes it replaces), once asked */
	uint64_t *jt;
	size_t njt;
	bool jt_built, jt_failed;
};

/* A patched entry (fast.c): what was there. */
struct patched {
	uint64_t addr;
	uint8_t orig[ARCH_PATCH_MAX];
	size_t len;
	uint32_t func;
	bool gone; /* restored, or unmapped with its object */
};

/* The stop accounting as it stood from time 't' on (a resume): patched
 * calls, timed in the process, find the stops inside them here. */
struct checkpoint {
	int64_t t;
	int64_t stopped;
	uint64_t resumes;
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
	/* With patched functions: where an exception starts unwinding a
	 * thread's stack (the agent's return addresses are put back) and
	 * where one is caught (those of the calls still live go in again). */
	uint64_t unwind_start[3], unwind_catch;
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
	uint32_t calib_func;	  /* by breakpoints, or UINT32_MAX */
	uint32_t calib_fast_func; /* patched, or UINT32_MAX */
	struct obj calib_obj;	  /* the page of both, for its trampoline */
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
	/* patched entries (fast.c) */
	uint64_t agent;	    /* the agent's base in the process, or 0 */
	uint8_t *agent_map; /* its shared part, mapped here */
	char *fast_off;	    /* why there is no agent, or NULL */
	bool no_patch;	    /* --no-patch, --profile */
	struct patched *patched;
	size_t npatched, cappatched;
	uint64_t ring_tail, ring_lost;
	int drain_ms; /* the ring's next read: sooner while it fills fast */
	uint64_t tsc0;
	int64_t tsc0_ns;
	double tsc_rate;   /* counts per ns, fitted once at the end */
	uint64_t tsc_read; /* counts one reading of the counter takes */
	struct checkpoint *checkpoints;
	size_t ncheckpoints, capcheckpoints;
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

/* ---- fast.c ---- */
/* Inject the agent; without one (s->fast_off says why) every function
 * gets breakpoints. */
int observe_fast_start(struct session *s);
/* Room for a trampoline within reach of object o. */
int observe_fast_slot(struct session *s, struct obj *o, uint64_t *ret);
/* Write function fi's trampoline at 'at' and patch its entry; on failure
 * *why may name the reason for its row. */
int observe_fast_install(struct session *s, struct obj *o, uint32_t fi, uint64_t at,
			 const struct arch_patch *pt, const char **why);
void observe_fast_unpatch_all(struct session *s);
/* Function fi's entry back as it was. */
void observe_fast_unpatch(struct session *s, uint32_t fi);
void observe_fast_forget(struct session *s, uint64_t lo, uint64_t hi);
/* Thread 'tid', at the unwinder's entry, is to unwind its stack: the
 * real return addresses back in the stack ('restore'), or, at a catch,
 * the exit stub again in those of the calls still live. */
void observe_fast_unwinding(struct session *s, pid_t tid, bool restore);
/* Read the records the agent wrote since the last time: how many. */
uint64_t observe_fast_drain(struct session *s);
/* One record: a call of patched function fi (session.c). */
void observe_fast_call(struct session *s, uint32_t fi, uint32_t thread, uint64_t t0, uint64_t t1);
/* Calls of patched function fi the agent saw begin, and return. */
uint64_t observe_fast_entered(const struct session *s, uint32_t fi);
uint64_t observe_fast_returned(const struct session *s, uint32_t fi);
/* Observing ends, the program runs on: the agent records nothing more and
 * the return addresses it replaced are put back (the process stopped). */
void observe_fast_quiesce(struct session *s);
/* Calls the agent could not time, tail calls it found no frame for, and
 * returns through frames it had dropped. */
void observe_fast_counters(const struct session *s, uint64_t *lost, uint64_t *broken,
			   uint64_t *recovered);
/* A counter reading in the controller's clock, ns. */
int64_t observe_fast_ns(struct session *s, uint64_t t);
void observe_fast_free(struct session *s);

/* ---- calib.c ---- */
int observe_calib_start(struct session *s);
/* The injected loop returned in thread 'tid': the next round, or its
 * registers back (always when 'abort'). */
void observe_calib_end(struct session *s, pid_t tid, bool abort);
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
