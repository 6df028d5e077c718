/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_MEASURE_DRIVEN_H
#define BENCHTRAP_MEASURE_DRIVEN_H

/*
 * Running a target with benchtrap's driver library preloaded (driven.c),
 * under valgrind (callgrind) or natively (perf): the list of functions
 * written for the driver, the process started, the driver's report read as
 * it comes (driver/driver-protocol.h), a watchdog, and what happened to
 * each call. The instrument reads its own figures (dumps, counts) from
 * what each call left.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "driver/driver-protocol.h"
#include "measure/measure.h"

struct driven_call;

enum driven_mode {
	DRIVEN_CALL,  /* every function called in turn in one process */
	DRIVEN_SERVE, /* the fork server: one child per function (one: a
			 fresh process's child, the same path to the call) */
	DRIVEN_OWN,   /* no driver: the program runs as it is, one "call" */
};

struct driven_job {
	const struct measure_target *t;
	const char *exec;	  /* the program executed: valgrind, or the target */
	char *const *argv;	  /* its arguments, argv[0] included */
	char *const *extra_env;	  /* appended to measure_child_env(); may be NULL */
	const char *dir;	  /* a private directory: DIR/specs, DIR/stderr */
	const char *driver;	  /* the driver library (not DRIVEN_OWN) */
	const char *exe;	  /* the target's real path (not DRIVEN_OWN) */
	enum driven_mode mode;
	const struct bench_spec *const *specs;
	size_t n;		  /* 1 for DRIVEN_OWN */
	uint64_t timeout_ns;	  /* per call */
	unsigned long perf_calls; /* perf's batches; 0: one counted call */
	unsigned long warmup_calls; /* memory: uncounted calls before the counted one */
	unsigned alloc_frames;	    /* memory: frames of each allocation's stack; 0: none */
	const struct measure_hooks *hooks; /* MEASURE_BENCH_START of each call */
	/* Called once per call when it is settled (returned or failed), as
	 * the report arrives: the instrument fills its result there. */
	void (*settled)(void *ctx, size_t i, const struct driven_call *c);
	void *ctx;
};

/* An allocation site of a counted call (--alloc-stacks). */
struct driven_site {
	uint64_t bytes, count;
	unsigned n;		       /* pcs in pc, innermost first */
	uint64_t pc[DRIVER_STACK_MAX]; /* in the process that called (a fork server's layout) */
};

/* One thread of a round (a spec with threads above 1), as the driver said. */
struct driven_thread {
	pid_t tid;			    /* its kernel thread id */
	uint64_t allocations, frees, bytes; /* memory: what its own call did */
};

struct driven_call {
	bool settled;
	bool returned;	   /* the driver said it returned (DRIVEN_OWN: exit 0) */
	bool killed;	   /* killed after --timeout */
	bool execd;	   /* killed by its server: it executed another program */
	char exec_path[200]; /* execd: what it executed, when the server could tell */
	bool server_died;  /* the fork server died before this call ended */
	bool server_running; /* server_died while this call ran (the calls after
				it are left unsettled: a new server runs them) */
	bool status_known; /* status is the wait status of the process that called */
	int status;
	pid_t pid;	   /* the process that called it; 0 if none did */
	pid_t process;	   /* the process benchtrap started (a fork server) */
	unsigned dump;	   /* the call's number in that process (its dump), from 1;
			      0: its process did one call, profiled when it ended;
			      a round of n threads has dumps dump..dump+n-1, one per
			      thread, in the order their calls returned */
	off_t err_from;	   /* where its part of DIR/stderr starts */
	uint64_t perf[4];  /* perf: instructions, cycles of the empty batch, of the calls */
	bool have_perf;
	uint64_t mem[7];   /* memory: allocations, frees, bytes, peak, live, overflow,
			      unseen (the program's malloc is its own) */
	bool have_mem;
	struct driven_site *sites; /* memory with alloc_frames: the most bytes first; */
	size_t nsites;		   /* valid while 'settled' runs */
	bool sites_lost;	   /* more stacks than the driver holds */
	const char *maps;	   /* with sites: the calling process's /proc/PID/maps,
				      read at main (valid while 'settled' runs) */
	struct driven_thread *threads; /* a round: its threads in the order created; */
	size_t nthreads;	       /* valid while 'settled' runs */
	uint64_t t_start_ns, t_end_ns;
};

struct driven_outcome {
	pid_t pid;	/* the process started */
	int status;	/* its wait status */
	bool timed_out; /* killed by the controller's watchdog */
	long threads;	/* serve: its threads at main; 0 when it never said */
};

/*
 * Run job j: calls[0..j->n) are zeroed, then filled as the report comes,
 * and each is passed to j->settled once settled. Calls that no process
 * reached stay unsettled: in call mode, those after a call that did not
 * return (the instrument starts a fresh process for them); in serve mode,
 * those after the first when the program had more threads at main than a
 * fork would copy (out->threads > 1). A server that dies settles every
 * call it had not ended (server_died). Returns 0, or a negative errno when
 * nothing could be started, with *ret_error saying why.
 */
int driven_run(const struct driven_job *j, struct driven_call *calls,
	       struct driven_outcome *out, char **ret_error);

/*
 * A suite run natively with a driver library (perf, memory): specs[0..n)
 * in batches as 'iso' says (the fork server; a server for one each under
 * process isolation, or for a program with threads at main, said in a
 * diagnostic; one process for all when shared), each result begun with
 * 'instrument' and 'unit', its pid and end time set, filled by 'settled'
 * (i: the index in specs), and its end emitted.
 * Returns 0, or a negative errno when nothing could be run, with
 * *ret_error saying why.
 */
struct driven_native {
	const char *instrument, *unit;
	const char *driver; /* the library to preload */
	unsigned long perf_calls, warmup_calls;
	unsigned alloc_frames;
	void (*settled)(void *ctx, size_t i, const struct driven_call *c);
	void *ctx;
};

int driven_native(const struct measure_target *t, const struct bench_spec *specs, size_t n,
		  const struct measure_plan *plan, enum measure_isolation iso,
		  const struct measure_hooks *hooks, const struct driven_native *nat,
		  struct bench_result *results, char **ret_error);

/* What call c did that made its server kill it, in the words of the trace
 * engine (malloc'ed): "executed another program (PATH)"; NULL when it did
 * not (or out of memory). */
char *driven_end_words(const struct driven_call *c);

/* Why call c of a native process did not return, in words (malloc'ed;
 * NULL when out of memory): killed after timeout_ns, its fork server
 * ended, a signal, the driver's error, or an exit. */
char *driven_failure(const struct driven_call *c, uint64_t timeout_ns);

/* ---- the protocol, exposed for tests -------------------------------------- */

/* Write the list of functions for the driver to fd, each with its
 * threads. 0, -EINVAL (an object path with a newline, which the driver
 * could not read back, or more than DRIVER_MAX_THREADS threads) or
 * -errno. */
int driven_write_specs(int fd, enum driven_mode mode, const struct bench_spec *const *specs,
		       size_t n, uint64_t timeout_ns, unsigned long perf_calls,
		       unsigned long warmup_calls, unsigned alloc_frames);

/* Why a fork server's child ended: the last number of an "end" line. */
enum driven_end {
	DRIVEN_END_SELF,    /* by itself: its wait status says how */
	DRIVEN_END_TIMEOUT, /* killed after --timeout */
	DRIVEN_END_EXEC,    /* killed: it executed another program */
};

enum driven_line_kind {
	DRIVEN_LINE_SERVER,
	DRIVEN_LINE_START,
	DRIVEN_LINE_DONE,
	DRIVEN_LINE_PERF,
	DRIVEN_LINE_END,
	DRIVEN_LINE_MEM,
	DRIVEN_LINE_SITE,
	DRIVEN_LINE_FRAME,
	DRIVEN_LINE_MAPS,
	DRIVEN_LINE_LOST,
	DRIVEN_LINE_THREAD,
	DRIVEN_LINE_EXEC,
};

struct driven_line {
	enum driven_line_kind kind;
	size_t i;	   /* START, DONE, PERF, END, MEM, SITE, FRAME, LOST, THREAD */
	long threads;	   /* SERVER */
	pid_t pid;	   /* SERVER, START, DONE, MAPS; THREAD: its tid */
	int status;	   /* END */
	bool killed;	   /* END: end is DRIVEN_END_TIMEOUT */
	enum driven_end end; /* END */
	char path[200];	   /* EXEC: what the child executed */
	uint64_t perf[4];  /* PERF */
	uint64_t mem[7];   /* MEM */
	size_t rank;	   /* SITE, FRAME */
	uint64_t bytes, count, pc; /* SITE; FRAME: pc */
	unsigned n;	   /* SITE */
	unsigned k;	   /* THREAD: its index in the round */
	uint64_t thread_mem[3]; /* THREAD: allocations, frees, bytes */
};

/* Parse one line of the report (without its newline). 0 or -EINVAL. */
int driven_parse_line(const char *s, struct driven_line *l);

#endif
