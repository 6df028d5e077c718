/* SPDX-License-Identifier: MIT */
/*
 * The memory instrument: what one call allocates, exactly. The target runs
 * natively with the memory driver preloaded (libbenchtrap-driver-memory.so:
 * the driver with the C allocator's entry points wrapped, driver/alloc.c),
 * through the same fork server as callgrind and perf (driven.h), so that
 * every benchmark starts from the heap of a fresh process at main. The
 * driver counts from the call's first instruction to its return (after
 * --warmup-calls uncounted calls) and reports allocations, frees, bytes
 * asked for, the peak of live bytes and the bytes still live at the
 * return; value is the bytes allocated per call.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/driven.h"
#include "measure/driver-env.h"
#include "measure/measure.h"

struct ctx {
	struct bench_result *results;
	const struct measure_hooks *hooks;
	uint64_t timeout_ns;
	unsigned long warmup_calls;
};

static void settled(void *ctx, size_t i, const struct driven_call *call)
{
	struct ctx *c = ctx;
	struct bench_result *res = &c->results[i];
	struct stats_options so = stats_options_default();
	struct measure_event ev = { .kind = MEASURE_BENCH_END,
				    .name = res->spec->name,
				    .pid = call->pid,
				    .t_ns = call->t_end_ns };
	static const char *const names[] = { "allocations", "frees", "bytes_allocated",
					     "peak_bytes", "leaked_bytes" };

	res->pid = call->pid;
	res->t_end_ns = call->t_end_ns;
	if (!call->returned || !call->have_mem) {
		res->status = BENCH_FAILED;
		res->error = driven_failure(call, c->timeout_ns);
		measure_emit(c->hooks, &ev);
		return;
	}
	if (call->mem[6]) {
		/* Never a silent 0. */
		res->status = BENCH_FAILED;
		res->error = strdup("not counted: the program defines its own malloc (another "
				    "allocator linked in?), which comes before benchtrap's wrappers "
				    "of the C allocator");
		measure_emit(c->hooks, &ev);
		return;
	}
	res->ncounters = 0;
	res->counters[res->ncounters++] =
		(struct measure_counter){ "bytes_allocated", (double)call->mem[2] };
	for (size_t k = 0; k < 5; k++)
		if (k != 2)
			res->counters[res->ncounters++] =
				(struct measure_counter){ names[k], (double)call->mem[k] };
	res->calls = res->iterations = 1;
	res->value = (double)call->mem[2];
	res->samples = malloc(sizeof(double));
	if (res->samples) {
		res->samples[0] = res->value;
		res->nsamples = 1;
	}
	res->status = res->samples && stats_summarize(res->samples, 1, &so, &res->stats) == 0 ?
			      BENCH_OK :
			      BENCH_FAILED;
	if (res->status != BENCH_OK)
		res->error = strdup("out of memory");
	if (call->mem[5])
		bench_result_diagnose(res,
				      "more blocks were live at once than the driver's table holds "
				      "(3 million): peak_bytes and leaked_bytes are lower bounds");
	if (c->warmup_calls)
		bench_result_diagnose(res, "counted the call after %lu uncounted one(s) "
					   "(--warmup-calls)",
				      c->warmup_calls);
	measure_emit(c->hooks, &ev);
}

int measure_memory(const struct measure_target *t, const struct bench_spec *specs, size_t n,
		   const struct measure_plan *plan, enum measure_isolation iso,
		   const struct measure_opts *opts, const struct measure_hooks *hooks,
		   struct bench_result *results, char **ret_error)
{
	struct ctx c = { .results = results,
			 .hooks = hooks,
			 .timeout_ns = plan->timeout_ns,
			 .warmup_calls = opts->warmup_calls };
	struct driven_native nat = { .instrument = "memory",
				     .unit = "bytes",
				     .warmup_calls = opts->warmup_calls,
				     .settled = settled,
				     .ctx = &c };
	char *driver = measure_find_driver(MEASURE_DRIVER_MEMORY);
	int r;

	if (!driver) {
		*ret_error = strdup("cannot find benchtrap's memory driver library "
				    "(" MEASURE_DRIVER_MEMORY "; set BENCHTRAP_DRIVER_LIB to a driver "
				    "library beside it)");
		return -ENOENT;
	}
	nat.driver = driver;
	r = driven_native(t, specs, n, plan, iso, hooks, &nat, results, ret_error);
	free(driver);
	return r;
}
