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
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gbench/gbench.h"
#include "gbench/internal.h"
#include "measure/driver-env.h"
#include "measure/failure.h"
#include "measure/sides.h"
#include "stats/stats.h"
#include "util/strutil.h"

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

/* ---- the hooks of the engine's sides (measure/sides.h) ------------------- */

/* One side of an instance: what the log of its current process said, and
 * what its processes gave. */
struct gside {
	const struct bench_spec *spec;
	const char *dir;
	unsigned threads;
	struct bracket_fn plain[2]; /* its function (and the State's constructor):
				       timed where the loop cannot be */
	size_t nplain;
	/* the current process */
	int logfd;
	uint64_t *counts; /* each batch's iteration count per thread, from the log */
	size_t ncounts, capcounts;
	char *log; /* what was read of the log and not parsed yet (a partial line) */
	size_t loglen;
	/* its processes' */
	struct gbench_run *runs;
	size_t nruns;
	uint64_t iterations; /* the final batches' count, per thread */
	bool loop;	     /* timed by the library's own clock functions */
};

/* The log's new complete lines: their batch counts appended. */
static int read_log(struct gside *s)
{
	char path[PATH_MAX + 16];

	if (s->logfd < 0) {
		snprintf(path, sizeof(path), "%s/stderr", s->dir);
		s->logfd = open(path, O_RDONLY | O_CLOEXEC);
		if (s->logfd < 0)
			return 0;
	}
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
	char *nl = s->log ? strrchr(s->log, '\n') : NULL;

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

/* What the current process's log left behind. */
static void log_clear(struct gside *s)
{
	if (s->logfd >= 0)
		close(s->logfd);
	s->logfd = -1;
	free(s->counts);
	free(s->log);
	s->counts = NULL;
	s->log = NULL;
	s->ncounts = s->capcounts = s->loglen = 0;
}

static int side_begin(const struct own_run *run, void *ctx)
{
	char path[PATH_MAX + 16];

	log_clear(ctx);
	snprintf(path, sizeof(path), "%s/out.json", run->dir);
	unlink(path);
	return 0;
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

static int side_argv(const struct own_run *run, const struct bench_spec *spec,
		     const struct measure_plan *plan, void *ctx, char ***argv)
{
	struct measure_plan bp;
	size_t na = 0;
	int r;

	(void)ctx;
	bracket_plan(plan, &bp);
	r = gbench_instance_argv(run->t, spec, &bp, false, run->dir, argv, &na);
	return r < 0 ? r : measure_env_push(argv, &na, strdup("--v=2"));
}

/* The library's clock cannot be timed (a function's entry that cannot be
 * patched): its function's calls. */
static int around_function(void *ctx, const struct bracket_fn *fns, size_t n, const char *why,
			   struct bench_result *res, struct bracket_fn **ret, size_t *ret_n)
{
	struct gside *s = ctx;

	(void)fns;
	(void)n;
	*ret = NULL;
	if (!s->spec->link_addr)
		return 0;
	*ret = calloc(s->nplain, sizeof(**ret));
	if (!*ret || bench_result_diagnose(res,
					   "its loop could not be timed as Google Benchmark times "
					   "it (%s): each batch is timed around its function, with "
					   "what it does before and after its loop",
					   why) < 0) {
		free(*ret);
		*ret = NULL;
		return -ENOMEM;
	}
	memcpy(*ret, s->plain, s->nplain * sizeof(**ret));
	*ret_n = s->nplain;
	return 0;
}

static unsigned side_threads(const struct bench_spec *spec)
{
	return gbench_name_threads(spec->name);
}

/* Its batches are alike once it reached repetition 2: one count each. */
static int side_batch(void *ctx, const struct own_batches *b)
{
	struct gside *s = ctx;
	size_t nb = b->n / s->threads;

	if (read_log(s) < 0)
		return -ENOMEM;
	return nb >= 2 && s->ncounts >= nb && s->counts[nb - 1] == s->counts[nb - 2];
}

static bool sized(const struct own_batches *b)
{
	for (size_t i = 0; i < b->nfns; i++)
		if (b->fns[i].role == BRACKET_SIZE)
			return true;
	return false;
}

/*
 * Where both builds' batch counts can be set, base finds its count alone
 * first and head runs every batch with it, its first ones too: Google
 * Benchmark wants one count in all repetitions of an instance. Batches
 * alike on both sides weigh a cold first iteration alike (snappy's
 * BM_ZFlat/0/1 read -3.1 % between two copies of one binary whose
 * libraries chose 13 and 22 iterations).
 */
static bool can_lead(void *const ctx[2], const struct own_batches *const b[2])
{
	(void)ctx;
	return sized(b[0]) && sized(b[1]);
}

static void lead(void *const ctx[2], struct bracket_run *head)
{
	const struct gside *base = ctx[0];

	if (base->ncounts)
		bracket_set_count(head, base->counts[base->ncounts - 1]);
}

/*
 * A process that exited: its runs from the JSON output (kept in s) and
 * benchtrap's per-iteration time of each run's final batch (*ret, or none
 * with a diagnostic when the calls do not match the batches logged, and
 * Google Benchmark's figures stay). 0 or -ENOMEM.
 */
static int side_samples(const struct own_run *run, const struct bench_spec *spec, void *ctx,
			struct own_batches *b, struct bench_result *res, double **ret,
			size_t *ret_n)
{
	struct gside *s = ctx;
	struct gbench_run *runs = NULL, *all;
	size_t nruns = 0, nb = b->n / s->threads;
	uint64_t *spans = NULL, *reps = NULL;
	double *v = NULL;
	bool loop = false;
	int r = read_log(s);

	if (r == 0)
		r = gbench_read_results(run->dir, spec, &runs, &nruns, res);
	if (r < 0)
		return r == -ENOMEM ? r : 0;
	all = realloc(s->runs, (s->nruns + nruns + 1) * sizeof(*all));
	if (!all) {
		gbench_runs_free(runs, nruns);
		return -ENOMEM;
	}
	/* The runs' strings are s's now. */
	memcpy(all + s->nruns, runs, nruns * sizeof(*runs));
	free(runs);
	runs = all + s->nruns;
	s->runs = all;
	s->nruns += nruns;
	for (size_t i = 0; i < b->nfns; i++)
		loop |= b->fns[i].role == BRACKET_FINISH;
	s->loop = loop;
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
		if (b->calls[k * s->threads].count)
			s->counts[k] = b->calls[k * s->threads].count;
	if ((loop ? bracket_batch_timed(b->calls, b->n, s->threads, spans)
		  : bracket_batch_spans(b->calls, b->n, s->threads, true, spans)) < 0 ||
	    gbench_final_batches(spans, nb, s->counts, s->ncounts, reps, nruns, v) < 0) {
		r = bench_result_diagnose(
			res,
			"the calls of its function (%zu on %u thread(s)) did not match the %zu "
			"batches Google Benchmark logged: the figures are its own timing",
			b->n, s->threads, s->ncounts);
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
	*ret = v;
	*ret_n = nruns;
	v = NULL;
out:
	free(spans);
	free(reps);
	free(v);
	return r;
}

/*
 * Said on res when benchtrap's per-iteration times v[0..n) and the
 * library's own for the same batches (runs' real times) disagree beyond
 * their noise, with what makes them differ: 0, or -ENOMEM.
 */
static int own_disagrees(const struct gside *s, const double *v, size_t n,
			 struct bench_result *res)
{
	double *own = calloc(n + 1, sizeof(*own)), ratio, tol;
	int r;

	if (!own)
		return -ENOMEM;
	for (size_t j = 0; j < n; j++)
		own[j] = s->runs[j].real_ns;
	r = stats_disagree(v, own, n, &ratio, &tol);
	free(own);
	if (r <= 0)
		return r == -ENOMEM ? r : 0;
	return bench_result_diagnose(
		       res,
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

/* res from the runs (Google Benchmark's own figures), and said when
 * benchtrap's samples v[0..n) disagree with them. */
static int side_finish(const struct bench_spec *spec, void *ctx, struct bench_result *res,
		       const double *v, size_t n)
{
	struct gside *s = ctx;
	int r = s->runs ? gbench_result_from_runs(s->runs, s->nruns, res) : 0;

	(void)spec;
	if (r == 0 && v && res->status == BENCH_OK && n == s->nruns)
		r = own_disagrees(s, v, n, res);
	if (v && res->status == BENCH_OK)
		res->iterations = s->iterations;
	return r;
}

/* The repetitions in up to GBENCH_PAIR_PROCESSES pairs of processes, each
 * pair from binaries read into the page cache afresh, GBENCH_PAIR_REPS
 * each at least; the first two pairs of each left out (taken while the
 * other build may still have been growing its batches, apart in time). */
static const struct own_bracketed bracketed = {
	.argv = side_argv,
	.fallback = around_function,
	.samples = side_samples,
	.pair_processes = GBENCH_PAIR_PROCESSES,
	.pair_samples = GBENCH_PAIR_REPS,
	.sample_ns = GBENCH_BATCH_NS,
	.pair_skip = 2,
	.discard_stdout = true,
	.threads = side_threads,
	.start = side_begin,
	.batch = side_batch,
	.can_lead = can_lead,
	.lead = lead,
	.finish = side_finish,
};

/* Side s of instance spec, and what its child times: the library's clock
 * functions (and the State's constructor) where they are found, else its
 * function (said). 0 or -ENOMEM. */
static int side_open(const struct own_run *run, const struct bench_spec *spec, struct gside *s,
		     struct gbench_clock *clock, struct bench_result *res,
		     const struct bracket_fn **ret, size_t *ret_n)
{
	int r = gbench_clock_find(run->t->binary, clock);

	*s = (struct gside){ .spec = spec,
			     .dir = run->dir,
			     .threads = gbench_name_threads(spec->name),
			     .logfd = -1 };
	s->plain[s->nplain++] = (struct bracket_fn){
		spec->object ? spec->object : run->t->binary, spec->link_addr
	};
	if (r == -ENOMEM)
		return r;
	if (r == 0 && clock->size)
		s->plain[s->nplain++] = *clock->size;
	if (r == 0) {
		*ret = clock->fns;
		*ret_n = clock->n;
		return 0;
	}
	*ret = s->plain;
	*ret_n = s->nplain;
	return bench_result_diagnose(res, "Google Benchmark's loop functions are not among its "
					  "symbols: each batch is timed around its function, with "
					  "what it does before and after its loop");
}

static void side_close(struct gside *s, struct gbench_clock *clock)
{
	log_clear(s);
	gbench_runs_free(s->runs, s->nruns);
	gbench_clock_free(clock);
}

int gbench_bracket_one(const struct own_run *run, const struct bench_spec *spec,
		       struct bench_result *res)
{
	struct gside s;
	struct gbench_clock clock;
	const struct bracket_fn *fns = NULL;
	size_t n = 0;
	int r = side_open(run, spec, &s, &clock, res, &fns, &n);

	if (r == 0)
		r = own_bracket_one(&bracketed, run, spec, fns, n, &s, res);
	side_close(&s, &clock);
	return r;
}

/* Batch counts 1.5x apart: enough to bias a figure (a first iteration with
 * cold caches weighs more in the shorter batch): snappy's BM_ZFlat/0/1,
 * batches of 13 and 22 iterations of one binary, read -3.1 %. */
static bool apart(uint64_t a, uint64_t b)
{
	return 2 * (a < b ? b : a) >= 3 * (a < b ? a : b);
}

int gbench_bracket_paired(const struct own_run *const run[2], const struct bench_spec *const spec[2],
			  struct bench_result *const res[2])
{
	struct gside s[2];
	struct gbench_clock clock[2];
	const struct bracket_fn *fns[2] = { NULL, NULL };
	size_t n[2] = { 0, 0 };
	int r = 0;

	for (int k = 0; k < 2; k++) {
		int e = side_open(run[k], spec[k], &s[k], &clock[k], res[k], &fns[k], &n[k]);

		r = r ? r : e;
	}
	if (r == 0)
		r = own_bracket_pair(&bracketed, run, spec, fns, n, (void *const[2]){ &s[0], &s[1] },
				     res);
	/* The counts the batches ran (side_samples): each build's library
	 * chose its own where they could not be set, or where setting them
	 * did not take (an inlined constructor). */
	if (r == 0 && res[0]->status == BENCH_OK && res[1]->status == BENCH_OK &&
	    s[0].iterations && s[1].iterations &&
	    apart(s[0].iterations, s[1].iterations) &&
	    bench_result_diagnose(res[1],
				  "base ran %" PRIu64 " iteration(s) a batch and head %" PRIu64
				  ", as each build's Google Benchmark chose: a change may be "
				  "the batches' and not the code's; a --benchmark_min_time "
				  "after -- that makes both batches long makes them alike",
				  s[0].iterations, s[1].iterations) < 0)
		r = -ENOMEM;
	for (int k = 0; k < 2; k++)
		side_close(&s[k], &clock[k]);
	return r;
}
