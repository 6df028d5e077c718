/* SPDX-License-Identifier: MIT */
/*
 * The perf instrument: user-space instructions and cycles per call from the
 * CPU's hardware counters (perf_event_open). The target runs with the
 * driver library preloaded (as under callgrind, but natively): the driver
 * opens the counters on its own thread, disabled, and enables them only
 * around two batches of n calls, an empty function's and the benchmark's,
 * so that nothing but the calls is counted; the per-call figure is the
 * difference divided by n. Counts come back on a pipe.
 *
 * Many VMs expose no PMU: perf_event_open then fails for hardware events
 * and benchtrap says so, suggesting the callgrind instrument.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/fd.h"
#include "measure/driver-env.h"
#include "measure/perf.h"
#include "util/launch.h"
#include "measure/measure.h"

/* Calls per counted batch: enough that the loop's and the counters'
 * own noise (a few instructions per batch) vanish per call. */
#define PERF_CALLS 100

enum perf_unavailable perf_classify_errno(int err)
{
	switch (err) {
	case 0:
		return PERF_AVAILABLE;
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
	case EINVAL:
		return PERF_NO_PMU;
	case EACCES:
	case EPERM:
		return PERF_NO_PERMISSION;
	default:
		return PERF_OTHER;
	}
}

double perf_per_call(uint64_t bench_count, uint64_t empty_count, uint64_t n)
{
	if (n == 0 || bench_count <= empty_count)
		return 0.0;
	return (double)(bench_count - empty_count) / (double)n;
}

/* Can this process count its own user-space instructions? 0 or an errno. */
static int probe(void)
{
	int fd = driver_perf_open(PERF_COUNT_HW_INSTRUCTIONS, -1, 0);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Run the driver over specs[0..n) natively; counts[i][4] per function.
 * Returns how many functions reported. */
static size_t run_batch(const struct measure_target *t, const char *driver,
			const struct bench_spec *const *specs, size_t n, uint64_t timeout_ns,
			uint64_t (*counts)[4], int *ret_status, pid_t *ret_pid)
{
	char calls[64], fd[64], buf[4096], exe[PATH_MAX];
	char **extra = NULL, **env = NULL;
	size_t ne = 0, got = 0, used = 0;
	int pfd[2] = { -1, -1 }, st = 0, devnull = -1, input = -1, r;
	pid_t pid;

	*ret_status = -1;
	if (!realpath(t->binary, exe) || pipe2(pfd, O_CLOEXEC) < 0)
		goto out;
	snprintf(fd, sizeof(fd), DRIVER_ENV_PERF_FD "=%d", DRIVER_PERF_FD);
	snprintf(calls, sizeof(calls), DRIVER_ENV_PERF_CALLS "=%d", PERF_CALLS);
	extra = measure_driver_env(specs, n, driver, exe);
	while (extra && extra[ne])
		ne++;
	if (!extra || measure_env_push(&extra, &ne, strdup(fd)) < 0 ||
	    measure_env_push(&extra, &ne, strdup(calls)) < 0)
		goto out_pipe;
	env = measure_child_env((const char *const *)extra);
	if (!env)
		goto out_pipe;
	struct launch_opts lo;
	struct launch l;

	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	input = measure_open_input(t);
	if (devnull < 0 || input < 0)
		goto out_pipe;
	launch_opts_init(&lo, t->binary, t->argv);
	lo.envp = env;
	lo.aslr = t->aslr;
	lo.cpu = t->cpu;
	lo.stdio[0] = input;
	if (t->quiet_stdio)
		lo.stdio[1] = lo.stdio[2] = devnull;
	/* Counts come on DRIVER_PERF_FD; the driver's byte per finished
	 * call (DRIVER_DONE_FD) is not needed. */
	lo.fds[0].from = pfd[1];
	lo.fds[0].to = DRIVER_PERF_FD;
	lo.fds[1].from = devnull;
	lo.fds[1].to = DRIVER_DONE_FD;
	lo.nfds = 2;
	lo.process_group = true;
	r = launch_start(&lo, &l, NULL);
	close(pfd[1]);
	pfd[1] = -1;
	if (r < 0)
		goto out_pipe;
	pid = l.pid;
	*ret_pid = pid;

	uint64_t deadline = measure_now_ns() + timeout_ns;

	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		uint64_t now = measure_now_ns();
		ssize_t k;

		if (now >= deadline) {
			kill(pid, SIGKILL);
			break;
		}
		if (poll(&p, 1, (int)((deadline - now) / 1000000 + 1)) <= 0)
			continue;
		k = read(pfd[0], buf + used, sizeof(buf) - 1 - used);
		if (k <= 0)
			break;
		used += (size_t)k;
		buf[used] = '\0';
		char *nl;

		while ((nl = strchr(buf, '\n'))) {
			unsigned idx;
			uint64_t v[4];

			*nl = '\0';
			if (sscanf(buf, "%u %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64, &idx, &v[0],
				   &v[1], &v[2], &v[3]) == 5 &&
			    idx == got && got < n)
				memcpy(counts[got++], v, sizeof(v));
			used -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, used + 1);
		}
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	kill(-pid, SIGKILL); /* whatever the target started */
	launch_forget(pid);
	launch_sweep();
	*ret_status = st;
out_pipe:
	fd_close(devnull);
	fd_close(input);
	fd_close(pfd[0]);
	fd_close(pfd[1]);
out:
	measure_env_free(extra);
	measure_env_free(env);
	return got;
}

int measure_perf(const struct measure_target *t, const struct bench_spec *specs, size_t n,
		 const struct measure_plan *plan, bool isolate, const struct measure_opts *opts,
		 const struct measure_hooks *hooks, struct bench_result *results, char **ret_error)
{
	const struct bench_spec **batch;
	int err = probe();
	char *driver;

	(void)opts; /* none applies */
	switch (perf_classify_errno(err)) {
	case PERF_AVAILABLE:
		break;
	case PERF_NO_PMU:
		if (asprintf(ret_error,
			     "this machine has no hardware performance counters (perf_event_open: "
			     "%s; a VM often exposes none): use --instrument callgrind for exact "
			     "instruction counts",
			     strerror(err)) < 0)
			*ret_error = NULL;
		return -ENODEV;
	case PERF_NO_PERMISSION:
		if (asprintf(ret_error,
			     "perf_event_open is not permitted (%s): lower "
			     "/proc/sys/kernel/perf_event_paranoid to 2 or below, or use "
			     "--instrument callgrind",
			     strerror(err)) < 0)
			*ret_error = NULL;
		return -EACCES;
	case PERF_OTHER:
		if (asprintf(ret_error, "cannot open hardware counters: %s", strerror(err)) < 0)
			*ret_error = NULL;
		return -err;
	}
	driver = measure_find_driver();
	if (!driver) {
		*ret_error = strdup("cannot find benchtrap's driver library (set "
				    "BENCHTRAP_DRIVER_LIB)");
		return -ENOENT;
	}
	batch = calloc(n ? n : 1, sizeof(*batch));
	uint64_t(*counts)[4] = calloc(n ? n : 1, sizeof(*counts));

	if (!batch || !counts) {
		free(batch);
		free(counts);
		free(driver);
		*ret_error = strdup("out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n;) {
		size_t k = isolate ? 1 : n - i, got;
		int status;
		pid_t pid = 0;

		for (size_t j = 0; j < k; j++) {
			batch[j] = &specs[i + j];
			measure_result_begin(&results[i + j], &specs[i + j], "perf",
					     "instructions");
		}
		got = run_batch(t, driver, batch, k, plan->timeout_ns, counts, &status, &pid);
		for (size_t j = 0; j < k && j <= got; j++) {
			struct bench_result *res = &results[i + j];
			struct stats_options so = stats_options_default();
			struct measure_event ev = { .kind = MEASURE_BENCH_END,
						    .name = specs[i + j].name,
						    .pid = pid,
						    .t_ns = measure_now_ns() };

			res->pid = pid;
			res->t_end_ns = ev.t_ns;
			if (j == got) {
				res->status = BENCH_FAILED;
				if (WIFSIGNALED(status)) {
					if (asprintf(&res->error, "killed by SIG%s",
						     sigabbrev_np(WTERMSIG(status))) < 0)
						res->error = NULL;
				} else if (asprintf(&res->error,
						    "exited with status %d before the benchmark "
						    "returned",
						    WIFEXITED(status) ? WEXITSTATUS(status) : -1) < 0) {
					res->error = NULL;
				}
			} else {
				double ins = perf_per_call(counts[j][2], counts[j][0], PERF_CALLS);
				double cyc = perf_per_call(counts[j][3], counts[j][1], PERF_CALLS);

				res->samples = malloc(sizeof(double));
				if (res->samples) {
					res->samples[0] = ins;
					res->nsamples = 1;
				}
				res->calls = res->iterations = PERF_CALLS;
				res->counters[0] = (struct measure_counter){ "instructions", ins };
				res->counters[1] = (struct measure_counter){ "cycles", cyc };
				res->ncounters = 2;
				res->value = ins;
				res->status = res->samples &&
							      stats_summarize(res->samples, 1, &so,
									      &res->stats) == 0 ?
						      BENCH_OK :
						      BENCH_FAILED;
				res->no_time = ins < MEASURE_MIN_INSTRUCTIONS;
				if (res->no_time)
					bench_result_diagnose(
						res,
						"measured no execution time: %.1f "
						"instructions per call (%s)",
						ins, measure_no_time_advice(res->spec));
			}
			struct measure_event st = ev;

			st.kind = MEASURE_BENCH_START;
			st.t_ns = res->t_start_ns;
			measure_emit(hooks, &st);
			measure_emit(hooks, &ev);
		}
		i += got < k ? got + 1 : k;
	}
	free(batch);
	free(counts);
	free(driver);
	return 0;
}
