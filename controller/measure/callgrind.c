/* SPDX-License-Identifier: MIT */
/*
 * The callgrind instrument: exact instruction counts per call. Under
 * valgrind there is no ptrace, so nothing is injected; instead:
 *
 *   dynamic binary   the driver library (controller/driver/) is preloaded;
 *                    it replaces main and calls each selected function once
 *                    through benchtrap_driver_call(), which callgrind counts
 *                    (--toggle-collect) and dumps after (--dump-after): the
 *                    inclusive cost of that call arc is the benchmark's.
 *   static binary    nothing can be preloaded. A target-stub benchmark runs
 *                    through the stub's own BENCHTRAP_RUN=<name>, counted
 *                    with --toggle-collect=<its function>; a --symbol
 *                    function is counted over the program's own run.
 *
 * --isolation benchmark is the fork server (driven.h): one valgrind
 * process per run reaches main once, then forks a child per benchmark,
 * which calls it, dumps and exits:
 *
 *   spawn valgrind ─ loader, constructors ─ main ┬ fork ─ call ─ dump ─ exit
 *                                                ├ fork ─ call ─ dump ─ exit
 *                                                └ ...
 *
 * Each child starts from the state of a fresh process at main, for about
 * 10 ms instead of a valgrind start-up (0.2-0.4 s). A program with threads
 * at main (a pool a constructor made) cannot be forked whole: it gets a
 * fresh valgrind per benchmark, as under --isolation process, with a
 * diagnostic. Profiles are named by process (callgrind.out.<pid>.<n>), so
 * that a child's, or a process the benchmark forked, never overwrites
 * another's. docs/instruments.md explains why the counts are the same in
 * every run and every isolation (a fixed environment, ASLR off, lazy
 * binding done before main).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/atomic.h"
#include "util/fd.h"
#include "measure/measure-config.h"
#include "measure/callgrind.h"
#include "measure/driver-env.h"
#include "measure/driven.h"
#include "util/launch.h"
#include "util/strutil.h"
#include "measure/measure.h"
#include "measure/profile.h"
#include "measure/valgrind.h"

/* ---- finding valgrind and the driver ------------------------------------- */

char *callgrind_find_program(const char *prog)
{
	char path[PATH_MAX];

	return str_find_in_path(prog, path, sizeof(path)) == 0 ? strdup(path) : NULL;
}

/* ---- one valgrind process ------------------------------------------------ */

enum batch_mode {
	MODE_DRIVER,  /* the driver calls each function */
	MODE_STUB,    /* BENCHTRAP_RUN=<name>, toggled on its function */
	MODE_OWN_RUN, /* the program's own run, toggled on the function */
};

struct ctx {
	const struct measure_target *t;
	const struct measure_plan *plan;
	const struct measure_opts *opts;
	const struct measure_hooks *hooks;
	char *valgrind, *driver;
	char exe[PATH_MAX]; /* the binary's real path, for the driver */
	char dir[200]; /* temporary directory for profiles and logs, in $TMPDIR */
	/* The batch running now. */
	enum batch_mode mode;
	const struct bench_spec *specs;
	struct bench_result *results;
	size_t first;	  /* the batch's first benchmark */
	long threads;	  /* threads at main, when more than a fork copies */
	bool say_threads; /* say so: the fork server was asked for */
	bool profiling;	  /* --profile's pass: stacks, not counts */
};

static void emit(const struct measure_hooks *h, enum measure_event_kind kind, const char *name,
		 pid_t pid, uint64_t t)
{
	struct measure_event ev = { .kind = kind, .name = name, .pid = pid, .t_ns = t };

	measure_emit(h, &ev);
}

static void settled(void *ctx, size_t j, const struct driven_call *call);
static bool not_started(const struct ctx *c, const struct driven_outcome *o, char **ret_line);

/* Run valgrind over 'n' benchmarks in one process. */
static int run_valgrind(struct ctx *c, enum driven_mode dm, const struct bench_spec *const *specs,
			size_t n, struct driven_call *calls, struct driven_outcome *out,
			char **ret_error)
{
	char **argv = NULL, **extra = NULL;
	size_t na = 0, ne = 0;
	char *s;
	int r = 0;
	const char *sym = c->mode == MODE_DRIVER ? DRIVER_FUNCTION : specs[0]->symbol;

	launch_temp_dir_empty(c->dir);
	/* A profile after each call, but for a process that makes one call
	 * (a fork server's child, the program's own run): callgrind writes
	 * one when a process ends. */
	r = valgrind_callgrind_argv(&argv, &na, c->valgrind, c->dir, (const char *const[]){ sym },
				    1, c->mode != MODE_OWN_RUN && dm != DRIVEN_SERVE);
	if (c->opts->cache_sim && !c->profiling)
		r |= measure_env_push(&argv, &na, strdup("--cache-sim=yes"));
	/* --profile: each function context named by its callers (recursion
	 * shows in the chain, not as levels). */
	if (c->profiling) {
		if (asprintf(&s, "--separate-callers=%d", CALLGRIND_PROFILE_CALLERS) < 0)
			s = NULL;
		r |= measure_env_push(&argv, &na, s);
		r |= measure_env_push(&argv, &na, strdup("--separate-recs=1"));
	}
	/* A round's threads each in a part of their own (driver-protocol.h);
	 * only when there is one, so that other profiles keep their names. */
	for (size_t i = 0; i < n; i++) {
		if (specs[i]->threads > 1) {
			r |= measure_env_push(&argv, &na, strdup("--separate-threads=yes"));
			break;
		}
	}
	for (size_t i = 0; c->t->argv[i]; i++)
		r |= measure_env_push(&argv, &na, strdup(c->t->argv[i]));
	if (c->mode == MODE_STUB) {
		if (asprintf(&s, "BENCHTRAP_RUN=%s", specs[0]->name) < 0)
			s = NULL;
		r |= measure_env_push(&extra, &ne, s);
	}
	if (r) {
		r = -ENOMEM;
		*ret_error = strdup("out of memory");
		goto out;
	}

	struct driven_job job = {
		.t = c->t,
		.exec = c->valgrind,
		.argv = argv,
		.extra_env = extra,
		.dir = c->dir,
		.driver = c->driver,
		.exe = c->exe,
		.mode = dm,
		.specs = specs,
		.n = n,
		.timeout_ns = c->plan->timeout_ns,
		.hooks = c->hooks,
		.settled = settled,
		.ctx = c,
	};

	r = driven_run(&job, calls, out, ret_error);
out:
	measure_env_free(argv);
	measure_env_free(extra);
	return r;
}

/* ---- reporting ------------------------------------------------------------ */

/* What happened to a call that did not return, and valgrind's and the
 * program's own account of it. */
static char *describe(const struct ctx *c, const struct driven_call *call)
{
	char *msg = NULL, path[PATH_MAX];
	int st = call->status, r;

	if (call->killed)
		r = (msg = valgrind_timeout_words(c->plan->timeout_ns)) ? 0 : -1;
	else if (call->execd)
		r = (msg = driven_end_words(call)) ? 0 : -1;
	else if (call->server_running && WIFSIGNALED(st))
		r = asprintf(&msg, "its fork server (valgrind) was killed by SIG%s while it ran",
			     sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st)) : "?");
	else if (call->server_running)
		r = asprintf(&msg, "its fork server (valgrind) exited with status %d while it ran",
			     WEXITSTATUS(st));
	else if (call->server_died)
		r = asprintf(&msg, "not measured: valgrind's process for %s ended (%s %d) before "
				   "this benchmark did",
			     c->t->binary, WIFSIGNALED(st) ? "signal" : "status",
			     WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		r = (msg = valgrind_signal_words(WTERMSIG(st))) ? 0 : -1;
	else if (WIFEXITED(st) && WEXITSTATUS(st) == DRIVER_EXIT_ERROR)
		r = asprintf(&msg, "the driver library could not call it");
	else if (WIFEXITED(st))
		r = asprintf(&msg, "exited with status %d before the benchmark returned",
			     WEXITSTATUS(st));
	else
		r = asprintf(&msg, "valgrind ended with status %d", st);
	if (r < 0)
		return NULL;
	snprintf(path, sizeof(path), "%s/valgrind.log", c->dir);
	valgrind_log_append(&msg, path, 0, 0, call->pid ? call->pid : call->process);
	snprintf(path, sizeof(path), "%s/stderr", c->dir);
	valgrind_log_append(&msg, path, call->err_from, 5, 0);
	return msg;
}

static const char *event_name(const char *name)
{
	static const char *const known[] = { "Ir",   "Dr",   "Dw",   "I1mr", "D1mr", "D1mw",
					     "ILmr", "DLmr", "DLmw", "Bc",   "Bcm",  "Bi",
					     "Bim",  "Ge",   "sysCount", "sysTime" };

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(known[i], name))
			return known[i];
	return NULL;
}

/* The raw profile 'ctx' (a path in the private directory), for
 * atomic_write_in(). */
static int fill_copy(FILE *out, void *ctx)
{
	FILE *in = fopen(ctx, "re");
	char buf[65536];
	size_t k;
	int r = 0;

	if (!in)
		return -errno;
	while ((k = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, k, out) != k) {
			r = -ENOMEM;
			break;
		}
	if (r == 0 && ferror(in))
		r = -EIO;
	fclose(in);
	return r;
}

/* One part of a call's profile: what one thread did in one dump. */
struct part {
	char path[PATH_MAX];
	unsigned thread; /* valgrind's thread number; 0: threads not separated */
	struct callgrind_profile p;
};

static int by_thread(const void *a, const void *b)
{
	const struct part *x = a, *y = b;

	return (x->thread > y->thread) - (x->thread < y->thread);
}

/*
 * The parts of call's profile that hold calls of the benchmark, by thread
 * number (the order the driver created a round's threads in): the dumps
 * dump..dump+ndumps-1 of its process (dump 0: the one written when it
 * ended), each one file, or one per thread with --separate-threads=yes
 * (beside an empty one without a thread's number, which callgrind makes to
 * check that it can write). Returns 0 (*ret_n may be 0: no call was
 * counted) or -errno.
 */
static int read_parts(const struct ctx *c, pid_t pid, unsigned dump, unsigned ndumps,
		      const char *caller, const char *callee, struct part **ret, size_t *ret_n)
{
	DIR *d = opendir(c->dir);
	struct part *v = NULL, *plain = NULL;
	size_t n = 0, nplain = 0;
	struct dirent *e;
	int r = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		unsigned dn, tn;
		struct part *pt, **list;
		size_t *count;

		if (!callgrind_part_name(e->d_name, pid, &dn, &tn) ||
		    (dump ? dn < dump || dn >= dump + ndumps : dn != 0))
			continue;
		list = tn ? &v : &plain;
		count = tn ? &n : &nplain;
		pt = realloc(*list, (*count + 1) * sizeof(*pt));
		if (!pt) {
			r = -ENOMEM;
			break;
		}
		*list = pt;
		pt = &pt[(*count)++];
		snprintf(pt->path, sizeof(pt->path), "%s/%s", c->dir, e->d_name);
		pt->thread = tn;
	}
	closedir(d);
	if (r < 0)
		goto out;
	if (!n) {
		/* Threads not separated: the plain files are the parts. */
		v = plain;
		n = nplain;
		plain = NULL;
	}
	if (!n) {
		r = -ENOENT;
		goto out;
	}
	size_t kept = 0;

	for (size_t i = 0; i < n; i++) {
		r = callgrind_parse_file(v[i].path, caller, callee, &v[i].p);
		if (r < 0)
			goto out;
		if (v[i].p.calls)
			v[kept++] = v[i];
	}
	qsort(v, kept, sizeof(*v), by_thread);
	*ret = v;
	*ret_n = kept;
	v = NULL;
out:
	free(v);
	free(plain);
	return r;
}

/* Keep the parts' profiles in --keep-profiles: NNN-<name>.callgrind, or
 * for a round NNN-<name>.callgrind-01, -02... a thread each (the suffix
 * KCachegrind loads together); the result names the first. */
static void keep(const struct ctx *c, struct bench_result *res, size_t index,
		 const struct part *parts, size_t n)
{
	char name[128], base[MEASURE_PROFILE_PATH];
	size_t k = 0;

	for (const char *q = res->spec->name; *q && k < 64; q++)
		name[k++] = (strchr("/\\ \t\n'\"*?", *q) || (unsigned char)*q < 32) ? '_' : *q;
	name[k] = '\0';
	/* Room for "-NN" within MEASURE_PROFILE_PATH (the directory's path
	 * is shorter by 100, measure_callgrind). */
	snprintf(base, sizeof(base) - 8, "%s/%03zu-%s.callgrind", c->opts->keep_profiles, index,
		 name);
	for (size_t i = 0; i < n; i++) {
		char path[MEASURE_PROFILE_PATH + 32];
		int r;

		if (n == 1)
			snprintf(path, sizeof(path), "%s", base);
		else
			snprintf(path, sizeof(path), "%s-%02zu", base, i + 1);
		r = atomic_write_in(c->opts->keep_profiles,
				    path + strlen(c->opts->keep_profiles) + 1, fill_copy,
				    (char *)parts[i].path);
		if (r < 0) {
			bench_result_diagnose(res, "cannot keep the profile in %s: %s", path,
					      atomic_strerror(r));
			bench_result_unwritten(res, path, r);
			res->profile[0] = '\0';
			return;
		}
		if (i == 0 && strlen(path) < sizeof(res->profile))
			strcpy(res->profile, path);
	}
}

/* Each thread's own count per call, for a round: named by the tids the
 * driver said, in the order it created the threads, which is valgrind's
 * order of their thread numbers (driver-protocol.h). */
static void per_thread(struct bench_result *res, const struct driven_call *call,
		       const struct part *parts, size_t n, int ir)
{
	bool named = call->nthreads == n;

	res->threads = calloc(n, sizeof(*res->threads));
	if (!res->threads)
		return;
	res->nthreads = n;
	for (size_t k = 0; k < n; k++) {
		res->threads[k].tid = named ? call->threads[k].tid : (pid_t)parts[k].thread;
		res->threads[k].value = (double)parts[k].p.inclusive[ir] / (double)parts[k].p.calls;
	}
	if (!named)
		bench_result_diagnose(res,
				      "threads are named by valgrind's thread numbers: the driver "
				      "named %zu of the %zu threads that counted a call",
				      call->nthreads, n);
}

/* Fill an ok result from the profile of call, summed over its parts (the
 * threads of a round), or say why it cannot be. */
static void finish(struct ctx *c, struct bench_result *res, const struct driven_call *call,
		   size_t index, const char *caller, const char *callee)
{
	const struct bench_spec *spec = res->spec;
	unsigned ndumps = spec->threads > 1 ? spec->threads : 1;
	struct part *parts = NULL;
	struct callgrind_profile p = { 0 };
	size_t n = 0;
	int ir = -1, r;

	r = read_parts(c, call->pid, c->mode == MODE_OWN_RUN ? 0 : call->dump, ndumps, caller,
		       callee, &parts, &n);
	if (r == 0 && n) {
		/* Summed over the threads, event by event. */
		p = parts[0].p;
		for (size_t k = 1; k < n && r == 0; k++) {
			if (parts[k].p.nevents != p.nevents) {
				r = -EINVAL;
				break;
			}
			for (size_t e = 0; e < p.nevents; e++) {
				if (strcmp(parts[k].p.events[e], p.events[e]) != 0)
					r = -EINVAL;
				p.inclusive[e] += parts[k].p.inclusive[e];
			}
			p.calls += parts[k].p.calls;
		}
		ir = callgrind_event_index(&p, "Ir");
	}
	if (r < 0 || (n && ir < 0)) {
		res->status = BENCH_FAILED;
		if (asprintf(&res->error, "cannot read the callgrind profile: %s",
			     strerror(r < 0 ? -r : EINVAL)) < 0)
			res->error = NULL;
		goto out;
	}
	if (p.calls == 0) {
		res->status = BENCH_FAILED;
		res->error = strdup(callee && !caller ?
					    "the program's own run never called it" :
					    "callgrind recorded no call of the benchmark");
		goto out;
	}
	res->calls = p.calls;
	res->iterations = p.calls;
	res->ncounters = 0;
	/* Ir first, then the others in the profile's order; per call, over
	 * every thread's calls. */
	res->counters[res->ncounters++] =
		(struct measure_counter){ "Ir", (double)p.inclusive[ir] / (double)p.calls };
	for (size_t i = 0; i < p.nevents && res->ncounters < MEASURE_MAX_COUNTERS; i++) {
		const char *name = event_name(p.events[i]);

		if (name && (int)i != ir)
			res->counters[res->ncounters++] = (struct measure_counter){
				name, (double)p.inclusive[i] / (double)p.calls
			};
	}
	measure_result_count(res, res->counters[0].value);
	if (res->status != BENCH_OK)
		goto out;
	if (spec->threads > 1)
		per_thread(res, call, parts, n, ir);
	res->no_time = res->value < MEASURE_MIN_INSTRUCTIONS;
	if (res->no_time)
		bench_result_diagnose(res,
				      "measured no execution time: %.0f instructions per call, no "
				      "more than a function that only returns (%s)",
				      res->value, measure_no_time_advice(res->spec));
	if (c->opts->keep_profiles)
		keep(c, res, index, parts, n);
out:
	free(parts);
}

static void fail(struct bench_result *res, char *why)
{
	res->status = BENCH_FAILED;
	res->error = why ? why : strdup("failed under valgrind");
}

/* The profiling pass's call is settled: its stacks from its profile into
 * DIR, or why there are none. */
static void profile_settled(struct ctx *c, struct bench_result *res, const struct bench_spec *spec,
			    const struct driven_call *call)
{
	struct folded stacks = { 0 };
	char *why = NULL;
	DIR *d;
	struct dirent *e;
	int r = 0;

	if (!call->returned || call->killed) {
		why = describe(c, call);
		bench_result_diagnose(res, "not profiled: %s", why ? why : "failed under valgrind");
		free(why);
		return;
	}
	d = opendir(c->dir);
	if (!d) {
		bench_result_diagnose(res, "not profiled: %s", strerror(errno));
		return;
	}
	while (r == 0 && (e = readdir(d))) {
		char path[PATH_MAX];
		unsigned dn, tn;
		FILE *f;

		if (!callgrind_part_name(e->d_name, call->pid, &dn, &tn) ||
		    (c->mode != MODE_OWN_RUN && dn != call->dump) ||
		    (c->mode == MODE_OWN_RUN && dn != 0))
			continue;
		snprintf(path, sizeof(path), "%s/%s", c->dir, e->d_name);
		f = fopen(path, "re");
		if (!f) {
			r = -errno;
			break;
		}
		r = callgrind_folded(f, spec->symbol, CALLGRIND_PROFILE_CALLERS, &stacks);
		fclose(f);
	}
	closedir(d);
	if (r < 0)
		bench_result_diagnose(res, "not profiled: cannot read the callgrind profile: %s",
				      strerror(-r));
	else if (stacks.total == 0)
		bench_result_diagnose(res,
				      "not profiled: callgrind's profile has no cost under "
				      "%s",
				      spec->symbol);
	else
		measure_profile_write(&stacks, c->opts->profile, c->first, "instructions", res);
	folded_free(&stacks);
}

/* Call j of the batch is settled: its result from its profile, or what
 * happened to it. */
static void settled(void *ctx, size_t j, const struct driven_call *call)
{
	struct ctx *c = ctx;
	struct bench_result *res = &c->results[c->first + j];
	const struct bench_spec *spec = &c->specs[c->first + j];

	if (c->profiling) {
		profile_settled(c, res, spec, call);
		return;
	}
	res->pid = call->pid;
	res->t_ready_ns = res->t_start_ns;
	/* Returned, but killed before its profile was written: timed out. */
	if (call->returned && !call->killed) {
		finish(c, res, call, c->first + j, c->mode == MODE_DRIVER ? DRIVER_FUNCTION : NULL,
		       c->mode == MODE_DRIVER ? NULL : spec->symbol);
		if (c->mode == MODE_OWN_RUN && res->status == BENCH_OK)
			bench_result_diagnose(res,
					      "%s is a static binary: benchtrap's driver cannot be "
					      "preloaded into it, so this counts the %" PRIu64
					      " call(s) its own run made",
					      c->t->binary, res->calls);
	} else {
		fail(res, describe(c, call));
	}
	if (c->threads > 1 && c->say_threads)
		bench_result_diagnose(res,
				      "ran in a fresh valgrind process: %ld threads when main "
				      "starts (a pool a constructor made?), which a fork would not "
				      "copy",
				      c->threads);
	res->t_first_sample_ns = res->t_end_ns = call->t_end_ns;
	/* Valgrind that could not start the program at all fails the run as
	 * a whole (measure_callgrind): none of the first batch ended. */
	struct driven_outcome o = { .status = call->status, .timed_out = call->killed };

	if (c->first == 0 && !call->returned && not_started(c, &o, NULL))
		return;
	measure_emit_end(c->hooks, res, call->pid, res->t_end_ns);
}

/*
 * --profile: after every benchmark was counted, each one counted ok runs
 * again in a valgrind process of its own with its function contexts
 * separated by callers (callgrind_folded), its counts left as they were.
 */
static bool is_stub(const struct bench_spec *s);

static void profile_pass(struct ctx *c, const struct bench_spec *specs, size_t n,
			 struct bench_result *results)
{
	const struct measure_hooks *hooks = c->hooks;

	c->profiling = true;
	c->hooks = NULL; /* no markers: nothing of it is a measurement */
	for (size_t i = 0; i < n; i++) {
		const struct bench_spec *batch[1] = { &specs[i] };
		struct driven_call call = { 0 };
		struct driven_outcome o;
		char *why = NULL;

		if (results[i].status != BENCH_OK)
			continue;
		if (!specs[i].symbol) {
			bench_result_diagnose(&results[i], "not profiled: the function has no "
							   "symbol callgrind could name");
			continue;
		}
		if (specs[i].threads > 1) {
			bench_result_diagnose(&results[i], "not profiled: --profile samples "
							   "benchmarks on one thread only");
			continue;
		}
		c->first = i;
		c->mode = c->opts->static_binary ? (is_stub(&specs[i]) ? MODE_STUB : MODE_OWN_RUN)
						 : MODE_DRIVER;
		if (run_valgrind(c, c->opts->static_binary ? DRIVEN_OWN : DRIVEN_SERVE, batch, 1,
				 &call, &o, &why) < 0 ||
		    !call.settled)
			bench_result_diagnose(&results[i], "not profiled: %s",
					      why ? why : "valgrind's process ended before it ran");
		free(why);
	}
	c->hooks = hooks;
	c->profiling = false;
}

/* True when valgrind could not start the program at all (its launcher
 * complained, nothing ran): bad input rather than a failed benchmark.
 * *ret_line (unless ret_line is NULL): what the launcher said. */
static bool not_started(const struct ctx *c, const struct driven_outcome *o, char **ret_line)
{
	char path[PATH_MAX];

	if (o->timed_out || !WIFEXITED(o->status) || WEXITSTATUS(o->status) == 0)
		return false;
	snprintf(path, sizeof(path), "%s/stderr", c->dir);
	return valgrind_launcher_line(path, ret_line);
}

/* A benchmark registered with target-stub (its display name is not its
 * function's name), which the stub's BENCHTRAP_RUN can run. */
static bool is_stub(const struct bench_spec *s)
{
	return s->in_main && s->symbol && !strncmp(s->symbol, "benchtrap_bench_", 16) &&
	       strcmp(s->symbol, s->name) != 0;
}

int measure_callgrind(const struct measure_target *t, const struct bench_spec *specs, size_t n,
		      const struct measure_plan *plan, enum measure_isolation iso,
		      const struct measure_opts *opts, const struct measure_hooks *hooks,
		      struct bench_result *results, char **ret_error)
{
	struct ctx c = { .t = t, .plan = plan, .opts = opts, .hooks = hooks,
			 .say_threads = iso == MEASURE_ISOLATION_BENCHMARK };
	const struct bench_spec **batch = NULL;
	struct driven_call *calls = NULL;
	int r = 0;

	c.valgrind = callgrind_find_program("valgrind");
	if (!c.valgrind) {
		*ret_error = strdup("valgrind is not installed: the callgrind instrument needs it "
				    "(apt install valgrind), or use --instrument walltime");
		return -ENOENT;
	}
	if (!opts->static_binary) {
		c.driver = measure_find_driver(MEASURE_DRIVER);
		if (!c.driver) {
			if (asprintf(ret_error,
				     "cannot find benchtrap's driver library (libbenchtrap-driver.so "
				     "in %s, or set BENCHTRAP_DRIVER_LIB)",
				     BENCHTRAP_DRIVER_INSTALL_DIR) < 0)
				*ret_error = NULL;
			r = -ENOENT;
			goto out;
		}
	} else {
		for (size_t i = 0; i < n; i++) {
			if (specs[i].threads > 1) {
				if (asprintf(ret_error,
					     "%s is a static binary: benchtrap's driver cannot be "
					     "preloaded into it, so '%s' cannot run on %u threads "
					     "under callgrind (link it dynamically, or use "
					     "--instrument walltime)",
					     t->binary, specs[i].name, specs[i].threads) < 0)
					*ret_error = NULL;
				r = -EINVAL;
				goto out;
			}
			if (specs[i].nargs && !is_stub(&specs[i])) {
				if (asprintf(ret_error,
					     "%s is a static binary: benchtrap's driver cannot be "
					     "preloaded into it, so '%s' can only be counted over "
					     "the program's own run, without arguments",
					     t->binary, specs[i].name) < 0)
					*ret_error = NULL;
				r = -EINVAL;
				goto out;
			}
		}
	}
	if (!realpath(t->binary, c.exe)) {
		r = -errno;
		if (asprintf(ret_error, "%s: %s", t->binary, strerror(-r)) < 0)
			*ret_error = NULL;
		goto out;
	}
	if (opts->keep_profiles && strlen(opts->keep_profiles) > MEASURE_PROFILE_PATH - 100) {
		*ret_error = strdup("the --keep-profiles directory's path is too long");
		r = -ENAMETOOLONG;
		goto out;
	}
	/* $TMPDIR, as mkstemp users do, else /tmp. */
	const char *tmpdir = getenv("TMPDIR");

	if (!tmpdir || tmpdir[0] != '/')
		tmpdir = "/tmp";
	if (snprintf(c.dir, sizeof(c.dir), "%s/benchtrap-callgrind.XXXXXX", tmpdir) >=
	    (int)sizeof(c.dir))
		r = -ENAMETOOLONG;
	else
		r = launch_temp_dir(c.dir);
	if (r < 0) {
		if (asprintf(ret_error, "cannot create a temporary directory: %s", strerror(-r)) < 0)
			*ret_error = NULL;
		c.dir[0] = '\0';
		goto out;
	}
	batch = calloc(n ? n : 1, sizeof(*batch));
	calls = calloc(n ? n : 1, sizeof(*calls));
	if (!batch || !calls) {
		r = -ENOMEM;
		*ret_error = strdup("out of memory");
		goto out;
	}

	c.specs = specs;
	c.results = results;
	for (size_t i = 0; i < n;) {
		enum driven_mode dm = DRIVEN_SERVE;
		size_t k = n - i;
		struct driven_outcome o;
		char *why = NULL;

		c.mode = MODE_DRIVER;
		c.first = i;
		if (opts->static_binary) {
			/* One process per benchmark: nothing can run a list. */
			c.mode = is_stub(&specs[i]) ? MODE_STUB : MODE_OWN_RUN;
			dm = DRIVEN_OWN;
			k = 1;
		} else if (iso == MEASURE_ISOLATION_SHARED) {
			dm = DRIVEN_CALL;
		} else if (iso == MEASURE_ISOLATION_PROCESS || c.threads > 1) {
			/* A server for one: its child starts from the same
			 * state as every fork server's child. */
			k = 1;
		}
		for (size_t j = 0; j < k; j++) {
			batch[j] = &specs[i + j];
			measure_result_begin(&results[i + j], &specs[i + j], "callgrind",
					     "instructions");
		}
		if (!specs[i].symbol && c.mode != MODE_DRIVER) {
			fail(&results[i], strdup("the function has no symbol: callgrind cannot "
						 "be told to count it in a static binary"));
			results[i].t_end_ns = measure_now_ns();
			emit(hooks, MEASURE_BENCH_START, specs[i].name, 0, results[i].t_start_ns);
			measure_emit_end(hooks, &results[i], 0, results[i].t_end_ns);
			i++;
			continue;
		}
		r = run_valgrind(&c, dm, batch, k, calls, &o, &why);
		if (r < 0) {
			for (size_t j = 0; j < k; j++)
				bench_result_clear(&results[i + j]);
			*ret_error = why;
			goto out;
		}
		if (i == 0 && !calls[0].returned && not_started(&c, &o, &why)) {
			char *msg;

			if (asprintf(&msg, "cannot run %s under valgrind: %s", t->binary, why) < 0)
				msg = NULL;
			free(why);
			for (size_t j = 0; j < k; j++)
				bench_result_clear(&results[i + j]);
			*ret_error = msg;
			r = -ENOEXEC;
			goto out;
		}
		if (dm == DRIVEN_SERVE && o.threads > 1 && !c.threads) {
			/* Measured in the server itself: now say why, and run
			 * the others in processes of their own. */
			c.threads = o.threads;
			if (calls[0].settled && c.say_threads)
				bench_result_diagnose(
					&results[i],
					"ran in a fresh valgrind process: %ld threads when main "
					"starts (a pool a constructor made?), which a fork would "
					"not copy",
					c.threads);
		}
		/* The calls no process reached run in a fresh one. */
		size_t done = 0;

		while (done < k && calls[done].settled)
			done++;
		if (!done) {
			fail(&results[i], strdup("valgrind's process ended before it ran"));
			measure_emit_end(hooks, &results[i], o.pid, measure_now_ns());
			done = 1;
		}
		i += done;
	}
	if (opts->profile)
		profile_pass(&c, specs, n, results);
out:
	if (c.dir[0])
		launch_temp_dir_remove(c.dir);
	free(batch);
	free(calls);
	free(c.valgrind);
	free(c.driver);
	return r;
}
