/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_UTIL_LAUNCH_H
#define BENCHTRAP_UTIL_LAUNCH_H

/*
 * Every process benchtrap starts, and the promise that none outlives it.
 *
 * One launcher (fork, set up, exec, an exec failure reported through a
 * close-on-exec pipe) serves the trace engine, the callgrind and the perf
 * instruments alike, and registers each process it starts in one kill
 * registry. Containment has three layers:
 *
 *   benchtrap (the process you started: waits, passes signals on)
 *     └─ worker (does the work; a child subreaper)          launch_guard()
 *          ├─ benchmark child (its own process group)      launch_start()
 *          │    └─ what it forks: same group, killed with it
 *          └─ what escaped the group (setsid) and lost its parent:
 *             re-parented to the worker, killed by launch_sweep()
 *
 * - A registered process and its process group are killed when their
 *   owner is done with them, and by launch_terminate() from the fatal
 *   signal handlers.
 * - The worker is a child subreaper (PR_SET_CHILD_SUBREAPER): a process
 *   that called setsid() and whose parent died is re-parented to it
 *   rather than to init, so launch_sweep() finds it among the worker's
 *   own children and kills it.
 * - The worker gets SIGTERM the moment the process the user started dies
 *   (PR_SET_PDEATHSIG), even of SIGKILL, and cleans up as for a Ctrl-C:
 *   kills everything it started, removes its temporary directories, and
 *   (observe --pid) takes its breakpoints out of an attached process and
 *   detaches, so that process runs on.
 *
 * - The first process is a child subreaper too: should the worker die
 *   without cleaning up (a crash, a signal it does not handle), its
 *   orphans come to the first process, which kills them before it exits.
 *
 * Only SIGKILL of both, or of the worker alone while the first process is
 * also killed, defeats this; traced children still die with the worker
 * (PTRACE_O_EXITKILL) and each child has PR_SET_PDEATHSIG(SIGKILL).
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Up to this many extra descriptors passed to a child. */
#define LAUNCH_MAX_FDS 4

enum {
	LAUNCH_E_EXEC = 0x30000, /* the child could not be executed (errno in *ret_errno) */
};

struct launch_opts {
	const char *path;   /* the file to execute (no PATH search here) */
	char *const *argv;  /* argv[0] is what the program sees as its name */
	char *const *envp;  /* NULL: the controller's environment */
	bool aslr;	    /* keep address-space randomisation */
	int cpu;	    /* pin to this CPU; -1: no pinning */
	int stdio[3];	    /* descriptors for 0, 1, 2; -1: inherited */
	struct {
		int from, to; /* dup'ed onto 'to' in the child */
	} fds[LAUNCH_MAX_FDS];
	unsigned nfds;
	/* Lead a process group of its own, killed with the child: what it
	 * forks dies with it. Off for a program that must stay in the
	 * terminal's foreground group (one that reads the terminal would
	 * stop with SIGTTIN). */
	bool process_group;
	/* With process_group: a fork server, whose children (which inherit
	 * its seccomp filter, util/guard.h) may not signal it either. Every
	 * child in a group of its own gets the filter. */
	bool server;
	/* Stop before exec until launch_release(), so that the caller can,
	 * for instance, PTRACE_SEIZE the child first. */
	bool hold;
};

/* Defaults: no ASLR, no pinning, inherited environment and stdio. */
void launch_opts_init(struct launch_opts *o, const char *path, char *const *argv);

struct launch {
	pid_t pid;
	int errfd; /* read end of the exec-error pipe (hold only), or -1 */
	int gofd;  /* write end of the go pipe (hold only), or -1 */
};

/*
 * Start a child and register it for killing. Without 'hold', returns once
 * the child has executed the program, or -LAUNCH_E_EXEC (the child reaped,
 * its errno in *ret_errno) when it could not. With 'hold', returns once the
 * child exists; launch_release() lets it go on to exec.
 */
int launch_start(const struct launch_opts *o, struct launch *ret, int *ret_errno);
int launch_release(struct launch *l, int *ret_errno);
/* A held child that will not be released: kill and reap it. */
void launch_abort(struct launch *l);

/* SIGKILL 'pid' (and its process group), reap it, forget it. */
void launch_kill_reap(pid_t pid, bool group);

/*
 * Wait for process pid, not traced, until 'deadline' (CLOCK_MONOTONIC ns),
 * then kill it and its process group: *ret_status its wait status, or 0
 * with *ret_killed set. What it left behind is swept (launch_sweep). 0 or
 * a negative errno of waitpid().
 */
int launch_wait_until(pid_t pid, uint64_t deadline, int *ret_status, bool *ret_killed);

/* 'pid' (started by launch_start) has been reaped: forget it. */
void launch_forget(pid_t pid);
/* Registered processes still alive (not forgotten). */
size_t launch_live_count(void);

/*
 * Kill and reap the processes re-parented to this process (it is a child
 * subreaper) that no owner holds, and what they started: daemons a
 * benchmark left behind. Call when a benchmark's processes are gone.
 */
void launch_sweep(void);

/* SIGKILL every registered process and its group (async-signal-safe);
 * their owners reap them. */
void launch_kill_all(void);

/*
 * Stop (async-signal-safe, for SIGINT and SIGTERM): from now on
 * launch_start() refuses with -ECANCELED, and so does a launch_release()
 * or launch_start() waiting for its child's exec (the child killed and
 * reaped: a traced child killed before exec waits for its tracer at its
 * exit event, with the pipe still open); every registered process is
 * killed as launch_kill_all() kills them, so that what is being measured
 * ends at once and nothing more starts. launch_stopping() says whether it
 * was called.
 */
void launch_stop(void);
bool launch_stopping(void);

/*
 * From a fatal-signal handler, before dying (async-signal-safe): kill every
 * registered process and its group, reap them, kill and reap whatever was
 * re-parented to us, and remove the registered temporary directories.
 */
void launch_terminate(void);

/*
 * Run 'path' with 'argv' and 'envp' (NULL: the controller's environment),
 * stdin and stderr on /dev/null, and collect what it writes on stdout, for
 * up to 'timeout_ms' (then it is killed). Returns 0 and *ret_text (to free,
 * NUL-terminated, never NULL) when it exited with 0; -ENOEXEC when it
 * exited otherwise or died, -ETIMEDOUT, the errno of a failed exec (ENOENT:
 * no such program), -ENOMEM.
 */
int launch_capture(const char *path, char *const *argv, char *const *envp, unsigned timeout_ms,
		   char **ret_text);

/* mkdtemp() and register the directory for removal by launch_terminate().
 * 'tmpl' ends in XXXXXX and is filled in. Returns 0 or -errno. */
int launch_temp_dir(char *tmpl);
/* Remove the files in a temporary directory. */
void launch_temp_dir_empty(const char *path);
/* Remove the directory's files and the directory, and unregister it. */
void launch_temp_dir_remove(const char *path);

/*
 * Split into the process the user started and the worker (see above).
 * Returns 0 in the worker, which goes on with the command; the first
 * process waits for the worker, passes on the signals sent to it, and
 * exits as the worker did: it never returns. Returns -errno (no split:
 * the caller goes on alone) when fork fails.
 */
int launch_guard(void);
/* In the worker: true once the process the user started is gone. */
bool launch_orphaned(void);
/* In the worker: the pid of the process the user started; 0 elsewhere. */
pid_t launch_front(void);

#endif
