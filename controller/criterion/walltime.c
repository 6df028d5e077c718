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
 * Paired, the two builds' children alternate call by call (only one runs at
 * a time).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elf.h"
#include "measure/bracket.h"
#include "measure/sides.h"
#include "measure/driver-env.h"
#include "util/launch.h"
#include "measure/failure.h"
#include "util/strutil.h"
#include "criterion/internal.h"

extern char **environ;

struct cside {
	const struct measure_target *t;
	const struct bench_spec *spec;
	struct bracket_side side; /* its child, its calls, how it ended */
	const struct bracket_fn *fns;
	size_t nfns;
	int errfd;
	bool unclocked; /* criterion's clock could not be timed: whole calls */
};

static void side_free(struct cside *s)
{
	bracket_free(s->side.br);
	s->side.br = NULL;
	if (s->errfd >= 0)
		close(s->errfd);
	s->errfd = -1;
	free(s->side.calls);
	s->side.calls = NULL;
	launch_sweep();
}

static uint64_t whole_seconds(uint64_t ns)
{
	uint64_t s = (ns + 999999999) / 1000000000;

	return s ? s : 1;
}

/* The arguments of one benchmark's run: criterion's times from the plan,
 * unless the target arguments give them, the user's, the selection. */
static int run_argv(const struct cside *s, const struct measure_plan *plan, char ***argv,
		    size_t *na)
{
	char *filter = criterion_filter_regex(s->spec->name), *pre[9] = { NULL };
	const char *post[] = { filter, NULL };
	size_t np = 0,
	       samples = plan->sample_target_ns ? plan->time_ns / plan->sample_target_ns : 0;
	int r = 0;

	if (!filter)
		return -ENOMEM;
	/* criterion takes 10 samples at least. */
	if (samples < 10)
		samples = 10;
	if (plan->max_samples && samples > plan->max_samples && plan->max_samples >= 10)
		samples = plan->max_samples;
	if (!own_has_arg(s->t->argv, "--warm-up-time")) {
		pre[np++] = strdup("--warm-up-time");
		pre[np++] = str_fmt("%llu", (unsigned long long)whole_seconds(plan->warmup_ns));
	}
	if (!own_has_arg(s->t->argv, "--measurement-time")) {
		pre[np++] = strdup("--measurement-time");
		pre[np++] = str_fmt("%llu", (unsigned long long)whole_seconds(plan->time_ns));
	}
	if (!own_has_arg(s->t->argv, "--sample-size")) {
		pre[np++] = strdup("--sample-size");
		pre[np++] = str_fmt("%zu", samples);
	}
	/* Its own analysis is not what benchtrap reports: kept short. */
	if (!own_has_arg(s->t->argv, "--nresamples")) {
		pre[np++] = strdup("--nresamples");
		pre[np++] = strdup("1000");
	}
	for (size_t i = 0; i < np; i++)
		if (!pre[i])
			r = -ENOMEM;
	if (r == 0)
		r = criterion_argv(s->t, (const char *const *)pre, post, argv, na);
	for (size_t i = 0; i < np; i++)
		free(pre[i]);
	free(filter);
	return r;
}

/* Start side s: 0, or -ENOMEM; a child that cannot start fails s->side.res. */
static int side_start(struct cside *s, const struct measure_plan *plan)
{
	char **argv = NULL, **env = NULL, **saved = environ, home[PATH_MAX + 16];
	char path[PATH_MAX + 16], *why = NULL;
	struct measure_target t = *s->t;
	size_t na = 0;
	int r;

	s->errfd = -1;
	/* The timeout bounds each process (a paired compare runs several). */
	s->side.deadline = measure_now_ns() + plan->timeout_ns;
	s->side.timeout_ns = plan->timeout_ns;
	snprintf(home, sizeof(home), "%s/home", s->side.dir);
	r = run_argv(s, plan, &argv, &na);
	env = r ? NULL : criterion_env(home, s->t->clean_env);
	if (r < 0 || !env) {
		measure_env_free(argv);
		return -ENOMEM;
	}
	snprintf(path, sizeof(path), "%s/stderr", s->side.dir);
	s->errfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (s->errfd < 0) {
		bench_result_fail(s->side.res,
				  str_fmt("cannot create %s: %s", path, strerror(errno)));
		goto out;
	}
	/* The engine spawns with the controller's environment (or a clean
	 * one): CRITERION_HOME must reach the child, so the environment it
	 * inherits is this one, while it is spawned. */
	t.clean_env = false;
	environ = env;
	r = bracket_start(&t, argv, s->fns, s->nfns, s->t->quiet_stdio ? s->errfd : STDOUT_FILENO,
			  s->errfd, &s->side.br, &why);
	if (r == -ENOTSUP && s->nfns > 2 && s->fns[s->nfns - 1].role == BRACKET_PAUSE) {
		/* Instant::elapsed's entry cannot be patched: the calls. */
		struct bracket_fn *plain = calloc(s->nfns - 2, sizeof(*plain));

		r = plain ? bench_result_diagnose(s->side.res,
						  "criterion's clock could not be timed (%s): each "
						  "batch is timed around its batch function, with "
						  "what it does around its loop",
						  why)
			  : -ENOMEM;
		free(why);
		why = NULL;
		for (size_t i = 0; r == 0 && i < s->nfns - 2; i++) {
			plain[i] = s->fns[i];
			plain[i].clocked = false;
		}
		if (r == 0)
			r = bracket_start(&t, argv, plain, s->nfns - 2,
					  s->t->quiet_stdio ? s->errfd : STDOUT_FILENO, s->errfd,
					  &s->side.br, &why);
		s->unclocked = true;
		free(plain);
	}
	environ = saved;
	if (r < 0) {
		bench_result_fail(s->side.res,
				  why ? why : str_fmt("cannot start %s", s->t->binary));
		why = NULL;
		side_free(s);
		r = r == -ENOMEM ? r : 0;
		goto out;
	}
	s->side.res->pid = bracket_pid(s->side.br);
	s->side.res->t_ready_ns = measure_now_ns();
	s->side.live = true;
	r = 0;
out:
	free(why);
	measure_env_free(argv);
	measure_env_free(env);
	return r;
}

/* Run side s until its next call ended (1) or it is no longer live (0);
 * -ENOMEM. */
static int side_step(struct cside *s, struct trace_failure *f)
{
	return bracket_side_next(&s->side, own_said_rust, f);
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
 * Side s exited: its samples (*ret_samples per iteration, *ret_n) and its
 * figure (*ret_slope) from its last calls and sample.json; res failed when
 * they cannot be matched. 0 or -ENOMEM.
 */
static int side_finish(struct cside *s, double **ret_samples, size_t *ret_n, double *ret_slope)
{
	char home[PATH_MAX + 16], *text;
	uint64_t *iters = NULL;
	double *times = NULL, *span = NULL, *v = NULL;
	size_t n = 0, len = 0, whole = 0;
	int r = 0;

	*ret_samples = NULL;
	*ret_n = 0;
	if (!s->side.exited)
		return 0;
	snprintf(home, sizeof(home), "%s/home", s->side.dir);
	text = find_sample(home, 0, &len);
	if (!text) {
		char *re = criterion_filter_regex(s->spec->name);

		bench_result_fail(s->side.res, str_fmt("criterion wrote no sample.json: it ran no "
						       "benchmark named '%s' (FILTER %s)",
						       s->spec->name, re ? re : "?"));
		free(re);
		return 0;
	}
	r = criterion_parse_sample(text, len, &iters, &times, &n);
	free(text);
	if (r == -EINVAL) {
		bench_result_fail(s->side.res, strdup("cannot read criterion's sample.json"));
		return 0;
	}
	if (r < 0)
		return r;
	/* The measured samples are the last n calls, a warm-up call before
	 * them; each bracket holds criterion's own interval of that call. */
	bool match = s->side.ncalls > n;

	span = calloc(n, sizeof(*span));
	v = calloc(n, sizeof(*v));
	if (!span || !v) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; match && i < n; i++) {
		const struct bracket_call *c = &s->side.calls[s->side.ncalls - n + i];

		/* Matched by the whole call, which holds criterion's clock;
		 * timed by criterion's clock where it ran inside the call
		 * (timed_ns: the intervals from Instant::now to elapsed). */
		span[i] = (double)(c->t1_ns - c->t0_ns);
		match = c->t1_ns >= c->t0_ns && span[i] >= times[i];
		span[i] = (double)c->timed_ns;
		v[i] = span[i] / (double)iters[i];
		whole += !s->unclocked && s->fns[c->fn].clocked && !c->clocked;
	}
	if (match && whole &&
	    bench_result_diagnose(s->side.res,
				  "%zu of %zu samples are timed around criterion's batch function, "
				  "not by its clock: the code measured reads std::time::Instant "
				  "itself",
				  whole, n) < 0) {
		r = -ENOMEM;
		goto out;
	}
	if (!match) {
		bench_result_fail(
			s->side.res,
			str_fmt("the calls of criterion's batch function (%zu) do not match "
				"the %zu samples of its sample.json",
				s->side.ncalls, n));
		goto out;
	}
	r = criterion_slope(iters, span, n, ret_slope);
	if (r < 0)
		goto out;
	s->side.res->iterations = iters[n - 1];
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

/* res's samples are v[0..n) (taken), the slope a counter beside them. */
static int take_samples(struct bench_result *res, double *v, size_t n, double slope,
			const struct cside *s)
{
	int r = bracket_side_take_samples(&s->side, res, v, n);

	if (r <= 0)
		return r;
	/* The headline is the median, as for every walltime figure (and
	 * what the interval and compare's pairs are of); the slope, which
	 * puts what a call costs once into its intercept, is a counter. */
	res->counters[0] = (struct measure_counter){ .name = "slope_ns", .value = slope };
	res->ncounters = 1;
	res->no_time = res->value <= 0;
	return 0;
}

/* The batch functions of the binary of spec, for the engine. */
int criterion_bracket_fns(const struct bench_spec *spec, struct bracket_fn **ret_b, size_t *ret_n,
			  char **ret_error)
{
	struct elf_file *ef = NULL;
	struct criterion_fn *fns = NULL;
	struct bracket_fn *b = NULL;
	struct criterion_clock clock;
	const char *what = NULL;
	size_t n = 0;
	bool clocked = false;
	int r = elf_open(spec->object, &ef, &what);

	if (r == 0)
		r = criterion_batch_fns(ef, &fns, &n);
	if (r == 0 && n == 0)
		r = -ENOENT;
	if (r == 0) {
		clocked = criterion_clock_fns(ef, &clock) == 0;
		b = calloc(n + 2, sizeof(*b));
		r = b ? 0 : -ENOMEM;
	}
	/* Each batch timed as criterion times it, from Instant::now's return
	 * to Instant::elapsed's entry, so that an iter_batched setup or what
	 * a batch does around its loop is out; without that clock among
	 * the symbols, the batch function's call. */
	for (size_t i = 0; r == 0 && i < n; i++) {
		size_t l = strlen(fns[i].name);

		/* iter reads the clock once a call; iter_batched once a batch
		 * of inputs, iter_custom as its routine does. */
		b[i] = (struct bracket_fn){ spec->object, fns[i].link_addr, .clocked = clocked,
					    .clocked_once = clocked && l >= 6 &&
							    !strcmp(fns[i].name + l - 6, "::iter") };
	}
	criterion_fns_free(fns, n);
	if (r == 0 && clocked) {
		b[n++] = (struct bracket_fn){ spec->object, clock.now, BRACKET_RESUME,
					      clock.now_size };
		b[n++] = (struct bracket_fn){ spec->object, clock.elapsed, BRACKET_PAUSE,
					      clock.elapsed_size };
	}
	elf_close(ef);
	if (r < 0) {
		*ret_error = str_fmt("%s: cannot find criterion's batch functions "
				     "(criterion::bencher::Bencher<M>::iter): %s",
				     spec->object, what ? what : strerror(-r));
		free(b);
		return r;
	}
	*ret_b = b;
	*ret_n = n;
	return 0;
}

int criterion_followed_make(const struct own_run *run, const struct bench_spec *first, void **ret,
			    char **ret_error)
{
	struct criterion_followed *fns = calloc(1, sizeof(*fns));
	int r = fns ? criterion_bracket_fns(first, &fns->b, &fns->n, ret_error) : -ENOMEM;

	(void)run;
	if (r < 0) {
		free(fns);
		return r;
	}
	*ret = fns;
	return 0;
}

void criterion_followed_free(void *data)
{
	struct criterion_followed *fns = data;

	free(fns->b);
	free(fns);
}

static int bracket_one(const struct own_run *run, const struct bench_spec *spec,
		       struct bench_result *res)
{
	const struct criterion_followed *fns = run->data;
	const struct measure_plan *plan = run->plan;
	struct cside s = { .t = run->t,
			   .spec = spec,
			   .side.res = res,
			   .side.dir = run->dir,
			   .fns = fns->b,
			   .nfns = fns->n,
			   .errfd = -1 };
	struct trace_failure *f = calloc(1, sizeof(*f));
	double *v = NULL, slope = 0;
	size_t n = 0;
	int r;

	if (!f)
		return -ENOMEM;
	r = side_start(&s, plan);
	while (r == 0 && s.side.live)
		r = side_step(&s, f) < 0 ? -ENOMEM : 0;
	if (r == 0)
		r = side_finish(&s, &v, &n, &slope);
	if (r == 0 && s.side.br && res->status == BENCH_OK)
		r = take_samples(res, v, n, slope, &s);
	else
		free(v);
	side_free(&s);
	free(f);
	return r;
}

/* ---- two builds, paired ------------------------------------------------------ */

static int cmp_slope(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* How many pairs of processes a paired benchmark runs in: criterion's
 * samples split so that each process takes 30 at least, 3 processes at
 * most (each costs criterion's warm-up and a whole second of measuring). */
#define CRITERION_PAIR_PROCESSES 3
#define CRITERION_PAIR_SAMPLES 30

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
	const struct measure_plan *plan = run[1]->plan;
	const struct bench_spec *bspec = spec[0], *hspec = spec[1];
	const char *const dirs[2] = { run[0]->dir, run[1]->dir };
	struct bench_result *bres = res[0], *hres = res[1];
	struct measure_target tb = *run[0]->t, th = *run[1]->t;
	struct bracket_fn *fns[2] = { NULL, NULL };
	size_t nfns[2] = { data[0]->n, data[1]->n };
	struct trace_failure *f = calloc(1, sizeof(*f));
	double *all[2] = { NULL, NULL }, slopes[2][CRITERION_PAIR_PROCESSES] = { { 0 } };
	size_t nall[2] = { 0, 0 }, nslopes[2] = { 0, 0 }, rounds, samples;
	int r = 0;

	for (int k = 0; k < 2; k++) {
		fns[k] = calloc(nfns[k] + 1, sizeof(*fns[k]));
		if (fns[k])
			memcpy(fns[k], data[k]->b, nfns[k] * sizeof(*fns[k]));
	}
	if (!f || !fns[0] || !fns[1]) {
		r = -ENOMEM;
		goto out;
	}
	r = same_clock(fns, nfns, res);
	/* Both children on one CPU, unless told otherwise: two CPUs of a VM
	 * differ in speed. */
	if (tb.cpu < 0 && th.cpu < 0) {
		cpu_set_t set;

		if (sched_getaffinity(0, sizeof(set), &set) == 0)
			for (int c = 0; c < CPU_SETSIZE && tb.cpu < 0; c++)
				if (CPU_ISSET(c, &set))
					tb.cpu = th.cpu = c;
	}
	/*
	 * The samples in several pairs of processes, each pair from binaries
	 * read into the page cache afresh, as for Google Benchmark
	 * (gbench/bracket.c): compare's interval is over the pairs of
	 * processes, and holds what varies between them.
	 */
	samples = plan->sample_target_ns ? plan->time_ns / plan->sample_target_ns : 0;
	rounds = measure_pair_processes(samples, CRITERION_PAIR_SAMPLES, CRITERION_PAIR_PROCESSES);
	for (size_t k = 0; r == 0 && k < rounds; k++) {
		struct cside s[2] = {
			{ .t = &tb,
			  .spec = bspec,
			  .side.res = bres,
			  .side.dir = dirs[0],
			  .fns = fns[0],
			  .nfns = nfns[0],
			  .errfd = -1 },
			{ .t = &th,
			  .spec = hspec,
			  .side.res = hres,
			  .side.dir = dirs[1],
			  .fns = fns[1],
			  .nfns = nfns[1],
			  .errfd = -1 },
		};
		struct measure_plan one = *plan;
		double *v[2] = { NULL, NULL };
		size_t n[2] = { 0, 0 }, q = 0;

		one.time_ns = plan->time_ns / rounds;
		if (k) {
			/* criterion's files of the pair before (its baseline) out */
			launch_temp_dir_empty(dirs[0]);
			launch_temp_dir_empty(dirs[1]);
			measure_drop_cached(tb.binary);
			measure_drop_cached(th.binary);
		}
		r = side_start(&s[0], &one);
		if (r == 0)
			r = side_start(&s[1], &one);
		/* base, head; head, base; ...: one call of each in turn, so that
		 * whatever favours a position favours each build alike. */
		while (r == 0 && (s[0].side.live || s[1].side.live)) {
			int j = (int)((q % 2) ^ ((q / 2) % 2));

			q++;
			if (!s[j].side.live)
				j = 1 - j;
			r = side_step(&s[j], f) < 0 ? -ENOMEM : 0;
		}
		for (int j = 0; r == 0 && j < 2; j++) {
			r = side_finish(&s[j], &v[j], &n[j], &slopes[j][nslopes[j]]);
			nslopes[j] += r == 0 && v[j];
		}
		/* Sample j of each build: taken one after the other. */
		if (r == 0 && v[0] && v[1] && bres->status == BENCH_OK &&
		    hres->status == BENCH_OK)
			r = bench_result_add_pairs(hres, v[0], v[1], n[0] < n[1] ? n[0] : n[1], 0);
		for (int j = 0; j < 2; j++) {
			if (r == 0)
				r = bracket_side_diagnose(&s[j].side, res[j]);
			if (r == 0 && v[j] && res[j]->status == BENCH_OK)
				r = own_samples_append(&all[j], &nall[j], v[j], n[j]);
			else
				free(v[j]);
			side_free(&s[j]);
		}
		if (bres->status != BENCH_OK || hres->status != BENCH_OK)
			break;
	}
	for (int j = 0; j < 2; j++) {
		struct cside none = { .side.res = res[j] };
		double slope;

		/* The slope: the median of the processes' that measured. */
		size_t m = nslopes[j];

		qsort(slopes[j], m, sizeof(slopes[j][0]), cmp_slope);
		slope = !m	? 0
			: m % 2 ? slopes[j][m / 2]
				: (slopes[j][m / 2 - 1] + slopes[j][m / 2]) / 2;
		if (r == 0 && all[j] && res[j]->status == BENCH_OK)
			r = take_samples(res[j], all[j], nall[j], slope, &none);
		else
			free(all[j]);
	}
	bench_result_settle_pairs(hres, bres->status == BENCH_OK && hres->status == BENCH_OK);
out:
	free(f);
	free(fns[0]);
	free(fns[1]);
	return r;
}

const struct own_cell criterion_walltime_cell = {
	.tag = "criterion",
	.prepare = criterion_followed_make,
	.release = criterion_followed_free,
	.one = bracket_one,
	.pair = paired_one,
};
