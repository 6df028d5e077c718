/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_OBSERVE_H
#define BENCHTRAP_OBSERVE_H

/*
 * Observing calls in a real run (benchtrap observe, docs/observe.md).
 *
 * The program runs its own code. A breakpoint at the entry of every selected
 * function, and one at each call's return address, bound every call, per
 * thread. The controller reads CLOCK_MONOTONIC when each stop is reported;
 * what the stops themselves cost is accounted for per call:
 *
 *   - the time the process spent stopped between a call's entry and return
 *     (the controller's own work, step-overs, all-stop) is measured and
 *     removed exactly;
 *   - what cannot be seen from outside, the latency of each resume-to-trap
 *     transition, is measured in the same process on an injected empty
 *     function (calibration) and removed once per transition.
 *
 * The first part of this header is pure logic (tested without a process);
 * the second runs a session on a trace_proc. Nothing here prints.
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/trace.h"

/* ---- frames: matching returns to calls ------------------------------------- */

/* One open call of a thread. */
struct observe_frame {
	uint32_t func;		/* index of the observed function */
	uint64_t ret_addr;	/* where it returns */
	uint64_t sp_after;	/* the stack pointer once it has returned */
	uint64_t ret_slot;	/* where the return address is stored; 0: in a
				   register (arch_entry_return_address) */
	int64_t t_start;	/* controller clock at the entry stop, ns */
	int64_t stopped_start;	/* the session's stopped-time counter then */
	uint64_t resumes_start; /* the session's resume counter then */
};

/* The open calls of one thread, outermost first. */
struct observe_stack {
	pid_t tid;
	struct observe_frame *v;
	size_t n, cap;
};

int observe_stack_push(struct observe_stack *s, const struct observe_frame *f);
void observe_stack_free(struct observe_stack *s);

/* 'entering' for observe_stack_dead() at a return breakpoint. */
#define OBSERVE_NO_FUNC UINT32_MAX

/*
 * The thread is at a point where the live call context is (ret_addr,
 * sp_after): at a return breakpoint, the address it returned to and its
 * stack pointer ('entering' is OBSERVE_NO_FUNC); at the entry of function
 * 'entering', the new call's. Returns how many frames on top of the stack
 * can no longer return normally: the stack was unwound past them (longjmp,
 * an exception), seen as sp_after above theirs, or a frame with the same
 * stack pointer but another return address. Frames with the same pair are
 * live at a return; at an entry they are live when the caller tail-called
 * (another function jumped to this one), and dead when one of them is the
 * function entered again: a new call from the same call site after the
 * old one was left by a longjmp.
 */
size_t observe_stack_dead(const struct observe_stack *s, uint64_t ret_addr, uint64_t sp_after,
			  uint32_t entering);

/* After the dead frames are popped: how many frames on top return at this
 * return breakpoint (more than one after tail calls; 0 when the hit belongs
 * to no open call of this thread). */
size_t observe_stack_returning(const struct observe_stack *s, uint64_t ret_addr, uint64_t sp_after);

/* Frames this far below the stack pointer are on its stack; farther, on
 * another stack (a coroutine's): the patched entries' AGENT_SAME_STACK. */
#define OBSERVE_SAME_STACK (1ull << 20)

/* The same for the frames v[0..top). */
size_t observe_stack_returning_at(const struct observe_stack *s, size_t top, uint64_t ret_addr,
				  uint64_t sp_after);

/*
 * A return to a call made on this stack while the frames on top belong to
 * other stacks (coroutines switched with swapcontext, their calls still
 * open): *ret_above is how many frames on top are another stack's, and the
 * result how many frames just beneath them return here (0: none).
 */
size_t observe_stack_beneath(const struct observe_stack *s, uint64_t ret_addr, uint64_t sp_after,
			     size_t *ret_above);

/* ---- figures ------------------------------------------------------------------ */

/* One completed call, in the controller's clock. 'stopped' counts the
 * nanoseconds the process was stopped, 'resumes' how often it was resumed
 * (cumulative session counters, read at the entry and return stops). */
struct observe_call {
	int64_t t_start, t_end;
	int64_t stopped_start, stopped_end;
	uint64_t resumes_start, resumes_end;
	pid_t tid;
};

/*
 * The duration of an interval after removing the stops inside it: the time
 * stopped, and 'latency' ns per resume-to-trap transition (the calibrated
 * cost that cannot be measured per stop). Never below 0.
 */
double observe_corrected(int64_t t_start, int64_t t_end, int64_t stopped, uint64_t resumes,
			 double latency);

/* Log2 histogram: bucket 0 holds [0, 2) ns, bucket k >= 1 holds
 * [2^k, 2^(k+1)) ns. */
#define OBSERVE_HIST_BUCKETS 48
unsigned observe_hist_bucket(double ns);

/* Order statistics of n values (sorted in place), and their sample
 * standard deviation (0 for one value). */
struct observe_summary {
	size_t n;
	double min, q1, median, mean, q3, max;
	double p10, p90;
	double stddev;
};
int observe_summarize(double *v, size_t n, struct observe_summary *ret);

/*
 * Parallel rounds: calls of one function grouped by overlap in time (any
 * chain of overlapping calls is one round, from its earliest start to its
 * latest end). A round whose calls ran on at least two threads is parallel.
 * 'calls' is sorted by start in place. Durations of parallel rounds are
 * corrected like calls and written to ret_durations (malloc'ed, may be
 * NULL when there are none); *ret_max_threads is the most threads one
 * round had.
 */
int observe_rounds(struct observe_call *calls, size_t n, double latency, double **ret_durations,
		   size_t *ret_n, size_t *ret_max_threads);

/*
 * Whether a function's calls are shorter than observe can resolve: its
 * median duration within OBSERVE_UNRESOLVED_FACTOR times its ± of zero
 * (a median that is the calibration's noise, not the function's time).
 * Never with no ± (uncalibrated).
 */
#define OBSERVE_UNRESOLVED_FACTOR 3
bool observe_unresolved(double median, double uncertainty);

/* Calibration: 'n' corrected-before-latency durations of the empty
 * function with their resume counts. */
struct observe_calibration {
	size_t calls;	/* observed calls of the empty function */
	double latency; /* median resume-to-trap latency per transition, ns */
	double latency_p10, latency_p90;
	double stop_median; /* median time the process stays stopped per stop, ns */
	/* patched calls of the empty function: what the agent adds inside a
	 * call (its median, removed from every patched call) */
	size_t patched_calls;
	double overhead, overhead_p10, overhead_p90;
	double overhead_pm; /* the ± it leaves on each patched call: half the
			       10–90 % spread, at least one counter reading */
};

/* From the calibration calls (each: raw duration minus time stopped, and
 * the number of resumes inside). -EINVAL when n == 0. */
int observe_calibrate(const double *active_ns, const uint64_t *resumes, size_t n,
		      const double *stopped_ns, struct observe_calibration *ret);

/* ---- profiles -------------------------------------------------------------------- */

struct unwind_frame;
/*
 * A stack sampled inside a call of the function at 'addr': frames[0..n),
 * innermost first. Returns how many frames, from the innermost, are that
 * function's outermost frame and what it called (its callers cut off), or
 * 0 when no frame is in the function (the walk was cut short).
 */
size_t observe_profile_cut(const struct unwind_frame *frames, size_t n, uint64_t addr);

/*
 * The clock of the samples: the time the program ran inside observed calls,
 * never the time benchtrap held it. A sample is due every 'period' ns of
 * that clock; 'left' is what remains until the next. A stretch of running
 * inside some call, from 'from' (a resume plus the calibrated resume
 * latency: until then the thread has not reached its own code) to 'now'
 * (the next stop), spends it. A due point the stretch passed without a
 * sample (it ended at a breakpoint before the sample could be taken) is
 * dropped, not taken late: a late sample would land where benchtrap stopped
 * the thread. Returns what is left after the stretch, in (0, period].
 */
int64_t observe_profile_spend(int64_t left, int64_t from, int64_t now, int64_t period);

/* ---- /proc/PID/maps ---------------------------------------------------------------- */

/* One file mapped into the process: where its offset 0 lies, and the range
 * of all its mappings. */
struct observe_object {
	char *path;
	uint64_t base; /* address of the mapping at file offset 0 */
	uint64_t lo, hi;
	bool exec; /* some mapping is executable */
};

/* Parse the text of /proc/PID/maps: the files mapped (paths starting with
 * '/', "(deleted)" ones left out), in order of first appearance. */
int observe_parse_maps(const char *text, struct observe_object **ret, size_t *ret_n);
void observe_objects_free(struct observe_object *v, size_t n);

/* ---- sessions ----------------------------------------------------------------------- */

/* What a session has seen so far, as each tick reports it. Kept by
 * counting (an increment per call returned), never formatted while the
 * program waits at a breakpoint. */
struct observe_progress {
	uint64_t calls;	    /* calls of the selected functions that returned,
			       or were skipped (--skip), since observing began */
	size_t armed;	    /* selected functions armed now (0 once observing
			       stopped) */
	int64_t elapsed_ns; /* since the program was let run, observed */
};

struct observe_opts {
	const char *const *symbols; /* globs: functions to time */
	size_t nsymbols;
	const char *const *skips; /* globs: functions that return at once */
	size_t nskips;
	int64_t duration_ns;  /* stop observing after this long; 0: no limit */
	unsigned calib_calls; /* calls of the empty function; 0: the default */
	/* Called about ten times a second (every 100 ms when nothing
	 * happens, at the first event after that otherwise), never while the
	 * stop's cost is being calibrated; true stops observing (Ctrl-C with
	 * --pid, or a signal to pass on to the program once observing
	 * stopped). May forward signals. 'now' is what was seen so far, for
	 * a progress line. */
	bool (*tick)(void *userdata, pid_t pid, bool observing, const struct observe_progress *now);
	void *userdata;
	/* --profile: write each function's stacks (folded and SVG) in this
	 * directory, sampled while its calls run; NULL: no profiling. */
	const char *profile_dir;
	/* --no-patch: every function gets breakpoints, none is patched
	 * (--profile implies it) */
	bool no_patch;
};

#define OBSERVE_CALIB_CALLS_DEFAULT 200

/* The figures of one observed function. */
struct observe_func_result {
	char *name;	    /* demangled */
	char *symbol;	    /* raw */
	char *object;	    /* file that defines it */
	uint64_t addr;	    /* run-time entry address */
	bool skip;	    /* --skip: its calls returned at once */
	uint64_t calls;	    /* completed calls (for skip: skipped calls); of a
			     * patched function, the agent's count of returns,
			     * every one whether its record was read or not */
	uint64_t timed;	    /* those with a duration: ns[0..timed) */
	uint64_t unmatched; /* calls that never returned normally */
	double *ns;	    /* corrected durations, in the order the calls returned */
	struct observe_summary sum;
	/* the bootstrap interval of the median call over the calls, at
	 * STATS_OPTIONS_DEFAULT's confidence (stats_bootstrap_median); NAN
	 * when not computed */
	double ci_low, ci_high;
	double uncertainty; /* ± ns on each figure: the calibration's spread
			       times the median number of transitions */
	/* observe_unresolved(): the median is noise, 'note' says so */
	bool unresolved;
	char *note;
	/* Selected but never armed, so none of its calls was seen: why (a
	 * sentence), or NULL. Its row is failed (docs/observe.md). */
	char *error;
	/* Its calls were timed by the patched entry's agent, without a stop;
	 * else 'fallback' says why it had breakpoints (NULL: patching off). */
	bool patched;
	char *fallback;
	uint64_t hist[OBSERVE_HIST_BUCKETS];
	size_t rounds;	  /* parallel rounds */
	double *round_ns; /* their corrected durations, sorted */
	struct observe_summary round_sum;
	size_t round_max_threads;
	/* --profile: the files written ("" none), or why none was */
	char *profile_folded, *profile_svg;
	char *profile_note;
	int profile_err; /* a profile file could not be written: its negative errno */
};

enum observe_end {
	OBSERVE_EXITED,	  /* the program exited: exit_code */
	OBSERVE_KILLED,	  /* the program died of signal 'sig' */
	OBSERVE_DETACHED, /* attached: detached, the process runs on */
	OBSERVE_GONE,	  /* attached: the process ended while observed */
};

struct observe_result {
	pid_t pid;
	bool attached;
	enum observe_end end;
	int exit_code;
	int sig;
	char *crash; /* a fatal signal's report with its backtrace, or NULL */
	struct observe_calibration calib;
	bool calibrated;	  /* calib's breakpoint figures */
	bool overhead_calibrated; /* calib's patched figures */
	bool patched;		  /* some function was patched */
	struct observe_func_result *funcs;
	size_t nfuncs;
	char **diagnostics;
	size_t ndiagnostics;
	uint64_t events;	  /* stops handled */
	double observed_s;	  /* how long observing lasted */
	size_t restored_bytes;	  /* attached: code bytes compared with the files at detach */
	size_t restored_mismatch; /* ... and found different (0 expected) */
};

void observe_result_clear(struct observe_result *r);

/*
 * Observe process 'p', stopped (at main after trace_run_to_main(), or after
 * trace_attach()). Arms the selected
 * functions in every mapped object (and in objects mapped later, at the
 * dynamic loader's notifications), calibrates, and runs the process until
 * it exits, o->duration_ns passes or o->tick says stop. With 'attached',
 * then removes every breakpoint, checks the code against the files and
 * detaches (trace_detach()); otherwise the process is run to its end after
 * observing stops. 'p' stays the caller's, who always ends with
 * trace_proc_free(p): on failure that removes every breakpoint left and
 * detaches an attached process (it runs on without a trap in it), and
 * kills a spawned one.
 * Returns 0 with *ret filled, or a negative error when observing failed.
 */
int observe_session(struct trace_proc *p, bool attached, const struct observe_opts *o,
		    struct observe_result *ret);

/* ---- targets: what to observe (target.c) ----------------------------------------- */

/* Why a target could not be had; the command line words each. */
enum observe_fail_kind {
	OBSERVE_FAIL_NO_PROCESS,  /* --pid: no such process */
	OBSERVE_FAIL_NO_PROGRAM,  /* --pid: it runs no program (a kernel thread, a zombie) */
	OBSERVE_FAIL_INSPECT,	  /* --pid: /proc/PID/exe unreadable: 'err' (an errno) */
	OBSERVE_FAIL_SELF,	  /* --pid: benchtrap itself */
	OBSERVE_FAIL_NOT_ALLOWED, /* attaching: not allowed (EPERM) */
	OBSERVE_FAIL_GONE,	  /* attaching: the process is gone (ESRCH) */
	OBSERVE_FAIL_ATTACH,	  /* attaching failed otherwise: 'err' (negative, trace_strerror) */
	OBSERVE_FAIL_NOT_FOUND,	  /* the command is not in PATH */
	OBSERVE_FAIL_EXEC,	  /* the command could not be executed: 'err' (an errno) */
	OBSERVE_FAIL_ENDED,	  /* it ended before main: 'trace' says how */
	OBSERVE_FAIL_TO_MAIN,	  /* it could not be run to main: 'err' (negative) */
	OBSERVE_FAIL_NOMEM,	  /* out of memory */
};

struct observe_failure {
	enum observe_fail_kind kind;
	int err;
	struct trace_failure *trace; /* ENDED: malloc'ed (observe_failure_clear) */
};

/* The exit status of bad input in the command-line contract. */
#define OBSERVE_EXIT_BAD_INPUT 2

/* Running process 'pid': the path of the program it runs into 'exe'. */
int observe_target_pid(pid_t pid, char *exe, size_t size, struct observe_failure *f);
/* Command 'name': its path as exec finds it (searched in PATH). */
int observe_target_command(const char *name, char *exe, size_t size, struct observe_failure *f);

/* Attach to every thread of 'pid' (trace_attach()). */
int observe_attach(pid_t pid, struct trace_proc **ret, struct observe_failure *f);

/* Spawn 'argv' (address-space randomisation kept: the program runs as it
 * would alone) and run it to main, located in 'ef' (its binary). On
 * failure nothing is left running. */
struct elf_file;
int observe_start_command(char *const *argv, struct elf_file *ef, struct trace_proc **ret,
			  struct observe_failure *f);

/* What benchtrap exits with after failure 'f': the program's own status
 * when it ended before main (128 + N when killed by signal N), else
 * OBSERVE_EXIT_BAD_INPUT. */
int observe_failure_exit_code(const struct observe_failure *f);
void observe_failure_clear(struct observe_failure *f);

/* What benchtrap exits with after a session: 0 when attached (detached),
 * else the program's own status (128 + N when killed by signal N). */
int observe_result_exit_code(const struct observe_result *r);

#endif
