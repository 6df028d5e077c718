/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_MEASURE_VALGRIND_H
#define BENCHTRAP_MEASURE_VALGRIND_H

/*
 * What every run of a program under valgrind's callgrind shares, whoever
 * runs it (the callgrind instrument, measure/callgrind.c; a kind that
 * runs its own main, own-count.c): valgrind's command line, and
 * reading what its log says of how the process ended.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Append to *argv (of *na, measure_env_push) valgrind's program and the
 * options of a callgrind run: no gdb server (its FIFOs would outlive a
 * valgrind that is killed), one log DIR/valgrind.log (each line prefixed
 * with its process's pid), a profile per process DIR/callgrind.out.<pid>
 * (a fork server's children, and whatever a benchmark forks, each have
 * their own), nothing collected but inside the functions fns[0..nfns)
 * (--toggle-collect, each name once: every instance of a generic Rust
 * function has one), and with 'dump_after' a profile after each call of
 * one (--dump-after). 0 or -ENOMEM (what was appended stays, to be freed).
 */
int valgrind_callgrind_argv(char ***argv, size_t *na, const char *valgrind, const char *dir,
			    const char *const *fns, size_t nfns, bool dump_after);

/*
 * Append to *buf ("\n  " before each) the lines of 'path' worth reporting:
 * valgrind's account of a fatal signal (from "Process terminating" to the
 * next blank line), valgrind's own lines ("valgrind: ...", and a panic's
 * indented lines after "valgrind: the 'impossible' happened:"), each
 * without its "==pid== " prefix; with 'all', every line instead, the last
 * 'all' of them (a child's stderr), from offset 'from' on; with 'pid',
 * only process pid's lines of a log that several processes share.
 */
void valgrind_log_append(char **buf, const char *path, off_t from, size_t all, pid_t pid);

/* "timed out after N ms under valgrind and was killed" (malloc'ed). */
char *valgrind_timeout_words(uint64_t timeout_ns);
/* "SIGSEGV (Segmentation fault) under valgrind" (malloc'ed). */
char *valgrind_signal_words(int sig);

struct bench_result;

/*
 * One valgrind run of a suite's own main: argv (valgrind's path first, its
 * --log-file DIR/valgrind.log) with environment env, in a process group of
 * its own on CPU 'cpu' (-1: any), stdin 'input', stdout 'devnull', stderr
 * DIR/stderr, waited for until 'deadline' (CLOCK_MONOTONIC ns; killed
 * there). 1 when it exited with status 0 (res->pid its pid); 0 when it did
 * not, res failed in words: the signal with valgrind's account of it, or
 * the exit status with valgrind's complaint and what the program said last
 * (said(DIR/stderr), malloc'ed or NULL; NULL: its last three lines); the
 * timeout after timeout_ns.
 */
int valgrind_run(char *const *argv, char *const *env, int cpu, int input, int devnull,
		 const char *dir, uint64_t deadline, uint64_t timeout_ns,
		 char *(*said)(const char *path), struct bench_result *res);

/*
 * What valgrind's launcher said in file 'path' (the run's stderr) when it
 * could not start the program at all ("valgrind: ./x: No such file..."):
 * true, and the line after "valgrind: " in *ret_line (malloc'ed; unless
 * ret_line is NULL); false when it said nothing of the kind.
 */
bool valgrind_launcher_line(const char *path, char **ret_line);

/* valgrind_callgrind_argv's options for a run counted from its start
 * with a profile dumped when each of the functions names[0..n) (valgrind's
 * names; one given twice is given once) is entered and when it returns:
 * appended to *argv (*na entries). 0 or -ENOMEM. */
int valgrind_dumps_argv(char ***argv, size_t *na, const char *valgrind, const char *dir,
			const char *const *names, size_t n);

/* One numbered profile of a run with --dump-before/--dump-after: its number
 * (dump order), its Ir total, and what kind(its trigger) made of it. */
struct valgrind_dump {
	unsigned n;
	uint64_t ir;
	int kind;
};

/*
 * The numbered profiles of process pid in dir, in dump order, those for
 * which kind(trigger) (the "--dump-after=F" that made it) is 0 or more:
 * v[0..*ret_n). -E2BIG past max, -EINVAL for a profile without Ir, -errno.
 */
int valgrind_read_dumps(const char *dir, pid_t pid, int (*kind)(const char *trigger),
			struct valgrind_dump *v, size_t max, size_t *ret_n);

#endif
