// SPDX-License-Identifier: MIT
/* Bracketed walltime sides of a kind that runs its own main: measure/sides.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/driver-env.h"
#include "measure/failure.h"
#include "measure/sides.h"
#include "stats/stats.h"
#include "util/launch.h"
#include "util/strutil.h"

struct side {
	struct bracket_side b;
	const struct own_run *run;
	const struct measure_target *t; /* run->t, pinned to the pair's CPU */
	const struct bench_spec *spec;
	void *ctx;
	int errfd;
	const struct bracket_fn *fns; /* what its child times, nfns of them */
	size_t nfns;
	struct bracket_fn *instead; /* k->fallback's, when fns could not be */
	unsigned threads;	    /* calls a batch */
	bool steady;		    /* its batches alike from here on (k->batch) */
};

static void side_free(struct side *s)
{
	bracket_free(s->b.br);
	s->b.br = NULL;
	free(s->b.calls);
	s->b.calls = NULL;
	free(s->instead);
	s->instead = NULL;
	if (s->errfd >= 0)
		close(s->errfd);
	s->errfd = -1;
	launch_sweep();
}

/* Start side s: 0, or -ENOMEM; a child that cannot start fails its result. */
static int side_start(const struct own_bracketed *k, struct side *s, const struct bracket_fn *fns,
		      size_t nfns, const struct measure_plan *plan)
{
	struct measure_target t = *s->t;
	char **argv = NULL, **env = NULL, path[PATH_MAX + 16], *why = NULL;
	int out, r;

	s->b.dir = s->run->dir;
	s->b.deadline = measure_now_ns() + plan->timeout_ns;
	s->b.timeout_ns = plan->timeout_ns;
	s->fns = fns;
	s->nfns = nfns;
	s->threads = k->threads ? k->threads(s->spec) : 1;
	s->steady = !k->batch;
	r = k->start ? k->start(s->run, s->ctx) : 0;
	if (r == 0)
		r = k->argv(s->run, s->spec, plan, s->ctx, &argv);
	if (r == 0 && k->env && !(env = k->env(s->run, s->ctx)))
		r = -ENOMEM;
	if (r < 0)
		goto out;
	t.envp = env;
	snprintf(path, sizeof(path), "%s/stderr", s->b.dir);
	s->errfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (s->errfd < 0) {
		bench_result_fail(s->b.res, str_fmt("cannot create %s: %s", path, strerror(errno)));
		goto out;
	}
	out = !s->t->quiet_stdio ? STDOUT_FILENO : k->discard_stdout ? -1 : s->errfd;
	r = bracket_start(&t, argv, fns, nfns, out, s->errfd, &s->b.br, &why);
	if (r == -ENOTSUP && k->fallback) {
		size_t n = 0;

		r = k->fallback(s->ctx, fns, nfns, why, s->b.res, &s->instead, &n);
		if (r == 0 && s->instead) {
			free(why);
			why = NULL;
			s->fns = s->instead;
			s->nfns = n;
			r = bracket_start(&t, argv, s->fns, n, out, s->errfd, &s->b.br, &why);
		} else if (r == 0) {
			r = -ENOTSUP;
		}
	}
	if (r < 0) {
		bench_result_fail(s->b.res, why ? why : str_fmt("cannot start %s", s->t->binary));
		why = NULL;
		side_free(s);
		r = r == -ENOMEM ? r : 0;
		goto out;
	}
	s->b.res->pid = bracket_pid(s->b.br);
	s->b.res->t_ready_ns = measure_now_ns();
	s->b.live = true;
	r = 0;
out:
	free(why);
	measure_env_free(argv);
	measure_env_free(env);
	return r;
}

static struct own_batches batches_of(const struct side *s)
{
	return (struct own_batches){ s->b.calls, s->b.ncalls, s->fns, s->nfns, 0 };
}

/* Run side s until its next batch ended (1) or it is no longer live (0);
 * -ENOMEM. */
static int side_step(const struct own_bracketed *k, struct side *s, struct trace_failure *f)
{
	size_t want = (s->b.ncalls / s->threads + 1) * s->threads;
	struct own_batches b;
	int r;

	while (s->b.live && s->b.ncalls < want)
		if ((r = bracket_side_next(&s->b, k->said, f)) <= 0)
			return r;
	if (!s->b.live)
		return 0;
	b = batches_of(s);
	if (k->batch && !s->steady && (r = k->batch(s->ctx, &b)) != 0) {
		if (r < 0)
			return r;
		s->steady = true;
	}
	return 1;
}

/* The samples of side s once its child ended: *ret (NULL when it failed),
 * its figure of k->counter in *counter. */
static int side_samples(const struct own_bracketed *k, struct side *s, double **ret, size_t *ret_n,
			double *counter)
{
	struct own_batches b = batches_of(s);
	int r;

	*ret = NULL;
	*ret_n = 0;
	if (!s->b.exited || s->b.res->status == BENCH_FAILED)
		return 0;
	r = k->samples(s->run, s->spec, s->ctx, &b, s->b.res, ret, ret_n);
	*counter = b.counter;
	return r;
}

/* res's samples v[0..n) (taken) and the processes' figures c[0..nc) of
 * k->counter (reordered here): 0 or -ENOMEM. */
static int take_samples(const struct own_bracketed *k, struct bracket_side *b,
			struct bench_result *res, double *v, size_t n, double *c, size_t nc)
{
	int r = bracket_side_take_samples(b, res, v, n);

	if (r <= 0)
		return r;
	res->no_time = res->value <= 0;
	if (k->counter && nc) {
		res->counters[0] =
			(struct measure_counter){ .name = k->counter, .value = stats_median(c, nc) };
		res->ncounters = 1;
	}
	return 0;
}

int own_bracket_one(const struct own_bracketed *k, const struct own_run *run,
		    const struct bench_spec *spec, const struct bracket_fn *fns, size_t nfns,
		    void *ctx, struct bench_result *res)
{
	struct side s = {
		.b.res = res, .run = run, .t = run->t, .spec = spec, .ctx = ctx, .errfd = -1
	};
	struct trace_failure *f = calloc(1, sizeof(*f));
	double *v = NULL, counter = 0;
	size_t n = 0;
	int r;

	if (!f)
		return -ENOMEM;
	r = side_start(k, &s, fns, nfns, run->plan);
	while (r == 0 && s.b.live)
		r = side_step(k, &s, f) < 0 ? -ENOMEM : 0;
	if (r == 0)
		r = side_samples(k, &s, &v, &n, &counter);
	if (r == 0 && s.b.br && s.b.exited && res->status == BENCH_OK && k->finish)
		r = k->finish(spec, ctx, res, v, n);
	if (r == 0 && s.b.br && res->status == BENCH_OK)
		r = take_samples(k, &s.b, res, v, n, &counter, v ? 1 : 0);
	else
		free(v);
	side_free(&s);
	free(f);
	return r < 0 ? r : 0;
}

/* xorshift64: which build's batch goes first in a pair. */
static uint64_t next_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

int own_samples_append(double **all, size_t *nall, double *v, size_t n)
{
	double *w = realloc(*all, (*nall + n + 1) * sizeof(*w));

	if (!w) {
		free(v);
		return -ENOMEM;
	}
	memcpy(w + *nall, v, n * sizeof(*v));
	*all = w;
	*nall += n;
	free(v);
	return 0;
}

/* Which side goes next in a pair of processes: a side whose batches still
 * change alone (base first, when it leads head's count), else one batch of
 * each in turn, which goes first drawn anew for each pair of batches. */
static int next_side(const struct own_bracketed *k, struct side s[2], bool *leading,
		     uint64_t *seed, size_t *step, int *first)
{
	int j;

	if (*leading && s[0].b.live && s[0].steady) {
		k->lead((void *const[2]){ s[0].ctx, s[1].ctx }, s[1].b.br);
		*leading = false;
	}
	/* Alone: the alternation starts on a fresh pair after it. */
	if (*leading && s[0].b.live) {
		*step = 0;
		return 0;
	}
	if (s[0].b.live && s[1].b.live && s[0].steady != s[1].steady) {
		*step = 0;
		return s[0].steady ? 1 : 0;
	}
	if (*step % 2 == 0)
		*first = (int)(next_random(seed) & 1);
	j = (int)(*step % 2) ^ *first;
	(*step)++;
	return s[j].b.live ? j : 1 - j;
}

int own_bracket_pair(const struct own_bracketed *k, const struct own_run *const run[2],
		     const struct bench_spec *const spec[2], const struct bracket_fn *const fns[2],
		     const size_t nfns[2], void *const ctx[2], struct bench_result *const res[2])
{
	const struct measure_plan *plan = run[1]->plan;
	struct measure_target t[2] = { *run[0]->t, *run[1]->t };
	struct trace_failure *f = calloc(1, sizeof(*f));
	double *all[2] = { NULL, NULL }, *counters[2] = { NULL, NULL };
	size_t nall[2] = { 0, 0 }, ncounters[2] = { 0, 0 }, rounds, samples;
	uint64_t seed = measure_now_ns() | 1,
		 sample_ns = k->sample_ns ? k->sample_ns : plan->sample_target_ns;
	bool lost[2] = { false, false }, alone = k->threads && k->threads(spec[0]) > 1;
	int r = 0;

	if (!f)
		return -ENOMEM;
	/* Both children on one CPU, unless told otherwise: two CPUs of a VM
	 * differ in speed. Not an instance on several threads, which would
	 * take turns on it. */
	if (t[0].cpu < 0 && t[1].cpu < 0 && !alone) {
		cpu_set_t set;

		if (sched_getaffinity(0, sizeof(set), &set) == 0)
			for (int c = 0; c < CPU_SETSIZE && t[0].cpu < 0; c++)
				if (CPU_ISSET(c, &set))
					t[0].cpu = t[1].cpu = c;
	} else if (t[0].cpu_single && alone) {
		t[0].cpu = t[1].cpu = -1;
	}
	/* compare's interval is over the pairs of processes, and holds what
	 * varies between them. */
	samples = sample_ns ? plan->time_ns / sample_ns : 0;
	if (samples < plan->min_samples)
		samples = plan->min_samples;
	if (plan->max_samples && samples > plan->max_samples)
		samples = plan->max_samples;
	rounds = measure_pair_processes(samples, k->pair_samples, k->pair_processes);
	for (int j = 0; j < 2; j++)
		if (!(counters[j] = calloc(rounds, sizeof(*counters[j]))))
			r = -ENOMEM;
	for (size_t q = 0; r == 0 && q < rounds; q++) {
		struct side s[2];
		struct measure_plan one = *plan;
		double *v[2] = { NULL, NULL };
		size_t n[2] = { 0, 0 }, step = 0;
		int first = 0;
		bool leading = false;

		/* This pair's share of the time and of the bounds on samples
		 * (those of all pairs together at least, at most). */
		one.time_ns = plan->time_ns / rounds;
		one.min_samples = (plan->min_samples + rounds - 1) / rounds;
		one.max_samples = plan->max_samples / rounds;
		if (plan->max_samples && !one.max_samples)
			one.max_samples = 1;
		if (one.max_samples && one.min_samples > one.max_samples)
			one.min_samples = one.max_samples;
		for (int j = 0; j < 2; j++) {
			s[j] = (struct side){ .b.res = res[j],
					      .run = run[j],
					      .t = &t[j],
					      .spec = spec[j],
					      .ctx = ctx[j],
					      .errfd = -1 };
			if (q) {
				launch_temp_dir_empty(run[j]->dir);
				measure_drop_cached(t[j].binary);
			}
		}
		r = side_start(k, &s[0], fns[0], nfns[0], &one);
		if (r == 0)
			r = side_start(k, &s[1], fns[1], nfns[1], &one);
		if (r == 0 && k->can_lead && s[0].b.live && s[1].b.live) {
			struct own_batches b[2] = { batches_of(&s[0]), batches_of(&s[1]) };

			leading = k->can_lead((void *const[2]){ ctx[0], ctx[1] },
					      (const struct own_batches *const[2]){ &b[0], &b[1] });
		}
		while (r == 0 && (s[0].b.live || s[1].b.live))
			r = side_step(k, &s[next_side(k, s, &leading, &seed, &step, &first)], f) < 0
				    ? -ENOMEM
				    : 0;
		for (int j = 0; r == 0 && j < 2; j++) {
			r = side_samples(k, &s[j], &v[j], &n[j], &counters[j][ncounters[j]]);
			lost[j] |= r == 0 && !v[j] && s[j].b.exited && res[j]->status == BENCH_OK;
		}
		/* Sample i of each build: taken one after the other. */
		if (r == 0 && v[0] && v[1] && res[0]->status == BENCH_OK &&
		    res[1]->status == BENCH_OK) {
			size_t np = n[0] < n[1] ? n[0] : n[1];

			r = bench_result_add_pairs(res[1], v[0], v[1], np,
						   np > 2 * k->pair_skip ? k->pair_skip : 0);
		}
		for (int j = 0; j < 2; j++) {
			if (r == 0)
				r = bracket_side_diagnose(&s[j].b, res[j]);
			ncounters[j] += r == 0 && v[j] && res[j]->status == BENCH_OK;
			if (r == 0 && v[j] && res[j]->status == BENCH_OK)
				r = own_samples_append(&all[j], &nall[j], v[j], n[j]);
			else
				free(v[j]);
			side_free(&s[j]);
		}
		if (res[0]->status != BENCH_OK || res[1]->status != BENCH_OK || lost[0] || lost[1])
			break;
	}
	for (int j = 0; j < 2; j++) {
		struct bracket_side none = { .res = res[j] };

		if (lost[j]) {
			free(all[j]);
			all[j] = NULL;
		}
		/* A side that failed in a pair of processes (killed by a stop,
		 * crashed) stays failed: the pairs before it are not all. */
		if (r == 0 && res[j]->status == BENCH_OK && k->finish)
			r = k->finish(spec[j], ctx[j], res[j], all[j], nall[j]);
		if (r == 0 && all[j] && res[j]->status == BENCH_OK)
			r = take_samples(k, &none, res[j], all[j], nall[j], counters[j],
					 ncounters[j]);
		else
			free(all[j]);
		free(counters[j]);
	}
	bench_result_settle_pairs(res[1], res[0]->status == BENCH_OK && res[1]->status == BENCH_OK);
	free(f);
	return r < 0 ? r : 0;
}
