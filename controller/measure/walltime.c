/* SPDX-License-Identifier: MIT */
/*
 * The walltime instrument: wall-clock time per call, measured inside a
 * fresh child by the injected harness (arch/harness.h), so that no trap
 * falls inside a timed interval.
 *
 * For each benchmark:
 *
 *   spawn ─ run to main ─ map harness ─ grow n ─ warm up ─ sample ... ─ kill
 *                                       └────── one trace_call each ──────┘
 *
 * Each sample is two injected calls of the harness, the passes in both
 * orders (empty then benchmark, benchmark then empty), with clock readings
 * taken by the child through its own vDSO. The sample's per-call time is
 * its two benchmark passes less its two empty passes, over 2n calls; the
 * empty function is a `ret` mapped near the benchmark at the same offset
 * in its page (map_empty_near). Every MEASURE_FLOOR_EVERY-th sample calls
 * the empty function in all four passes: those floor samples give the
 * resolution against which "measured no execution time" is decided.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/fd.h"
#include "arch/harness.h"
#include "elf/elf.h"
#include "trace/trace.h"
#include "util/procmaps.h"
#include "measure/measure.h"
#include "measure/harness.h"
#include "measure/profile.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double measure_resolution(const double *floor, size_t n)
{
	double v[MEASURE_FLOOR_MAX];
	size_t k;

	if (n == 0)
		return NAN;
	if (n > MEASURE_FLOOR_MAX)
		n = MEASURE_FLOOR_MAX;
	for (size_t i = 0; i < n; i++)
		v[i] = fabs(floor[i]);
	qsort(v, n, sizeof(*v), cmp_double);
	/* The 90th percentile, nearest rank: the largest but one of 10. */
	k = (9 * n + 9) / 10;
	return v[k - 1];
}

bool measure_no_time(double median, double ci_low, double resolution, size_t n)
{
	/*
	 * An empty function measured against itself gives differences on
	 * both sides of zero, as large as the machine's noise at this n; a
	 * benchmark whose median, within its own uncertainty, reaches into
	 * them cannot be told from an empty function. docs/run.md explains
	 * the choice.
	 */
	double low = isnan(ci_low) || ci_low > median ? median : ci_low;

	if (n == 0)
		return true;
	if (isnan(resolution))
		return low <= 0;
	return low <= resolution;
}

/* A sample that is not recorded (growth, warm-up); markers say so. */
static int unrecorded_sample(struct harness *c, const struct bench_spec *s, uint64_t fn,
			     uint64_t empty, uint64_t n, uint64_t deadline,
			     const struct measure_hooks *hooks, size_t *index, uint64_t *ret_bench,
			     struct trace_failure *f)
{
	struct sample x;
	int r;

	r = harness_sample(c, fn, empty, n, deadline, &x, f);
	if (r < 0)
		return r;
	harness_emit_sample(hooks, c, s->name, &x, (*index)++, true);
	*ret_bench = x.bench;
	return 0;
}

/*
 * Whether the threads ran at once: in each recorded round, their CPU time
 * over N times the round's span (on_cpu[0..ns), reordered here). Two threads
 * on one free processor (another program has the other) each run about
 * half of the round, and the figure is that of threads taking turns; so is
 * a body that sleeps (a lock held by another thread). Said when the median
 * round spent less than MEASURE_MIN_ON_CPU of it on processors.
 */
#define MEASURE_MIN_ON_CPU 0.8
static void check_at_once(const struct harness *c, double *on_cpu, size_t ns,
			  struct bench_result *res)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	double median;

	median = stats_median(on_cpu, ns);
	if (cpus > 0 && c->nthreads > (unsigned long)cpus)
		bench_result_diagnose(res,
				      "%u threads on %ld processors: they took turns, %.0f%% of "
				      "each round on a processor (median)",
				      c->nthreads, cpus, 100 * median);
	else if (median < MEASURE_MIN_ON_CPU)
		bench_result_diagnose(res,
				      "its %u threads were on a processor for only %.0f%% of each "
				      "round (median): the rest they waited, for a lock of the body "
				      "or for a processor another program used; where they did not "
				      "run at once, this is the figure of threads taking turns",
				      c->nthreads, 100 * median);
}

/* What the recorded samples hid (hidden.c): the events the trace engine
 * handled inside them, and the CPU time around them. */
struct hidden {
	struct trace_call_counts events;
	uint64_t calls;	 /* benchmark calls in the recorded samples */
	double timed_ns; /* their benchmark passes, over every thread */
	bool ticks_ok;
	uint64_t stime0, total0, stime1, total1;
};

/* Calls made in the pass that counts a benchmark's system calls. */
#define MEASURE_SYSCALL_CALLS 8

/*
 * The diagnostics of hidden.c. The system calls are counted after the
 * samples, in a pass of a few calls of the benchmark's own (each system
 * call costs two ptrace stops there), never inside a timed interval. A
 * benchmark that fails in that pass keeps its figure: the child is gone,
 * the next benchmark gets a fresh one.
 */
static int say_hidden(struct harness *c, const struct bench_spec *s, uint64_t fn, uint64_t deadline,
		      const struct hidden *h, struct bench_result *res, struct trace_failure *f)
{
	struct trace_syscall_counts *sc = calloc(1, sizeof(*sc));
	double share = NAN;
	unsigned calls = 0;
	char *note;

	if (!sc)
		return -ENOMEM;
	if (h->ticks_ok && h->total1 >= h->total0 && h->stime1 >= h->stime0)
		share = measure_kernel_share(h->stime1 - h->stime0, h->total1 - h->total0,
					     sysconf(_SC_CLK_TCK), h->timed_ns);
	if (harness_count_syscalls(c, fn, s, MEASURE_SYSCALL_CALLS, deadline, sc, &calls, f) < 0 ||
	    calls == 0) {
		free(sc);
		sc = NULL;
	}
	note = measure_kernel_note(share, sc, calls);
	if (note)
		bench_result_diagnose(res, "%s", note);
	free(note);
	note = measure_events_note(&h->events, h->calls);
	if (note)
		bench_result_diagnose(res, "%s", note);
	free(note);
	free(sc);
	return 0;
}

/* Measure one benchmark, at fn, against the empty function at 'empty'. */
static int sample_bench(struct harness *c, const struct bench_spec *s,
			const struct measure_plan *plan, const struct measure_hooks *hooks,
			uint64_t fn, uint64_t empty, struct bench_result *res,
			struct trace_failure *f)
{
	uint64_t deadline = res->t_start_ns + plan->timeout_ns;
	uint64_t n = 1, bench;
	double *cals = NULL, *per_thread = NULL, *on_cpu = NULL, floors[MEASURE_FLOOR_MAX];
	size_t ns = 0, nfloor = 0, cap = 0, index = 0, slot = 0;
	struct sample x = { 0 };
	int r;

	r = harness_set_args(c, s);
	if (r < 0)
		return r;

	/*
	 * Grow n until the benchmark loop lasts sample_target_ns: jump by the
	 * measured ratio (at most 100x a step), so that a slow benchmark needs
	 * one step and a fast one a few. A sample long enough is confirmed by
	 * a second one at the same n, and n is checked again after the
	 * warm-up: the first calls of a benchmark pay for cold caches and
	 * first-touch page faults (the first two calloc(4 MiB) of a process
	 * fault 1024 fresh pages each and take 14 ms, the later ones 0.1 ms)
	 * and must not decide n alone.
	 */
	uint64_t target = plan->sample_target_ns, grow_start = measure_now_ns();

	for (int round = 0;; round++) {
		for (;;) {
			r = unrecorded_sample(c, s, fn, empty, n, deadline, hooks, &index, &bench,
					      f);
			if (r < 0)
				return r;
			if (bench >= target || n >= MEASURE_MAX_ITERATIONS) {
				r = unrecorded_sample(c, s, fn, empty, n, deadline, hooks, &index,
						      &bench, f);
				if (r < 0)
					return r;
				if (bench >= target / 2 || n >= MEASURE_MAX_ITERATIONS)
					break;
			}
			n = measure_grow(n, bench, target);
		}

		/* Warm up with the same samples, unrecorded, until warmup_ns
		 * has passed (counting the growth). */
		bool too_short = false;

		while (measure_now_ns() - grow_start < plan->warmup_ns) {
			r = unrecorded_sample(c, s, fn, empty, n, deadline, hooks, &index, &bench,
					      f);
			if (r < 0)
				return r;
			too_short = bench < target / 2 && n < MEASURE_MAX_ITERATIONS;
		}
		if (!too_short || round == 2)
			break;
		n = measure_grow(n, bench, target);
	}

	uint64_t start = measure_now_ns();
	struct hidden hid = { 0 };

	hid.ticks_ok = harness_cpu_ticks(c, &hid.stime0, &hid.total0) == 0;
	res->iterations = c->nthreads ? n : 2 * n;
	for (;;) {
		if (ns == cap) {
			size_t nc = cap ? cap * 2 : 64;
			double *v1 = realloc(res->samples, nc * sizeof(*v1));

			if (!v1)
				goto nomem;
			res->samples = v1;
			double *v2 = realloc(cals, nc * sizeof(*v2));

			if (!v2)
				goto nomem;
			cals = v2;
			if (c->nthreads) {
				double *v3 = realloc(per_thread,
						     nc * c->nthreads * sizeof(*v3));

				if (!v3)
					goto nomem;
				per_thread = v3;
				double *v4 = realloc(on_cpu, nc * sizeof(*v4));

				if (!v4)
					goto nomem;
				on_cpu = v4;
			}
			cap = nc;
		}
		/* A slow benchmark keeps the samples it has rather than lose
		 * them all to the timeout in the middle of the next one. */
		uint64_t now = measure_now_ns();

		if (ns > 0 && now + x.bench * 2 > deadline) {
			bench_result_diagnose(res,
					      "stopped after %zu samples: another would have run "
					      "past --timeout (%.3g s); raise it for more samples",
					      ns, (double)plan->timeout_ns / 1e9);
			break;
		}
		/* Every MEASURE_FLOOR_EVERY-th sample calls the empty function
		 * in both passes: its difference is what measuring nothing
		 * gives, in this child, at this n, under this load. */
		if (slot++ % MEASURE_FLOOR_EVERY == MEASURE_FLOOR_EVERY - 1 &&
		    nfloor < MEASURE_FLOOR_MAX) {
			r = harness_floor(c, empty, n, deadline, &floors[nfloor], f);
			if (r < 0)
				goto out;
			nfloor++;
			continue;
		}
		struct trace_call_counts before = c->events;

		r = harness_sample(c, fn, empty, n, deadline, &x, f);
		if (r < 0)
			goto out;
		hid.events.clones += c->events.clones - before.clones;
		hid.events.forks += c->events.forks - before.forks;
		hid.events.signals += c->events.signals - before.signals;
		hid.calls += x.calls * (c->nthreads ? c->nthreads : 1);
		hid.timed_ns += (double)x.bench * (c->nthreads ? c->nthreads : 1);
		harness_emit_sample(hooks, c, s->name, &x, index++, false);
		if (ns == 0)
			res->t_first_sample_ns = x.t_end;
		/* Each sample's own calibration is subtracted from it: the two
		 * passes ran back to back, so a change of the machine's speed
		 * between samples cancels out. */
		res->samples[ns] = harness_per_call(&x);
		cals[ns] = (double)x.cal / (double)x.calls;
		for (unsigned i = 0; i < c->nthreads; i++)
			per_thread[ns * c->nthreads + i] = c->thread_per_call[i];
		if (c->nthreads)
			on_cpu[ns] = c->on_cpu;
		ns++;
		if (ns >= plan->max_samples)
			break;
		if (ns >= plan->min_samples && measure_now_ns() - start >= plan->time_ns)
			break;
	}

	if (hid.ticks_ok)
		hid.ticks_ok = harness_cpu_ticks(c, &hid.stime1, &hid.total1) == 0;

	/* At least MEASURE_FLOOR_MIN floor samples, time permitting (a
	 * floor sample lasts no longer than a benchmark sample). */
	while (nfloor < MEASURE_FLOOR_MIN && measure_now_ns() + x.bench * 2 <= deadline) {
		r = harness_floor(c, empty, n, deadline, &floors[nfloor], f);
		if (r < 0)
			goto out;
		nfloor++;
	}
	res->resolution = measure_resolution(floors, nfloor);

	harness_calibration(res, cals, ns, x.calls, true);
	res->nsamples = ns;
	/* Each thread's own figure: the median over the recorded samples
	 * of its interval less its empty round's, per call. The per-call
	 * time of the benchmark is the round's; these say how evenly the
	 * threads shared it. */
	r = harness_thread_figures(c, per_thread, ns, res);
	if (r == 0 && c->nthreads && ns)
		check_at_once(c, on_cpu, ns, res);
	if (r == 0 && ns)
		r = say_hidden(c, s, fn, deadline, &hid, res, f);
out:
	free(cals);
	free(per_thread);
	free(on_cpu);
	return r;
nomem:
	r = -ENOMEM;
	goto out;
}

/*
 * End the workers of a child that goes on to another benchmark. When they
 * do not end as asked (a thread that detached itself, a destructor of
 * thread-local data that hangs or crashes), the benchmark keeps what it
 * measured, says so, and the child is killed: the next benchmark gets a
 * fresh one.
 */
static void end_threads(struct harness *c, const struct measure_plan *plan,
			struct bench_result *res)
{
	struct trace_failure g;
	char *why = NULL;
	int r = harness_threads_stop(c, measure_now_ns() + plan->timeout_ns, &g);

	if (r == 0)
		return;
	if (r == -TRACE_E_FAILED)
		why = harness_failure(&g, plan->timeout_ns);
	bench_result_diagnose(res,
			      "its threads did not end when asked after it was measured (%s); "
			      "the child was killed, the next benchmark has a fresh one",
			      why			? why
			      : r == -ECHILD ? "pthread_join failed: did a thread detach itself?"
					     : trace_strerror(r));
	free(why);
	trace_kill(c->p);
}

/* Measure one benchmark in child c, which is ready; 'keep': c goes on to
 * the next benchmark (--isolation shared). */
static int measure_one(struct harness *c, const struct bench_spec *s,
		       const struct measure_plan *plan, const struct measure_hooks *hooks,
		       bool keep, struct bench_result *res, struct trace_failure *f)
{
	uint64_t fn, page;
	int64_t ignored;
	int r;

	r = harness_address(c, s, res, &fn, f);
	if (r < 0)
		return r;
	r = harness_map_empty(c, fn, &page);
	if (r < 0) {
		if (asprintf(&res->error, "cannot map an empty function in the child: %s",
			     trace_strerror(r)) < 0)
			res->error = NULL;
		return r;
	}
	if (s->threads > 1) {
		r = harness_threads_start(c, s->threads, res->t_start_ns + plan->timeout_ns, res, f);
		if (r < 0)
			return r;
	}
	r = sample_bench(c, s, plan, hooks, fn, page + (fn & (PAGE - 1)), res, f);
	if (c->nthreads) {
		/* Workers of a child that is not used again die with it. */
		if (r == 0 && keep)
			end_threads(c, plan, res);
		else if (r < 0)
			trace_kill(c->p);
		c->nthreads = 0;
	}
	/* A child that runs more benchmarks does not keep the page. */
	if (r == 0 && keep && trace_alive(c->p))
		trace_syscall(c->p, SYS_munmap, (const uint64_t[6]){ page, PAGE }, &ignored);
	return r;
}

int measure_walltime(const struct measure_target *t, const struct bench_spec *specs, size_t n,
		     const struct measure_plan *plan, enum measure_isolation iso,
		     const struct measure_opts *opts,
		     const struct measure_hooks *hooks, struct bench_result *results, char **ret_error)
{
	struct harness c = { 0 };
	bool no_vdso = false;
	int r;

	for (size_t i = 0; i < n; i++) {
		struct bench_result *res = &results[i];
		struct trace_failure f;
		char *why = NULL;

		measure_result_begin(res, &specs[i], "walltime", "ns");
		harness_emit(hooks, MEASURE_BENCH_START, specs[i].name, 0, res->t_start_ns, 0, 0,
			     false);

		if (!c.p) {
			r = harness_start(t, res->t_start_ns + plan->timeout_ns, plan->timeout_ns,
					  &c, &no_vdso, &why);
			if (r < 0) {
				/* The binary cannot run at all: no point going on. */
				if (i == 0) {
					*ret_error = why;
					for (size_t j = 0; j <= i; j++)
						bench_result_clear(&results[j]);
					return r;
				}
				res->status = BENCH_FAILED;
				res->error = why;
				res->t_end_ns = measure_now_ns();
				measure_emit_end(hooks, res, 0, res->t_end_ns);
				continue;
			}
		}
		res->pid = trace_pid(c.p);
		res->t_ready_ns = measure_now_ns();
		if (no_vdso)
			bench_result_diagnose(res, "the child has no vDSO: the clock was read with "
						   "the clock_gettime system call (slower, coarser)");

		r = measure_one(&c, &specs[i], plan, hooks, iso == MEASURE_ISOLATION_SHARED, res, &f);
		if (r == 0 && specs[i].threads > 1 && t->cpu >= 0)
			bench_result_diagnose(res,
					      "its %u threads were all pinned to CPU %d (--cpu): they "
					      "took turns on it rather than ran at once",
					      specs[i].threads, t->cpu);
		if (r == 0) {
			harness_finish(res);
		} else {
			res->status = BENCH_FAILED;
			if (!res->error)
				res->error = r == -TRACE_E_FAILED
						     ? harness_failure(&f, plan->timeout_ns)
						     : strdup(trace_strerror(r));
			free(res->samples);
			res->samples = NULL;
			res->nsamples = 0;
		}
		res->t_end_ns = measure_now_ns();
		measure_emit_end(hooks, res, res->pid, res->t_end_ns);
		/* --profile: a pass of its own, in a child of its own. */
		if (r == 0 && opts && opts->profile)
			measure_profile_walltime(t, &specs[i], plan, opts->profile, i, res);

		/* A fresh child for the next benchmark, or after this one died. */
		if (iso != MEASURE_ISOLATION_SHARED || r == -TRACE_E_FAILED || !trace_alive(c.p))
			harness_free(&c);
	}
	harness_free(&c);
	return 0;
}
