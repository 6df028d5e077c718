/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_MEASURE_HARNESS_H
#define BENCHTRAP_MEASURE_HARNESS_H
/*
 * A traced child with the walltime harness in place (harness.c), internal
 * to measure/: the walltime instrument (walltime.c) and the paired
 * comparison of two builds (paired.c) take their samples through it.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/trace.h"
#include "measure/measure.h"

#define PAGE 4096
/* Data page layout. */
#define DATA_ARGS 0 /* six argument words */
#define DATA_OUT 64 /* three struct timespec */

struct trace_proc;
struct trace_failure;

/* A child ready to take samples. */
struct harness {
	struct trace_proc *p;
	uint64_t bias;	  /* load bias of the binary */
	uint64_t harness; /* address of the harness code (and of the rounds') */
	uint64_t data;	  /* address of the data page */
	uint64_t clock;	  /* clock_gettime to call */
	bool vdso_clock;  /* clock is the vDSO's */
	/* harness_threads_start(): samples are rounds on these workers
	 * (arch/rounds.h); 0: on the main thread, by the harness. */
	unsigned nthreads;
	uint64_t ctl;	       /* address of the struct rounds_ctl */
	uint64_t ctl_size;
	uint64_t join;	       /* the child's pthread_join */
	unsigned parity;       /* which round of a sample goes first */
	pid_t tids[MEASURE_MAX_THREADS];
	/* The last sample's benchmark round: each thread's interval, and its
	 * own per-call time (its interval less its empty round's, over n). */
	struct measure_bound bounds[MEASURE_MAX_THREADS];
	double thread_per_call[MEASURE_MAX_THREADS];
	/* and the share of it the threads spent on a processor: their CPU
	 * time over N times its span (1: all N ran throughout) */
	double on_cpu;
	/* What the trace engine handled inside every harness call and round
	 * so far (threads, processes created, signals delivered), added to:
	 * each a ptrace stop inside a timed interval. */
	struct trace_call_counts events;
};

/* Spawn t's binary, run it to main and put the harness in place, by
 * 'deadline' (CLOCK_MONOTONIC ns). *ret_no_vdso: the clock is the system
 * call. Returns 0, or -TRACE_E_FAILED with *ret_error saying why. */
int harness_start(const struct measure_target *t, uint64_t deadline, uint64_t timeout_ns,
		  struct harness *c, bool *ret_no_vdso, char **ret_error);
/* The child's clock_gettime in its vDSO, 0 when it has none. */
uint64_t harness_vdso_clock(struct trace_proc *p);
/* Kill the child (if any) and reap it. */
void harness_free(struct harness *c);
/* Whether pc is in the harness's page: code benchtrap put in the child,
 * which a walk may name after the module whose range it fell in. */
bool harness_owns(const struct harness *c, uint64_t pc);

/* Where benchmark s is called in the child (an IFUNC resolved); on a
 * library that is not loaded, -ENOENT with res->error set. */
int harness_address(struct harness *c, const struct bench_spec *s, struct bench_result *res,
		    uint64_t *ret_fn, struct trace_failure *f);
/* The arguments of s, for every call that follows. */
int harness_set_args(struct harness *c, const struct bench_spec *s);
/* A page of empty functions mapped near fn (within 2 GiB): the empty
 * function fn is measured against is at fn's own offset in *ret_page. */
int harness_map_empty(struct harness *c, uint64_t fn, uint64_t *ret_page);

/*
 * --threads: create 'nthreads' workers in the child with its own
 * pthread_create (arch/rounds.h), after which every sample is a pair of
 * rounds. A program without pthread_create: -ENOENT with res->error set.
 */
int harness_threads_start(struct harness *c, unsigned nthreads, uint64_t deadline,
			  struct bench_result *res, struct trace_failure *f);
/* End the workers and join them: the child is as it was before. -ECHILD
 * when pthread_join fails (a worker detached itself): the workers may
 * still run, the child must not be used again. */
int harness_threads_stop(struct harness *c, uint64_t deadline, struct trace_failure *f);

/* The CPU time the threads that call the benchmark (the main thread, or
 * the workers) have had so far, in clock ticks (sysconf(_SC_CLK_TCK)):
 * *ret_stime in the kernel, *ret_total in all. From /proc/PID/task/TID/stat. */
int harness_cpu_ticks(const struct harness *c, uint64_t *ret_stime, uint64_t *ret_total);
/* The benchmark's own calls, 'calls' of them (fewer when they last past
 * 100 ms or 'deadline'), outside any sample, with the calling thread's
 * system calls counted into *sc; *ret_calls: the calls made. */
int harness_count_syscalls(struct harness *c, uint64_t fn, const struct bench_spec *s,
			   unsigned calls, uint64_t deadline, struct trace_syscall_counts *sc,
			   unsigned *ret_calls, struct trace_failure *f);

/* The span of a round: [least start, greatest end] of b[0..n). */
void harness_round_span(const struct measure_bound *b, size_t n, uint64_t ret_span[2]);
/* Each thread's figure: out[i] = {tids[i], the median over k < ns of
 * per_thread[k * nthreads + i]} (NAN without samples). -ENOMEM or 0. */
int harness_thread_medians(const double *per_thread, size_t nthreads, size_t ns,
			   const pid_t *tids, struct measure_thread *out);
/* res->threads from c's workers: harness_thread_medians of the recorded
 * samples' per_thread[k * c->nthreads + i]; nothing without workers or
 * samples. -ENOMEM or 0. */
int harness_thread_figures(const struct harness *c, const double *per_thread, size_t ns,
			   struct bench_result *res);

/*
 * What one sample measured. A sample is two calls of the harness with the
 * passes in both orders:
 *
 *     t0 empty t1 fn t2  trap  t0' fn t1' empty t2'
 *
 * so that whatever favours a pass by its position (the first starts with
 * a fresh time slice after the trap, the second inherits what the first
 * left in the caches and predictors) cancels: 'bench' is (t2 - t1) +
 * (t1' - t0'), 'cal' (t1 - t0) + (t2' - t1'), both over 2n calls. The
 * benchmark's calls are contiguous but for the trap, which is in neither
 * interval: [t_start, t_end] = [t1, t1'] is where markers put the sample.
 * With fn the empty function itself, it is a floor sample.
 *
 * With workers (harness_threads_start), a sample is two rounds, the
 * benchmark's and the empty function's, in alternating order from one
 * sample to the next; each round is N threads released together, each
 * calling its function n times: 'bench' and 'cal' are the rounds' spans
 * [min start, max end], over n calls, and [t_start, t_end] is the
 * benchmark's round. c->bounds has each thread's interval.
 */
struct sample {
	uint64_t cal, bench, t_start, t_end;
	uint64_t calls; /* calls in 'bench' per thread: 2n, or n in a round */
};

int harness_sample(struct harness *c, uint64_t fn, uint64_t empty, uint64_t n, uint64_t deadline,
		   struct sample *ret, struct trace_failure *f);
/* A floor sample: the empty function in both passes, in both calls; *ret
 * is its per-call difference. */
int harness_floor(struct harness *c, uint64_t empty, uint64_t n, uint64_t deadline, double *ret,
		  struct trace_failure *f);

/* A sample's per-call time: its benchmark passes less its empty passes. */
static inline double harness_per_call(const struct sample *x)
{
	return ((double)x->bench - (double)x->cal) / (double)x->calls;
}

/* res->calibration: the median of cals[0..ns) (per-call costs of the
 * empty passes, sorted here); with warn_noisy, a diagnostic when they
 * spread over more than measure_machine_noisy allows. */
void harness_calibration(struct bench_result *res, double *cals, size_t ns, uint64_t n,
			 bool warn_noisy);
/* The failure f in words; a timeout is stated as the configured one. */
char *harness_failure(const struct trace_failure *f, uint64_t timeout_ns);
/* Summarize res's samples and decide "no execution time" (status OK), or
 * fail it when no sample is usable. */
void harness_finish(struct bench_result *res);
void harness_emit(const struct measure_hooks *h, enum measure_event_kind kind, const char *name,
		  pid_t pid, uint64_t t, size_t sample, uint64_t iterations, bool warmup);
/* The markers of sample x of c, number 'index' (with the threads' bounds
 * when it was a round). */
void harness_emit_sample(const struct measure_hooks *h, const struct harness *c,
			 const char *name, const struct sample *x, size_t index, bool warmup);

#endif
