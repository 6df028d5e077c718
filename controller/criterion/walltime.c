/* SPDX-License-Identifier: MIT */
/*
 * criterion walltime timed by benchtrap (docs/criterion.md): each
 * benchmark in a fresh process running criterion's own main in benchmark
 * mode, traced, Bencher's batch functions bracketed (measure/bracket.h):
 * every call of one is one batch, timed by the injected stubs with no trap
 * inside. criterion's sample.json says, after the run, how many iterations
 * each measured sample had; the samples are the last calls:
 *
 *   warm-up:   1, 2, 4, ... iterations  (until --warm-up-time has passed)
 *   measured:  iters[0], iters[1], ...  (--sample-size calls; d, 2d, 3d...
 *                                         or all alike, as criterion chose)
 *
 * A sample is a measured call's time over its iterations; the figure is
 * their median, as for every walltime figure, and the least-squares slope
 * of the calls' times over their iteration counts (what a call costs once
 * goes to the intercept) is the counter "slope_ns".
 * The engine runs the children (measure/sides.h); paired, the two builds'
 * children alternate call by call (only one runs at a time).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "criterion/internal.h"
#include "elf/elf.h"
#include "measure/failure.h"
#include "measure/sides.h"
#include "util/strutil.h"

static uint64_t whole_seconds(uint64_t ns)
{
	uint64_t s = (ns + 999999999) / 1000000000;

	return s ? s : 1;
}

/* The arguments of one benchmark's run: criterion's times from the plan,
 * unless the target arguments give them, the user's, the selection. */
static int run_argv(const struct own_run *run, const struct bench_spec *spec,
		    const struct measure_plan *plan, void *ctx, char ***argv)
{
	const struct measure_target *t = run->t;
	char *filter = criterion_filter_regex(spec->name), *pre[9] = { NULL };
	const char *post[] = { filter, NULL };
	size_t np = 0, na = 0,
	       samples = plan->sample_target_ns ? plan->time_ns / plan->sample_target_ns : 0;
	int r = 0;

	(void)ctx;
	if (!filter)
		return -ENOMEM;
	/* criterion takes 10 samples at least. */
	if (samples < 10)
		samples = 10;
	if (plan->max_samples && samples > plan->max_samples && plan->max_samples >= 10)
		samples = plan->max_samples;
	if (!own_has_arg(t->argv, "--warm-up-time")) {
		pre[np++] = strdup("--warm-up-time");
		pre[np++] = str_fmt("%llu", (unsigned long long)whole_seconds(plan->warmup_ns));
	}
	if (!own_has_arg(t->argv, "--measurement-time")) {
		pre[np++] = strdup("--measurement-time");
		pre[np++] = str_fmt("%llu", (unsigned long long)whole_seconds(plan->time_ns));
	}
	if (!own_has_arg(t->argv, "--sample-size")) {
		pre[np++] = strdup("--sample-size");
		pre[np++] = str_fmt("%zu", samples);
	}
	/* Its own analysis is not what benchtrap reports: kept short. */
	if (!own_has_arg(t->argv, "--nresamples")) {
		pre[np++] = strdup("--nresamples");
		pre[np++] = strdup("1000");
	}
	for (size_t i = 0; i < np; i++)
		if (!pre[i])
			r = -ENOMEM;
	if (r == 0)
		r = criterion_argv(t, (const char *const *)pre, post, argv, &na);
	for (size_t i = 0; i < np; i++)
		free(pre[i]);
	free(filter);
	return r;
}

/* CRITERION_HOME in the run's directory: where sample.json is read from. */
static char **run_env(const struct own_run *run, void *ctx)
{
	char home[PATH_MAX + 16];

	(void)ctx;
	snprintf(home, sizeof(home), "%s/home", run->dir);
	return criterion_env(home, run->t->clean_env);
}

/* Instant::elapsed's entry cannot be patched: the batch functions' calls. */
static int unclocked(void *ctx, const struct bracket_fn *fns, size_t n, const char *why,
		     struct bench_result *res, struct bracket_fn **ret, size_t *ret_n)
{
	struct bracket_fn *plain;

	(void)ctx;
	*ret = NULL;
	if (n <= 2 || fns[n - 1].role != BRACKET_PAUSE)
		return 0;
	plain = calloc(n - 2, sizeof(*plain));
	if (!plain || bench_result_diagnose(res,
					    "criterion's clock could not be timed (%s): each batch "
					    "is timed around its batch function, with what it does "
					    "around its loop",
					    why) < 0) {
		free(plain);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n - 2; i++) {
		plain[i] = fns[i];
		plain[i].clocked = plain[i].clocked_once = false;
	}
	*ret = plain;
	*ret_n = n - 2;
	return 0;
}

/* The sample.json criterion wrote under DIR/home (the one benchmark run
 * there): malloc'ed text, or NULL. */
static char *find_sample(const char *dir, int depth, size_t *ret_len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *found = NULL;

	if (!d)
		return NULL;
	while (!found && (e = readdir(d))) {
		char path[PATH_MAX];

		if (e->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		if (!strcmp(e->d_name, "new") && depth > 0) {
			char file[PATH_MAX + 16];

			snprintf(file, sizeof(file), "%s/sample.json", path);
			found = str_read_file(file, ret_len);
		}
		if (!found && e->d_type == DT_DIR && depth < 8)
			found = find_sample(path, depth + 1, ret_len);
	}
	closedir(d);
	return found;
}

/*
 * A process's calls b made into samples (per iteration) and its figure
 * b->counter, the slope, from its last calls and sample.json; res failed
 * when they cannot be matched. 0 or -ENOMEM.
 */
static int run_samples(const struct own_run *run, const struct bench_spec *spec, void *ctx,
		       struct own_batches *b, struct bench_result *res, double **ret_samples,
		       size_t *ret_n)
{
	char home[PATH_MAX + 16], *text;
	uint64_t *iters = NULL;
	double *times = NULL, *span = NULL, *v = NULL;
	size_t n = 0, len = 0, whole = 0;
	int r = 0;

	(void)ctx;
	snprintf(home, sizeof(home), "%s/home", run->dir);
	text = find_sample(home, 0, &len);
	if (!text) {
		char *re = criterion_filter_regex(spec->name);

		own_fail_unrun(res, spec->name, "FILTER", re ? re : "?");
		free(re);
		return 0;
	}
	r = criterion_parse_sample(text, len, &iters, &times, &n);
	free(text);
	if (r == -EINVAL) {
		bench_result_fail(res, strdup("cannot read criterion's sample.json"));
		return 0;
	}
	if (r < 0)
		return r;
	/* The measured samples are the last n calls, a warm-up call before
	 * them; each bracket holds criterion's own interval of that call. */
	bool match = b->n > n;

	span = calloc(n, sizeof(*span));
	v = calloc(n, sizeof(*v));
	if (!span || !v) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; match && i < n; i++) {
		const struct bracket_call *c = &b->calls[b->n - n + i];

		/* Matched by the whole call, which holds criterion's clock;
		 * timed by criterion's clock where it ran inside the call
		 * (timed_ns: the intervals from Instant::now to elapsed). */
		span[i] = (double)(c->t1_ns - c->t0_ns);
		match = c->t1_ns >= c->t0_ns && span[i] >= times[i];
		span[i] = (double)c->timed_ns;
		v[i] = span[i] / (double)iters[i];
		whole += b->fns[c->fn].clocked && !c->clocked;
	}
	if (match && whole &&
	    bench_result_diagnose(res,
				  "%zu of %zu samples are timed around criterion's batch function, "
				  "not by its clock: the code measured reads std::time::Instant "
				  "itself",
				  whole, n) < 0) {
		r = -ENOMEM;
		goto out;
	}
	if (!match) {
		bench_result_fail(res, str_fmt("the calls of criterion's batch function (%zu) do "
					       "not match the %zu samples of its sample.json",
					       b->n, n));
		goto out;
	}
	/* The headline is the median, as for every walltime figure (and
	 * what the interval and compare's pairs are of); the slope, which
	 * puts what a call costs once into its intercept, is a counter. */
	r = criterion_slope(iters, span, n, &b->counter);
	if (r < 0)
		goto out;
	res->iterations = iters[n - 1];
	*ret_samples = v;
	*ret_n = n;
	v = NULL;
out:
	free(iters);
	free(times);
	free(span);
	free(v);
	return r;
}

/* Samples in several pairs of processes, 30 at least in each, 3 pairs at
 * most (each costs criterion's warm-up and a whole second of measuring). */
static const struct own_bracketed bracketed = {
	.argv = run_argv,
	.env = run_env,
	.said = own_said_rust,
	.fallback = unclocked,
	.samples = run_samples,
	.counter = "slope_ns",
	.pair_processes = 3,
	.pair_samples = 30,
};

int criterion_find(const struct elf_file *ef, const char *object, void **ret)
{
	struct criterion_followed *f = calloc(1, sizeof(*f));
	struct criterion_fn *fns = NULL;
	struct criterion_clock clock;
	size_t n = 0;
	bool clocked = false;
	int r = f ? criterion_batch_fns(ef, &fns, &n) : -ENOMEM;

	if (r == 0 && n == 0)
		r = -ENOENT;
	if (r == 0) {
		clocked = criterion_clock_fns(ef, &clock) == 0;
		f->b = calloc(n + 2, sizeof(*f->b));
		f->names = calloc(n + 1, sizeof(*f->names));
		r = f->b && f->names ? 0 : -ENOMEM;
	}
	/* Each batch timed as criterion times it, from Instant::now's return
	 * to Instant::elapsed's entry, so that an iter_batched setup or what
	 * a batch does around its loop is out; without that clock among
	 * the symbols, the batch function's call. */
	for (size_t i = 0; r == 0 && i < n; i++) {
		size_t l = strlen(fns[i].name);

		/* iter reads the clock once a call; iter_batched once a batch
		 * of inputs, iter_custom as its routine does. */
		f->b[i] = (struct bracket_fn){ object, fns[i].link_addr, .clocked = clocked,
					       .clocked_once = clocked && l >= 6 &&
							       !strcmp(fns[i].name + l - 6, "::iter") };
		f->names[f->nnames++] = fns[i].name;
		fns[i].name = NULL;
	}
	f->n = n;
	if (r == 0 && clocked) {
		f->b[f->n++] = (struct bracket_fn){ object, clock.now, BRACKET_RESUME,
						    clock.now_size };
		f->b[f->n++] = (struct bracket_fn){ object, clock.elapsed, BRACKET_PAUSE,
						    clock.elapsed_size };
	}
	criterion_fns_free(fns, n);
	if (r < 0) {
		criterion_followed_free(f);
		return r;
	}
	*ret = f;
	return 0;
}

void criterion_followed_free(void *data)
{
	struct criterion_followed *f = data;

	for (size_t i = 0; f && i < f->nnames; i++)
		free(f->names[i]);
	if (f) {
		free(f->names);
		free(f->b);
	}
	free(f);
}

static int bracket_one(const struct own_run *run, const struct bench_spec *spec,
		       struct bench_result *res)
{
	const struct criterion_followed *fns = run->data;

	return own_bracket_one(&bracketed, run, spec, fns->b, fns->n, NULL, res);
}

/* Both builds timed alike: by criterion's clock where both have it among
 * their symbols, else both around their batch functions (fns[k] the
 * functions of build k, nfns[k] shortened). 0 or -ENOMEM. */
static int same_clock(struct bracket_fn *fns[2], size_t nfns[2], struct bench_result *const res[2])
{
	bool clock[2];
	int k;

	for (k = 0; k < 2; k++)
		clock[k] = nfns[k] > 2 && fns[k][nfns[k] - 1].role == BRACKET_PAUSE;
	if (clock[0] == clock[1])
		return 0;
	k = clock[0] ? 0 : 1;
	nfns[k] -= 2;
	for (size_t i = 0; i < nfns[k]; i++)
		fns[k][i].clocked = fns[k][i].clocked_once = false;
	for (k = 0; k < 2; k++)
		if (bench_result_diagnose(res[k], "criterion's clock (std::time::Instant) is among "
						  "the symbols of one build only: both builds' "
						  "batches are timed around their batch functions") < 0)
			return -ENOMEM;
	return 0;
}

static int paired_one(const struct own_run *const run[2], const struct bench_spec *const spec[2],
		      struct bench_result *const res[2])
{
	const struct criterion_followed *data[2] = { run[0]->data, run[1]->data };
	struct bracket_fn *fns[2] = { NULL, NULL };
	size_t nfns[2] = { data[0]->n, data[1]->n };
	int r = 0;

	for (int k = 0; k < 2; k++) {
		fns[k] = calloc(nfns[k] + 1, sizeof(*fns[k]));
		if (fns[k])
			memcpy(fns[k], data[k]->b, nfns[k] * sizeof(*fns[k]));
		else
			r = -ENOMEM;
	}
	if (r == 0)
		r = same_clock(fns, nfns, res);
	if (r == 0)
		r = own_bracket_pair(&bracketed, run, spec,
				     (const struct bracket_fn *const[2]){ fns[0], fns[1] }, nfns,
				     (void *const[2]){ NULL, NULL }, res);
	free(fns[0]);
	free(fns[1]);
	return r;
}

const struct own_cell criterion_walltime_cell = { CRITERION_CELL, .one = bracket_one,
						  .pair = paired_one };
