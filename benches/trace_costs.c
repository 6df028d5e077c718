// SPDX-License-Identifier: MIT
/*
 * The trace engine's own costs, side by side in one run:
 *   - a fresh traced child stopped in main (spawn, loader, constructors,
 *     run to main, kill, reap) against plain fork + exec + exit of the same
 *     binary;
 *   - a breakpoint round trip (resume, hit, report, step over);
 *   - an injected call round trip (trace_call of an empty function);
 *   - a remote system call (getppid).
 * Usage: trace-costs TRACEE [ROUNDS]   (TRACEE is tests/trace/tracee.c)
 * Prints median, 10th and 90th percentile in microseconds.
 */
#include <errno.h>
#include <gelf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

static void report(const char *what, double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp);
	printf("%-44s %10.1f %10.1f %10.1f %8zu\n", what, v[n / 2], v[n / 10], v[n * 9 / 10], n);
}

static uint64_t elf_value(const char *path, const char *name)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf_Scn *scn = NULL;
	uint64_t v = 0;
	GElf_Ehdr eh;
	Elf *e;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!name) {
		if (e && gelf_getehdr(e, &eh))
			v = eh.e_entry;
		goto out;
	}
	while (e && (scn = elf_nextscn(e, scn)) != NULL && !v) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (gelf_getsym(d, (int)i, &s) && (n = elf_strptr(e, sh.sh_link, s.st_name)) &&
			    strcmp(n, name) == 0) {
				v = s.st_value;
				break;
			}
		}
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return v;
}

static const char *tracee;
static uint64_t main_link, entry_link;

static struct trace_proc *start(char **argv)
{
	struct trace_spawn_opts o;
	struct trace_proc *p;
	uint64_t main_addr;
	int r;

	trace_spawn_opts_init(&o, argv);
	r = trace_spawn(&o, &p, NULL);
	if (r == 0)
		r = trace_run_to_main(p, main_link, entry_link, 10000, &main_addr, NULL);
	if (r < 0) {
		fprintf(stderr, "trace-costs: cannot start %s: %s\n", argv[0], trace_strerror(r));
		exit(1);
	}
	return p;
}

static uint64_t runtime(struct trace_proc *p, const char *name)
{
	uint64_t entry;

	trace_auxv(p, AT_ENTRY, &entry);
	return elf_value(tracee, name) + (entry - entry_link);
}

static void check(int r, const char *what)
{
	if (r < 0) {
		fprintf(stderr, "trace-costs: %s: %s\n", what, trace_strerror(r));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	size_t rounds = argc > 2 ? (size_t)atol(argv[2]) : 200;
	char *args[] = { NULL, NULL, NULL, NULL, NULL };
	double *v;
	struct trace_proc *p;
	struct trace_event ev;
	char count[32];

	if (argc < 2) {
		fprintf(stderr, "usage: trace-costs TRACEE [ROUNDS]\n");
		return 2;
	}
	tracee = argv[1];
	main_link = elf_value(tracee, "main");
	entry_link = elf_value(tracee, NULL);
	v = calloc(rounds * 10, sizeof(*v));
	if (!v || !main_link)
		return 1;
	args[0] = (char *)tracee;
	printf("%-44s %10s %10s %10s %8s\n", "microseconds", "median", "p10", "p90", "n");

	for (size_t i = 0; i < rounds; i++) {
		double t0 = now_us();
		pid_t pid = fork();

		if (pid == 0) {
			execv(tracee, args);
			_exit(127);
		}
		waitpid(pid, NULL, 0);
		v[i] = now_us() - t0;
	}
	report("plain fork + exec + exit", v, rounds);

	for (size_t i = 0; i < rounds; i++) {
		double t0 = now_us();

		p = start(args);
		trace_proc_free(p);
		v[i] = now_us() - t0;
	}
	report("fresh traced child in main (+ kill, reap)", v, rounds);

	/* One thread hitting a breakpoint 10 * rounds times. */
	snprintf(count, sizeof(count), "%zu", rounds * 10);
	args[1] = "threads";
	args[2] = "1";
	args[3] = count;
	p = start(args);
	check(trace_bp_insert(p, runtime(p, "hit")), "breakpoint");
	check(trace_resume(p), "resume");
	for (size_t i = 0; i < rounds * 10; i++) {
		double t0 = now_us();

		check(trace_wait(p, -1, &ev), "wait");
		check(trace_resume(p), "resume");
		v[i] = now_us() - t0;
		if (ev.kind != TRACE_EV_BREAKPOINT) {
			fprintf(stderr, "trace-costs: unexpected event %d\n", ev.kind);
			return 1;
		}
	}
	report("breakpoint round trip (hit, step over)", v, rounds * 10);
	trace_proc_free(p);

	args[1] = NULL;
	p = start(args);
	{
		uint64_t empty = runtime(p, "empty"), none[6] = { 0 };
		int64_t res;

		check(trace_call(p, empty, NULL, 0, NULL, NULL, NULL), "call"); /* maps the page */
		for (size_t i = 0; i < rounds * 10; i++) {
			double t0 = now_us();

			check(trace_call(p, empty, NULL, 0, NULL, NULL, NULL), "call");
			v[i] = now_us() - t0;
		}
		report("injected call round trip (empty function)", v, rounds * 10);
		for (size_t i = 0; i < rounds * 10; i++) {
			double t0 = now_us();

			check(trace_syscall(p, SYS_getppid, none, &res), "syscall");
			v[i] = now_us() - t0;
		}
		report("remote system call (getppid)", v, rounds * 10);
	}
	trace_proc_free(p);
	free(v);
	return 0;
}
