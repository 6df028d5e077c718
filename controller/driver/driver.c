/* SPDX-License-Identifier: MIT */
/*
 * The driver: a small shared library that benchtrap preloads (LD_PRELOAD)
 * into a target it runs under valgrind, where nothing can be injected from
 * outside, or natively for the perf instrument. It wraps glibc's
 * __libc_start_main so that, once the loader and the program's
 * constructors have run, it calls the selected functions in place of the
 * program's main. `--symbol f` thus means "call f" under callgrind exactly
 * as it does under ptrace.
 *
 * What to call comes from a file benchtrap opens on DRIVER_SPEC_FD, and
 * what happened goes back on DRIVER_REPORT_FD (driver-protocol.h).
 *
 * Each function is called through benchtrap_driver_call(), which the
 * controller counts with callgrind's --toggle-collect: the inclusive cost
 * of its call to the function is the benchmark's cost, in the profile of
 * the process that made the call (one call in a fork server's child; cut
 * with --dump-after when one process calls them all). In serve mode, the fork server, every call is made by
 * a child forked at main from a parent that does nothing between forks
 * but wait:
 *
 *   loader, constructors ─ main: server ┬ fork ─ child: call ─ _exit ─ dump
 *                                       ├ wait, fork ─ child: call ─ ...
 *                                       └ ... ─ exit 0
 *
 * so that each benchmark starts from the state of a fresh process at main
 * for the price of a fork, not of a valgrind start-up. Nothing the parent
 * does may reach a child: it allocates nothing, opens nothing that stays
 * open, and calls no function of the program. A child flushes stdio and
 * ends with _exit: the program's exit handlers run once, in the server.
 *
 * A function to run on several threads (--threads) is called by a round
 * of threads the driver creates where the one call would have been made,
 * released together by a barrier of the driver's (run_round,
 * driver-protocol.h); the program's own threads are never used.
 *
 * Errors (a function that cannot be located) print one line on stderr and
 * exit with status DRIVER_EXIT_ERROR.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <fcntl.h>
#include <pthread.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "driver-protocol.h"
#ifdef DRIVER_MEMORY
#include "alloc.h"

/* Not NULL: the object whose malloc the program calls, not the wrappers. */
static const char *foreign;
#endif

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

static void say(const char *fmt, va_list ap)
{
	fputs("benchtrap-driver: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	fflush(stderr);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	_exit(DRIVER_EXIT_ERROR);
}

/* Why a function cannot be called, said; the caller goes on. */
static void cannot(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void cannot(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
}

/* One line of the report, written at once (it is shorter than PIPE_BUF). */
static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(line) || write(DRIVER_REPORT_FD, line, (size_t)len) != len)
		fail("cannot report to benchtrap (is fd %d open?)", DRIVER_REPORT_FD);
}

/*
 * Line 'want' of the spec file (0: the header) into out, without its
 * newline. Read with pread in pieces on the stack: nothing is allocated
 * and the descriptor's offset never moves, so the fork server's children
 * all find the parent as it was. Lines are asked for in order, so the
 * search starts where the last line read ended.
 */
static void spec_line(unsigned want, char *out, size_t size)
{
	static off_t next_off;	 /* where line next_line starts */
	static unsigned next_line;
	char piece[1024];
	unsigned line = 0;
	size_t len = 0;
	off_t off = 0;

	if (want >= next_line) {
		line = next_line;
		off = next_off;
	}

	for (;;) {
		ssize_t k = pread(DRIVER_SPEC_FD, piece, sizeof(piece), off);

		if (k <= 0)
			fail("the list of functions on fd %d has no line %u", DRIVER_SPEC_FD, want);
		for (ssize_t j = 0; j < k; j++) {
			if (line < want) {
				line += piece[j] == '\n';
				continue;
			}
			if (piece[j] == '\n') {
				out[len] = '\0';
				next_off = off + j + 1;
				next_line = want + 1;
				return;
			}
			if (len + 1 >= size)
				fail("line %u of the list of functions is too long", want);
			out[len++] = piece[j];
		}
		off += k;
	}
}

/* Function i: its run-time address, arguments and threads; NULL (said on
 * stderr) when its library is not loaded. */
static bench_fn locate(unsigned i, int64_t args[DRIVER_MAX_ARGS], unsigned *threads)
{
	char spec[DRIVER_SPEC_LINE_MAX], real[PATH_MAX];
	const char *p, *object = NULL;
	struct find f = { 0 };
	uint64_t link, k;
	char *end;

	spec_line(i + 1, spec, sizeof(spec));
	errno = 0;
	link = strtoull(spec, &end, 16);
	if (errno || end == spec)
		fail("cannot read the address in '%s'", spec);
	for (unsigned a = 0; a < DRIVER_MAX_ARGS; a++) {
		p = end;
		args[a] = (int64_t)strtoull(p, &end, 16);
		if (end == p)
			fail("cannot read the arguments in '%s'", spec);
	}
	p = end;
	k = strtoull(p, &end, 16);
	if (end == p || k > DRIVER_MAX_THREADS)
		fail("cannot read the thread count in '%s'", spec);
	*threads = (unsigned)k;
	p = end;
	if (*p == ' ')
		object = p + 1;
	else if (*p)
		fail("cannot read '%s'", spec);
	if (object) {
		if (!realpath(object, real)) {
			cannot("cannot find %s", object);
			return NULL;
		}
		f.object = real;
	}
	dl_iterate_phdr(find_object, &f);
	if (!f.found) {
		cannot("%s is not loaded when main starts", object ? object : "the program");
		return NULL;
	}
	return (bench_fn)(f.bias + (uintptr_t)link);
}

#ifndef DRIVER_MEMORY
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
 * <perf calls> n > 0: one warm-up call, then a batch of n calls of an empty
 * function (the loop's own cost) and a batch of n calls of the function,
 * counted; one report line "perf <i> <instructions empty> <cycles empty>
 * <instructions> <cycles>". The counters are opened at the first call, in
 * the process that calls (a fork server's child).
 */
static void perf_run(unsigned i, bench_fn fn, const int64_t *args, unsigned long n)
{
	static int leader = -1, cycles = -1;
	uint64_t e[2], b[2];

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
	report("perf %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", i, e[0], e[1], b[0],
	       b[1]);
}
#endif

/* ---- the fork server ------------------------------------------------------ */

/* This process's threads (field 20 of /proc/self/stat), read without
 * allocating: a constructor may have started a pool, which a fork would
 * not copy. */
static long thread_count(void)
{
	static char stat[1024];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t k = fd < 0 ? -1 : read(fd, stat, sizeof(stat) - 1);
	char *p;

	if (fd >= 0)
		close(fd);
	if (k <= 0)
		return -1;
	stat[k] = '\0';
	/* After the command's closing parenthesis: field 3 onwards. */
	p = strrchr(stat, ')');
	for (int field = 2; p && field < 20; field++)
		p = strchr(p + 1, ' ');
	return p ? strtol(p + 1, NULL, 10) : -1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Set in each child before its call: the child's memory still holds it
 * while the child runs the program it was forked from, and no longer once
 * it executed another (or the same one again).
 */
static volatile pid_t child_mark;

/*
 * Whether child pid executed another program: it is alive with a memory
 * (/proc/PID/exe is there only while it has one, not while it exits), and
 * that memory no longer holds child_mark. When the mark cannot be read
 * (ptrace is restricted), 'closed' (its close-on-exec end of the watch
 * pipe closed) decides.
 */
static bool executed(pid_t pid, bool closed, char *exe, size_t size)
{
	char path[64];
	pid_t mark = 0;
	struct iovec local = { (void *)&mark, sizeof(mark) };
	struct iovec remote = { (void *)&child_mark, sizeof(mark) };
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	len = readlink(path, exe, size - 1);
	if (len <= 0)
		return false;
	exe[len] = '\0';
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)sizeof(mark))
		return mark != pid;
	return errno == EFAULT || (errno == EPERM && closed);
}

/* Why reap killed a child: the last number of an "end" line. */
enum {
	END_SELF,    /* it ended by itself */
	END_TIMEOUT, /* still running after the timeout */
	END_EXEC,    /* it executed another program */
};

/*
 * Wait for child i, pid, killing it after timeout_ms (0: never), when it
 * executes another program (its end of 'watch', close-on-exec, closes while
 * it is alive: an "exec" line says which); a child that stops is
 * continued. SIGCHLD is blocked and readable on 'sigfd'. *status is its
 * wait status. Returns END_*.
 */
static int reap(unsigned long i, pid_t pid, unsigned long timeout_ms, int *status, int sigfd,
		int watch)
{
	uint64_t deadline = now_ms() + timeout_ms;
	char exe[200];
	int why = END_TIMEOUT;

	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG | WUNTRACED);

		if (r == pid && WIFSTOPPED(*status)) {
			/* It stopped itself (SIGSTOP, SIGTSTP...): nothing else
			 * would continue it, so the server does, as the tracer
			 * does under walltime, and the call goes on. */
			kill(pid, SIGCONT);
			continue;
		}
		if (r == pid)
			return END_SELF;
		if (r < 0 && errno != EINTR)
			fail("waitpid: %s", strerror(errno));
		uint64_t now = now_ms();

		if (timeout_ms && now >= deadline)
			break;
		struct pollfd p[2] = { { .fd = sigfd, .events = POLLIN },
				       { .fd = watch, .events = POLLIN } };
		int ms = timeout_ms ? (int)(deadline - now) : -1;

		/* Without a signalfd, look every 50 ms. */
		if (sigfd < 0 && (ms < 0 || ms > 50))
			ms = 50;
		if (poll(p, 2, ms) > 0) {
			struct signalfd_siginfo si;

			if (p[0].revents & POLLIN)
				(void)!read(sigfd, &si, sizeof(si));
			if (p[1].revents & (POLLHUP | POLLERR | POLLIN)) {
				/* Closed: it exits, or executed. */
				watch = -1;
				if (executed(pid, true, exe, sizeof(exe))) {
					why = END_EXEC;
					break;
				}
			}
		}
	}
	/* Out of time: perhaps because it executed a program that goes on
	 * (its end of the pipe was copied into a process it forked). */
	if (why == END_TIMEOUT && executed(pid, false, exe, sizeof(exe)))
		why = END_EXEC;
	if (why == END_EXEC)
		report("exec %lu %d %s\n", i, (int)pid, exe);
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			fail("waitpid: %s", strerror(errno));
	return why;
}

/*
 * Fork one child per function, one at a time. Returns, in a child, the
 * function it is to call; in the parent, when all are done, -1. The
 * parent's state is that of main's start for every fork: it blocks SIGCHLD
 * (the child restores the mask), and the child puts stdin back where it
 * was, as a fresh process would find it.
 */
static long serve(unsigned long n, unsigned long timeout_ms, bench_fn *fn,
		  int64_t args[DRIVER_MAX_ARGS], unsigned *threads)
{
	off_t input = lseek(STDIN_FILENO, 0, SEEK_CUR);
	struct sigaction dfl = { .sa_handler = SIG_DFL }, was;
	sigset_t chld, old;
	int sigfd;

	/* What the constructors left in stdio's buffers is written once,
	 * not again by every child. */
	fflush(NULL);
	/* Children to wait for, whatever the program did with SIGCHLD
	 * (ignored, or SA_NOCLDWAIT, and they would reap themselves). */
	sigaction(SIGCHLD, &dfl, &was);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	/* Opened before the first fork, so that every child has it alike
	 * (each closes it at once). */
	sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	for (unsigned long k = 0; k <= n; k++) {
		/* The first fork is a rehearsal, reported as function n (none):
		 * its child ends at once, so that every real child is forked
		 * after the same steps (report, wait, report, locate), down
		 * to what a simulated cache holds. */
		unsigned long i = k ? k - 1 : n;
		int status = 0, why, watch[2];

		/* Located here, so that the child calls it straight away. */
		*fn = locate(k ? (unsigned)i : 0, args, threads);
		if (!*fn) {
			if (k)
				report("end %lu %d 0\n", i, DRIVER_EXIT_ERROR << 8);
			continue;
		}
		/* The child's end closes when it ends or executes another
		 * program; the benchmark finds it open, as every child does. */
		if (pipe2(watch, O_CLOEXEC) < 0)
			fail("pipe: %s", strerror(errno));
		/* _Fork: no pthread_atfork handler of the program runs, so the
		 * child is a plain copy (the parent has one thread). */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
		pid_t pid = _Fork();
#else
		pid_t pid = fork();
#endif
		if (pid < 0)
			fail("fork: %s", strerror(errno));
		if (pid == 0) {
			if (!k)
				_exit(0);
			/* A group of its own: a benchmark that signals its
			 * group (kill(0, ...)) reaches itself and what it
			 * forks, not the server. */
			setpgid(0, 0);
			child_mark = getpid();
			close(watch[0]);
			if (sigfd >= 0)
				close(sigfd);
			sigaction(SIGCHLD, &was, NULL);
			sigprocmask(SIG_SETMASK, &old, NULL);
			if (input >= 0)
				lseek(STDIN_FILENO, input, SEEK_SET);
			return (long)i;
		}
		close(watch[1]);
		report("start %lu %d\n", i, (int)pid);
		why = reap(i, pid, timeout_ms, &status, sigfd, watch[0]);
		close(watch[0]);
		report("end %lu %d %d\n", i, status, why);
	}
	if (sigfd >= 0)
		close(sigfd);
	return -1;
}

/* ---- a round: the function on several threads at once ------------------- */

struct worker {
	pthread_t thread;
	unsigned k;
	pid_t tid;
};

static struct {
	bench_fn fn;
	const int64_t *args;
	unsigned long warmup_calls;
	pid_t self; /* the process, to tell a forked copy */
	pthread_barrier_t start, end;
	struct worker w[DRIVER_MAX_THREADS];
} rnd;

/* One thread of the round (driver-protocol.h): warm-up calls, the start
 * barrier, its counted call, the end barrier. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->tid = (pid_t)syscall(SYS_gettid);
#ifdef DRIVER_MEMORY
	alloc_thread(w->k, false);
#endif
	for (unsigned long c = 0; c < rnd.warmup_calls; c++)
		benchtrap_driver_call(rnd.fn, rnd.args);
	pthread_barrier_wait(&rnd.start);
#ifdef DRIVER_MEMORY
	alloc_thread(w->k, true);
#endif
	benchtrap_driver_call(rnd.fn, rnd.args);
#ifdef DRIVER_MEMORY
	alloc_thread(w->k, false);
#endif
	/* A benchmark that forks returns twice: its copy has this thread
	 * alone, and ends here. */
	if (getpid() != rnd.self)
		_exit(0);
	pthread_barrier_wait(&rnd.end);
	return NULL;
}

/*
 * Function i on n threads at once: each makes warmup_calls uncounted calls,
 * then all make their counted call together. Reported as one "thread" line
 * per thread (memory: with what its call asked for), then, for memory, the
 * round's "mem" line. The threads and barriers are made before anything is
 * counted; nothing here allocates while counting.
 */
static void run_round(unsigned i, bench_fn fn, const int64_t *args, unsigned n,
		      unsigned long warmup_calls)
{
	int err;

	rnd.fn = fn;
	rnd.args = args;
	rnd.warmup_calls = warmup_calls;
	rnd.self = getpid();
	if ((err = pthread_barrier_init(&rnd.start, NULL, n + 1)) ||
	    (err = pthread_barrier_init(&rnd.end, NULL, n + 1)))
		fail("cannot make a barrier for %u threads: %s", n, strerror(err));
	for (unsigned k = 0; k < n; k++) {
		rnd.w[k].k = k;
		err = pthread_create(&rnd.w[k].thread, NULL, worker_main, &rnd.w[k]);
		if (err)
			fail("cannot create thread %u of %u: %s", k + 1, n, strerror(err));
	}
#ifdef DRIVER_MEMORY
	struct memacct m;
	struct memacct_thread t[DRIVER_MAX_THREADS];

	alloc_start();
#endif
	pthread_barrier_wait(&rnd.start);
	pthread_barrier_wait(&rnd.end);
#ifdef DRIVER_MEMORY
	alloc_stop(&m, t, n);
#endif
	for (unsigned k = 0; k < n; k++)
		pthread_join(rnd.w[k].thread, NULL);
	pthread_barrier_destroy(&rnd.start);
	pthread_barrier_destroy(&rnd.end);
	for (unsigned k = 0; k < n; k++) {
#ifdef DRIVER_MEMORY
		report("thread %u %u %d %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", i, k,
		       (int)rnd.w[k].tid, t[k].allocations, t[k].frees, t[k].bytes);
#else
		report("thread %u %u %d 0 0 0\n", i, k, (int)rnd.w[k].tid);
#endif
	}
#ifdef DRIVER_MEMORY
	alloc_sites(i, report);
	report("mem %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %d %d\n", i,
	       m.allocations, m.frees, m.bytes, m.peak, m.live, (int)m.overflow, foreign != NULL);
#endif
}

/* Call function i, fn, once (or in perf's batches; or a round on 'threads'
 * threads) and say it returned. Never inlined, and called from
 * driver_main's own frame. */
static __attribute__((noinline)) void run_one(unsigned i, bench_fn fn, const int64_t *args,
					      unsigned threads, unsigned long perf_calls,
					      unsigned long warmup_calls)
{
	pid_t self = getpid();

	if (threads > 1) {
		if (perf_calls)
			fail("%s", "perf counts one thread: a function cannot be run on several");
		run_round(i, fn, args, threads, warmup_calls);
		report("done %u %d\n", i, (int)self);
		return;
	}
#ifdef DRIVER_MEMORY
	struct memacct m;

	for (unsigned long w = 0; w < warmup_calls; w++)
		benchtrap_driver_call(fn, args);
	alloc_start();
	benchtrap_driver_call(fn, args);
	alloc_stop(&m, NULL, 0);
	if (getpid() != self)
		_exit(0);
	alloc_sites(i, report);
	report("mem %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %d %d\n", i,
	       m.allocations, m.frees, m.bytes, m.peak, m.live, (int)m.overflow, foreign != NULL);
	(void)perf_calls;
#else
	(void)warmup_calls;
	if (perf_calls)
		perf_run(i, fn, args, perf_calls);
	else
		benchtrap_driver_call(fn, args);
#endif
	/* A benchmark that forks returns twice: its copy ends here, unheard. */
	if (getpid() != self)
		_exit(0);
	report("done %u %d\n", i, (int)self);
}

static int driver_main(int argc, char **argv, char **envp)
{
	char header[256], mode[16];
	unsigned long n, timeout_ms, perf_calls, warmup_calls, frames;

	(void)argc;
	(void)argv;
	(void)envp;
	spec_line(0, header, sizeof(header));
	if (strncmp(header, DRIVER_SPEC_MAGIC " ", sizeof(DRIVER_SPEC_MAGIC)) != 0 ||
	    sscanf(header + sizeof(DRIVER_SPEC_MAGIC), "%15s %lu %lu %lu %lu %lu", mode, &n,
		   &timeout_ms, &perf_calls, &warmup_calls, &frames) != 6 ||
	    n == 0 || (strcmp(mode, "serve") != 0 && strcmp(mode, "call") != 0))
		fail("cannot read the list of functions: '%s' (this library is preloaded by "
		     "benchtrap)",
		     header);
#ifdef DRIVER_MEMORY
	int err = alloc_prepare((unsigned)frames);

	if (err < 0)
		fail("cannot prepare the allocator's wrappers: %s", strerror(-err));
	if (frames) {
		char ack;

		report("maps %d\n", (int)getpid());
		if (read(DRIVER_ACK_FD, &ack, 1) != 1)
			fail("benchtrap did not answer on fd %d", DRIVER_ACK_FD);
	}
	foreign = alloc_foreign();
	if (foreign)
		cannot("%s defines malloc, found before benchtrap's wrappers: its allocations "
		       "cannot be counted",
		       foreign);
#endif
	if (!strcmp(mode, "serve")) {
		long threads = thread_count();

		/* 0: not known, and not forked either. */
		report("server %ld %d\n", threads > 0 ? threads : 0, (int)getpid());
		if (threads == 1) {
			int64_t args[DRIVER_MAX_ARGS];
			unsigned nthreads;
			bench_fn fn;
			long i = serve(n, timeout_ms, &fn, args, &nthreads);

			if (i < 0)
				return 0;
			run_one((unsigned)i, fn, args, nthreads, perf_calls, warmup_calls);
			/* The child ends here: its output flushed, but the
			 * program's exit handlers and destructors run once, in
			 * the server, not in every child. */
			fflush(NULL);
			_exit(0);
		}
		/* More threads: the first function only, in this process,
		 * which then ends as a child does (its profile written, no
		 * exit handler to wait for the threads). */
		int64_t args[DRIVER_MAX_ARGS];
		unsigned nthreads;
		bench_fn fn = locate(0, args, &nthreads);

		if (!fn)
			_exit(DRIVER_EXIT_ERROR);
		run_one(0, fn, args, nthreads, perf_calls, warmup_calls);
		fflush(NULL);
		_exit(0);
	}
	for (unsigned long i = 0; i < n; i++) {
		int64_t args[DRIVER_MAX_ARGS];
		unsigned nthreads;
		bench_fn fn = locate((unsigned)i, args, &nthreads);

		if (!fn)
			_exit(DRIVER_EXIT_ERROR);
		run_one((unsigned)i, fn, args, nthreads, perf_calls, warmup_calls);
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
	/* A benchmark that runs the program again runs its main: only this
	 * process is driven, and the driver's descriptors do not pass. */
	unsetenv(DRIVER_ENV_EXE);
	for (int fd = DRIVER_SPEC_FD; fd <= DRIVER_ACK_FD; fd++)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
	return real(driver_main, argc, argv, init, fini, rtld_fini, stack_end);
}
