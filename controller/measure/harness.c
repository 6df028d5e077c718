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
#include "arch/rounds.h"
#include "elf/elf.h"
#include "trace/trace.h"
#include "util/procmaps.h"
#include "util/strutil.h"
#include "measure/harness.h"

void harness_emit(const struct measure_hooks *h, enum measure_event_kind kind, const char *name,
		  pid_t pid, uint64_t t, size_t sample, uint64_t iterations, bool warmup)
{
	struct measure_event ev = { kind, name, pid, t, sample, iterations, warmup, NULL, 0 };

	measure_emit(h, &ev);
}

void harness_emit_sample(const struct measure_hooks *h, const struct harness *c,
			 const char *name, const struct sample *x, size_t index, bool warmup)
{
	struct measure_event ev = { MEASURE_SAMPLE_START, name, trace_pid(c->p), x->t_start,
				    index, x->calls, warmup, NULL, 0 };

	/* Markers of a sample are written once it completed, with the
	 * child's own clock readings: a sample that failed has none. */
	measure_emit(h, &ev);
	ev.kind = MEASURE_SAMPLE_END;
	ev.t_ns = x->t_end;
	if (c->nthreads) {
		ev.bounds = c->bounds;
		ev.nbounds = c->nthreads;
	}
	measure_emit(h, &ev);
}

static int cmp_double(const void *a, const void *b);

/* The rounds' code follows the harness in its page. */
#define ROUNDS_AT 0x100
_Static_assert(ROUNDS_AT % ARCH_HARNESS_ALIGN == 0, "the rounds' code is aligned");

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
uint64_t harness_vdso_clock(struct trace_proc *p)
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

/* Map 'size' bytes of anonymous read-write memory in the child. */
static int map_data(struct trace_proc *p, uint64_t size, uint64_t *ret_addr)
{
	int64_t m;
	int r = trace_syscall(p, SYS_mmap,
			      (const uint64_t[6]){ 0, size, PROT_READ | PROT_WRITE,
						   MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0 },
			      &m);

	if (r == 0 && m < 0 && m > -4096)
		r = (int)m;
	if (r == 0)
		*ret_addr = (uint64_t)m;
	return r;
}

/* Spawn, run to main, and put the harness in place. */
int harness_start(const struct measure_target *t, uint64_t deadline, uint64_t timeout_ns,
		  struct harness *c, bool *ret_no_vdso, char **ret_error)
{
	struct trace_spawn_opts so;
	struct trace_failure f;
	uint64_t main_addr, at_entry, data_args[6] = { 0 };
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
	if (r == 0)
		r = trace_write(c->p, c->harness + ROUNDS_AT, arch_rounds_code, arch_rounds_len);
	if (r < 0) {
		fail_with(ret_error, "cannot map the harness in the child: %s", trace_strerror(r));
		goto fail;
	}
	r = map_data(c->p, PAGE, &c->data);
	if (r < 0) {
		fail_with(ret_error, "cannot map a data page in the child: %s", trace_strerror(r));
		goto fail;
	}
	r = trace_write(c->p, c->data + DATA_ARGS, data_args, sizeof(data_args));
	if (r < 0) {
		fail_with(ret_error, "cannot write the data page: %s", trace_strerror(r));
		goto fail;
	}
	c->clock = harness_vdso_clock(c->p);
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
 * A failure's frames in the code benchtrap injected are named after it, and
 * end the backtrace: benchtrap called into it, so nothing is beyond. No file
 * holds that code, yet the unwinder may take it for a library's when the
 * page was mapped inside the address range the library's module spans (a
 * gap between its segments, or right beside them): whatever module, symbol
 * or source line it found there is not the harness's and is dropped.
 */
bool harness_owns(const struct harness *c, uint64_t pc)
{
	return c->harness && pc >= c->harness && pc - c->harness < PAGE;
}

static int named(const struct harness *c, struct trace_failure *f, int r)
{
	if (r != -TRACE_E_FAILED)
		return r;
	for (size_t i = 0; i < f->nframes; i++) {
		struct unwind_frame *u = &f->frames[i];
		uint64_t at = u->pc - c->harness;
		const char *what = "[benchtrap harness]";

		if (!harness_owns(c, u->pc))
			continue;
		/* The rounds' two functions, in whichever order they were
		 * laid out: the workers' and the main thread's. */
		if (at >= ROUNDS_AT && at < ROUNDS_AT + arch_rounds_len)
			what = (at - ROUNDS_AT >= arch_rounds_run) ==
					       (arch_rounds_run > arch_rounds_worker)
				       ? "[benchtrap --threads round, main thread]"
				       : "[benchtrap --threads worker]";
		snprintf(u->func, sizeof(u->func), "%s", what);
		u->offset = 0;
		u->module[0] = '\0';
		u->file[0] = '\0';
		u->line = 0;
		f->nframes = i + 1;
		break;
	}
	return r;
}

/* What is left of 'deadline' for an injected call, in ms (at least 1). */
static int call_timeout_ms(uint64_t deadline)
{
	uint64_t now = measure_now_ns();

	if (now >= deadline)
		return 1;
	return (int)((deadline - now) / 1000000 > INT_MAX ? INT_MAX
							  : (deadline - now + 999999) / 1000000);
}

/*
 * One call of the harness: n calls of first, then n of second; ret_t
 * receives the child's three clock readings t0, t1, t2 in ns.
 */
static void add_events(struct harness *c, const struct trace_call_counts *ev)
{
	c->events.clones += ev->clones;
	c->events.forks += ev->forks;
	c->events.signals += ev->signals;
}

static int take_sample(struct harness *c, uint64_t first, uint64_t second, uint64_t n,
		       uint64_t deadline, uint64_t ret_t[3], struct trace_failure *f)
{
	struct trace_call_opts o = { .all_threads = true };
	struct trace_call_counts ev;
	int64_t ts[6];
	int r;

	o.timeout_ms = call_timeout_ms(deadline);
	o.counts = &ev;
	r = trace_call(c->p, c->harness,
		       (const uint64_t[6]){ first, second, n, c->data + DATA_ARGS, c->clock,
					    c->data + DATA_OUT },
		       6, &o, NULL, f);
	if (r < 0)
		return named(c, f, r);
	add_events(c, &ev);
	r = trace_read(c->p, c->data + DATA_OUT, ts, sizeof(ts));
	if (r < 0)
		return r;
	for (int i = 0; i < 3; i++)
		ret_t[i] = ts_ns(&ts[2 * i]);
	return 0;
}

/*
 * Where the child defines 'name' (the first object mapped that does: the
 * program, then its libraries, in the loader's order): 0 when none does.
 */
static uint64_t child_symbol(struct harness *c, const char *name)
{
	struct procmaps_iter it;
	struct procmaps_entry e;
	char *text, *seen = NULL;
	uint64_t addr = 0;

	if (procmaps_read(trace_pid(c->p), &text) < 0)
		return 0;
	procmaps_iter_init(&it, text);
	while (!addr && procmaps_next(&it, &e)) {
		struct elf_file *ef = NULL;
		const struct elf_symbol *s;
		const char *what;

		/* Each object once, at its first mapping (offset 0). */
		if (e.off != 0 || e.path[0] != '/' || (seen && !strcmp(seen, e.path)))
			continue;
		free(seen);
		seen = strdup(e.path);
		if (elf_open(e.path, &ef, &what) < 0)
			continue;
		s = elf_symbol_by_name(ef, name);
		if (s && !s->ifunc)
			addr = (elf_is_pic(ef) ? e.lo : 0) + s->addr;
		elf_close(ef);
	}
	free(seen);
	free(text);
	return addr;
}

/* The thread ids of p (malloc'ed, *ret_n of them), or NULL. */
static pid_t *thread_ids(struct trace_proc *p, size_t *ret_n)
{
	size_t n = trace_thread_count(p);
	pid_t *v = calloc(n ? n : 1, sizeof(*v));

	for (size_t k = 0; v && k < n; k++)
		v[k] = trace_thread_tid(p, k);
	*ret_n = n;
	return v;
}

/* A thread of p not in before[0..n): the one a call just created (0 if
 * none is). */
static pid_t new_thread(struct trace_proc *p, const pid_t *before, size_t n)
{
	for (size_t k = 0; k < trace_thread_count(p); k++) {
		pid_t tid = trace_thread_tid(p, k);
		size_t j = 0;

		while (j < n && before[j] != tid)
			j++;
		if (j == n)
			return tid;
	}
	return 0;
}

int harness_threads_start(struct harness *c, unsigned nthreads, uint64_t deadline,
			  struct bench_result *res, struct trace_failure *f)
{
	struct trace_call_opts o = { .all_threads = true };
	struct rounds_ctl ctl = { 0 };
	uint64_t create, value;
	int r;

	create = child_symbol(c, "pthread_create");
	c->join = child_symbol(c, "pthread_join");
	if (!create || !c->join) {
		res->error = strdup("--threads needs the program's pthread_create and "
				    "pthread_join, and it has none (a static binary that "
				    "never creates a thread): link it dynamically, or keep them "
				    "with -Wl,-u,pthread_create,-u,pthread_join");
		return -ENOENT;
	}
	c->ctl_size = (sizeof(ctl) + PAGE - 1) & ~(uint64_t)(PAGE - 1);
	r = map_data(c->p, c->ctl_size, &c->ctl);
	if (r < 0)
		return r;
	ctl.n = 1;
	ctl.args = c->data + DATA_ARGS;
	ctl.clock = c->clock;
	ctl.nthreads = nthreads;
	for (unsigned i = 0; i < nthreads; i++)
		ctl.slot[i].ctl = c->ctl;
	r = trace_write(c->p, c->ctl, &ctl, sizeof(ctl));
	if (r < 0)
		return r;
	/* The program's own threads: the next benchmark's child never has
	 * them, and this child loses them at harness_threads_stop(). */
	for (unsigned i = 0; i < nthreads; i++) {
		uint64_t slot = c->ctl + offsetof(struct rounds_ctl, slot) +
				i * sizeof(struct rounds_slot);
		size_t nbefore;
		pid_t *before = thread_ids(c->p, &nbefore);

		if (!before)
			return -ENOMEM;

		o.timeout_ms = call_timeout_ms(deadline);
		r = trace_call(c->p, create,
			       (const uint64_t[4]){ slot + offsetof(struct rounds_slot, thread), 0,
						    c->harness + ROUNDS_AT + arch_rounds_worker,
						    slot },
			       4, &o, &value, f);
		/* The worker's thread id, before it ran: the one thread the
		 * engine did not have before the call. */
		c->tids[i] = r == 0 ? new_thread(c->p, before, nbefore) : 0;
		free(before);
		if (r < 0)
			return r;
		if ((int)value != 0) {
			if (asprintf(&res->error, "the program's pthread_create failed for thread "
						  "%u of %u: %s",
				     i + 1, nthreads, strerror((int)value)) < 0)
				res->error = NULL;
			/* The workers made so far wait for a round that
			 * never comes; the child is killed with them. */
			trace_kill(c->p);
			return -ENOENT;
		}
		c->nthreads = i + 1;
	}
	c->parity = 0;
	return 0;
}

int harness_threads_stop(struct harness *c, uint64_t deadline, struct trace_failure *f)
{
	struct trace_call_opts o = { .all_threads = true };
	struct rounds_slot slots[ROUNDS_MAX_THREADS];
	uint32_t quit = 1;
	int64_t ignored;
	int r;

	if (!c->nthreads)
		return 0;
	r = trace_read(c->p, c->ctl + offsetof(struct rounds_ctl, slot), slots,
		       c->nthreads * sizeof(slots[0]));
	if (r == 0)
		r = trace_write(c->p, c->ctl + offsetof(struct rounds_ctl, quit), &quit,
				sizeof(quit));
	o.timeout_ms = call_timeout_ms(deadline);
	if (r == 0)
		r = trace_call(c->p, c->harness + ROUNDS_AT + arch_rounds_run,
			       (const uint64_t[1]){ c->ctl }, 1, &o, NULL, f);
	for (unsigned i = 0; r == 0 && i < c->nthreads; i++) {
		uint64_t value;

		o.timeout_ms = call_timeout_ms(deadline);
		r = trace_call(c->p, c->join, (const uint64_t[2]){ slots[i].thread, 0 }, 2, &o,
			       &value, f);
		if (r == 0 && (int)value != 0)
			r = -ECHILD;
	}
	if (r == 0)
		trace_syscall(c->p, SYS_munmap, (const uint64_t[6]){ c->ctl, c->ctl_size },
			      &ignored);
	c->nthreads = 0;
	return r;
}

/* One round of c's workers, each calling fn n times; *ret_span is the
 * round's [min start, max end], ret_bounds every thread's interval. */
static int take_round(struct harness *c, uint64_t fn, uint64_t n, uint64_t deadline,
		      struct measure_bound *ret_bounds, uint64_t ret_span[2], uint64_t *ret_cpu,
		      struct trace_failure *f)
{
	/* A round that never ends is blamed on a worker that is not waiting
	 * in the rounds' code: one stuck in the body. */
	struct trace_call_opts o = { .all_threads = true,
				     .blame = c->tids,
				     .nblame = c->nthreads,
				     .idle_lo = c->harness,
				     .idle_hi = c->harness + PAGE };
	struct rounds_slot slots[ROUNDS_MAX_THREADS];
	struct trace_call_counts ev = { 0 };
	uint64_t head[2] = { fn, n };
	int r;

	o.timeout_ms = call_timeout_ms(deadline);
	o.counts = &ev;
	r = trace_write(c->p, c->ctl + offsetof(struct rounds_ctl, fn), head, sizeof(head));
	if (r == 0)
		r = named(c, f,
			  trace_call(c->p, c->harness + ROUNDS_AT + arch_rounds_run,
				     (const uint64_t[1]){ c->ctl }, 1, &o, NULL, f));
	add_events(c, &ev);
	if (r == 0)
		r = trace_read(c->p, c->ctl + offsetof(struct rounds_ctl, slot), slots,
			       c->nthreads * sizeof(slots[0]));
	if (r < 0)
		return r;
	*ret_cpu = 0;
	for (unsigned i = 0; i < c->nthreads; i++) {
		ret_bounds[i] = (struct measure_bound){ slots[i].tid, ts_ns(slots[i].t0),
							ts_ns(slots[i].t1) };
		*ret_cpu += slots[i].cpu_ns;
	}
	harness_round_span(ret_bounds, c->nthreads, ret_span);
	return 0;
}

/* utime and stime (fields 14 and 15) of /proc/PID/task/TID/stat. */
static int thread_ticks(pid_t pid, pid_t tid, uint64_t *ret_utime, uint64_t *ret_stime)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return len < 0 ? -errno : -EIO;
	buf[len] = '\0';
	/* After the command name, which may hold anything but ends at the
	 * last ')': state (3), then fields 4 to 13, then utime and stime. */
	p = strrchr(buf, ')');
	if (!p ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -EIO;
	*ret_utime = ut;
	*ret_stime = st;
	return 0;
}

int harness_cpu_ticks(const struct harness *c, uint64_t *ret_stime, uint64_t *ret_total)
{
	pid_t pid = trace_pid(c->p);
	uint64_t stime = 0, total = 0;

	for (unsigned i = 0; i < (c->nthreads ? c->nthreads : 1); i++) {
		uint64_t ut, st;
		int r = thread_ticks(pid, c->nthreads ? c->tids[i] : trace_current_tid(c->p), &ut,
				     &st);

		if (r < 0)
			return r;
		stime += st;
		total += ut + st;
	}
	*ret_stime = stime;
	*ret_total = total;
	return 0;
}

int harness_count_syscalls(struct harness *c, uint64_t fn, const struct bench_spec *s,
			   unsigned calls, uint64_t deadline, struct trace_syscall_counts *sc,
			   unsigned *ret_calls, struct trace_failure *f)
{
	struct trace_call_opts o = { .all_threads = true, .syscalls = sc };
	uint64_t args[6] = { 0 }, until = measure_now_ns() + 100000000;
	unsigned made = 0;
	int r = 0;

	for (unsigned i = 0; i < s->nargs && i < 6; i++)
		args[i] = (uint64_t)s->args[i];
	while (made < calls && (made == 0 || measure_now_ns() < until)) {
		if (measure_now_ns() >= deadline)
			break;
		o.timeout_ms = call_timeout_ms(deadline);
		r = named(c, f, trace_call(c->p, fn, args, s->nargs, &o, NULL, f));
		if (r < 0)
			return r;
		made++;
	}
	*ret_calls = made;
	return 0;
}

void harness_round_span(const struct measure_bound *b, size_t n, uint64_t ret_span[2])
{
	ret_span[0] = n ? UINT64_MAX : 0;
	ret_span[1] = 0;
	for (size_t i = 0; i < n; i++) {
		if (b[i].start_ns < ret_span[0])
			ret_span[0] = b[i].start_ns;
		if (b[i].end_ns > ret_span[1])
			ret_span[1] = b[i].end_ns;
	}
}

int harness_thread_medians(const double *per_thread, size_t nthreads, size_t ns,
			   const pid_t *tids, struct measure_thread *out)
{
	double *v = malloc((ns ? ns : 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < nthreads; i++) {
		for (size_t k = 0; k < ns; k++)
			v[k] = per_thread[k * nthreads + i];
		out[i].tid = tids[i];
		out[i].value = stats_median(v, ns);
	}
	free(v);
	return 0;
}

int harness_thread_figures(const struct harness *c, const double *per_thread, size_t ns,
			   struct bench_result *res)
{
	int r;

	if (!c->nthreads || ns == 0)
		return 0;
	res->threads = calloc(c->nthreads, sizeof(*res->threads));
	if (!res->threads)
		return -ENOMEM;
	r = harness_thread_medians(per_thread, c->nthreads, ns, c->tids, res->threads);
	if (r == 0)
		res->nthreads = c->nthreads;
	return r;
}

/* A sample on c's workers: the benchmark's round and the empty function's,
 * in turn first. */
static int round_sample(struct harness *c, uint64_t fn, uint64_t empty, uint64_t n,
			uint64_t deadline, struct sample *ret, struct trace_failure *f)
{
	struct measure_bound cal[ROUNDS_MAX_THREADS];
	uint64_t fs[2], es[2], cpu, ignored;
	int r;

	if (c->parity++ % 2) {
		r = take_round(c, fn, n, deadline, c->bounds, fs, &cpu, f);
		if (r == 0)
			r = take_round(c, empty, n, deadline, cal, es, &ignored, f);
	} else {
		r = take_round(c, empty, n, deadline, cal, es, &ignored, f);
		if (r == 0)
			r = take_round(c, fn, n, deadline, c->bounds, fs, &cpu, f);
	}
	if (r < 0)
		return r;
	c->on_cpu = fs[1] > fs[0] ? (double)cpu / ((double)c->nthreads * (double)(fs[1] - fs[0]))
				  : 1;
	for (unsigned i = 0; i < c->nthreads; i++)
		c->thread_per_call[i] = ((double)(c->bounds[i].end_ns - c->bounds[i].start_ns) -
					 (double)(cal[i].end_ns - cal[i].start_ns)) /
					(double)n;
	*ret = (struct sample){ .cal = es[1] - es[0],
				.bench = fs[1] - fs[0],
				.t_start = fs[0],
				.t_end = fs[1],
				.calls = n };
	return 0;
}

int harness_sample(struct harness *c, uint64_t fn, uint64_t empty, uint64_t n, uint64_t deadline,
		   struct sample *ret, struct trace_failure *f)
{
	uint64_t a[3], b[3];
	int r;

	if (c->nthreads)
		return round_sample(c, fn, empty, n, deadline, ret, f);
	r = take_sample(c, empty, fn, n, deadline, a, f);
	if (r == 0)
		r = take_sample(c, fn, empty, n, deadline, b, f);
	if (r < 0)
		return r;
	*ret = (struct sample){ .cal = (a[1] - a[0]) + (b[2] - b[1]),
				.bench = (a[2] - a[1]) + (b[1] - b[0]),
				.t_start = a[1],
				.t_end = b[1],
				.calls = 2 * n };
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
		*ret = harness_per_call(&x);
	return r;
}

static bool same_name(const char *a, const char *b)
{
	return !strcmp(str_basename(a), str_basename(b));
}

/*
 * The library of the same name as s->object that child c really mapped,
 * when it is another file: the selection asked the loader in benchtrap's
 * environment, the child's may differ (--clean-env drops LD_LIBRARY_PATH).
 * The function is looked up by its symbol there. 0 with *ret_path NULL
 * when nothing of that name is mapped; -ENOENT (and res->error) when it is
 * but lacks the function.
 */
static int mapped_instead(struct harness *c, const struct bench_spec *s, struct bench_result *res,
			  uint64_t *ret_fn, bool *ret_ifunc, char **ret_path)
{
	char real[PATH_MAX], *text = NULL;
	struct procmaps_iter *it = malloc(sizeof(*it));
	struct procmaps_entry e;
	int r = it ? procmaps_read(trace_pid(c->p), &text) : -ENOMEM;

	*ret_path = NULL;
	if (!realpath(s->object, real))
		snprintf(real, sizeof(real), "%s", s->object);
	if (r == 0)
		procmaps_iter_init(it, text);
	while (r == 0 && procmaps_next(it, &e)) {
		const struct elf_symbol *sym;
		struct elf_file *lib;

		if (e.off != 0 || e.path[0] != '/' ||
		    !(same_name(e.path, s->object) || same_name(e.path, real)))
			continue;
		if (elf_open(e.path, &lib, NULL) < 0)
			continue;
		sym = s->symbol ? elf_symbol_by_name(lib, s->symbol) : NULL;
		if (sym) {
			*ret_fn = e.lo + sym->addr;
			*ret_ifunc = sym->ifunc;
			*ret_path = strdup(e.path);
			r = *ret_path ? 0 : -ENOMEM;
		} else {
			if (asprintf(&res->error,
				     "the program loaded %s, not %s, and it has no function %s "
				     "(is the program's environment another than benchtrap's?)",
				     e.path, s->object, s->symbol ? s->symbol : s->name) < 0)
				res->error = NULL;
			r = -ENOENT;
		}
		elf_close(lib);
		break;
	}
	free(it);
	free(text);
	return r;
}

/* The address the benchmark s is called at in child c. */
int harness_address(struct harness *c, const struct bench_spec *s, struct bench_result *res,
		    uint64_t *ret_fn, struct trace_failure *f)
{
	uint64_t fn, base = 0;
	bool ifunc = s->ifunc;
	int r;

	if (s->in_main) {
		fn = c->bias + s->link_addr;
	} else if (library_base(c->p, s->object, &base) == 0) {
		fn = base + s->link_addr;
	} else {
		char *instead = NULL;

		r = mapped_instead(c, s, res, &fn, &ifunc, &instead);
		if (r < 0)
			return r;
		if (!instead) {
			if (asprintf(&res->error,
				     "%s is not loaded when main starts (a library the program "
				     "dlopen()s later cannot be called this way yet)",
				     s->object) < 0)
				res->error = NULL;
			return -ENOENT;
		}
		/* The library really mapped is the one called; say which. */
		r = bench_result_diagnose(res,
					  "called in %s, the library the program loaded, not in "
					  "%s, which benchtrap's environment resolves",
					  instead, s->object);
		free(instead);
		if (r < 0)
			return r;
	}
	if (ifunc) {
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

void harness_calibration(struct bench_result *res, double *cals, size_t ns, uint64_t calls,
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

	if (warn_noisy && ns >= 8 && measure_machine_noisy(res->calibration, cal_q1, cal_q3, calls))
		bench_result_diagnose(res,
				      "the machine's speed varied while this was measured: the "
				      "empty loop's cost per call ranged over %.2f-%.2f ns "
				      "(middle half of the samples), %.0f%% of its median; "
				      "compare figures from quieter runs",
				      cal_q1, cal_q3, 100 * (cal_q3 - cal_q1) / res->calibration);
}
