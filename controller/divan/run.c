/* SPDX-License-Identifier: MIT */
/*
 * Running a divan binary (divan.h says how each instrument measures): its
 * list, and each instance alone in fresh processes of it.
 *
 *   list       NEXTEST=1 BIN --list --format terse, then BIN --test (each
 *              benchmark once): its tree's "t=N" rows give the thread counts
 *   calibrate  BIN --bench --exact PATH --sample-count 1: divan's own
 *              sample size and time per iteration (its table)
 *   walltime   BIN --bench --exact PATH --sample-size M --sample-count N,
 *              traced: each sample from sync_impl(.., true)'s return to
 *              sync_impl(.., false)'s entry, bounded by benchtrap's clock;
 *              on T threads, a round from the first start to the last end
 *   callgrind  under valgrind twice, samples of 1 and of 2 iterations: the
 *              difference of their last samples' instructions
 *   memory     traced, stopped at sync_impl and the allocators: what a
 *              sample's threads allocate inside it, over its iterations
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf.h"
#include "measure/allocs.h"
#include "measure/driver-env.h"
#include "measure/failure.h"
#include "measure/sides.h"
#include "measure/valgrind.h"
#include "trace/trace.h"
#include "util/launch.h"
#include "util/strutil.h"
#include "divan/divan.h"

const char *const divan_reserved[] = {
	"--list", "--format", "--test",	       "--exact",	    "--skip", "--ignored",
	"--include-ignored",  "--sample-size", "--threads", "--color", NULL,
};

/* divan 0.1's options that take a value (its cli.rs). */
const char *const divan_valued[] = {
	"--color",	 "--skip",	  "--sort",	   "--sortr",	     "--timer",
	"--sample-count", "--sample-size", "--threads",	   "--min-time",     "--max-time",
	"--skip-ext-time?", "--items-count", "--bytes-count", "--bytes-format", "--chars-count",
	"--cycles-count", "--format",	   NULL,
};

/* The sample barrier, found once for every instance of a run. */
struct sync {
	uint64_t addr, size;
	char *name; /* valgrind's */
};

static int find_sync(const struct elf_file *ef, const char *object, void **ret)
{
	struct sync *y = calloc(1, sizeof(*y));

	(void)object;
	if (y && !divan_sync_fn(ef, &y->addr, &y->size, &y->name)) {
		free(y);
		return -ENOENT;
	}
	*ret = y;
	return y ? 0 : -ENOMEM;
}

static void free_sync(void *data)
{
	struct sync *y = data;

	free(y->name);
	free(y);
}

/* What every cell of the row finds first: the sample barrier. */
#define DIVAN_CELL                                                                            \
	.tag = "divan", .find = find_sync, .release = free_sync,                              \
	.sought = "divan's sample barrier (divan::benchmark::BenchContext::sample_recorder::" \
		  "...::sync_impl)"

static char *list_said(const char *errpath, const char *outpath)
{
	(void)outpath;
	return own_said_rust(errpath);
}

/* The command line of one process of instance s: the binary, the
 * selection, its thread count (one_thread: 1, whatever it is),
 * benchtrap's options and then the user's (divan refuses an option given
 * twice: one the user gave is kept instead). */
static int instance_argv(const struct measure_target *t, const struct bench_spec *s,
			 const char *mode, const char *const *opts, bool one_thread, char ***argv)
{
	unsigned threads = 0;
	char *path = divan_instance_path(s->name, &threads);
	size_t na = 0;
	int r = path ? 0 : -ENOMEM;

	r |= measure_env_push(argv, &na, strdup(t->argv[0]));
	r |= measure_env_push(argv, &na, strdup(mode));
	r |= measure_env_push(argv, &na, strdup("--exact"));
	r |= measure_env_push(argv, &na, path);
	r |= measure_env_push(argv, &na, strdup("--color=never"));
	if (threads || one_thread)
		r |= measure_env_push(argv, &na, str_fmt("--threads=%u", one_thread ? 1 : threads));
	for (size_t i = 0; opts && opts[i]; i++) {
		size_t l = strcspn(opts[i], "=");
		char *flag = strndup(opts[i], l);

		if (!flag || !own_has_arg(t->argv, flag))
			r |= measure_env_push(argv, &na, strdup(opts[i]));
		free(flag);
	}
	for (size_t i = 1; t->argv[i]; i++)
		r |= measure_env_push(argv, &na, strdup(t->argv[i]));
	return r ? -ENOMEM : 0;
}

/* ---- the list ------------------------------------------------------------ */

static int list_argv(const struct suite_ctx *c, const char *dir, char ***argv, char ***envp)
{
	const char *const words[] = { c->t->argv[0], "--list", "--format", "terse" };
	size_t na = 0;
	int r = 0;

	(void)dir;
	for (size_t i = 0; i < 4; i++)
		r |= measure_env_push(argv, &na, strdup(words[i]));
	/* divan gives its terse list only to cargo-nextest. */
	*envp = measure_env_with("NEXTEST=1", c->t->clean_env);
	return r || !*envp ? -ENOMEM : 0;
}

/*
 * The instances of the paths listed: each path that runs on several thread
 * counts once for each ("PATH/threads:N"). The counts are known once a
 * benchmark runs: --test --exact PATH runs it once, in a process of its
 * own; one that fails it is listed as it is (its run says what happened).
 */
static int list_threads(const struct suite_ctx *c, struct own_list *q, char ***names, size_t *n,
			char **ret_error)
{
	char *argv[] = { (char *)c->t->argv[0], "--test", "--color=never", "--exact", NULL, NULL };
	char *text = NULL, *why = NULL;
	struct strv out = { 0 };
	size_t len = 0;
	int r = 0;

	(void)ret_error;
	q->argv = argv;
	q->envp = NULL;
	q->asked = "--test --exact";
	for (size_t i = 0; r == 0 && i < *n; i++) {
		unsigned counts[64];
		size_t nc = 0;

		argv[4] = (*names)[i];
		if (own_capture(q, &text, &len, &why) == 0)
			nc = divan_thread_counts(text, len, counts, 64);
		for (size_t k = 0; r == 0 && k < nc; k++)
			r = strv_push(&out, str_fmt("%s/threads:%u", argv[4], counts[k]));
		if (r == 0 && !nc)
			r = strv_push(&out, strdup(argv[4]));
		free(text);
		free(why);
		text = why = NULL;
	}
	for (size_t i = 0; r == 0 && i < out.n; i++)
		r = out.v[i] ? 0 : -ENOMEM;
	if (r == 0 && !out.v)
		r = (out.v = calloc(1, sizeof(*out.v))) ? 0 : -ENOMEM;
	if (r < 0) {
		strv_clear(&out);
		return r;
	}
	str_free_n(*names, *n);
	*names = out.v;
	*n = out.n;
	return 0;
}

int divan_list(const struct suite_ctx *c, char ***ret_names, size_t *ret_n, char **ret_error)
{
	static const struct own_lister l = { .tag = "divan",
					     .asked = "--list --format terse",
					     .noun = "benchmark path",
					     .argv = list_argv,
					     .said = list_said,
					     .parse = divan_parse_terse,
					     .then = list_threads };

	return own_list(&l, c, ret_names, ret_n, ret_error);
}

int divan_spec(const struct suite_ctx *c, const char *name, struct bench_spec *ret)
{
	uint64_t addr = 0;
	char *fn = NULL;

	return divan_sync_fn(c->ef, &addr, NULL, &fn) && fn ? own_spec(c, name, fn, addr, ret)
							    : -ENOMEM;
}

/* ---- walltime ------------------------------------------------------------- */

/* One instance's samples: their iterations and how many. */
struct shape {
	uint64_t size, count;
};

/* How long a sample is made to last at least: divan's own, a few µs, is
 * mostly the clock's two reads and a VM's jitter. */
#define SAMPLE_NS 1000000

/*
 * divan's own choice for instance s, asked of a plain child: its sample
 * size, grown so that a sample lasts SAMPLE_NS, and the count that fills
 * the plan's time (10 at least, --max-samples at most). A child that
 * fails leaves *ret 0: the traced run says what happened. 0 or -ENOMEM.
 */
static int calibrate(const struct own_run *run, const struct bench_spec *s,
		     struct bench_result *res, struct shape *ret)
{
	const struct measure_plan *plan = run->plan;
	const char *const opts[] = { "--sample-count=1", NULL };
	char **argv = NULL, *text = NULL, *err = NULL;
	size_t len = 0;
	uint64_t samples = 0, iters = 0, per = SAMPLE_NS;
	double median = 0;
	int r = instance_argv(run->t, s, "--bench", opts, false, &argv);

	if (r < 0)
		return r;
	r = own_capture(&(struct own_list){ .t = run->t,
					    .argv = argv,
					    .dir = run->dir,
					    .asked = "--bench --sample-count 1",
					    .timeout_ns = plan->timeout_ns,
					    .said = list_said },
			&text, &len, &err);
	if (r == 0 && divan_parse_row(text, len, &median, &samples, &iters) < 0) {
		own_fail_unrun(res, s->name, "--exact", NULL);
	} else if (r < 0) {
		free(err);
		r = r == -ENOMEM ? r : 0;
	} else {
		ret->size = iters / samples;
		if (median > 0 && (double)ret->size * median < (double)per)
			ret->size = (uint64_t)ceil((double)per / median);
		ret->count = plan->time_ns / per;
		if (ret->count < 10)
			ret->count = 10;
		if (plan->max_samples && ret->count > plan->max_samples)
			ret->count = plan->max_samples;
	}
	measure_env_free(argv);
	free(text);
	return r;
}

static int walltime_argv(const struct own_run *run, const struct bench_spec *s,
			 const struct measure_plan *plan, void *ctx, char ***argv)
{
	const struct shape *sh = ctx;
	char *size = str_fmt("--sample-size=%" PRIu64, sh->size);
	char *count = str_fmt("--sample-count=%" PRIu64,
			      run->plan->time_ns ? sh->count * plan->time_ns / run->plan->time_ns
						 : sh->count);
	const char *const opts[] = { size, count, "--min-time=0", NULL };
	/* No size: the calibration failed, and this run says how. */
	int r = size && count ? instance_argv(run->t, s, "--bench", sh->size ? opts : NULL, false,
					      argv)
			      : -ENOMEM;

	free(size);
	free(count);
	return r;
}

/*
 * The samples: each round of the instance's threads (one window each, the
 * threads told apart by the calls) over its iterations. On several
 * threads, from the last start to the first end: divan's threads leave a
 * barrier together at the start and meet at one after the end, and the
 * child stops whole at each thread's end trap, so what lies past the first
 * end is the others waiting for the controller (bracket_batch_spans).
 */
static int walltime_samples(const struct own_run *run, const struct bench_spec *s, void *ctx,
			    struct own_batches *b, struct bench_result *res, double **ret,
			    size_t *ret_n)
{
	const struct shape *sh = ctx;
	const struct bracket_call *calls = b->calls;
	size_t n = b->n;
	pid_t tids[64];
	unsigned threads = 0;
	uint64_t *spans = calloc(n + 1, sizeof(*spans));
	double *v = calloc(n + 1, sizeof(*v));

	(void)run;
	if (!spans || !v) {
		free(spans);
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned k = 0;

		while (k < threads && tids[k] != calls[i].tid)
			k++;
		if (k == threads && threads < 64)
			tids[threads++] = calls[i].tid;
	}
	if (!sh->size) {
		bench_result_fail(res, str_fmt("divan's own run of '%s' failed, and a traced one "
					       "did not",
					       s->name));
		free(spans);
		free(v);
		return 0;
	}
	if (!n || bracket_batch_spans(calls, n, threads, threads > 1, spans) < 0) {
		if (n)
			bench_result_fail(res, str_fmt("the %zu samples of '%s' are not %u per "
						       "round (one per thread)",
						       n, s->name, threads));
		else
			own_fail_unrun(res, s->name, "--exact", NULL);
		free(spans);
		free(v);
		return 0;
	}
	*ret_n = n / threads;
	for (size_t k = 0; k < *ret_n; k++)
		v[k] = (double)spans[k] / (double)sh->size;
	res->iterations = sh->size;
	free(spans);
	*ret = v;
	return 0;
}

/* A round of instance s ends with one sample of each of its threads. */
static unsigned round_calls(const struct bench_spec *s)
{
	unsigned threads = 0;

	free(divan_instance_path(s->name, &threads));
	return threads ? threads : 1;
}

static const struct own_bracketed bracketed = {
	.argv = walltime_argv,
	.threads = round_calls,
	.said = own_said_rust,
	.samples = walltime_samples,
	.pair_processes = 12,
	.pair_samples = 20,
};

static struct bracket_fn sync_fn(const struct own_run *run, const struct bench_spec *s)
{
	const struct sync *y = run->data;

	return (struct bracket_fn){ .object = s->object,
				    .link_addr = y->addr,
				    .role = BRACKET_TOGGLE,
				    .size = y->size,
				    .arg = 1 };
}

static int walltime_one(const struct own_run *run, const struct bench_spec *s,
			struct bench_result *res)
{
	struct shape sh = { 0 };
	struct bracket_fn fn = sync_fn(run, s);
	int r = calibrate(run, s, res, &sh);

	if (r < 0 || res->status == BENCH_FAILED)
		return r;
	return own_bracket_one(&bracketed, run, s, &fn, 1, &sh, res);
}

/* Both builds' samples alike: base's size and count. */
static int walltime_pair(const struct own_run *const run[2], const struct bench_spec *const s[2],
			 struct bench_result *const res[2])
{
	struct shape sh = { 0 };
	struct bracket_fn fn[2] = { sync_fn(run[0], s[0]), sync_fn(run[1], s[1]) };
	const struct bracket_fn *const fns[2] = { &fn[0], &fn[1] };
	const size_t nfns[2] = { 1, 1 };
	int r = calibrate(run[0], s[0], res[0], &sh);

	if (r < 0 || res[0]->status == BENCH_FAILED)
		return r;
	/* Base failed divan's own run: each build's traced run says how. */
	if (!sh.size) {
		r = walltime_one(run[0], s[0], res[0]);
		return r < 0 ? r : walltime_one(run[1], s[1], res[1]);
	}
	return own_bracket_pair(&bracketed, run, s, fns, nfns, (void *const[2]){ &sh, &sh }, res);
}

const struct own_cell divan_walltime_cell = { DIVAN_CELL, .one = walltime_one,
					      .pair = walltime_pair };

/* ---- callgrind, memory ------------------------------------------------------ */

/* An instance of several threads counted on one (one_thread) says so in
 * res: 0 or -ENOMEM. */
static int said_one_thread(const struct bench_spec *s, struct bench_result *res)
{
	unsigned threads = 0;
	char *path = divan_instance_path(s->name, &threads);

	if (!path)
		return -ENOMEM;
	free(path);
	return threads > 1 ? bench_result_diagnose(res, "counted on one thread: a count per "
							"iteration is a thread's")
			   : 0;
}

/* The profiles around sync_impl: 0 before it is entered, 1 after it
 * returns. */
static int dump_kind(const char *trigger)
{
	return !strncmp(trigger, "--dump-before=", 14) ? 0 : !strncmp(trigger, "--dump-after=", 13) ? 1 : -1;
}

/* The instructions of the last sample of a run of samples of 'size'
 * iterations (from a start's return to the next stop's entry: the profile
 * 4k+2 of the 4 each sample dumps) into *ret; 0 with res failed. */
static int callgrind_sample(const struct own_run *run, const struct bench_spec *s,
			    unsigned size, struct bench_result *res, uint64_t *ret)
{
	const struct sync *y = run->data;
	char *sz = str_fmt("--sample-size=%u", size), **argv = NULL;
	const char *const opts[] = { sz, "--sample-count=3", NULL };
	struct valgrind_dump v[64];
	size_t nv = 0;
	int r = sz ? instance_argv(run->t, s, "--bench", opts, true, &argv) : -ENOMEM;

	if (r == 0)
		r = own_callgrind(run,
				  &(struct own_valgrind){ .argv = argv,
							  .fns = (const char *const[]){ y->name },
							  .nfns = 1,
							  .kind = dump_kind,
							  .said = own_said_rust },
				  res, v, 64, &nv);
	if (r == 1 && (nv < 4 || nv % 4 || v[nv - 2].kind != 0 || v[nv - 3].kind != 1)) {
		if (nv)
			bench_result_fail(res, str_fmt("callgrind's %zu profiles around divan's "
						       "samples are not four a sample",
						       nv));
		else
			own_fail_unrun(res, s->name, "--exact", NULL);
		r = 0;
	}
	if (r == 1)
		*ret = v[nv - 2].ir;
	free(sz);
	measure_env_free(argv);
	return r;
}

static int callgrind_one(const struct own_run *run, const struct bench_spec *s,
			 struct bench_result *res)
{
	uint64_t w[2] = { 0, 0 };
	int r = 1;

	for (unsigned k = 0; r == 1 && k < 2; k++)
		r = callgrind_sample(run, s, k + 1, res, &w[k]);
	if (r <= 0)
		return r;
	/* A sample of 2 iterations less one of 1: one iteration, what a
	 * sample costs around its loop (the clock's two reads) cancelled. */
	own_result_ir(res, w[1] >= w[0] ? (double)(w[1] - w[0]) : 0, 1);
	return said_one_thread(s, res);
}

const struct own_cell divan_callgrind_cell = { DIVAN_CELL, .valgrind = true, .one = callgrind_one };

/* Samples of one iteration each, 8 of them: the figures are those of the
 * last MEM_LAST (what runs once, a first call's lazy set-up, is in the
 * first), so that the most live at once is an iteration's. */
#define MEM_SAMPLES 8
#define MEM_LAST 4

static int memory_one(const struct own_run *run, const struct bench_spec *s,
		      struct bench_result *res)
{
	const struct sync *y = run->data;
	const char *const opts[] = { "--sample-size=1", "--sample-count=8", NULL };
	const struct alloc_fn fn = { y->addr, BRACKET_TOGGLE, 1 };
	struct alloc_counts *calls = NULL;
	char **argv = NULL;
	size_t ncalls = 0;
	uint64_t peak = 0;
	double per[3] = { 0 };
	int r = instance_argv(run->t, s, "--bench", opts, true, &argv);

	if (r == 0)
		r = own_alloc_child(run, argv, NULL, &fn, 1, own_said_rust, res, &calls, &ncalls);
	if (r == 1 && ncalls < MEM_LAST) {
		if (ncalls)
			bench_result_fail(res, str_fmt("divan ran %zu sample(s) of '%s', not %d",
						       ncalls, s->name, MEM_SAMPLES));
		else
			own_fail_unrun(res, s->name, "--exact", NULL);
		r = 0;
	}
	/* Per iteration, as divan's AllocProfiler counts: the mean of the
	 * last samples, and the most any of them had live at once (divan's
	 * "max alloc"; it drops a benchmark's outputs after the sample). */
	for (size_t i = ncalls - MEM_LAST; r == 1 && i < ncalls; i++) {
		per[0] += (double)calls[i].bytes / MEM_LAST;
		per[1] += (double)calls[i].allocations / MEM_LAST;
		per[2] += (double)calls[i].frees / MEM_LAST;
		peak = calls[i].peak > peak ? calls[i].peak : peak;
	}
	if (r == 1) {
		own_result_memory(res, per, peak, 1);
		r = said_one_thread(s, res);
	}
	free(calls);
	measure_env_free(argv);
	return r;
}

const struct own_cell divan_memory_cell = { DIVAN_CELL, .one = memory_one };
