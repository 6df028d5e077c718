/* SPDX-License-Identifier: MIT */
/*
 * The perf instrument: user-space instructions and cycles per call from the
 * CPU's hardware counters (perf_event_open). The target runs with the
 * driver library preloaded (as under callgrind, but natively): the driver
 * opens the counters on its own thread, disabled, and enables them only
 * around two batches of n calls, an empty function's and the benchmark's,
 * so that nothing but the calls is counted; the per-call figure is the
 * difference divided by n. Counts come back on the driver's report.
 *
 * Many VMs expose no PMU: perf_event_open then fails for hardware events
 * and benchtrap says so, suggesting the callgrind instrument.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/driver-env.h"
#include "measure/driven.h"
#include "measure/perf.h"
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

struct ctx {
	struct bench_result *results;
	uint64_t timeout_ns;
};

/* Call j of the batch is settled: its counts, or what happened. */
static void settled(void *ctx, size_t i, const struct driven_call *call)
{
	struct ctx *c = ctx;
	struct bench_result *res = &c->results[i];

	if (!call->returned || !call->have_perf) {
		res->status = BENCH_FAILED;
		res->error = driven_failure(call, c->timeout_ns);
	} else {
		double ins = perf_per_call(call->perf[2], call->perf[0], PERF_CALLS);
		double cyc = perf_per_call(call->perf[3], call->perf[1], PERF_CALLS);

		res->calls = res->iterations = PERF_CALLS;
		res->counters[0] = (struct measure_counter){ "instructions", ins };
		res->counters[1] = (struct measure_counter){ "cycles", cyc };
		res->ncounters = 2;
		measure_result_count(res, ins);
		res->no_time = ins < MEASURE_MIN_INSTRUCTIONS;
		if (res->no_time)
			bench_result_diagnose(res,
					      "measured no execution time: %.1f instructions per call "
					      "(%s)",
					      ins, measure_no_time_advice(res->spec));
	}
}

static int no_counters(int err, char **ret_error)
{
	switch (perf_classify_errno(err)) {
	case PERF_AVAILABLE:
		return 0;
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
		break;
	}
	if (asprintf(ret_error, "cannot open hardware counters: %s", strerror(err)) < 0)
		*ret_error = NULL;
	return -err;
}

/*
 * The driver runs natively, as under callgrind (driven.h): --isolation
 * benchmark forks a child per benchmark from one process stopped at main
 * (each child opens its own counters), process starts one process each,
 * shared calls them all in one.
 */
int measure_perf(const struct measure_target *t, const struct bench_spec *specs, size_t n,
		 const struct measure_plan *plan, enum measure_isolation iso,
		 const struct measure_opts *opts, const struct measure_hooks *hooks,
		 struct bench_result *results, char **ret_error)
{
	struct ctx c = { .results = results, .timeout_ns = plan->timeout_ns };
	struct driven_native nat = { .instrument = "perf",
				     .unit = "instructions",
				     .perf_calls = PERF_CALLS,
				     .settled = settled,
				     .ctx = &c };
	char *driver;
	int r;

	(void)opts; /* none applies */
	r = no_counters(probe(), ret_error);
	if (r < 0)
		return r;
	driver = measure_find_driver(MEASURE_DRIVER);
	if (!driver) {
		*ret_error = strdup("cannot find benchtrap's driver library (set "
				    "BENCHTRAP_DRIVER_LIB)");
		return -ENOENT;
	}
	nat.driver = driver;
	r = driven_native(t, specs, n, plan, iso, hooks, &nat, results, ret_error);
	free(driver);
	return r;
}
