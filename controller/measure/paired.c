/* SPDX-License-Identifier: MIT */
/*
 * The paired comparison of two builds (measure.h, docs/compare.md): one
 * benchmark of each build, each in its own fresh child with the walltime
 * harness (harness.h), both alive for the whole benchmark, sampled in
 * turn at one iteration count:
 *
 *   base: spawn ─ main ─ harness ┐      ┌ B ┐   ┌ B ┐ ┌ B ┐   ┌ B ┐
 *   head: spawn ─ main ─ harness ┴ grow ┤   H H │   ├ H H   │ ...  kill both
 *                                       └ warm up ┘
 *
 * The host of a shared runner changes speed in whole stretches (a loop
 * that takes 340 ns for a minute takes 660 ns the next), while samples
 * taken 10 ms apart agree within a few percent: the ratio of two samples
 * taken back to back sees the change of code and not the change of host.
 * The order alternates (base, head, then head, base) so that neither side
 * is always first after the other's caches. Each sample is itself the
 * harness's two calls with the empty function in both orders, as in
 * walltime.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"
#include "trace/trace.h"
#include "measure/measure.h"
#include "measure/harness.h"

struct side {
	const struct measure_target *t;
	const struct bench_spec *spec;
	struct bench_result *res;
	struct harness c;
	uint64_t deadline, fn, empty, page;
	bool live;	   /* still being measured */
	uint64_t last;	   /* the last sample's benchmark passes, ns */
	double value;	   /* the last recorded sample's per-call time */
	double *cals;	   /* per-call cost of the empty passes, per sample */
	double *per_thread; /* --threads: each thread's per-call time, per sample */
	size_t cap, index; /* capacity of samples and cals; marker index */
	double floors[MEASURE_FLOOR_MAX];
	size_t nfloor;
};

/* Side s failed with r: say what happened and stop measuring it. */
static void side_fail(struct side *s, int r, const struct trace_failure *f, uint64_t timeout_ns)
{
	struct bench_result *res = s->res;

	if (!res->error)
		res->error = r == -TRACE_E_FAILED ? harness_failure(f, timeout_ns)
						  : strdup(trace_strerror(r));
	res->status = BENCH_FAILED;
	free(res->samples);
	res->samples = NULL;
	res->nsamples = 0;
	s->live = false;
	harness_free(&s->c);
}

/* Spawn side s's child and find its benchmark. A build that cannot be
 * run at all returns the error with *ret_error set (fatal on the first
 * benchmark); a benchmark that cannot be prepared fails alone. */
static int side_start(struct side *s, const struct measure_plan *plan, char **ret_error)
{
	struct measure_target t = *s->t;
	struct trace_failure f = { 0 };
	bool no_vdso = false;
	char *why = NULL;
	int r;

	if (t.cpu_single && s->spec->threads > 1)
		t.cpu = -1;
	r = harness_start(&t, s->deadline, plan->timeout_ns, &s->c, &no_vdso, &why);
	if (r < 0) {
		*ret_error = why;
		return r;
	}
	s->res->pid = trace_pid(s->c.p);
	s->res->t_ready_ns = measure_now_ns();
	if (no_vdso)
		bench_result_diagnose(s->res, "the child has no vDSO: the clock was read with the "
					      "clock_gettime system call (slower, coarser)");
	r = harness_address(&s->c, s->spec, s->res, &s->fn, &f);
	if (r == 0)
		r = harness_set_args(&s->c, s->spec);
	/* --threads: the rounds' workers live as long as the child. */
	if (r == 0 && s->spec->threads > 1)
		r = harness_threads_start(&s->c, s->spec->threads, s->deadline, s->res, &f);
	if (r == 0) {
		r = harness_map_empty(&s->c, s->fn, &s->page);
		if (r < 0 &&
		    asprintf(&s->res->error, "cannot map an empty function in the child: %s",
			     trace_strerror(r)) < 0)
			s->res->error = NULL;
	}
	if (r < 0) {
		side_fail(s, r, &f, plan->timeout_ns);
		return 0;
	}
	s->empty = s->page + (s->fn & (PAGE - 1));
	s->live = true;
	return 0;
}

/* One sample of side s at n: recorded (its per-call time kept, markers
 * for it) or not (growth, warm-up). false when the side failed. */
static bool side_sample(struct side *s, uint64_t n, bool record, const struct measure_plan *plan,
			const struct measure_hooks *hooks)
{
	struct bench_result *res = s->res;
	struct trace_failure f;
	struct sample x;
	int r;

	if (!s->live)
		return false;
	if (record && res->nsamples == s->cap) {
		size_t nc = s->cap ? 2 * s->cap : 64;
		double *v = realloc(res->samples, nc * sizeof(*v)), *w;

		if (v)
			res->samples = v;
		w = v ? realloc(s->cals, nc * sizeof(*w)) : NULL;
		if (!w) {
			side_fail(s, -ENOMEM, NULL, 0);
			return false;
		}
		s->cals = w;
		if (s->c.nthreads) {
			double *v3 = realloc(s->per_thread, nc * s->c.nthreads * sizeof(*v3));

			if (!v3) {
				side_fail(s, -ENOMEM, NULL, 0);
				return false;
			}
			s->per_thread = v3;
		}
		s->cap = nc;
	}
	r = harness_sample(&s->c, s->fn, s->empty, n, s->deadline, &x, &f);
	if (r < 0) {
		side_fail(s, r, &f, plan->timeout_ns);
		return false;
	}
	harness_emit_sample(hooks, &s->c, s->spec->name, &x, s->index++, !record);
	s->last = x.bench;
	if (record) {
		if (res->nsamples == 0)
			res->t_first_sample_ns = x.t_end;
		s->value = harness_per_call(&x);
		res->samples[res->nsamples] = s->value;
		for (unsigned i = 0; i < s->c.nthreads; i++)
			s->per_thread[res->nsamples * s->c.nthreads + i] = s->c.thread_per_call[i];
		s->cals[res->nsamples++] = (double)x.cal / (double)x.calls;
	}
	return true;
}

static bool side_floor(struct side *s, uint64_t n, const struct measure_plan *plan)
{
	struct trace_failure f;
	int r;

	if (!s->live || s->nfloor == MEASURE_FLOOR_MAX)
		return s->live;
	r = harness_floor(&s->c, s->empty, n, s->deadline, &s->floors[s->nfloor], &f);
	if (r < 0) {
		side_fail(s, r, &f, plan->timeout_ns);
		return false;
	}
	s->nfloor++;
	return true;
}

/* One unrecorded sample of each live side, base first; *ret_longest is the
 * longest of their benchmark passes. false when no side is left. */
static bool unrecorded_round(struct side *sd, uint64_t n, const struct measure_plan *plan,
			     const struct measure_hooks *hooks, uint64_t *ret_longest)
{
	bool any = false;

	*ret_longest = 0;
	for (int k = 0; k < 2; k++)
		if (side_sample(&sd[k], n, false, plan, hooks)) {
			any = true;
			if (sd[k].last > *ret_longest)
				*ret_longest = sd[k].last;
		}
	return any;
}

/* The iteration count both sides are sampled at: the slower side's sample
 * lasts plan->sample_target_ns, after the same growth, confirmation and
 * warm-up as walltime.c does for one. 0 when no side is left. */
static uint64_t grow(struct side *sd, const struct measure_plan *plan,
		     const struct measure_hooks *hooks)
{
	uint64_t n = 1, longest, target = plan->sample_target_ns, start = measure_now_ns();

	for (int round = 0;; round++) {
		for (;;) {
			if (!unrecorded_round(sd, n, plan, hooks, &longest))
				return 0;
			if (longest >= target || n >= MEASURE_MAX_ITERATIONS) {
				if (!unrecorded_round(sd, n, plan, hooks, &longest))
					return 0;
				if (longest >= target / 2 || n >= MEASURE_MAX_ITERATIONS)
					break;
			}
			n = measure_grow(n, longest, target);
		}
		bool too_short = false;

		while (measure_now_ns() - start < plan->warmup_ns) {
			if (!unrecorded_round(sd, n, plan, hooks, &longest))
				return 0;
			too_short = longest < target / 2 && n < MEASURE_MAX_ITERATIONS;
		}
		if (!too_short || round == 2)
			return n;
		n = measure_grow(n, longest, target);
	}
}

static int add_ratio(struct bench_result *head, double ratio, size_t *cap)
{
	if (head->npairs == *cap) {
		size_t nc = *cap ? 2 * *cap : 64;
		double *v = realloc(head->pair_ratios, nc * sizeof(*v));

		if (!v)
			return -ENOMEM;
		head->pair_ratios = v;
		*cap = nc;
	}
	head->pair_ratios[head->npairs++] = ratio;
	return 0;
}

/* Sample both sides in turn until the plan is met; base's sample and
 * head's of a round make a pair when both were taken. */
static void sample_pairs(struct side *sd, uint64_t n, const struct measure_plan *plan,
			 const struct measure_hooks *hooks)
{
	struct bench_result *head = sd[1].res;
	uint64_t start = measure_now_ns();
	size_t rounds = 0, slot = 0, cap = 0;

	/* A sample is 2n calls, or n per thread in a round (--threads). */
	for (int k = 0; k < 2; k++)
		sd[k].res->iterations = sd[k].spec->threads > 1 ? n : 2 * n;
	while (sd[0].live || sd[1].live) {
		int both = sd[0].live && sd[1].live;
		uint64_t now = measure_now_ns(), budget = (both ? 2 : 1) * plan->time_ns;
		bool late = false;

		for (int k = 0; k < 2; k++)
			if (sd[k].live && rounds > 0 && now + 2 * sd[k].last > sd[k].deadline) {
				bench_result_diagnose(
					sd[k].res,
					"stopped after %zu samples: another would have "
					"run past --timeout (%.3g s); raise it for more "
					"samples",
					sd[k].res->nsamples, (double)plan->timeout_ns / 1e9);
				late = true;
			}
		if (late)
			break;
		if (slot++ % MEASURE_FLOOR_EVERY == MEASURE_FLOOR_EVERY - 1) {
			side_floor(&sd[0], n, plan);
			side_floor(&sd[1], n, plan);
			continue;
		}
		/* base, head; then head, base */
		int first = rounds % 2;
		bool a = side_sample(&sd[first], n, true, plan, hooks);
		bool b = side_sample(&sd[1 - first], n, true, plan, hooks);

		if (a && b) {
			if (add_ratio(head, stats_pair(sd[0].value, sd[1].value), &cap) < 0) {
				side_fail(&sd[1], -ENOMEM, NULL, 0);
				break;
			}
		}
		rounds++;
		if (rounds >= plan->max_samples)
			break;
		if (rounds >= plan->min_samples && measure_now_ns() - start >= budget)
			break;
	}
	for (int k = 0; k < 2; k++)
		while (sd[k].live && sd[k].nfloor < MEASURE_FLOOR_MIN &&
		       measure_now_ns() + 2 * sd[k].last <= sd[k].deadline)
			side_floor(&sd[k], n, plan);
}

static void side_end(struct side *s, const struct measure_hooks *hooks)
{
	struct bench_result *res = s->res;

	if (s->live) {
		res->resolution = measure_resolution(s->floors, s->nfloor);
		/* Pairing cancels what the machine's speed does over a
		 * stretch: no warning that it varied. */
		harness_calibration(res, s->cals, res->nsamples, res->iterations, false);
		harness_finish(res);
		/* Each thread's own figure, as run gives it. */
		harness_thread_figures(&s->c, s->per_thread, res->nsamples, res);
	} else if (res->status != BENCH_FAILED) {
		res->status = BENCH_FAILED;
		if (!res->error)
			res->error = strdup("not measured");
	}
	free(s->cals);
	free(s->per_thread);
	harness_free(&s->c);
	res->t_end_ns = measure_now_ns();
	measure_emit_end(hooks, res, res->pid, res->t_end_ns);
}

int measure_walltime_paired(const struct measure_target *base, const struct measure_target *head,
			    const struct bench_spec *base_specs,
			    const struct bench_spec *head_specs, size_t n,
			    const struct measure_plan *plan, const struct measure_hooks *hooks,
			    struct bench_result *base_results, struct bench_result *head_results,
			    char **ret_error)
{
	for (size_t i = 0; i < n; i++) {
		struct side sd[2] = {
			{ .t = base, .spec = &base_specs[i], .res = &base_results[i] },
			{ .t = head, .spec = &head_specs[i], .res = &head_results[i] },
		};
		uint64_t iterations;

		for (int k = 0; k < 2; k++) {
			measure_result_begin(sd[k].res, sd[k].spec, "walltime", "ns");
			/* Each side has its own --timeout; the two share the
			 * time in turns. */
			sd[k].deadline = sd[k].res->t_start_ns + 2 * plan->timeout_ns;
			harness_emit(hooks, MEASURE_BENCH_START, sd[k].spec->name, 0,
				     sd[k].res->t_start_ns, 0, 0, false);
		}
		for (int k = 0; k < 2; k++) {
			char *why = NULL;
			int r = side_start(&sd[k], plan, &why);

			if (r < 0 && i == 0) {
				/* The build cannot run at all: bad input. */
				if (asprintf(ret_error, "%s: %s", k ? "head" : "base",
					     why ? why : "cannot start") < 0)
					*ret_error = NULL;
				free(why);
				for (int j = 0; j < 2; j++) {
					harness_free(&sd[j].c);
					bench_result_clear(sd[j].res);
				}
				for (size_t j = 0; j < i; j++) {
					bench_result_clear(&base_results[j]);
					bench_result_clear(&head_results[j]);
				}
				return r;
			}
			if (r < 0) {
				sd[k].res->status = BENCH_FAILED;
				sd[k].res->error = why;
			}
		}
		iterations = grow(sd, plan, hooks);
		if (iterations)
			sample_pairs(sd, iterations, plan, hooks);
		side_end(&sd[0], hooks);
		side_end(&sd[1], hooks);
		if (sd[0].res->status != BENCH_OK || sd[1].res->status != BENCH_OK) {
			/* Ratios of a side that failed pair nothing. */
			free(sd[1].res->pair_ratios);
			sd[1].res->pair_ratios = NULL;
			sd[1].res->npairs = 0;
		}
	}
	return 0;
}
