/* SPDX-License-Identifier: MIT */
/*
 * What every instrument shares: the clock, the plan's defaults and how
 * samples grow, the child's input, the way out after "measured no
 * execution time", events, and the life of specs and results. The
 * instruments themselves are leaves (walltime.c, callgrind.c, perf.c),
 * listed in instruments.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/strutil.h"
#include "util/clock.h"
#include "util/guard.h"
#include "util/launch.h"
#include "measure/measure.h"

uint64_t measure_now_ns(void)
{
	return (uint64_t)clock_now_ns();
}

void measure_result_begin(struct bench_result *res, const struct bench_spec *spec,
			  const char *instrument, const char *unit)
{
	*res = (struct bench_result){ .spec = spec, .instrument = instrument, .unit = unit };
	res->t_start_ns = measure_now_ns();
	if (spec && spec->clone)
		bench_result_diagnose(res,
				      "a copy of a function that the compiler specialized for its "
				      "callers (.constprop, .isra): it may ignore the arguments it is "
				      "given or expect other ones than its name says; measure the "
				      "function itself where the binary has it");
	if (spec && spec->maybe_member)
		bench_result_diagnose(res,
				      "a function in a namespace or a class, in a binary without "
				      "DWARF: if it is a member function that is not static, it "
				      "needs an object that benchtrap does not pass (build with -g "
				      "to tell, or benchmark a function that makes the object)");
}

void measure_result_count(struct bench_result *res, double value)
{
	struct stats_options so = stats_options_default();

	res->value = value;
	res->samples = malloc(sizeof(*res->samples));
	if (!res->samples) {
		res->status = BENCH_FAILED;
		res->error = strdup("out of memory");
		return;
	}
	res->samples[0] = value;
	res->nsamples = 1;
	if (stats_summarize(res->samples, 1, &so, &res->stats) < 0) {
		res->status = BENCH_FAILED;
		res->error = strdup("no usable count");
		return;
	}
	res->status = BENCH_OK;
}

int measure_open_input(const struct measure_target *t)
{
	int fd;

	if (t->input && !strcmp(t->input, "-"))
		fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	else
		fd = open(t->input ? t->input : "/dev/null", O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

const char *measure_isolation_name(enum measure_isolation i)
{
	switch (i) {
	case MEASURE_ISOLATION_BENCHMARK:
		break;
	case MEASURE_ISOLATION_PROCESS:
		return "process";
	case MEASURE_ISOLATION_SHARED:
		return "shared";
	}
	return "benchmark";
}

void measure_plan_default(struct measure_plan *p)
{
	/* docs/run.md explains these choices. */
	*p = (struct measure_plan){
		.warmup_ns = 200000000,	      /* 0.2 s */
		.time_ns = 1000000000,	      /* 1 s */
		.sample_target_ns = 10000000, /* 10 ms: 100 samples in the budget */
		.min_samples = 10,
		.max_samples = 1000,
		.timeout_ns = 60000000000ull, /* 60 s */
	};
}

uint64_t measure_default_timeout(const struct measure_plan *p, size_t reps, uint64_t rep_min_ns)
{
	const double base = 60e9, per_rep = 0.25e9;
	double t = 3.0 * ((double)p->warmup_ns + (double)p->time_ns) +
		   (double)reps * (per_rep + 3.0 * (double)rep_min_ns);

	if (!(t > base))
		return (uint64_t)base;
	return t >= 1e18 ? (uint64_t)1e18 : (uint64_t)t;
}

uint64_t measure_grow(uint64_t n, uint64_t elapsed_ns, uint64_t target_ns)
{
	/* Aim 10% past the target so that noise does not leave the next
	 * sample just short of it; never more than 100x at once, in case the
	 * first samples were too short to measure. */
	double want = (double)n * (double)target_ns * 1.1 / (double)(elapsed_ns ? elapsed_ns : 1);
	uint64_t next = want >= (double)n * 100 ? n * 100 : (uint64_t)ceil(want);

	if (next <= n)
		next = n + 1;
	return next < MEASURE_MAX_ITERATIONS ? next : MEASURE_MAX_ITERATIONS;
}

bool measure_machine_noisy(double cal_median, double cal_q1, double cal_q3, uint64_t n)
{
	/* Only when the empty loop ran long enough per sample (50 us) for the
	 * clock's own jitter not to explain the spread. */
	if (cal_median <= 0 || cal_median * (double)n < 50000)
		return false;
	return (cal_q3 - cal_q1) / cal_median > 0.10;
}

const char *measure_no_time_advice(const struct bench_spec *s)
{
	if (s && s->registered)
		return "optimized away? use benchtrap_black_box on its result";
	return "does the function do work with these arguments, or is it a stub that "
	       "returns at once?";
}

void bench_spec_clear(struct bench_spec *s)
{
	free(s->name);
	free(s->symbol);
	free(s->object);
	free(s->build_id);
	*s = (struct bench_spec){ 0 };
}

void bench_result_clear(struct bench_result *r)
{
	free(r->error);
	free(r->samples);
	free(r->pair_ratios);
	free(r->pair_groups);
	free(r->threads);
	free(r->reported_cpu_ns);
	free(r->reported_label);
	for (size_t i = 0; i < r->nsites; i++)
		str_free_n(r->sites[i].frames, r->sites[i].nframes);
	free(r->sites);
	str_free_n(r->diagnostics, r->ndiagnostics);
	*r = (struct bench_result){ 0 };
}

void bench_result_unwritten(struct bench_result *r, const char *path, int err)
{
	if (r->unwritten_err)
		return;
	snprintf(r->unwritten, sizeof(r->unwritten), "%s", path);
	r->unwritten_err = err;
}

int bench_result_diagnose(struct bench_result *r, const char *fmt, ...)
{
	char **v = realloc(r->diagnostics, (r->ndiagnostics + 2) * sizeof(*v));
	va_list ap;
	int n;

	if (!v)
		return -ENOMEM;
	r->diagnostics = v;
	va_start(ap, fmt);
	n = vasprintf(&v[r->ndiagnostics], fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	/* Said once, however many processes said it. */
	for (size_t i = 0; i < r->ndiagnostics; i++) {
		if (!strcmp(v[i], v[r->ndiagnostics])) {
			free(v[r->ndiagnostics]);
			v[r->ndiagnostics] = NULL;
			return 0;
		}
	}
	v[++r->ndiagnostics] = NULL;
	return 0;
}

void measure_emit(const struct measure_hooks *h, const struct measure_event *ev)
{
	if (h && h->event)
		h->event(ev, h->userdata);
}

void measure_emit_end(const struct measure_hooks *h, struct bench_result *res, pid_t pid,
		      uint64_t t_ns)
{
	char *offence = pid > 0 ? guard_take(pid) : NULL;

	if (offence) {
		free(res->error);
		res->error = offence;
		res->status = BENCH_FAILED;
	}
	res->ended = true;
	res->interrupted = res->status != BENCH_OK && launch_stopping();
	struct measure_event ev = { .kind = MEASURE_BENCH_END,
				    .name = res->spec->name,
				    .pid = pid,
				    .t_ns = t_ns,
				    .result = res };

	measure_emit(h, &ev);
}

void measure_drop_cached(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

size_t measure_pair_processes(size_t n, size_t per, size_t most)
{
	size_t k = per ? n / per : 1;

	return k < 1 ? 1 : k > most ? most : k;
}

int bench_result_add_pairs(struct bench_result *h, const double *base, const double *head,
			   size_t n, size_t from)
{
	double *v = realloc(h->pair_ratios, (h->npairs + n + 1) * sizeof(*v));
	size_t *g = v ? realloc(h->pair_groups, (h->npair_groups + 1) * sizeof(*g)) : NULL;
	size_t got = 0;

	if (v)
		h->pair_ratios = v;
	if (!g)
		return -ENOMEM;
	h->pair_groups = g;
	for (size_t j = from; j < n; j++)
		if (base[j] > 0 && head[j] > 0)
			h->pair_ratios[h->npairs + got++] = head[j] / base[j];
	if (got) {
		h->npairs += got;
		h->pair_groups[h->npair_groups++] = got;
	}
	return 0;
}

void bench_result_settle_pairs(struct bench_result *h, bool ok)
{
	if (!ok || !h->npairs) {
		free(h->pair_ratios);
		h->pair_ratios = NULL;
		h->npairs = 0;
	}
	if (h->npair_groups < 2 || !h->npairs) {
		free(h->pair_groups);
		h->pair_groups = NULL;
		h->npair_groups = 0;
	}
}
