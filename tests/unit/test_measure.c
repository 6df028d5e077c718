/* SPDX-License-Identifier: MIT */
/* The pure parts of measuring and reporting: the growth of iterations per
 * sample, the "no execution time" rule, and the results document. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "trace/trace.h"
#include "measure/allocs.h"
#include "measure/measure.h"
#include "measure/own.h"
#include "report/report.h"

/* The kernel's share: ticks over the timed time, unknown on too few. */
static void test_kernel_share(void **state)
{
	(void)state;
	/* 30 of 60 ticks (100 a second) in the kernel over 0.6 s timed. */
	assert_true(fabs(measure_kernel_share(30, 60, 100, 6e8) - 0.5) < 1e-9);
	/* More kernel time than timed time (the stops' own): all of it. */
	assert_true(measure_kernel_share(90, 90, 100, 6e8) == 1);
	/* Fewer ticks than MEASURE_KERNEL_MIN_TICKS: a tick either way is
	 * more than the threshold. */
	assert_true(isnan(measure_kernel_share(5, MEASURE_KERNEL_MIN_TICKS - 1, 100, 6e8)));
	assert_true(isnan(measure_kernel_share(5, 60, 100, 0)));
}

static void test_kernel_note(void **state)
{
	struct trace_syscall_counts *sc = calloc(1, sizeof(*sc));
	char *s;

	(void)state;
	assert_non_null(sc);
	sc->arch = 0xc000003e; /* AUDIT_ARCH_X86_64 */
	/* Nothing: no note, whatever the share below the threshold. */
	assert_null(measure_kernel_note(NAN, sc, 8));
	assert_null(measure_kernel_note(0.05, sc, 8));
	/* A system call in every other call is under the threshold, one
	 * in each is not. */
	sc->count[110] = 3; /* getppid */
	sc->total = 3;
	assert_null(measure_kernel_note(0.02, sc, 8));
	sc->count[110] = sc->total = 8;
	s = measure_kernel_note(0.594, sc, 8);
	assert_string_equal(s, "spent 59% of its time in the kernel: 1 system call per call "
			       "(getppid ×1)");
	free(s);
	s = measure_kernel_note(NAN, sc, 8);
	assert_string_equal(s, "made 1 system call per call (getppid ×1): its time includes "
			       "the kernel's");
	free(s);
	/* The most frequent first, four at most, then an ellipsis. */
	sc->count[39] = 16; /* getpid */
	sc->count[0] = 4;   /* read */
	sc->count[1] = 2;   /* write */
	sc->count[3] = 1;   /* close */
	sc->total = 31;
	s = measure_kernel_note(0.5, sc, 8);
	assert_string_equal(s, "spent 50% of its time in the kernel: 3.88 system calls per call "
			       "(getpid ×2, getppid ×1, read ×0.5, write ×0.25, …)");
	free(s);
	/* Kernel time without system calls: page faults. */
	memset(sc, 0, sizeof(*sc));
	s = measure_kernel_note(0.4, sc, 8);
	assert_string_equal(s, "spent 40% of its time in the kernel, with no system call: page "
			       "faults or other traps");
	free(s);
	/* Not counted (the pass failed). */
	s = measure_kernel_note(0.4, NULL, 0);
	assert_string_equal(s, "spent 40% of its time in the kernel (its system calls were not "
			       "counted)");
	free(s);
	free(sc);
}

static void test_events_note(void **state)
{
	struct trace_call_counts n = { 0 };
	char *s;

	(void)state;
	assert_null(measure_events_note(&n, 1000));
	n.clones = 1000;
	s = measure_events_note(&n, 1000);
	assert_string_equal(s, "created 1 thread per call: each costs a ptrace stop inside the "
			       "timed interval (tens of µs on a VM); the figure is inflated");
	free(s);
	n.clones = 0;
	n.signals = 1000;
	n.forks = 1000;
	s = measure_events_note(&n, 1000);
	assert_non_null(strstr(s, "received 1 signal and forked 1 time per call: "));
	free(s);
	n.clones = 2000;
	n.signals = 1;
	s = measure_events_note(&n, 1000);
	assert_non_null(strstr(s, "created 2 threads, received 0.001 signals and forked 1 time "
				  "per call: "));
	free(s);
	assert_null(measure_events_note(&n, 0));
}

/* The default timeout: a minute for what the defaults ask, growing with
 * the repetitions asked and their minimum time. */
static void test_default_timeout(void **state)
{
	struct measure_plan plan;

	(void)state;
	measure_plan_default(&plan);
	assert_int_equal(measure_default_timeout(&plan, 0, 0), 60000000000ull);
	assert_int_equal(measure_default_timeout(&plan, 10, 0), 60000000000ull);
	/* 3 x 1.2 s + 1000 x 0.25 s */
	assert_int_equal(measure_default_timeout(&plan, 1000, 0), 253600000000ull);
	/* and 3 x 0.1 s more a repetition */
	assert_int_equal(measure_default_timeout(&plan, 1000, 100000000), 553600000000ull);
	/* A long budget alone: 3 x (0.2 + 30) s */
	plan.time_ns = 30000000000ull;
	assert_int_equal(measure_default_timeout(&plan, 0, 0), 90600000000ull);
}

static void test_grow(void **state)
{
	const uint64_t ms10 = 10000000;

	/* A sample 1000x too short jumps 100x at most. */
	assert_int_equal(measure_grow(1, 10000, ms10), 100);
	/* Close to the target: aim 10% past it. */
	assert_int_equal(measure_grow(1000, 5000000, ms10), 2200);
	/* Already long enough by the ratio: still grows by one. */
	assert_int_equal(measure_grow(1000, 20000000, ms10), 1001);
	/* An unmeasurably short sample counts as 1 ns. */
	assert_int_equal(measure_grow(7, 0, ms10), 700);
	/* Never past the cap. */
	assert_int_equal(measure_grow(MEASURE_MAX_ITERATIONS - 1, 1, ms10),
			 MEASURE_MAX_ITERATIONS);
	/* Growth from 1 reaches a 10 ms sample of a 2 ns function quickly. */
	uint64_t n = 1, steps = 0;

	while (n * 2 < ms10) {
		n = measure_grow(n, n * 2, ms10);
		steps++;
	}
	assert_true(steps <= 4);
}

static void test_resolution(void **state)
{
	/* The 90th percentile of the absolute differences, nearest rank:
	 * of ten, the largest but one; signs do not matter. */
	const double ten[10] = { 0.1, -0.2, 0.3, -0.4, 0.05, -0.05, 0.0, 0.15, -3.0, 0.35 };
	assert_true(measure_resolution(ten, 10) == 0.4);
	/* One load spike in a floor sample does not set the resolution. */
	const double spike[10] = { 0.1, 0.1, -0.1, 0.1, 0.1, -0.1, 0.1, 0.1, -0.1, 250.0 };
	assert_true(measure_resolution(spike, 10) == 0.1);
	/* Under ten samples it is the largest. */
	const double five[5] = { -0.5, 0.1, 0.2, 0.1, 0.0 };
	assert_true(measure_resolution(five, 5) == 0.5);
	assert_true(measure_resolution(five, 1) == 0.5);
	assert_true(isnan(measure_resolution(five, 0)));
}

static void test_no_time(void **state)
{
	/* A bare ret measured 0.977 ns with every sample positive, where the
	 * empty function against itself spread over +-1.2 ns: nothing. */
	assert_true(measure_no_time(0.977, 0.95, 1.2, 40));
	/* Noise around zero, on either side. */
	assert_true(measure_no_time(0.05, -0.1, 0.3, 40));
	assert_true(measure_no_time(-0.4, -0.5, 0.3, 40));
	assert_true(measure_no_time(0.3, 0.3, 0.3, 40));
	/* A median past a tight floor by chance, from few samples: its own
	 * interval still reaches into the floor. */
	assert_true(measure_no_time(0.2, 0.05, 0.1, 5));
	/* An 11-instruction function, 3 ns, where the floor is 0.4 ns: time,
	 * however many of its samples noise made negative. */
	assert_false(measure_no_time(3.0, 2.6, 0.4, 40));
	assert_false(measure_no_time(318.0, 310.0, 2.0, 100));
	/* Less than a cycle is time when the measurement resolves it. */
	assert_false(measure_no_time(0.2, 0.15, 0.05, 40));
	/* No interval: the median alone. */
	assert_false(measure_no_time(3.0, NAN, 0.4, 1));
	assert_true(measure_no_time(0.3, NAN, 0.4, 1));
	/* No floor sample: only the sign is left. */
	assert_true(measure_no_time(0.1, -0.1, NAN, 40));
	assert_false(measure_no_time(5.0, 4.0, NAN, 40));
	/* No sample at all. */
	assert_true(measure_no_time(5.0, 5.0, 0.1, 0));
}

static void test_no_time_advice(void **state)
{
	struct bench_spec registered = { .name = "fib[20]", .registered = true };
	struct bench_spec symbol = { .name = "plain_work" };

	/* A registered benchmark can pass its result to black_box... */
	assert_non_null(strstr(measure_no_time_advice(&registered), "benchtrap_black_box"));
	/* ...a function of an unmodified binary cannot. */
	assert_null(strstr(measure_no_time_advice(&symbol), "black_box"));
	assert_non_null(strstr(measure_no_time_advice(&symbol), "arguments"));
}

static void test_machine_noisy(void **state)
{
	/* 2 ns loop, 10^6 iterations: 2 ms of empty loop per sample. */
	assert_false(measure_machine_noisy(2.0, 1.95, 2.05, 1000000));
	assert_true(measure_machine_noisy(2.0, 1.9, 2.3, 1000000));
	/* The same spread over 100 iterations (200 ns) is clock jitter. */
	assert_false(measure_machine_noisy(2.0, 1.9, 2.3, 100));
	assert_false(measure_machine_noisy(0.0, 0.0, 0.0, 1000000));
}

static void test_results_document(void **state)
{
	struct measure_plan plan;
	struct bench_spec specs[2] = {
		{ .name = "fib[20]", .symbol = "benchtrap_bench_fib", .object = "/bin/x",
		  .in_main = true, .args = { 20 }, .nargs = 1 },
		{ .name = "crash", .symbol = NULL, .object = "/bin/x", .in_main = true },
	};
	double samples[3] = { 10.0, 11.0, 12.0 };
	struct bench_result results[2] = {
		{ .spec = &specs[0], .status = BENCH_OK, .instrument = "walltime", .unit = "ns",
		  .value = 11.0, .samples = samples, .nsamples = 3, .iterations = 1000,
		  .calibration = 2.0, .resolution = 0.25, .no_time = true, .pid = 42 },
		{ .spec = &specs[1], .status = BENCH_FAILED, .instrument = "walltime",
		  .unit = "ns", .error = "SIGSEGV (Segmentation fault) at address 0x10",
		  .pid = 43 },
	};
	char *argv[] = { "run", "/bin/x" };
	struct report_run run = { .instrument = "walltime", .isolation = "benchmark",
				  .plan = &plan, .argv = argv, .argc = 2, .results = results,
				  .n = 2 };
	char *text = NULL;
	size_t size = 0;
	FILE *f;
	json_t *doc, *b;
	json_error_t err;

	measure_plan_default(&plan);
	assert_int_equal(stats_summarize(samples, 3, NULL, &results[0].stats), 0);
	assert_int_equal(bench_result_diagnose(&results[0], "note %d", 1), 0);
	run.env = (struct results_env){ .binary = "/bin/x", .benchtrap = "0.1.0",
				       .date = "2026-12-02T00:00:00Z", .cores = 2 };

	f = open_memstream(&text, &size);
	assert_int_equal(report_write_json(&run, f), 0);
	fclose(f);
	doc = json_loads(text, 0, &err);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "schema")),
			    "benchtrap-results/1");
	assert_true(json_is_null(json_object_get(json_object_get(doc, "environment"), "cpu")));
	assert_string_equal(json_string_value(json_array_get(
				    json_object_get(json_object_get(doc, "run"), "command"), 0)),
			    "benchtrap");

	b = json_array_get(json_object_get(doc, "benchmarks"), 0);
	assert_string_equal(json_string_value(json_object_get(b, "name")), "fib[20]");
	assert_int_equal(json_integer_value(json_array_get(json_object_get(b, "args"), 0)), 20);
	assert_string_equal(json_string_value(json_object_get(b, "status")), "ok");
	assert_true(json_is_null(json_object_get(b, "error")));
	assert_true(json_number_value(json_object_get(b, "value")) == 11.0);
	assert_true(json_number_value(json_object_get(json_object_get(b, "stats"), "median")) ==
		    11.0);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(b, "stats"),
							     "iterations_per_sample")),
			 1000);
	assert_int_equal(json_array_size(json_object_get(b, "raw_samples")), 3);
	assert_true(json_is_true(json_object_get(b, "no_time")));
	assert_true(json_number_value(json_object_get(json_object_get(b, "stats"), "resolution")) ==
		    0.25);
	assert_string_equal(json_string_value(json_array_get(json_object_get(b, "diagnostics"), 0)),
			    "note 1");

	b = json_array_get(json_object_get(doc, "benchmarks"), 1);
	assert_string_equal(json_string_value(json_object_get(b, "status")), "failed");
	assert_true(json_is_null(json_object_get(b, "value")));
	assert_true(json_is_null(json_object_get(b, "stats")));
	assert_true(json_is_false(json_object_get(b, "no_time")));
	assert_true(json_is_null(json_object_get(b, "symbol")));
	assert_non_null(strstr(json_string_value(json_object_get(b, "error")), "SIGSEGV"));
	json_decref(doc);
	free(text);

	/* The table names the failure after the rows. */
	f = open_memstream(&text, &size);
	report_print_table(&run, f, REPORT_TEXT, false);
	fclose(f);
	assert_non_null(strstr(text, "crash failed: SIGSEGV"));
	assert_non_null(strstr(text, "fib[20]: note 1"));
	assert_non_null(strstr(text, "3 × 1000"));
	assert_null(strstr(text, "\033[")); /* no colour unless asked */
	free(text);

	for (size_t i = 0; i < results[0].ndiagnostics; i++)
		free(results[0].diagnostics[i]);
	free(results[0].diagnostics);
}

/* Each instrument's row is its results/ row by the same id: same name and
 * unit; the name finds it and its flags are results/'s. */
static void test_instrument_rows(void **state)
{
	size_t n;
	const struct measure_instrument *ins = measure_instruments(&n);

	(void)state;
	assert_int_equal(n, MEASURE_N_INSTRUMENTS);
	for (size_t i = 0; i < n; i++) {
		const struct results_instrument *facts =
			results_instrument((enum results_instrument_id)ins[i].id);

		assert_int_equal(ins[i].id, i);
		assert_ptr_equal(measure_instrument_of(ins[i].id), &ins[i]);
		assert_string_equal(ins[i].name, facts->name);
		assert_string_equal(ins[i].unit, facts->unit);
		assert_ptr_equal(measure_instrument_find(ins[i].name), &ins[i]);
		assert_true(measure_instrument_has(&ins[i], facts->flags));
		assert_non_null(ins[i].run);
	}
	/* observe writes results, but `run` does not measure with it. */
	assert_null(measure_instrument_find("observe"));
	assert_non_null(results_instrument_find("observe"));
	assert_null(measure_instrument_find("wall"));
	assert_null(results_instrument_find(NULL));
	assert_true(measure_instrument_has(measure_instrument_of(MEASURE_WALLTIME),
					   MEASURE_TIMED | MEASURE_PAIRABLE));
	assert_false(measure_instrument_has(measure_instrument_of(MEASURE_CALLGRIND),
					    MEASURE_TIMED));
	assert_true(measure_instrument_has(measure_instrument_of(MEASURE_MEMORY),
					   MEASURE_COUNTING | MEASURE_PRELOADS));
	assert_true(results_instrument_has("observe", RESULTS_INSTRUMENT_TIMED |
							      RESULTS_INSTRUMENT_OBSERVED));
	assert_false(results_instrument_has("bogus", 0));

	char names[128];

	results_instrument_names(names, sizeof(names));
	assert_string_equal(names, "walltime, callgrind, perf, memory or observe");
}

/* The memory instrument for a program of its own main (measure/allocs.h):
 * how each allocator call is counted. */
static void test_alloc_count(void **state)
{
	struct alloc_counts c = { 0 };

	(void)state;
	alloc_count(&c, ALLOC_SIZE0, (const uint64_t[3]){ 100, 0, 0 }); /* malloc */
	alloc_count(&c, ALLOC_CALLOC, (const uint64_t[3]){ 4, 10, 0 });
	alloc_count(&c, ALLOC_SIZE1, (const uint64_t[3]){ 64, 256, 0 }); /* memalign */
	alloc_count(&c, ALLOC_SIZE2, (const uint64_t[3]){ 0x1000, 64, 32 }); /* posix_memalign */
	assert_int_equal(c.allocations, 4);
	assert_int_equal(c.bytes, 100 + 40 + 256 + 32);
	/* realloc to a size is an allocation of that size; to 0, a free. */
	alloc_count(&c, ALLOC_REALLOC, (const uint64_t[3]){ 0x1234, 50, 0 });
	alloc_count(&c, ALLOC_REALLOC, (const uint64_t[3]){ 0x1234, 0, 0 });
	assert_int_equal(c.allocations, 5);
	assert_int_equal(c.bytes, 428 + 50);
	assert_int_equal(c.frees, 1);
	/* free(NULL) frees nothing. */
	alloc_count(&c, ALLOC_FREE, (const uint64_t[3]){ 0, 0, 0 });
	alloc_count(&c, ALLOC_FREE, (const uint64_t[3]){ 0x10, 0, 0 });
	assert_int_equal(c.frees, 2);
	/* A calloc whose product overflows fails: nothing asked. */
	alloc_count(&c, ALLOC_CALLOC, (const uint64_t[3]){ UINT64_MAX, 2, 0 });
	assert_int_equal(c.bytes, 478);
	assert_int_equal(c.allocations, 6);
}

/* The engine's count per iteration, as every kind that runs its own main
 * takes it from its batches. */
static void test_per_iteration(void **state)
{
	/* a + b n with a = 1618 (set-up), b = 25: the slope is b whatever
	 * the first batches did. */
	const uint64_t dumps[] = { 10571, 2002, 4118, 26618, 251618 };
	const uint64_t iters[] = { 1, 10, 100, 1000, 10000 };
	/* Two threads: two profiles a batch, summed. */
	const uint64_t tdumps[] = { 500, 700, 1100, 1300, 10100, 10300 };
	const uint64_t titers[] = { 1, 10, 100 };
	/* Calls of 1, 2, 4, 8 iterations (criterion's warm-up): 100 an
	 * iteration and 37 a call, the first 500 more. */
	const uint64_t c[] = { 637 + 500, 237, 437, 837 };
	const uint64_t doubling[] = { 1, 2, 4, 8 };
	double v = 0;
	bool setup = true;

	(void)state;
	assert_int_equal(own_per_iteration(dumps, 5, iters, 5, 1, &v, &setup), 0);
	assert_true(fabs(v - 25.0) < 1e-9);
	assert_false(setup);
	/* (20400 - 2400) / (90 * 2) */
	assert_int_equal(own_per_iteration(tdumps, 6, titers, 3, 2, &v, &setup), 0);
	assert_true(fabs(v - 100.0) < 1e-9);
	/* One batch: its count over its iterations, set-up included. */
	assert_int_equal(own_per_iteration(dumps, 1, iters, 1, 1, &v, &setup), 0);
	assert_true(fabs(v - 10571.0) < 1e-9);
	assert_true(setup);
	/* Profiles that are not threads per batch. */
	assert_int_equal(own_per_iteration(dumps, 4, iters, 5, 1, &v, &setup), -EINVAL);
	assert_int_equal(own_per_iteration(dumps, 5, iters, 5, 2, &v, &setup), -EINVAL);
	/* The last two batches of one count: no slope. */
	assert_int_equal(own_per_iteration(dumps, 2, (const uint64_t[]){ 5, 5 }, 2, 1, &v, &setup),
			 -EINVAL);
	/* (837 - 437) / 4 */
	assert_int_equal(own_per_iteration(c, 4, doubling, 4, 1, &v, &setup), 0);
	assert_true(v == 100.0);
	/* 237 after 1137: a count that shrinks is refused, v untouched. */
	v = 7;
	assert_int_equal(own_per_iteration(c, 2, doubling, 2, 1, &v, &setup), -ERANGE);
	assert_true(v == 7);
}

/* Memory figures of batches: each field's slope, the last batch's peak. */
static void test_result_allocs(void **state)
{
	/* Two threads, batches of 1 and 3 iterations a thread: 16 bytes an
	 * iteration, a block freed each, 100 bytes of set-up a call. */
	const struct alloc_counts calls[] = {
		{ 2, 1, 116, 100, 0 }, { 2, 1, 116, 40, 0 }, /* batch 0 */
		{ 4, 3, 148, 64, 0 },  { 4, 3, 148, 80, 0 }, /* batch 1 */
	};
	const uint64_t iters[] = { 1, 3 };
	struct bench_result res = { .status = BENCH_OK };
	bool setup = true;

	(void)state;
	assert_int_equal(own_result_allocs(&res, calls, 4, iters, 2, 2, &setup), 0);
	assert_false(setup);
	assert_int_equal(res.ncounters, 4);
	assert_true(res.counters[0].value == 16.0 && res.value == 16.0);
	assert_true(res.counters[1].value == 1.0 && res.counters[2].value == 1.0);
	/* The largest of the last batch's calls, not the first call's. */
	assert_true(res.counters[3].value == 80.0);
	assert_int_equal(res.iterations, 6);
	bench_result_clear(&res);
	/* Calls that are not two a batch: refused, nothing written. */
	res = (struct bench_result){ .status = BENCH_OK };
	assert_int_equal(own_result_allocs(&res, calls, 3, iters, 2, 2, &setup), -EINVAL);
	assert_int_equal(res.ncounters, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_count),
		cmocka_unit_test(test_per_iteration),
		cmocka_unit_test(test_result_allocs),
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_default_timeout),
		cmocka_unit_test(test_instrument_rows),
		cmocka_unit_test(test_resolution),
		cmocka_unit_test(test_no_time),
		cmocka_unit_test(test_no_time_advice),
		cmocka_unit_test(test_machine_noisy),
		cmocka_unit_test(test_kernel_share),
		cmocka_unit_test(test_kernel_note),
		cmocka_unit_test(test_events_note),
		cmocka_unit_test(test_results_document),
	};

	return cmocka_run_group_tests_name("measure", tests, NULL, NULL);
}
