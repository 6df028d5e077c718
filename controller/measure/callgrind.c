/* SPDX-License-Identifier: MIT */
/*
 * The callgrind instrument: exact instruction counts per call, each
 * benchmark in its own fresh valgrind process. Under valgrind there is no
 * ptrace, so nothing is injected; instead:
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
 *   spawn valgrind ─ loader, constructors ─ call ─ dump N ─ ... ─ exit ─ parse dumps
 *
 * dump N exists only when the N-th call returned: a missing dump is a
 * benchmark that crashed, exited or hung, and under --isolation shared the
 * benchmarks after it get a fresh process. docs/instruments.md explains
 * why the counts are the same in every run (a fixed environment, ASLR off,
 * lazy binding done before main).
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

#include "util/fd.h"
#include "measure/measure-config.h"
#include "measure/callgrind.h"
#include "measure/driver-env.h"
#include "util/launch.h"
#include "util/strutil.h"
#include "measure/measure.h"


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
};

/* How a valgrind process ended. */
struct outcome {
	int status;	  /* from waitpid */
	bool timed_out;
	pid_t pid;
	size_t done;	  /* benchmarks that returned */
};

static void emit(const struct measure_hooks *h, enum measure_event_kind kind, const char *name,
		 pid_t pid, uint64_t t)
{
	struct measure_event ev = { .kind = kind, .name = name, .pid = pid, .t_ns = t };

	measure_emit(h, &ev);
}

static int wait_timeout(pid_t pid, uint64_t timeout_ns, int *ret_status, bool *ret_timed_out)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	uint64_t deadline = measure_now_ns() + timeout_ns;

	*ret_timed_out = false;
	while (pfd >= 0) {
		uint64_t now = measure_now_ns();
		struct pollfd p = { .fd = pfd, .events = POLLIN };
		int ms = now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);

		if (ms > 0 && poll(&p, 1, ms) < 0 && errno == EINTR)
			continue;
		if (p.revents & POLLIN)
			break;
		if (measure_now_ns() >= deadline) {
			kill(pid, SIGKILL);
			*ret_timed_out = true;
			break;
		}
	}
	fd_close(pfd);
	while (waitpid(pid, ret_status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* Count the numbered dumps: callgrind.out.1, .2, ... */
static size_t count_dumps(const char *dir, size_t max)
{
	size_t n = 0;

	while (n < max) {
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "%s/callgrind.out.%zu", dir, n + 1);
		if (access(p, R_OK) != 0)
			break;
		n++;
	}
	return n;
}

/* Run valgrind over 'n' benchmarks in one process. */
static int run_valgrind(struct ctx *c, enum batch_mode mode, const struct bench_spec *const *specs,
			size_t n, struct outcome *out, char **ret_error)
{
	char **argv = NULL, **env = NULL, **extra = NULL;
	size_t na = 0;
	char *s;
	int r = 0, donefd[2] = { -1, -1 }, err_fd = -1, devnull = -1, input = -1;
	const char *sym = mode == MODE_DRIVER ? DRIVER_FUNCTION : specs[0]->symbol;
	pid_t pid;

	launch_temp_dir_empty(c->dir);
	r |= measure_env_push(&argv, &na, strdup(c->valgrind));
	r |= measure_env_push(&argv, &na, strdup("--tool=callgrind"));
	if (asprintf(&s, "--log-file=%s/valgrind.log", c->dir) < 0)
		s = NULL;
	r |= measure_env_push(&argv, &na, s);
	if (asprintf(&s, "--callgrind-out-file=%s/callgrind.out", c->dir) < 0)
		s = NULL;
	r |= measure_env_push(&argv, &na, s);
	r |= measure_env_push(&argv, &na, strdup("--collect-atstart=no"));
	if (asprintf(&s, "--toggle-collect=%s", sym) < 0)
		s = NULL;
	r |= measure_env_push(&argv, &na, s);
	if (mode != MODE_OWN_RUN) {
		if (asprintf(&s, "--dump-after=%s", sym) < 0)
			s = NULL;
		r |= measure_env_push(&argv, &na, s);
	}
	if (c->opts->cache_sim)
		r |= measure_env_push(&argv, &na, strdup("--cache-sim=yes"));
	for (size_t i = 0; c->t->argv[i]; i++)
		r |= measure_env_push(&argv, &na, strdup(c->t->argv[i]));
	if (r)
		goto nomem;

	if (mode == MODE_DRIVER) {
		extra = measure_driver_env(specs, n, c->driver, c->exe);
		if (!extra)
			goto nomem;
	} else if (mode == MODE_STUB) {
		size_t ne = 0;

		if (asprintf(&s, "BENCHTRAP_RUN=%s", specs[0]->name) < 0 ||
		    measure_env_push(&extra, &ne, s) < 0)
			goto nomem;
	}
	env = measure_child_env((const char *const *)extra);
	if (!env)
		goto nomem;

	if (asprintf(&s, "%s/stderr", c->dir) < 0)
		goto nomem;
	err_fd = open(s, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	free(s);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	input = measure_open_input(c->t);
	if (input < 0) {
		r = input;
		input = -1;
		if (asprintf(ret_error, "cannot open the input %s: %s", c->t->input, strerror(-r)) <
		    0)
			*ret_error = NULL;
		goto out;
	}
	if (err_fd < 0 || devnull < 0 ||
	    pipe2(donefd, O_CLOEXEC | O_NONBLOCK) < 0) {
		r = -errno;
		if (asprintf(ret_error, "cannot set up a valgrind child: %s", strerror(-r)) < 0)
			*ret_error = NULL;
		goto out;
	}
	struct launch_opts lo;
	struct launch l;
	int exec_errno = 0;

	launch_opts_init(&lo, c->valgrind, argv);
	lo.envp = env;
	lo.aslr = c->t->aslr;
	lo.cpu = c->t->cpu;
	lo.stdio[0] = input;
	if (c->t->quiet_stdio) {
		lo.stdio[1] = devnull;
		lo.stdio[2] = err_fd;
	}
	/* The driver writes a byte here after each call returns. */
	if (mode == MODE_DRIVER) {
		lo.fds[0].from = donefd[1];
		lo.fds[0].to = DRIVER_DONE_FD;
		lo.nfds = 1;
	}
	/* A group of its own, so that whatever the target forks can be
	 * killed with it. */
	lo.process_group = true;
	r = launch_start(&lo, &l, &exec_errno);
	close(donefd[1]);
	donefd[1] = -1;
	if (r == -LAUNCH_E_EXEC) {
		r = -exec_errno;
		if (asprintf(ret_error, "cannot execute %s: %s", c->valgrind, strerror(exec_errno)) <
		    0)
			*ret_error = NULL;
		goto out;
	}
	if (r < 0) {
		if (asprintf(ret_error, "cannot start valgrind: %s", strerror(-r)) < 0)
			*ret_error = NULL;
		goto out;
	}
	pid = l.pid;
	*out = (struct outcome){ .pid = pid };
	r = wait_timeout(pid, c->plan->timeout_ns, &out->status, &out->timed_out);
	/* No process the target started may outlive it. */
	kill(-pid, SIGKILL);
	launch_forget(pid);
	launch_sweep();
	/*
	 * Which calls returned. Not the dumps: callgrind unwinds the stack of a
	 * dying process and so "leaves" the counted function even when it
	 * crashed. The driver says so itself; the stub and the program's own
	 * run are complete when the process exited with status 0.
	 */
	if (mode == MODE_DRIVER) {
		char buf[256];
		ssize_t k;

		while ((k = read(donefd[0], buf, sizeof(buf))) > 0)
			out->done += (size_t)k;
		if (out->done > n)
			out->done = n;
		if (count_dumps(c->dir, out->done) < out->done)
			out->done = count_dumps(c->dir, out->done);
	} else {
		out->done = !out->timed_out && WIFEXITED(out->status) &&
			    WEXITSTATUS(out->status) == 0;
	}
	goto out;
nomem:
	r = -ENOMEM;
	*ret_error = strdup("out of memory");
out:
	fd_close(devnull);
	fd_close(input);
	fd_close(donefd[0]);
	fd_close(donefd[1]);
	fd_close(err_fd);
	measure_env_free(argv);
	measure_env_free(env);
	measure_env_free(extra);
	return r;
}

/* ---- reporting ------------------------------------------------------------ */

/* Append the lines of 'path' worth reporting: valgrind's account of a
 * fatal signal (from "Process terminating" to the next blank line) and any
 * line valgrind itself wrote outside its log prefix; with 'all', every
 * line (the child's stderr, last 'all' lines). */
static void append_file(char **buf, const char *path, size_t all)
{
	FILE *f = fopen(path, "re");
	char *line = NULL, **keep = NULL;
	size_t cap = 0, nkeep = 0;
	bool in_fatal = false;
	ssize_t len;

	if (!f)
		return;
	while ((len = getline(&line, &cap, f)) >= 0) {
		char *text = line;

		line[strcspn(line, "\n")] = '\0';
		if (text[0] == '=' && text[1] == '=') {
			char *end = strstr(text + 2, "== ");

			if (end)
				text = end + 3;
			else if ((end = strstr(text + 2, "==")) && !end[2])
				text = end + 2;
		}
		if (!all) {
			if (strstr(text, "Process terminating"))
				in_fatal = true;
			else if (in_fatal && (!*text || strstr(text, "If you believe")))
				in_fatal = false;
			if (!in_fatal && strncmp(text, "valgrind:", 9) != 0)
				continue;
		}
		char **nk = realloc(keep, (nkeep + 1) * sizeof(*nk));

		if (!nk)
			break;
		keep = nk;
		keep[nkeep] = strdup(text);
		if (keep[nkeep])
			nkeep++;
	}
	for (size_t i = 0; i < nkeep; i++) {
		if (!all || i + all >= nkeep) {
			char *nb;

			if (asprintf(&nb, "%s\n  %s", *buf ? *buf : "", keep[i]) >= 0) {
				free(*buf);
				*buf = nb;
			}
		}
		free(keep[i]);
	}
	free(keep);
	free(line);
	fclose(f);
}

static char *describe(const struct ctx *c, const struct outcome *o, bool returned_none)
{
	char *msg = NULL, path[PATH_MAX];
	int r;

	if (o->timed_out)
		r = asprintf(&msg, "timed out after %" PRIu64 " ms under valgrind and was killed",
			     c->plan->timeout_ns / 1000000);
	else if (WIFSIGNALED(o->status))
		r = asprintf(&msg, "%s (%s) under valgrind", sigabbrev_np(WTERMSIG(o->status)) ?
			     sigabbrev_np(WTERMSIG(o->status)) : "signal",
			     strsignal(WTERMSIG(o->status)));
	else if (WIFEXITED(o->status) && WEXITSTATUS(o->status) == DRIVER_EXIT_ERROR)
		r = asprintf(&msg, "the driver library could not call it");
	else if (WIFEXITED(o->status) && returned_none)
		r = asprintf(&msg, "exited with status %d before the benchmark returned",
			     WEXITSTATUS(o->status));
	else
		r = asprintf(&msg, "valgrind ended with status %d", o->status);
	if (r < 0)
		return NULL;
	/* valgrind reports a fatal signal as "SIGSEGV": prefix the name. */
	if (WIFSIGNALED(o->status) && !o->timed_out) {
		char *nb;

		if (asprintf(&nb, "SIG%s", msg) >= 0) {
			free(msg);
			msg = nb;
		}
	}
	snprintf(path, sizeof(path), "%s/valgrind.log", c->dir);
	append_file(&msg, path, 0);
	snprintf(path, sizeof(path), "%s/stderr", c->dir);
	append_file(&msg, path, 5);
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

static int copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "re"), *out = in ? fopen(to, "we") : NULL;
	char buf[65536];
	size_t k;
	int r = 0;

	if (!in || !out) {
		r = -errno;
		goto out;
	}
	while ((k = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, k, out) != k) {
			r = -EIO;
			break;
		}
out:
	if (out && fclose(out) != 0 && r == 0)
		r = -errno;
	if (in)
		fclose(in);
	return r;
}

/* Fill an ok result from profile 'path'. */
static void finish(struct ctx *c, struct bench_result *res, const char *path, size_t index,
		   const char *caller, const char *callee)
{
	struct callgrind_profile p;
	int ir, r = callgrind_parse_file(path, caller, callee, &p);
	struct stats_options so = stats_options_default();

	if (r < 0 || (ir = callgrind_event_index(&p, "Ir")) < 0) {
		res->status = BENCH_FAILED;
		if (asprintf(&res->error, "cannot read the callgrind profile: %s",
			     strerror(r < 0 ? -r : EINVAL)) < 0)
			res->error = NULL;
		return;
	}
	if (p.calls == 0) {
		res->status = BENCH_FAILED;
		res->error = strdup(callee && !caller ?
					    "the program's own run never called it" :
					    "callgrind recorded no call of the benchmark");
		return;
	}
	res->calls = p.calls;
	res->iterations = p.calls;
	res->ncounters = 0;
	/* Ir first, then the others in the profile's order. */
	res->counters[res->ncounters++] =
		(struct measure_counter){ "Ir", (double)p.inclusive[ir] / (double)p.calls };
	for (size_t i = 0; i < p.nevents && res->ncounters < MEASURE_MAX_COUNTERS; i++) {
		const char *name = event_name(p.events[i]);

		if (name && (int)i != ir)
			res->counters[res->ncounters++] = (struct measure_counter){
				name, (double)p.inclusive[i] / (double)p.calls
			};
	}
	res->samples = malloc(sizeof(*res->samples));
	if (!res->samples) {
		res->status = BENCH_FAILED;
		res->error = strdup("out of memory");
		return;
	}
	res->samples[0] = res->counters[0].value;
	res->nsamples = 1;
	if (stats_summarize(res->samples, 1, &so, &res->stats) < 0) {
		res->status = BENCH_FAILED;
		res->error = strdup("no usable count");
		return;
	}
	res->status = BENCH_OK;
	res->value = res->counters[0].value;
	res->no_time = res->value < MEASURE_MIN_INSTRUCTIONS;
	if (res->no_time)
		bench_result_diagnose(res,
				      "measured no execution time: %.0f instructions per call, no "
				      "more than a function that only returns (%s)",
				      res->value, measure_no_time_advice(res->spec));
	if (c->opts->keep_profiles) {
		char name[128];
		size_t k = 0;

		for (const char *q = res->spec->name; *q && k < 64; q++)
			name[k++] = (strchr("/\\ \t\n'\"*?", *q) || (unsigned char)*q < 32) ? '_' :
											     *q;
		name[k] = '\0';
		snprintf(res->profile, sizeof(res->profile), "%s/%03zu-%s.callgrind",
			 c->opts->keep_profiles, index, name);
		r = copy_file(path, res->profile);
		if (r < 0) {
			bench_result_diagnose(res, "cannot keep the profile in %s: %s",
					      res->profile, strerror(-r));
			res->profile[0] = '\0';
		}
	}
}

static void fail(struct bench_result *res, char *why)
{
	res->status = BENCH_FAILED;
	res->error = why ? why : strdup("failed under valgrind");
}

/* True when valgrind could not start the program at all (its launcher
 * complained, nothing ran): bad input rather than a failed benchmark. */
static bool not_started(const struct ctx *c, const struct outcome *o, char **ret_line)
{
	char path[PATH_MAX], line[1024];
	FILE *f;
	bool found = false;

	if (o->timed_out || !WIFEXITED(o->status) || WEXITSTATUS(o->status) == 0)
		return false;
	snprintf(path, sizeof(path), "%s/stderr", c->dir);
	f = fopen(path, "re");
	while (f && !found && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "valgrind: ", 10)) {
			line[strcspn(line, "\n")] = '\0';
			*ret_line = strdup(line + 10);
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* A benchmark registered with target-stub (its display name is not its
 * function's name), which the stub's BENCHTRAP_RUN can run. */
static bool is_stub(const struct bench_spec *s)
{
	return s->in_main && s->symbol && !strncmp(s->symbol, "benchtrap_bench_", 16) &&
	       strcmp(s->symbol, s->name) != 0;
}

int measure_callgrind(const struct measure_target *t, const struct bench_spec *specs, size_t n,
		      const struct measure_plan *plan, bool isolate,
		      const struct measure_opts *opts, const struct measure_hooks *hooks,
		      struct bench_result *results, char **ret_error)
{
	struct ctx c = { .t = t, .plan = plan, .opts = opts, .hooks = hooks };
	const struct bench_spec **batch = NULL;
	int r = 0;

	c.valgrind = callgrind_find_program("valgrind");
	if (!c.valgrind) {
		*ret_error = strdup("valgrind is not installed: the callgrind instrument needs it "
				    "(apt install valgrind), or use --instrument walltime");
		return -ENOENT;
	}
	if (!opts->static_binary) {
		c.driver = measure_find_driver();
		if (!c.driver) {
			if (asprintf(ret_error,
				     "cannot find benchtrap's driver library (libbenchtrap-driver.so "
				     "in %s, or set BENCHTRAP_DRIVER_LIB)",
				     BENCHTRAP_DRIVER_INSTALL_PATH) < 0)
				*ret_error = NULL;
			r = -ENOENT;
			goto out;
		}
	} else {
		for (size_t i = 0; i < n; i++) {
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
	if (!batch) {
		r = -ENOMEM;
		*ret_error = strdup("out of memory");
		goto out;
	}

	for (size_t i = 0; i < n;) {
		enum batch_mode mode = MODE_DRIVER;
		size_t k = 1;
		struct outcome o;
		char *why = NULL;
		const char *caller = DRIVER_FUNCTION, *callee = NULL;

		if (opts->static_binary) {
			/* One process per benchmark: nothing can run a list. */
			mode = is_stub(&specs[i]) ? MODE_STUB : MODE_OWN_RUN;
			caller = NULL;
			callee = specs[i].symbol;
		} else if (!isolate) {
			k = n - i;
		}
		for (size_t j = 0; j < k; j++) {
			batch[j] = &specs[i + j];
			measure_result_begin(&results[i + j], &specs[i + j], "callgrind",
					     "instructions");
			if (isolate || j == 0)
				emit(hooks, MEASURE_BENCH_START, specs[i + j].name, 0,
				     results[i + j].t_start_ns);
		}
		if (!specs[i].symbol && mode != MODE_DRIVER) {
			fail(&results[i], strdup("the function has no symbol: callgrind cannot "
						 "be told to count it in a static binary"));
			results[i].t_end_ns = measure_now_ns();
			emit(hooks, MEASURE_BENCH_END, specs[i].name, 0, results[i].t_end_ns);
			i++;
			continue;
		}
		r = run_valgrind(&c, mode, batch, k, &o, &why);
		if (r < 0) {
			for (size_t j = 0; j < k; j++)
				bench_result_clear(&results[i + j]);
			*ret_error = why;
			goto out;
		}
		if (i == 0 && o.done == 0 && not_started(&c, &o, &why)) {
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

		uint64_t end = measure_now_ns();
		size_t done = o.done;

		for (size_t j = 0; j < k && j <= done; j++) {
			struct bench_result *res = &results[i + j];
			char path[PATH_MAX];

			res->pid = o.pid;
			res->t_ready_ns = res->t_start_ns;
			if (j < done) {
				if (mode == MODE_OWN_RUN)
					snprintf(path, sizeof(path), "%s/callgrind.out", c.dir);
				else
					snprintf(path, sizeof(path), "%s/callgrind.out.%zu", c.dir,
						 j + 1);
				finish(&c, res, path, i + j, caller, callee);
				if (mode == MODE_OWN_RUN && res->status == BENCH_OK)
					bench_result_diagnose(
						res,
						"%s is a static binary: benchtrap's driver cannot "
						"be preloaded into it, so this counts the %" PRIu64
						" call(s) its own run made",
						t->binary, res->calls);
			} else {
				fail(res, describe(&c, &o, true));
			}
			res->t_first_sample_ns = res->t_end_ns = end;
			emit(hooks, MEASURE_BENCH_END, specs[i + j].name, o.pid, end);
			if (!isolate && j + 1 < k && j + 1 <= done)
				emit(hooks, MEASURE_BENCH_START, specs[i + j + 1].name, 0, end);
		}
		/* Under shared isolation the benchmarks after a failed one get a
		 * fresh process. */
		i += done < k ? done + 1 : k;
	}
out:
	if (c.dir[0])
		launch_temp_dir_remove(c.dir);
	free(batch);
	free(c.valgrind);
	free(c.driver);
	return r;
}
