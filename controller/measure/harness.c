/* SPDX-License-Identifier: MIT */
/*
 * A traced child with the walltime harness in place (harness.h): spawned
 * and run to main, the harness code and a data page mapped into it, its
 * vDSO clock found; then samples of a benchmark against the empty function
 * mapped near it. The walltime instrument (walltime.c) and the paired
 * comparison of two builds (paired.c) sample through it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/fd.h"
#include "arch/harness.h"
#include "elf/elf.h"
#include "trace/trace.h"
#include "util/procmaps.h"
#include "measure/harness.h"

void harness_emit(const struct measure_hooks *h, enum measure_event_kind kind, const char *name,
		  pid_t pid, uint64_t t, size_t sample, uint64_t iterations, bool warmup)
{
	struct measure_event ev = { kind, name, pid, t, sample, iterations, warmup };

	measure_emit(h, &ev);
}

static int fail_with(char **ret_error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_with(char **ret_error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(ret_error, fmt, ap) < 0)
		*ret_error = NULL;
	va_end(ap);
	return -TRACE_E_FAILED;
}

/* The failure in words; a timeout is stated as the configured one, not
 * as what was left of it when the last call started. */
char *harness_failure(const struct trace_failure *f, uint64_t timeout_ns)
{
	struct trace_failure g = *f;
	char buf[8192];

	if (g.kind == TRACE_FAIL_TIMEOUT)
		g.timeout_ms =
			(int)(timeout_ns / 1000000 > INT_MAX ? INT_MAX : timeout_ns / 1000000);
	return strdup(trace_failure_format(&g, buf, sizeof(buf)));
}

/*
 * The child's clock_gettime in its vDSO: read the vDSO image out of the
 * child and look the symbol up. 0 when there is no vDSO.
 */
static uint64_t find_vdso_clock(struct trace_proc *p)
{
	uint64_t base = 0, addr = 0;
	size_t size = 0;

	if (trace_auxv(p, AT_SYSINFO_EHDR, &base) < 0 || base == 0)
		return 0;
	size = procmaps_size_at(trace_pid(p), base);
	if (size == 0 || size > (1u << 20))
		return 0;

	void *image = malloc(size);
	struct elf_file *vdso = NULL;

	if (image && trace_read(p, base, image, size) == 0 &&
	    elf_open_memory("[vdso]", image, size, &vdso) == 0) {
		const struct elf_symbol *s = elf_symbol_by_name(vdso, arch_vdso_clock_symbol);

		if (!s)
			s = elf_symbol_by_name(vdso, "clock_gettime");
		/* The vDSO is linked at 0 (or its first load address): its
		 * symbols are offsets from the mapping. */
		if (s)
			addr = base + s->addr -
			       (elf_is_pic(vdso) ? 0 : elf_entry(vdso) & ~0xfffull);
	}
	elf_close(vdso);
	free(image);
	return addr;
}

/* Load base of 'object' in the child, from /proc/PID/maps. */
static int library_base(struct trace_proc *p, const char *object, uint64_t *ret)
{
	return procmaps_file_base(trace_pid(p), object, ret);
}

void harness_free(struct harness *c)
{
	trace_proc_free(c->p);
	c->p = NULL;
}

/* Spawn, run to main, and put the harness in place. */
int harness_start(const struct measure_target *t, uint64_t deadline, uint64_t timeout_ns,
		  struct harness *c, bool *ret_no_vdso, char **ret_error)
{
	struct trace_spawn_opts so;
	struct trace_failure f;
	uint64_t main_addr, at_entry, data_args[6] = { 0 };
	int64_t mmap_ret;
	bool writable;
	int exec_errno = 0, devnull = -1, input, r;

	*c = (struct harness){ 0 };
	trace_spawn_opts_init(&so, t->argv);
	so.aslr = t->aslr;
	so.clean_env = t->clean_env;
	so.cpu = t->cpu;
	/* What a benchmark forks runs on untraced; its process group makes
	 * sure it dies with the child. */
	so.process_group = true;
	/* The child never reads benchtrap's own input unless told to: in a
	 * pipeline it would block, or eat what the next command needs. */
	input = measure_open_input(t);
	if (input < 0)
		return fail_with(ret_error, "cannot open the input %s: %s", t->input,
				 strerror(-input));
	so.stdio[0] = input;
	if (t->quiet_stdio) {
		devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
		so.stdio[1] = so.stdio[2] = devnull;
	}
	r = trace_spawn(&so, &c->p, &exec_errno);
	fd_close(devnull);
	close(input);
	if (r == -TRACE_E_EXEC)
		return fail_with(ret_error, "cannot execute %s: %s", t->binary,
				 strerror(exec_errno));
	if (r < 0)
		return fail_with(ret_error, "cannot start %s: %s", t->binary, trace_strerror(r));

	/* Loading and constructors count against the benchmark's timeout. */
	uint64_t now = measure_now_ns();
	int budget_ms = now >= deadline ? 1
			: (deadline - now) / 1000000 > INT_MAX
				? INT_MAX
				: (int)((deadline - now) / 1000000) + 1;

	r = trace_run_to_main(c->p, t->main_link, t->entry_link, budget_ms, &main_addr, &f);
	if (r == -TRACE_E_FAILED) {
		char *what = harness_failure(&f, timeout_ns);

		fail_with(ret_error, "%s failed before main: %s", t->binary, what ? what : "?");
		free(what);
		goto fail;
	}
	if (r < 0) {
		fail_with(ret_error, "cannot run %s to main: %s", t->binary, trace_strerror(r));
		goto fail;
	}
	r = trace_auxv(c->p, AT_ENTRY, &at_entry);
	if (r < 0) {
		fail_with(ret_error, "cannot read the auxiliary vector: %s", trace_strerror(r));
		goto fail;
	}
	c->bias = at_entry - t->entry_link;

	r = trace_map_exec(c->p, PAGE, &c->harness, &writable);
	if (r == 0)
		r = trace_write(c->p, c->harness, arch_harness_code, arch_harness_len);
	if (r < 0) {
		fail_with(ret_error, "cannot map the harness in the child: %s", trace_strerror(r));
		goto fail;
	}
	r = trace_syscall(c->p, SYS_mmap,
			  (const uint64_t[6]){ 0, PAGE, PROT_READ | PROT_WRITE,
					       MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0 },
			  &mmap_ret);
	if (r == 0 && mmap_ret < 0 && mmap_ret > -4096)
		r = (int)mmap_ret;
	if (r < 0) {
		fail_with(ret_error, "cannot map a data page in the child: %s", trace_strerror(r));
		goto fail;
	}
	c->data = (uint64_t)mmap_ret;
	r = trace_write(c->p, c->data + DATA_ARGS, data_args, sizeof(data_args));
	if (r < 0) {
		fail_with(ret_error, "cannot write the data page: %s", trace_strerror(r));
		goto fail;
	}
	c->clock = find_vdso_clock(c->p);
	c->vdso_clock = c->clock != 0;
	if (!c->clock)
		c->clock = c->harness + arch_harness_sysclock;
	*ret_no_vdso = !c->vdso_clock;
	return 0;
fail:
	harness_free(c);
	return -TRACE_E_FAILED;
}

static uint64_t ts_ns(const int64_t ts[2])
{
	return (uint64_t)ts[0] * 1000000000u + (uint64_t)ts[1];
}

/*
 * One call of the harness: n calls of first, then n of second; ret_t
 * receives the child's three clock readings t0, t1, t2 in ns.
 */
static int take_sample(struct harness *c, uint64_t first, uint64_t second, uint64_t n,
		       uint64_t deadline, uint64_t ret_t[3], struct trace_failure *f)
{
	uint64_t now = measure_now_ns();
	struct trace_call_opts o = { .all_threads = true };
	int64_t ts[6];
	int r;

	if (now >= deadline)
		o.timeout_ms = 1;
	else
		o.timeout_ms = (int)((deadline - now) / 1000000 > INT_MAX
					     ? INT_MAX
					     : (deadline - now + 999999) / 1000000);
	r = trace_call(c->p, c->harness,
		       (const uint64_t[6]){ first, second, n, c->data + DATA_ARGS, c->clock,
					    c->data + DATA_OUT },
		       6, &o, NULL, f);
	if (r < 0)
		return r;
	r = trace_read(c->p, c->data + DATA_OUT, ts, sizeof(ts));
	if (r < 0)
		return r;
	for (int i = 0; i < 3; i++)
		ret_t[i] = ts_ns(&ts[2 * i]);
	return 0;
}

int harness_sample(struct harness *c, uint64_t fn, uint64_t empty, uint64_t n, uint64_t deadline,
		   struct sample *ret, struct trace_failure *f)
{
	uint64_t a[3], b[3];
	int r;

	r = take_sample(c, empty, fn, n, deadline, a, f);
	if (r == 0)
		r = take_sample(c, fn, empty, n, deadline, b, f);
	if (r < 0)
		return r;
	*ret = (struct sample){ .cal = (a[1] - a[0]) + (b[2] - b[1]),
				.bench = (a[2] - a[1]) + (b[1] - b[0]),
				.t_start = a[1],
				.t_end = b[1] };
	return 0;
}

/*
 * The empty function the benchmark at fn is measured against: a page
 * filled with arch_harness_empty_insn, mapped near fn (within 2 GiB,
 * below it where the address space allows), and the empty function at
 * fn's own offset in that page. Where a function is costs time: a bare
 * `ret` in the binary called from the harness's page measured 0.65-2.0 ns
 * more per call than one in the harness's page at the same offset, and
 * within a few hundredths of a nanosecond of one mapped near it
 * (docs/run.md has the figures). *ret_page is the page, for munmap.
 */
int harness_map_empty(struct harness *c, uint64_t fn, uint64_t *ret_page)
{
	static const uint64_t below[] = { 1ull << 20, 1ull << 24, 1ull << 28, 0 };
	uint64_t fn_page = fn & ~(uint64_t)(PAGE - 1), page = 0;
	uint8_t fill[PAGE];
	int r;

	for (size_t i = 0; i < sizeof(below) / sizeof(below[0]); i++) {
		uint64_t hint = below[i] && fn_page > below[i] ? fn_page - below[i] : 0;
		int64_t m;

		/* Read and execute only: the tracer writes it through the
		 * child's memory file all the same, and W^X policies allow it. */
		uint64_t args[6] = {
			hint,	      PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
			(uint64_t)-1, 0
		};

		r = trace_syscall(c->p, SYS_mmap, args, &m);
		if (r == 0 && m < 0 && m > -4096)
			r = (int)m;
		if (r < 0)
			return r;
		page = (uint64_t)m;
		/* The last try keeps what the kernel gave. */
		if ((page > fn ? page - fn : fn - page) < (1ull << 31) || !below[i])
			break;
		trace_syscall(c->p, SYS_munmap, (const uint64_t[6]){ page, PAGE }, &m);
	}
	for (size_t i = 0; i + arch_harness_empty_insn_len <= PAGE;
	     i += arch_harness_empty_insn_len)
		memcpy(fill + i, arch_harness_empty_insn, arch_harness_empty_insn_len);
	r = trace_write(c->p, page, fill, PAGE);
	if (r < 0)
		return r;
	*ret_page = page;
	return 0;
}

/* A floor sample: the empty function in both passes, in both calls;
 * *ret is its per-call difference. */
int harness_floor(struct harness *c, uint64_t empty, uint64_t n, uint64_t deadline, double *ret,
		  struct trace_failure *f)
{
	struct sample x;
	int r;

	r = harness_sample(c, empty, empty, n, deadline, &x, f);
	if (r == 0)
		*ret = harness_per_call(&x, n);
	return r;
}

/* The address the benchmark s is called at in child c. */
int harness_address(struct harness *c, const struct bench_spec *s, struct bench_result *res,
		    uint64_t *ret_fn, struct trace_failure *f)
{
	uint64_t fn, base = 0;
	int r;

	if (s->in_main) {
		fn = c->bias + s->link_addr;
	} else {
		r = library_base(c->p, s->object, &base);
		if (r < 0) {
			if (asprintf(&res->error,
				     "%s is not loaded when main starts (a library the program "
				     "dlopen()s later cannot be called this way yet)",
				     s->object) < 0)
				res->error = NULL;
			return -ENOENT;
		}
		fn = base + s->link_addr;
	}
	if (s->ifunc) {
		/* An IFUNC symbol is a resolver: call it once, as the dynamic
		 * loader does, and time the implementation it picks. */
		struct trace_call_opts o = { .timeout_ms = 10000, .all_threads = true };
		uint64_t impl;

		r = trace_call(c->p, fn, NULL, 0, &o, &impl, f);
		if (r < 0)
			return r;
		fn = impl;
	}
	*ret_fn = fn;
	return 0;
}

void harness_finish(struct bench_result *res)
{
	struct stats_options so = stats_options_default();

	if (stats_summarize(res->samples, res->nsamples, &so, &res->stats) < 0) {
		res->status = BENCH_FAILED;
		res->error = strdup("no usable samples");
		return;
	}
	res->status = BENCH_OK;
	/* A time below zero is noise around an empty function's: the
	 * headline says 0, the statistics keep what was measured. */
	res->value = res->stats.median > 0 ? res->stats.median : 0;
	/* A benchmark whose time cannot be told from the empty function's
	 * was probably optimized away (or is just a return). */
	res->no_time = measure_no_time(res->stats.median, res->stats.ci_low, res->resolution,
				       res->nsamples);
	if (res->no_time && isnan(res->resolution))
		bench_result_diagnose(res,
				      "measured no execution time: %.2f ns per call (confidence "
				      "interval from %.2f ns) is not more than an empty function's "
				      "(%s)",
				      res->stats.median, res->stats.ci_low,
				      measure_no_time_advice(res->spec));
	else if (res->no_time)
		bench_result_diagnose(res,
				      "measured no execution time: %.2f ns per call (confidence "
				      "interval from %.2f ns) is within this measurement's "
				      "resolution (±%.2f ns, an empty function measured against "
				      "itself in the same child; %s)",
				      res->stats.median, res->stats.ci_low, res->resolution,
				      measure_no_time_advice(res->spec));
}

int harness_set_args(struct harness *c, const struct bench_spec *s)
{
	uint64_t args[6] = { 0 };

	for (unsigned i = 0; i < s->nargs; i++)
		args[i] = (uint64_t)s->args[i];
	return trace_write(c->p, c->data + DATA_ARGS, args, sizeof(args));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void harness_calibration(struct bench_result *res, double *cals, size_t ns, uint64_t n,
			 bool warn_noisy)
{
	if (ns == 0)
		return;
	/* The loop's own cost, as reported: the median over all samples. */
	qsort(cals, ns, sizeof(*cals), cmp_double);
	res->calibration = ns % 2 ? cals[ns / 2] : (cals[ns / 2 - 1] + cals[ns / 2]) / 2;

	/* The empty loop is a canary of the machine's speed: the same code
	 * every sample. When it varies, so did everything measured with it. */
	double cal_q1 = cals[ns / 4], cal_q3 = cals[(3 * ns) / 4];

	if (warn_noisy && ns >= 8 && measure_machine_noisy(res->calibration, cal_q1, cal_q3, 2 * n))
		bench_result_diagnose(res,
				      "the machine's speed varied while this was measured: the "
				      "empty loop's cost per call ranged over %.2f-%.2f ns "
				      "(middle half of the samples), %.0f%% of its median; "
				      "compare figures from quieter runs",
				      cal_q1, cal_q3, 100 * (cal_q3 - cal_q1) / res->calibration);
}
