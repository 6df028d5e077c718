/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_MEASURE_BRACKET_H
#define BENCHTRAP_MEASURE_BRACKET_H
/*
 * The program's own main, traced, each call of a batch function bounded by
 * benchtrap's clock read in the child (bracket.c, docs/gbench.md): a suite
 * kind whose framework runs its benchmarks in batches from its own main
 * (Google Benchmark, criterion) gets one timed interval per call of the
 * function that runs a batch, with no trap inside it.
 *
 * At each function's entry a breakpoint; a thread stopped there is sent
 * through an injected enter stub (clock into a per-call slot, then the
 * function, its first instruction displaced when the decoder of arch/
 * allows) with its return address replaced by a per-slot exit stub (clock
 * into the slot, then a trap), where the controller takes both readings
 * and sends the thread on to the real return address. Both traps fall
 * outside the interval. A function whose first instruction cannot be
 * displaced has its breakpoint removed while a call runs (exact when one
 * thread calls it; bracket_diagnostics() says so). A thread that re-enters
 * a function it is already in runs on without a new interval.
 *
 * Only one child of any number of bracket_runs runs at a time: each is
 * stopped between bracket_next() calls, so two runs advanced in turn
 * alternate exactly.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/trace.h"
#include "measure/measure.h"

/*
 * What a function's calls mean. A kind whose framework times a batch by
 * its own clock, started and stopped by calls inside the benchmark's
 * function (Google Benchmark's loop between StartKeepRunning and
 * FinishKeepRunning, paused by PauseTiming and ResumeTiming), is timed as
 * the framework times it: per thread, from the return of a RESUME function
 * to the entry of the next PAUSE or FINISH one, summed until a FINISH ends
 * the batch. What the benchmark does before its loop, after it and while
 * paused is outside the figure, as it is outside the framework's own.
 */
enum bracket_role {
	BRACKET_CALL,	/* each call is one interval, entry to return */
	BRACKET_RESUME, /* the clock runs from when a call returns */
	BRACKET_PAUSE,	/* the clock stops when it is entered */
	BRACKET_FINISH, /* the clock stops when it is entered; the batch ends */
	BRACKET_SIZE,	/* its argument 'arg' is a batch's iteration count, read (and
			   set by bracket_set_count) at its entry */
	BRACKET_TOGGLE, /* its argument 'arg' says which: not 0, a RESUME; 0, a FINISH
			   (divan's sync_impl(barrier, is_start) around each sample) */
};

struct bracket_fn {
	const char *object;	/* the ELF file defining it (the binary or a library) */
	uint64_t link_addr;	/* its link-time address there */
	enum bracket_role role; /* BRACKET_CALL unless set */
	uint64_t size;		/* its code's size (PAUSE, FINISH, TOGGLE: its entry is patched,
				   and its code is read to be sure that can be done) */
	unsigned arg;		/* SIZE: which integer argument is the count; TOGGLE:
				   which says whether the clock starts */
	bool clocked;		/* CALL: timed by the RESUME..PAUSE intervals its
				   thread ran inside it (the framework's own clock,
				   criterion's Instant::now..elapsed), where any ran;
				   else entry to return */
	bool clocked_once;	/* ... and only where exactly one ran: the framework
				   reads its clock once a call (criterion's iter), so
				   more are the code measured reading it too */
};

struct bracket_call {
	unsigned fn;	       /* index into the fns[] given to bracket_start(): the
				  CALL function, or the FINISH one that ended the batch */
	pid_t tid;	       /* the thread that made the call, or ran the batch */
	uint64_t t0_ns, t1_ns; /* the child's CLOCK_MONOTONIC, read in the child by the
				  injected stubs around the call (the batch's first
				  and last reading): no trap inside */
	uint64_t timed_ns;     /* t1 - t0, or the batch's running intervals summed */
	unsigned intervals;    /* how many: 1 for a call (a clocked one: those inside
				  it, when any) */
	uint64_t count;	       /* the iterations its thread was last given at a SIZE
				  function's entry (the batch's own), 0: none seen */
	bool clocked;	       /* timed by the clock inside it (bracket_fn.clocked) */
};

struct bracket_run;

/*
 * Spawn t (argv as given: the kind adds its own flags; t gives the
 * environment, CPU, ASLR and input), traced, stopped at main, breakpoints
 * on fns[], the stub pages injected. stdout/stderr of the child to fds
 * out_fd/err_fd (-1: /dev/null). 0, or a negative error with *ret_error
 * (to free) saying why: -TRACE_E_FAILED when the child failed on the way
 * to main, -ENOENT when a function's object is not mapped at main,
 * -ENOTSUP when a PAUSE or FINISH function's entry cannot be patched
 * (*ret_error says why: the kind may time whole calls instead).
 */
int bracket_start(const struct measure_target *t, char *const *argv, const struct bracket_fn *fns,
		  size_t nfns, int out_fd, int err_fd, struct bracket_run **ret, char **ret_error);

/*
 * Run the child until one bracketed call has ended (returns 1, *ret_call
 * filled; the child is then stopped until the next bracket_next), or the
 * child has exited (returns 0, exit code in *ret_status), or failed
 * (-TRACE_E_FAILED, *ret_failure: crash with backtrace, killed, exec,
 * timeout at deadline_ns, CLOCK_MONOTONIC; -1: none). After 0 or a failure
 * the child is gone. Two runs advanced in turn alternate exactly: only one
 * child runs.
 */
int bracket_next(struct bracket_run *r, int64_t deadline_ns, struct bracket_call *ret_call,
		 int *ret_status, struct trace_failure *ret_failure);

/*
 * One child of a kind's batch function, bracketed: the calls it made so
 * far and how it ended. Each kind's side of a run holds one.
 */
struct bracket_side {
	struct bracket_run *br;
	struct bench_result *res; /* where its failure goes */
	const char *dir;	  /* its stderr is DIR/stderr */
	struct bracket_call *calls;
	size_t ncalls, capcalls;
	uint64_t deadline;   /* CLOCK_MONOTONIC ns */
	uint64_t timeout_ns; /* what the deadline allowed, as said */
	bool live;	     /* running */
	bool exited;	     /* exited with status 0 */
};

/*
 * Run s's child to the end of its next call: 1 with it appended to
 * s->calls; 0 once it is no longer live (s->exited when it exited with
 * status 0, else s->res failed with what happened: its exit status and its
 * last words, said(DIR/stderr) (NULL: its last three lines); its crash, its
 * timeout or the child lost);
 * -ENOMEM.
 */
int bracket_side_next(struct bracket_side *s, char *(*said)(const char *stderr_path),
		      struct trace_failure *f);

/* What the engine noticed of s's child (bracket_diagnostics), said in
 * res: 0 or -ENOMEM. */
int bracket_side_diagnose(const struct bracket_side *s, struct bench_result *res);

/*
 * res's samples are v[0..n) (taken; none when v is NULL), the engine's
 * diagnostics of s's child said in res (bracket_side_diagnose), benchtrap's statistics over the
 * samples and the median its value. Returns 1 with the samples summarized,
 * 0 without (none, or none usable: res failed), -ENOMEM.
 */
int bracket_side_take_samples(const struct bracket_side *s, struct bench_result *res, double *v,
			      size_t n);

pid_t bracket_pid(const struct bracket_run *r);

/*
 * From the next SIZE entry on, every thread's batch runs n iterations (its
 * argument rewritten there, before the framework reads it); 0: as the
 * framework chose. A batch whose end bracket_next() just gave out is
 * followed by one that runs n: the thread waits at the SIZE entry.
 */
void bracket_set_count(struct bracket_run *r, uint64_t n);

/* What the engine had to do otherwise than planned, for the results'
 * diagnostics: a function whose first instruction could not be displaced,
 * calls left unbracketed. *ret_n lines (owned by r). */
const char *const *bracket_diagnostics(const struct bracket_run *r, size_t *ret_n);

/* Whether pc is in the pages the engine injected (a backtrace frame there
 * is benchtrap's stub). */
bool bracket_owns(const struct bracket_run *r, uint64_t pc);

void bracket_free(struct bracket_run *r); /* kills a child still running */

/* ---- for callers mapping calls to batches (pure) ---- */

/*
 * Calls c[0..nc) of one function, in the order they ended, grouped
 * 'threads' to a batch (a batch's calls end before the next batch's
 * start): batch k's interval over calls [k*threads, (k+1)*threads) into
 * ret[k] ns, for k < nc/threads. Outer: [least t0, greatest t1], the whole
 * batch. Inner (a framework whose threads meet at a barrier after entering
 * and before returning, as Google Benchmark's do): [greatest t0, least t1],
 * which holds every thread's loop and none of the threads' entry and exit
 * traps (each stops the whole process); the outer one where that is
 * empty. -EINVAL when nc is not a multiple of threads or threads is 0.
 */
int bracket_batch_spans(const struct bracket_call *c, size_t nc, unsigned threads, bool inner,
			uint64_t *ret);

/*
 * Batches of a framework's own clock (bracket_role): calls c[0..nc), one
 * per thread and batch, grouped 'threads' to a batch: batch k's time is
 * the mean of its threads' timed_ns (what Google Benchmark reports as real
 * time for a batch on several threads). -EINVAL as above.
 */
int bracket_batch_timed(const struct bracket_call *c, size_t nc, unsigned threads, uint64_t *ret);

#endif
