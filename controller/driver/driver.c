/* SPDX-License-Identifier: MIT */
/*
 * The driver: a small shared library that benchtrap preloads (LD_PRELOAD)
 * into a target it runs under valgrind, where nothing can be injected from
 * outside. It wraps glibc's __libc_start_main so that, once the loader and
 * the program's constructors have run, it calls the selected functions in
 * place of the program's main. `--symbol f` thus means "call f" under
 * callgrind exactly as it does under ptrace.
 *
 * What to call comes from the environment benchtrap sets (driver-protocol.h
 * describes it).
 *
 * Functions are called in order, each once (or, for the perf instrument,
 * in counted batches: see perf_run), through
 * benchtrap_driver_call(), which the controller counts with callgrind's
 * --toggle-collect and cuts with --dump-after: the inclusive cost of its
 * call to the function is the benchmark's cost. The process then exits 0.
 * After each call returns, the driver writes one byte to DRIVER_DONE_FD,
 * so that a call that crashed or exited is told from one that returned.
 * Errors (a function that cannot be located) print one line on stderr and
 * exit with status DRIVER_EXIT_ERROR.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "driver-protocol.h"

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_main_fn)(main_fn, int, char **, void (*)(void), void (*)(void),
			     void (*)(void), void *);
typedef void (*bench_fn)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t);

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
		      void (*fini)(void), void (*rtld_fini)(void), void *stack_end);
void benchtrap_driver_call(bench_fn fn, const int64_t *args);

/*
 * The one function callgrind counts. Not inlined and not a tail call (the
 * empty asm after the call keeps the call a call), so that its arc to the
 * benchmark carries exactly the benchmark's inclusive cost.
 */
__attribute__((noinline, used, visibility("default"))) void
benchtrap_driver_call(bench_fn fn, const int64_t *args)
{
	fn(args[0], args[1], args[2], args[3], args[4], args[5]);
	__asm__ volatile("" ::: "memory");
}

struct find {
	const char *object; /* real path, or NULL for the main program */
	uintptr_t bias;
	int found;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find *f = data;
	char real[PATH_MAX];

	(void)size;
	if (!f->object) {
		/* The main program comes first, with an empty name. */
		f->bias = info->dlpi_addr;
		f->found = 1;
		return 1;
	}
	if (info->dlpi_name && info->dlpi_name[0] && realpath(info->dlpi_name, real) &&
	    strcmp(real, f->object) == 0) {
		f->bias = info->dlpi_addr;
		f->found = 1;
		return 1;
	}
	return 0;
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	fputs("benchtrap-driver: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	_exit(DRIVER_EXIT_ERROR);
}

/* Read entry i: its run-time address and arguments. */
static bench_fn locate(unsigned i, int64_t args[DRIVER_MAX_ARGS])
{
	char name[64], real[PATH_MAX];
	const char *spec, *object;
	struct find f = { 0 };
	uint64_t link;
	char *end;

	snprintf(name, sizeof(name), DRIVER_ENV_ENTRY "%u", i);
	spec = getenv(name);
	if (!spec)
		fail("%s is not set", name);
	errno = 0;
	link = strtoull(spec, &end, 16);
	if (errno || end == spec)
		fail("cannot read the address in '%s'", spec);
	for (unsigned a = 0; a < DRIVER_MAX_ARGS; a++) {
		const char *p = end;

		args[a] = 0;
		while (*p == ' ')
			p++;
		if (!*p)
			continue;
		args[a] = (int64_t)strtoull(p, &end, 16);
		if (end == p)
			fail("cannot read the arguments in '%s'", spec);
	}
	snprintf(name, sizeof(name), DRIVER_ENV_ENTRY "%u" DRIVER_ENV_OBJECT, i);
	object = getenv(name);
	if (object) {
		if (!realpath(object, real))
			fail("cannot find %s", object);
		f.object = real;
	}
	dl_iterate_phdr(find_object, &f);
	if (!f.found)
		fail("%s is not loaded when main starts", object ? object : "the program");
	return (bench_fn)(f.bias + (uintptr_t)link);
}

/* ---- perf: counters around batches of calls ------------------------------ */

static void empty_function(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f)
{
	(void)a, (void)b, (void)c, (void)d, (void)e, (void)f;
	__asm__ volatile("" ::: "memory");
}

/* n calls of fn with the counters enabled around them only; out[0]
 * instructions, out[1] cycles. */
static void perf_batch(int leader, bench_fn fn, const int64_t *args, unsigned long n,
		       uint64_t out[2])
{
	struct {
		uint64_t nr;
		uint64_t v[2];
	} g = { 0 };

	ioctl(leader, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
	ioctl(leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	for (unsigned long i = 0; i < n; i++)
		benchtrap_driver_call(fn, args);
	ioctl(leader, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	if (read(leader, &g, sizeof(g)) < (ssize_t)sizeof(g))
		fail("%s", "cannot read the perf counters");
	out[0] = g.v[0];
	out[1] = g.v[1];
}

/*
 * DRIVER_ENV_PERF_FD=<fd> DRIVER_ENV_PERF_CALLS=<n>: for each
 * function, one warm-up call, then a batch of n calls of an empty function
 * (the loop's own cost) and a batch of n calls of the function, counted;
 * one line per function on fd: "<i> <instructions empty> <cycles empty>
 * <instructions> <cycles>".
 */
static void perf_run(unsigned i, bench_fn fn, const int64_t *args, int fd, unsigned long n)
{
	static int leader = -1, cycles = -1;
	uint64_t e[2], b[2];
	char line[128];
	int len;

	if (leader < 0) {
		leader = driver_perf_open(PERF_COUNT_HW_INSTRUCTIONS, -1, PERF_FORMAT_GROUP);
		if (leader >= 0)
			cycles = driver_perf_open(PERF_COUNT_HW_CPU_CYCLES, leader,
						  PERF_FORMAT_GROUP);
		if (leader < 0 || cycles < 0)
			fail("perf_event_open: %s", strerror(errno));
	}
	benchtrap_driver_call(fn, args);
	perf_batch(leader, empty_function, args, n, e);
	perf_batch(leader, fn, args, n, b);
	len = snprintf(line, sizeof(line), "%u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
		       i, e[0], e[1], b[0], b[1]);
	if (write(fd, line, (size_t)len) != len)
		fail("%s", "cannot report the perf counts");
}

static int driver_main(int argc, char **argv, char **envp)
{
	const char *count = getenv(DRIVER_ENV_COUNT);
	const char *perf_fd = getenv(DRIVER_ENV_PERF_FD);
	const char *perf_calls = getenv(DRIVER_ENV_PERF_CALLS);
	unsigned long n;
	char *end;

	(void)argc;
	(void)argv;
	(void)envp;
	if (!count)
		fail("%s", DRIVER_ENV_COUNT " is not set: this library is preloaded by benchtrap");
	n = strtoul(count, &end, 10);
	if (end == count || *end || n == 0 || n > 100000)
		fail(DRIVER_ENV_COUNT " is not a count of functions: '%s'", count);
	for (unsigned i = 0; i < n; i++) {
		int64_t args[DRIVER_MAX_ARGS];
		bench_fn fn = locate(i, args);

		if (perf_fd)
			perf_run(i, fn, args, atoi(perf_fd),
				 perf_calls ? strtoul(perf_calls, NULL, 10) : 100);
		else
			benchtrap_driver_call(fn, args);
		/* Tell the controller this call returned. */
		if (write(DRIVER_DONE_FD, "", 1) != 1)
			fail("cannot report a finished call (is fd %d open?)", DRIVER_DONE_FD);
	}
	return 0;
}

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
		      void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	void *sym = dlsym(RTLD_NEXT, "__libc_start_main");
	start_main_fn real;

	const char *target = getenv(DRIVER_ENV_EXE);
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (!sym)
		fail("%s", "cannot find __libc_start_main (is this glibc?)");
	/* POSIX guarantees that a function's address survives this. */
	memcpy(&real, &sym, sizeof(real));
	/* LD_PRELOAD reaches every program started with it: valgrind's own
	 * launcher, and whatever the target runs. Only the target is driven. */
	if (len > 0)
		exe[len] = '\0';
	if (!target || len <= 0 || strcmp(exe, target) != 0)
		return real(main, argc, argv, init, fini, rtld_fini, stack_end);
	return real(driver_main, argc, argv, init, fini, rtld_fini, stack_end);
}
