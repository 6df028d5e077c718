// SPDX-License-Identifier: MIT
/*
 * What benchtrap observe costs per observed call, beside the bare trap round
 * trip, measured in the same run on the same program (observe_cost_target.c:
 * main calls observed_fn() N times). For each round, three fresh children,
 * each timed from main to its exit:
 *   plain      no breakpoint
 *   bare trap  one breakpoint at observed_fn (hit, report, step over)
 *   observed   observe_session() --no-patch timing every call (entry and return stops,
 *              plus its calibration of 200 empty calls)
 * bare trap per hit = (bare - plain) / N; observed per call =
 * (observed - plain) / (N + calibration calls). The target is at most 1.3
 * times two bare trap round trips.
 *
 * Then, per round, two more children of N_PATCHED calls (100,000): plain
 * again and observed with patched entries (the default), each measured in
 * CPU time of the whole process tree (benchtrap's own and the child's):
 * patched per call = (patched - plain) / (N_PATCHED + calibration calls),
 * target at most 1 µs (0.2 µs aimed at).
 * Usage: observe-cost TARGET [N] [ROUNDS] [N_PATCHED]
 */
#include <sys/resource.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "elf/elf.h"
#include "observe/observe.h"
#include "trace/trace.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct target {
	const char *path;
	char *argv[3];
	uint64_t main_link, entry_link, fn_link;
};

/* A fresh child stopped in main; *ret_bias is its load bias. */
static struct trace_proc *start(const struct target *t, int devnull, uint64_t *ret_bias)
{
	struct trace_spawn_opts o;
	struct trace_proc *p;
	uint64_t main_addr;

	trace_spawn_opts_init(&o, t->argv);
	o.stdio[1] = o.stdio[2] = devnull;
	if (trace_spawn(&o, &p, NULL) < 0)
		return NULL;
	if (trace_run_to_main(p, t->main_link, t->entry_link, 10000, &main_addr, NULL) < 0) {
		trace_proc_free(p);
		return NULL;
	}
	*ret_bias = main_addr - t->main_link;
	return p;
}

/* CPU time of this process and its reaped children, µs. */
static double cpu_us(void)
{
	struct rusage a, b;

	getrusage(RUSAGE_SELF, &a);
	getrusage(RUSAGE_CHILDREN, &b);
	return (double)(a.ru_utime.tv_sec + a.ru_stime.tv_sec + b.ru_utime.tv_sec +
			b.ru_stime.tv_sec) *
		       1e6 +
	       (double)(a.ru_utime.tv_usec + a.ru_stime.tv_usec + b.ru_utime.tv_usec +
			b.ru_stime.tv_usec);
}

/* Run to exit; counts breakpoint hits. Returns the microseconds it took. */
static double run_to_exit(struct trace_proc *p, long *ret_hits)
{
	double t0 = now_us();
	long hits = 0;
	int r = trace_resume(p);

	while (r == 0) {
		struct trace_event ev;

		r = trace_wait(p, -1, &ev);
		if (r < 0 || ev.kind == TRACE_EV_EXITED || ev.kind == TRACE_EV_KILLED)
			break;
		hits += ev.kind == TRACE_EV_BREAKPOINT;
		r = trace_resume(p);
	}
	*ret_hits = hits;
	return now_us() - t0;
}

int main(int argc, char **argv)
{
	struct target t = { 0 };
	const char *sym[] = { "observed_fn" };
	long n = argc > 2 ? atol(argv[2]) : 2000;
	int rounds = argc > 3 ? atoi(argv[3]) : 5;
	long np = argc > 4 ? atol(argv[4]) : 100000;
	double *plain, *bare, *obs, *stop, *lat, *pcpu, *pwall;
	char npbuf[32];
	struct elf_file *ef;
	char nbuf[32];
	int devnull;

	if (argc < 2 || n < 1 || rounds < 1) {
		fprintf(stderr, "usage: observe-cost TARGET [N] [ROUNDS]\n");
		return 2;
	}
	if (elf_open(argv[1], &ef, NULL) < 0 || !elf_symbol_by_name(ef, "observed_fn")) {
		fprintf(stderr, "observe-cost: %s is not observe_cost_target\n", argv[1]);
		return 2;
	}
	t.path = argv[1];
	t.main_link = elf_symbol_by_name(ef, "main")->addr;
	t.fn_link = elf_symbol_by_name(ef, "observed_fn")->addr;
	t.entry_link = elf_entry(ef);
	snprintf(nbuf, sizeof(nbuf), "%ld", n);
	t.argv[0] = (char *)argv[1];
	t.argv[1] = nbuf;
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	plain = calloc((size_t)rounds, sizeof(double));
	bare = calloc((size_t)rounds, sizeof(double));
	obs = calloc((size_t)rounds, sizeof(double));
	stop = calloc((size_t)rounds, sizeof(double));
	lat = calloc((size_t)rounds, sizeof(double));
	pcpu = calloc((size_t)rounds, sizeof(double));
	pwall = calloc((size_t)rounds, sizeof(double));
	if (devnull < 0 || !plain || !bare || !obs || !stop || !lat || !pcpu || !pwall)
		return 1;
	snprintf(npbuf, sizeof(npbuf), "%ld", np);

	for (int i = 0; i < rounds; i++) {
		struct observe_opts oo = { .symbols = sym, .nsymbols = 1, .no_patch = true };
		struct observe_result res;
		struct trace_proc *p;
		uint64_t bias;
		long hits;
		double t0;

		p = start(&t, devnull, &bias);
		if (!p)
			goto fail;
		plain[i] = run_to_exit(p, &hits);
		trace_proc_free(p);

		p = start(&t, devnull, &bias);
		if (!p || trace_bp_insert(p, bias + t.fn_link) < 0)
			goto fail;
		bare[i] = run_to_exit(p, &hits);
		trace_proc_free(p);
		if (hits != n) {
			fprintf(stderr, "observe-cost: %ld breakpoint hits, expected %ld\n", hits,
				n);
			return 1;
		}

		p = start(&t, devnull, &bias);
		if (!p)
			goto fail;
		t0 = now_us();
		if (observe_session(p, false, &oo, &res) < 0)
			goto fail;
		obs[i] = now_us() - t0;
		trace_proc_free(p);
		if (res.nfuncs != 1 || res.funcs[0].calls != (uint64_t)n || !res.calibrated) {
			fprintf(stderr, "observe-cost: observed %llu calls, expected %ld\n",
				res.nfuncs ? (unsigned long long)res.funcs[0].calls : 0ull, n);
			return 1;
		}
		stop[i] = res.calib.stop_median / 1e3;
		lat[i] = res.calib.latency / 1e3;
		obs[i] = (obs[i] - plain[i]) / (double)(n + (long)res.calib.calls);
		bare[i] = (bare[i] - plain[i]) / (double)n;
		observe_result_clear(&res);

		/* patched, in CPU time of the whole tree */
		{
			struct observe_opts po = { .symbols = sym, .nsymbols = 1 };
			double c0, w0, cplain, wplain;

			t.argv[1] = npbuf;
			c0 = cpu_us();
			w0 = now_us();
			p = start(&t, devnull, &bias);
			if (!p)
				goto fail;
			run_to_exit(p, &hits);
			trace_proc_free(p);
			cplain = cpu_us() - c0;
			wplain = now_us() - w0;
			c0 = cpu_us();
			w0 = now_us();
			p = start(&t, devnull, &bias);
			if (!p || observe_session(p, false, &po, &res) < 0)
				goto fail;
			trace_proc_free(p);
			t.argv[1] = nbuf;
			if (res.nfuncs != 1 || res.funcs[0].calls != (uint64_t)np ||
			    !res.funcs[0].patched || !res.overhead_calibrated) {
				fprintf(stderr,
					"observe-cost: patched: %llu calls (expected %ld), %s\n",
					res.nfuncs ? (unsigned long long)res.funcs[0].calls : 0ull,
					np,
					res.nfuncs && res.funcs[0].patched ? "patched"
									   : "not patched");
				return 1;
			}
			pcpu[i] = (cpu_us() - c0 - cplain) /
				  (double)(np + (long)res.calib.patched_calls);
			pwall[i] = (now_us() - w0 - wplain) /
				   (double)(np + (long)res.calib.patched_calls);
			observe_result_clear(&res);
		}
	}
	{
		double b = median(bare, (size_t)rounds), o = median(obs, (size_t)rounds);

		printf("observe-cost: %ld calls of an empty function, %d rounds (medians, µs)\n", n,
		       rounds);
		printf("%-48s %10.1f\n", "bare trap round trip (hit, report, step over)", b);
		printf("%-48s %10.1f\n", "observed call (entry + return stops)", o);
		printf("%-48s %10.1f\n", "  of which stopped per stop (calibration)",
		       median(stop, (size_t)rounds));
		printf("%-48s %10.1f\n", "  resume-to-trap latency per resume",
		       median(lat, (size_t)rounds));
		printf("%-48s %10.2f  (target <= 1.30)\n", "observed call / two bare round trips",
		       o / (2 * b));
		printf("patched: %ld calls of the same function (medians, µs per call)\n", np);
		printf("%-48s %10.3f  (target <= 1, aim 0.2)\n",
		       "patched call, CPU of benchtrap + program", median(pcpu, (size_t)rounds));
		printf("%-48s %10.3f\n", "patched call, wall time", median(pwall, (size_t)rounds));
		printf("%-48s %10.0f\n", "breakpoints / patched, per call (wall)",
		       o / median(pwall, (size_t)rounds));
	}
	return 0;
fail:
	fprintf(stderr, "observe-cost: cannot run %s under trace\n", t.path);
	return 1;
}
