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
#include "util/launch.h"
#include "util/strutil.h"

struct side {
	struct bracket_side b;
	const struct own_run *run;
	const struct measure_target *t; /* run->t, pinned to the pair's CPU */
	const struct bench_spec *spec;
	void *ctx;
	int errfd;
	const struct bracket_fn *fns; /* what its child times */
	struct bracket_fn *instead;   /* k->fallback's, when fns could not be */
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
	out = s->t->quiet_stdio ? s->errfd : STDOUT_FILENO;
	r = bracket_start(&t, argv, fns, nfns, out, s->errfd, &s->b.br, &why);
	if (r == -ENOTSUP && k->fallback) {
		size_t n = 0;

		r = k->fallback(fns, nfns, why, s->b.res, &s->instead, &n);
		if (r == 0 && s->instead) {
			free(why);
			why = NULL;
			s->fns = s->instead;
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

/* The samples of side s once its child ended: *ret (NULL when it failed),
 * its figure of k->counter in *counter. */
static int side_samples(const struct own_bracketed *k, struct side *s, double **ret, size_t *ret_n,
			double *counter)
{
	struct own_batches b = { s->b.calls, s->b.ncalls, s->fns, 0 };
	int r;

	*ret = NULL;
	*ret_n = 0;
	if (!s->b.exited || s->b.res->status == BENCH_FAILED)
		return 0;
	r = k->samples(s->run, s->spec, s->ctx, &b, s->b.res, ret, ret_n);
	*counter = b.counter;
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* res's samples v[0..n) (taken) and the processes' figures c[0..nc) of
 * k->counter (sorted here): 0 or -ENOMEM. */
static int take_samples(const struct own_bracketed *k, struct bracket_side *b,
			struct bench_result *res, double *v, size_t n, double *c, size_t nc)
{
	int r = bracket_side_take_samples(b, res, v, n);

	if (r <= 0)
		return r;
	res->no_time = res->value <= 0;
	if (k->counter && nc) {
		qsort(c, nc, sizeof(*c), cmp_double);
		res->counters[0] = (struct measure_counter){
			.name = k->counter,
			.value = nc % 2 ? c[nc / 2] : (c[nc / 2 - 1] + c[nc / 2]) / 2,
		};
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
		r = bracket_side_next(&s.b, k->said, f) < 0 ? -ENOMEM : 0;
	if (r == 0)
		r = side_samples(k, &s, &v, &n, &counter);
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

int own_bracket_pair(const struct own_bracketed *k, const struct own_run *const run[2],
		     const struct bench_spec *const spec[2], const struct bracket_fn *const fns[2],
		     const size_t nfns[2], void *ctx, struct bench_result *const res[2])
{
	const struct measure_plan *plan = run[1]->plan;
	struct measure_target t[2] = { *run[0]->t, *run[1]->t };
	struct trace_failure *f = calloc(1, sizeof(*f));
	double *all[2] = { NULL, NULL }, *counters[2] = { NULL, NULL };
	size_t nall[2] = { 0, 0 }, ncounters[2] = { 0, 0 }, rounds, samples;
	uint64_t seed = measure_now_ns() | 1;
	int r = 0;

	if (!f)
		return -ENOMEM;
	/* Both children on one CPU, unless told otherwise: two CPUs of a VM
	 * differ in speed. */
	if (t[0].cpu < 0 && t[1].cpu < 0) {
		cpu_set_t set;

		if (sched_getaffinity(0, sizeof(set), &set) == 0)
			for (int c = 0; c < CPU_SETSIZE && t[0].cpu < 0; c++)
				if (CPU_ISSET(c, &set))
					t[0].cpu = t[1].cpu = c;
	}
	/* compare's interval is over the pairs of processes, and holds what
	 * varies between them. */
	samples = plan->sample_target_ns ? plan->time_ns / plan->sample_target_ns : 0;
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

		one.time_ns = plan->time_ns / rounds;
		for (int j = 0; j < 2; j++) {
			s[j] = (struct side){ .b.res = res[j],
					      .run = run[j],
					      .t = &t[j],
					      .spec = spec[j],
					      .ctx = ctx,
					      .errfd = -1 };
			if (q) {
				launch_temp_dir_empty(run[j]->dir);
				measure_drop_cached(t[j].binary);
			}
		}
		r = side_start(k, &s[0], fns[0], nfns[0], &one);
		if (r == 0)
			r = side_start(k, &s[1], fns[1], nfns[1], &one);
		/* One batch of each in turn, which goes first drawn anew for
		 * each pair of batches: whatever favours a position favours
		 * each build alike, and what recurs at a period of its own (a
		 * timer's tick) cannot fall in step with a fixed order and on
		 * one build's batches. */
		while (r == 0 && (s[0].b.live || s[1].b.live)) {
			int j;

			if (step % 2 == 0)
				first = (int)(next_random(&seed) & 1);
			j = (int)(step % 2) ^ first;
			step++;
			if (!s[j].b.live)
				j = 1 - j;
			r = bracket_side_next(&s[j].b, k->said, f) < 0 ? -ENOMEM : 0;
		}
		for (int j = 0; r == 0 && j < 2; j++)
			r = side_samples(k, &s[j], &v[j], &n[j], &counters[j][ncounters[j]]);
		/* Sample i of each build: taken one after the other. */
		if (r == 0 && v[0] && v[1] && res[0]->status == BENCH_OK &&
		    res[1]->status == BENCH_OK)
			r = bench_result_add_pairs(res[1], v[0], v[1], n[0] < n[1] ? n[0] : n[1], 0);
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
		if (res[0]->status != BENCH_OK || res[1]->status != BENCH_OK)
			break;
	}
	for (int j = 0; j < 2; j++) {
		struct bracket_side none = { .res = res[j] };

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
