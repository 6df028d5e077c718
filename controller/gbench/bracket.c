// SPDX-License-Identifier: MIT
/*
 * Google Benchmark walltime timed by benchtrap (docs/gbench.md): each
 * instance in a fresh process running its own main, traced, each batch
 * timed as the library times it (measure/bracket.h): from the return of
 * State::StartKeepRunning (or ResumeTiming) to the entry of PauseTiming or
 * FinishKeepRunning, by the injected stubs with no trap inside, so that
 * what the function does before and after its loop, and a fixture's SetUp
 * and TearDown, stay out of the figure as they stay out of the library's.
 * Where those functions cannot be timed so, every call of the instance's
 * function is one batch of a thread, set-up included (said in the
 * diagnostics). The library's log
 * (--v=2, on stderr to a file) gives each batch's iteration count, before
 * the batch runs; its JSON output gives the repetitions, cpu time, counters
 * and label as before.
 *
 *   repetition 1:  1, 10, 100, ... N   (grows until a batch is long enough)
 *   repetition 2..R:                N   (one batch each, the same count)
 *
 * A sample is the per-iteration time of each repetition's final batch: the
 * last R batches. Paired, the two builds' children alternate batch by batch
 * (only one runs at a time), aligned once both have reached repetition 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/bracket.h"
#include "measure/driver-env.h"
#include "stats/stats.h"
#include "util/launch.h"
#include "gbench/gbench.h"
#include "util/strutil.h"
#include "measure/failure.h"
#include "gbench/internal.h"

/* ---- the mapping of batches to samples (pure) ---------------------------- */

int gbench_final_batches(const uint64_t *spans, size_t nb, const uint64_t *counts, size_t ncounts,
			 const uint64_t *rep_iters, size_t nreps, double *ret)
{
	if (nb != ncounts || nreps == 0 || nreps > nb)
		return -EINVAL;
	for (size_t j = 0; j < nreps; j++)
		if (counts[nb - nreps + j] != rep_iters[j] || rep_iters[j] == 0)
			return -EINVAL;
	for (size_t j = 0; j < nreps; j++)
		ret[j] = (double)spans[nb - nreps + j] / (double)counts[nb - nreps + j];
	return 0;
}

unsigned gbench_name_threads(const char *name)
{
	const char *at = strstr(name, "/threads:");
	unsigned long v;
	char *end;

	if (!at)
		return 1;
	v = strtoul(at + strlen("/threads:"), &end, 10);
	if (end == at + strlen("/threads:") || (*end && *end != '/') || v == 0 || v > 4096)
		return 1;
	return (unsigned)v;
}

/* ---- one child ------------------------------------------------------------ */

struct gside {
	const struct measure_target *t;
	const struct bench_spec *spec;
	struct bracket_side side; /* its child, its calls, how it ended */
	bool loop; /* timed by the library's own clock functions */
	bool sized;	     /* its batches' counts can be set (bracket_set_count) */
	uint64_t iterations; /* its final batches' count, per thread */
	int errfd, logfd;
	unsigned threads;
	uint64_t *counts; /* each batch's iteration count per thread, from the log */
	size_t ncounts, capcounts;
	char *log; /* what was read of the log and not parsed yet (a partial line) */
	size_t loglen;
	size_t batches; /* batches ended */
	bool in_finals; /* it reached repetition 2: batches of one count */
};

/* The log's new complete lines: their batch counts appended. */
static int read_log(struct gside *s)
{
	for (;;) {
		char chunk[8192];
		ssize_t k = read(s->logfd, chunk, sizeof(chunk));

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		char *v = realloc(s->log, s->loglen + (size_t)k + 1);

		if (!v)
			return -ENOMEM;
		s->log = v;
		memcpy(s->log + s->loglen, chunk, (size_t)k);
		s->loglen += (size_t)k;
		s->log[s->loglen] = '\0';
	}
	if (!s->log)
		return 0;
	char *nl = strrchr(s->log, '\n');
	if (!nl)
		return 0;

	char saved = nl[1];
	size_t n = 0, want;

	nl[1] = '\0';
	gbench_parse_batches(s->log, s->spec->name, NULL, 0, &n);
	want = s->ncounts + n;
	if (want > s->capcounts) {
		uint64_t *v = realloc(s->counts, (want + 64) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->counts = v;
		s->capcounts = want + 64;
	}
	gbench_parse_batches(s->log, s->spec->name, s->counts + s->ncounts, n, &n);
	s->ncounts += n;
	nl[1] = saved;
	s->loglen -= (size_t)(nl + 1 - s->log);
	memmove(s->log, nl + 1, s->loglen + 1);
	return 0;
}

static void side_free(struct gside *s)
{
	bracket_free(s->side.br);
	s->side.br = NULL;
	if (s->errfd >= 0)
		close(s->errfd);
	if (s->logfd >= 0)
		close(s->logfd);
	s->errfd = s->logfd = -1;
	free(s->side.calls);
	free(s->counts);
	free(s->log);
	s->side.calls = NULL;
	s->counts = NULL;
	s->log = NULL;
	launch_sweep();
}

/* The plan of a bracketed instance: many short repetitions (docs/gbench.md). */
static void bracket_plan(const struct measure_plan *plan, struct measure_plan *ret)
{
	size_t reps = (size_t)(plan->time_ns / GBENCH_BATCH_NS);

	*ret = *plan;
	if (reps < plan->min_samples)
		reps = plan->min_samples;
	if (plan->max_samples && reps > plan->max_samples)
		reps = plan->max_samples;
	ret->min_samples = reps ? reps : 1;
}

/* Start side s: 0, or a negative errno (nothing could be run: out of
 * memory); a child that cannot start fails s->side.res alone. */
static int side_start(struct gside *s, const struct measure_plan *plan)
{
	char **argv = NULL, path[PATH_MAX + 16], *why = NULL;
	size_t na = 0;
	struct measure_plan bp;
	struct bracket_fn fn[2] = { { s->spec->object ? s->spec->object : s->t->binary,
				      s->spec->link_addr } };
	struct gbench_clock clock = { 0 };
	int r;

	s->errfd = s->logfd = -1;
	s->threads = gbench_name_threads(s->spec->name);
	/* The timeout bounds each process (a paired compare runs several). */
	s->side.deadline = measure_now_ns() + plan->timeout_ns;
	s->side.timeout_ns = plan->timeout_ns;
	snprintf(path, sizeof(path), "%s/out.json", s->side.dir);
	unlink(path);
	bracket_plan(plan, &bp);
	r = gbench_instance_argv(s->t, s->spec, &bp, false, s->side.dir, &argv, &na);
	if (r == 0)
		r = measure_env_push(&argv, &na, strdup("--v=2"));
	if (r < 0) {
		measure_env_free(argv);
		return r;
	}
	snprintf(path, sizeof(path), "%s/stderr", s->side.dir);
	s->errfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	s->logfd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->errfd < 0 || s->logfd < 0) {
		r = -errno;
		bench_result_fail(s->side.res, str_fmt("cannot create %s: %s", path, strerror(-r)));
		measure_env_free(argv);
		side_free(s);
		return 0;
	}
	r = gbench_clock_find(s->t->binary, &clock);
	if (r == -ENOMEM) {
		measure_env_free(argv);
		side_free(s);
		return r;
	}
	if (r == 0) {
		r = bracket_start(s->t, argv, clock.fns, clock.n,
				  s->t->quiet_stdio ? -1 : STDOUT_FILENO, s->errfd, &s->side.br,
				  &why);
		s->loop = r == 0;
		s->sized = r == 0 && clock.size;
		if (r == -ENOTSUP && s->spec->link_addr) {
			r = bench_result_diagnose(
				s->side.res,
				"its loop could not be timed as Google Benchmark "
				"times it (%s): each batch is timed around its "
				"function, with what it does before and after its "
				"loop",
				why);
			free(why);
			why = NULL;
			if (r == 0)
				r = -ENOTSUP;
		}
	} else {
		r = bench_result_diagnose(s->side.res,
					  "Google Benchmark's loop functions are not among its "
					  "symbols: each batch is timed around its function, with "
					  "what it does before and after its loop");
		if (r == 0)
			r = -ENOTSUP;
	}
	if (r == -ENOTSUP && s->spec->link_addr) {
		if (clock.size)
			fn[1] = *clock.size;
		r = bracket_start(s->t, argv, fn, clock.size ? 2 : 1,
				  s->t->quiet_stdio ? -1 : STDOUT_FILENO, s->errfd, &s->side.br,
				  &why);
		s->sized = r == 0 && clock.size;
	}
	gbench_clock_free(&clock);
	measure_env_free(argv);
	if (r < 0) {
		bench_result_fail(s->side.res,
				  why ? why : str_fmt("cannot start %s", s->t->binary));
		side_free(s);
		return r == -ENOMEM ? r : 0;
	}
	free(why);
	s->side.res->pid = bracket_pid(s->side.br);
	s->side.res->t_ready_ns = measure_now_ns();
	s->side.live = true;
	return 0;
}

/* What an instance that exited with a failure said last. */
static char *last_words(const char *stderr_path)
{
	return str_tail_lines(stderr_path, 3);
}

/*
 * Run side s until its next batch ended (true; s->batches counts it) or it
 * is no longer live (false: exited, failed). Negative: out of memory.
 */
static int side_step(struct gside *s, struct trace_failure *f)
{
	size_t want = (s->batches + 1) * s->threads;

	while (s->side.live && s->side.ncalls < want) {
		int r = bracket_side_next(&s->side, last_words, f);

		if (r <= 0)
			return r;
	}
	if (!s->side.live)
		return 0;
	s->batches++;
	if (read_log(s) < 0)
		return -ENOMEM;
	if (s->batches >= 2 && s->ncounts >= s->batches &&
	    s->counts[s->batches - 1] == s->counts[s->batches - 2])
		s->in_finals = true;
	return 1;
}

/*
 * Side s exited: its results from the JSON output, its samples from the
 * bracketed final batches (*ret_samples, *ret_n: malloc'ed, or NULL with a
 * diagnostic when they cannot be matched, and Google Benchmark's figures
 * stay). 0 or -ENOMEM.
 */
/*
 * Said on s's result when benchtrap's per-iteration times v[0..n) and the
 * library's own for the same batches (runs' real times) disagree beyond
 * their noise, with what makes them differ: 0, or -ENOMEM.
 */
static int own_disagrees(struct gside *s, const double *v, const struct gbench_run *runs,
			 size_t n)
{
	double *own = calloc(n + 1, sizeof(*own)), ratio, tol;
	int r;

	if (!own)
		return -ENOMEM;
	for (size_t j = 0; j < n; j++)
		own[j] = runs[j].real_ns;
	r = stats_disagree(v, own, n, &ratio, &tol);
	free(own);
	if (r <= 0)
		return r == -ENOMEM ? r : 0;
	return bench_result_diagnose(
		       s->side.res,
		       "benchtrap's figure is %.3g× the binary's own time for the same batches "
		       "(a median over %zu, noise allows ±%.0f%%): %s",
		       ratio, n, 100 * tol,
		       ratio > 1 && !s->loop
			       ? "each batch is timed around the whole function, with what it does "
				 "before and after its loop"
		       : ratio < 1 && s->loop
			       ? "the library's clock also holds benchtrap's stop where it stops "
				 "(each batch's end, each PauseTiming); benchtrap's holds the loop "
				 "alone (more iterations a batch, a longer --time, make the stop's "
				 "share smaller)"
			       : "one of the two clocks holds what the other does not") < 0
		       ? -ENOMEM
		       : 0;
}

/*
 * Side s exited: its runs from the JSON output (*ret_runs, *ret_nruns:
 * gbench_runs_free) and benchtrap's per-iteration time of each run's final
 * batch (*ret_samples: malloc'ed, or NULL with a diagnostic when the calls
 * do not match the batches logged, and Google Benchmark's figures stay).
 * Nothing when it did not exit (its result says why). 0 or -ENOMEM.
 */
static int side_samples(struct gside *s, struct gbench_run **ret_runs, size_t *ret_nruns,
			double **ret_samples)
{
	struct gbench_run *runs = NULL;
	size_t nruns = 0, nb;
	uint64_t *spans = NULL, *reps = NULL;
	double *v = NULL;
	int r;

	*ret_samples = NULL;
	*ret_runs = NULL;
	*ret_nruns = 0;
	if (!s->side.exited)
		return 0;
	r = read_log(s);
	if (r == 0)
		r = gbench_read_results(s->side.dir, s->spec, &runs, &nruns, s->side.res);
	if (r < 0)
		return r == -ENOMEM ? r : 0;
	nb = s->side.ncalls / s->threads;
	spans = calloc(nb + 1, sizeof(*spans));
	reps = calloc(nruns + 1, sizeof(*reps));
	v = calloc(nruns + 1, sizeof(*v));
	if (!spans || !reps || !v) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t j = 0; j < nruns; j++)
		reps[j] = runs[j].iterations / (runs[j].threads ? runs[j].threads : 1);
	/* A batch given its count (bracket_set_count) ran that many, not
	 * what the log says the library chose. */
	for (size_t k = 0; k < nb && k < s->ncounts; k++)
		if (s->side.calls[k * s->threads].count)
			s->counts[k] = s->side.calls[k * s->threads].count;
	if ((s->loop ? bracket_batch_timed(s->side.calls, s->side.ncalls, s->threads, spans)
		     : bracket_batch_spans(s->side.calls, s->side.ncalls, s->threads, true,
					   spans)) < 0 ||
	    gbench_final_batches(spans, nb, s->counts, s->ncounts, reps, nruns, v) < 0) {
		r = bench_result_diagnose(
			s->side.res,
			"the calls of its function (%zu on %u thread(s)) did not match the %zu "
			"batches Google Benchmark logged: the figures are its own timing",
			s->side.ncalls, s->threads, s->ncounts);
		free(v);
		v = NULL;
		goto out;
	}
	/*
	 * Google Benchmark divides a thread's time by the iterations of all
	 * its threads (each runs the batch's count): per iteration as it
	 * counts them, so the figure is its own.
	 */
	for (size_t j = 0; j < nruns; j++)
		v[j] /= s->threads;
	if (s->ncounts)
		s->iterations = s->counts[s->ncounts - 1];
out:
	free(spans);
	free(reps);
	if (r < 0) {
		free(v);
		gbench_runs_free(runs, nruns);
		return r;
	}
	*ret_samples = v;
	*ret_runs = runs;
	*ret_nruns = nruns;
	return 0;
}

/*
 * s->side.res from its runs (Google Benchmark's own figures, taken), and said
 * when benchtrap's samples v[0..nruns) (NULL: none) disagree with them:
 * 0 or -ENOMEM. *v is freed when the result failed.
 */
static int side_result(struct gside *s, struct gbench_run *runs, size_t nruns, double **v)
{
	int r = runs ? gbench_result_from_runs(runs, nruns, s->side.res) : 0;

	if (r == 0 && *v && s->side.res->status == BENCH_OK)
		r = own_disagrees(s, *v, runs, nruns);
	if (r < 0 || s->side.res->status != BENCH_OK) {
		free(*v);
		*v = NULL;
	}
	gbench_runs_free(runs, nruns);
	return r;
}

/* res's samples are v[0..n) (taken): benchtrap's statistics over them. */
static int take_samples(struct bench_result *res, double *v, size_t n, const struct gside *s)
{
	int r;

	if (v)
		res->iterations = s->iterations;
	r = bracket_side_take_samples(&s->side, res, v, n);
	return r < 0 ? r : 0;
}

int gbench_bracket_one(const struct measure_target *t, const struct bench_spec *spec,
		       const struct measure_plan *plan, const char *dir, struct bench_result *res)
{
	struct gside s = {
		.t = t, .spec = spec, .side.res = res, .side.dir = dir, .errfd = -1, .logfd = -1
	};
	struct trace_failure *f = calloc(1, sizeof(*f));
	struct gbench_run *runs = NULL;
	double *v = NULL;
	size_t n = 0;
	int r;

	if (!f)
		return -ENOMEM;
	r = side_start(&s, plan);
	while (r == 0 && s.side.live)
		r = side_step(&s, f) < 0 ? -ENOMEM : 0;
	if (r == 0)
		r = side_samples(&s, &runs, &n, &v);
	if (r == 0)
		r = side_result(&s, runs, n, &v);
	if (r == 0 && s.side.br)
		r = take_samples(res, v, n, &s);
	else
		free(v);
	side_free(&s);
	free(f);
	return r;
}

/* ---- two builds, paired ------------------------------------------------------ */

/* Batch counts 1.5x apart: enough to bias a figure (a first iteration with
 * cold caches weighs more in the shorter batch): snappy's BM_ZFlat/0/1,
 * batches of 13 and 22 iterations of one binary, read -3.1 %. */
static bool apart(uint64_t a, uint64_t b)
{
	return 2 * (a < b ? b : a) >= 3 * (a < b ? a : b);
}


/* What one pair of processes gives and the pairs before it gave. */
struct gacc {
	struct gbench_run *runs; /* base's and head's runs, in order */
	size_t nruns;
	double *v; /* and benchtrap's samples, one per run; NULL: none */
	size_t nv;
	bool lost;	     /* a round had runs and no samples */
	bool loop;	     /* timed by the library's loop (the last pair's) */
	uint64_t iterations; /* the final batches' count (the last pair's) */
};

/* Round's runs r[0..nr) and samples v (taken) appended to a. */
static int acc_take(struct gacc *a, struct gbench_run *r, size_t nr, double *v)
{
	struct gbench_run *nrv = realloc(a->runs, (a->nruns + nr + 1) * sizeof(*nrv));

	if (!nrv) {
		gbench_runs_free(r, nr);
		free(v);
		return -ENOMEM;
	}
	a->runs = nrv;
	if (nr)
		memcpy(a->runs + a->nruns, r, nr * sizeof(*r));
	a->nruns += nr;
	free(r); /* the runs' strings are a's now */
	if (!v) {
		a->lost = a->lost || nr;
		return 0;
	}
	double *nv = realloc(a->v, (a->nv + nr + 1) * sizeof(*nv));

	if (!nv) {
		free(v);
		return -ENOMEM;
	}
	a->v = nv;
	memcpy(a->v + a->nv, v, nr * sizeof(*v));
	a->nv += nr;
	free(v);
	return 0;
}

/* One pair of processes: s[0] base, s[1] head, started with plan; their
 * runs and samples into acc[], their pair ratios appended to hres. */
static int paired_round(struct gside s[2], const struct measure_plan *plan, struct gacc acc[2],
			struct trace_failure *f)
{
	struct gbench_run *runs[2] = { NULL, NULL };
	double *v[2] = { NULL, NULL };
	size_t nr[2] = { 0, 0 }, q = 0;
	uint64_t common = 0;
	bool aligned = false, alike;
	int r;

	r = side_start(&s[0], plan);
	if (r == 0)
		r = side_start(&s[1], plan);
	/* base, head; head, base; ...: whatever favours a position favours
	 * each build alike. Once one build repeats its batches and the other
	 * still grows, the other goes on alone until it repeats too; from
	 * there a round is one batch of each. */
	/*
	 * Where both builds' batch counts can be set, base finds its count
	 * alone first and head runs every batch with it, its first ones
	 * too: Google Benchmark wants one count in all repetitions of an
	 * instance. Batches alike on both sides weigh a cold first iteration
	 * alike (snappy's BM_ZFlat/0/1 read -3.1 % between two copies of one
	 * binary whose libraries chose 13 and 22 iterations).
	 */
	alike = s[0].sized && s[1].sized;
	while (r == 0 && (s[0].side.live || s[1].side.live)) {
		int k;

		if (alike && !common && s[0].side.live && s[0].in_finals && s[0].ncounts) {
			common = s[0].counts[s[0].ncounts - 1];
			bracket_set_count(s[1].side.br, common);
		}
		if (alike && !common && s[0].side.live) {
			k = 0;
		} else if (s[0].side.live && s[1].side.live && s[0].in_finals != s[1].in_finals) {
			k = s[0].in_finals ? 1 : 0;
		} else {
			if (!aligned && s[0].in_finals && s[1].in_finals) {
				aligned = true;
				q = 0;
			}
			k = (int)((q % 2) ^ ((q / 2) % 2));
			q++;
			if (!s[k].side.live)
				k = 1 - k;
		}
		r = side_step(&s[k], f) < 0 ? -ENOMEM : 0;
	}
	for (int k = 0; r == 0 && k < 2; k++)
		r = side_samples(&s[k], &runs[k], &nr[k], &v[k]);
	if (r == 0 && v[0] && v[1] && s[0].ncounts && s[1].ncounts) {
		uint64_t cb = s[0].counts[s[0].ncounts - 1], ch = s[1].counts[s[1].ncounts - 1];

		/* The counts the batches ran (side_samples): each build's
		 * library chose its own where they could not be set, or
		 * where setting them did not take (an inlined constructor). */
		if (apart(cb, ch) &&
		    bench_result_diagnose(
			    s[1].side.res,
			    "base ran %" PRIu64 " iteration(s) a batch and head %" PRIu64
			    ", as each build's Google Benchmark chose: a change may be "
			    "the batches' and not the code's; a --benchmark_min_time "
			    "after -- that makes both batches long makes them alike",
			    cb, ch) < 0)
			r = -ENOMEM;
	}
	/* The pairs: head's final batch j over base's, for the j both have
	 * from the third on (the first two of each were taken while the other
	 * build may still have been growing its batches, apart in time). */
	if (r == 0 && v[0] && v[1]) {
		size_t np = nr[0] < nr[1] ? nr[0] : nr[1];

		r = bench_result_add_pairs(s[1].side.res, v[0], v[1], np, np > 4 ? 2 : 0);
	}
	for (int k = 0; k < 2; k++) {
		if (r == 0)
			r = bracket_side_diagnose(&s[k].side, s[k].side.res);
		acc[k].loop = s[k].loop;
		if (s[k].iterations)
			acc[k].iterations = s[k].iterations;
		if (r == 0)
			r = acc_take(&acc[k], runs[k], nr[k], v[k]);
		else {
			gbench_runs_free(runs[k], nr[k]);
			free(v[k]);
		}
		side_free(&s[k]);
	}
	return r;
}

int gbench_bracket_paired(const struct measure_target *base, const struct measure_target *head,
			  const struct bench_spec *bspec, const struct bench_spec *hspec,
			  const struct measure_plan *plan, const char *const dirs[2],
			  struct bench_result *bres, struct bench_result *hres)
{
	struct measure_target tb = *base, th = *head;
	struct trace_failure *f = calloc(1, sizeof(*f));
	struct gacc acc[2] = { { 0 } };
	struct measure_plan all;
	size_t rounds, reps, done = 0;
	int r = 0;

	if (!f)
		return -ENOMEM;
	/* Both children on one CPU, unless told otherwise: two CPUs of a VM
	 * differ in speed, which identical code measured as steady changes
	 * of 15%. Not an instance on several threads, which would take
	 * turns on it. */
	if (tb.cpu < 0 && th.cpu < 0 && gbench_name_threads(bspec->name) == 1) {
		cpu_set_t set;

		if (sched_getaffinity(0, sizeof(set), &set) == 0)
			for (int c = 0; c < CPU_SETSIZE && tb.cpu < 0; c++)
				if (CPU_ISSET(c, &set))
					tb.cpu = th.cpu = c;
	} else if (tb.cpu_single && gbench_name_threads(bspec->name) > 1) {
		tb.cpu = th.cpu = -1;
	}
	/*
	 * The repetitions in several pairs of processes, each pair from
	 * binaries read into the page cache afresh: what one process's
	 * placement in memory does to its speed varies between pairs, and
	 * compare's interval over the pairs of processes holds it
	 * (stats_paired_ratio_groups).
	 */
	bracket_plan(plan, &all);
	reps = all.min_samples;
	rounds = measure_pair_processes(reps, GBENCH_PAIR_REPS, GBENCH_PAIR_PROCESSES);
	for (size_t k = 0; r == 0 && k < rounds; k++) {
		struct gside s[2] = {
			{ .t = &tb,
			  .spec = bspec,
			  .side.res = bres,
			  .side.dir = dirs[0],
			  .errfd = -1,
			  .logfd = -1 },
			{ .t = &th,
			  .spec = hspec,
			  .side.res = hres,
			  .side.dir = dirs[1],
			  .errfd = -1,
			  .logfd = -1 },
		};
		struct measure_plan one = all;
		size_t n = (reps - done) / (rounds - k);

		one.min_samples = one.max_samples = n;
		one.time_ns = (uint64_t)n * GBENCH_BATCH_NS;
		done += n;
		if (k) {
			measure_drop_cached(tb.binary);
			measure_drop_cached(th.binary);
		}
		r = paired_round(s, &one, acc, f);
		if (r == 0 && (bres->status != BENCH_OK || hres->status != BENCH_OK ||
			       acc[0].lost || acc[1].lost))
			break;
	}
	for (int k = 0; k < 2; k++) {
		struct gside s = { .side.res = k ? hres : bres,
				   .loop = acc[k].loop,
				   .iterations = acc[k].iterations };

		if (acc[k].lost) {
			free(acc[k].v);
			acc[k].v = NULL;
		}
		/* A side that failed in a pair of processes (killed by a stop,
		 * crashed) stays failed: the pairs before it are not all. */
		if (r == 0 && s.side.res->status == BENCH_OK)
			r = side_result(&s, acc[k].runs, acc[k].nruns, &acc[k].v);
		else
			gbench_runs_free(acc[k].runs, acc[k].nruns);
		if (r == 0 && acc[k].v && s.side.res->status == BENCH_OK)
			r = take_samples(s.side.res, acc[k].v, acc[k].nv, &s);
		else
			free(acc[k].v);
	}
	bench_result_settle_pairs(hres, bres->status == BENCH_OK && hres->status == BENCH_OK);
	free(f);
	return r;
}
