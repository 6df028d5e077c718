/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_UTIL_GUARD_H
#define BENCHTRAP_UTIL_GUARD_H

/*
 * Signals to benchtrap refused, and its processes out of a benchmark's
 * reach: a benchmark that kills or tampers with its parent must not end the
 * run.
 *
 * Every benchmark child (launch.h: a child in a process group of its own)
 * gets, before exec, a seccomp filter that hands benchtrap the system calls
 * that would signal or change one of benchtrap's own processes:
 *
 *   kill, rt_sigqueueinfo      pid: benchtrap's top process or its worker,
 *                              -1 (everything), -(benchtrap's group)
 *   tkill, tgkill,             tid or tgid: one of benchtrap's processes
 *   rt_tgsigqueueinfo,         or threads
 *   pidfd_open, prlimit64,
 *   process_vm_writev
 *   ptrace                     its pid argument, as above
 *   fcntl F_SETOWN(_EX)        every one: the owner is judged (a SIGIO, or
 *                              with F_SETSIG any signal, to benchtrap)
 *   pidfd_send_signal          every one: the descriptor's process is
 *                              looked up (a pidfd, or a /proc/PID
 *                              directory) and judged
 *
 * (SECCOMP_RET_USER_NOTIF). A child that is a fork server (callgrind,
 * memory, perf) also protects itself from the children it forks, which
 * inherit the filter: its own calls to signal itself go on unchanged. The
 * filter needs no ptrace, so it works under valgrind as well. A thread of
 * the worker answers: the call fails with EPERM, what the benchmark did is
 * recorded ("sent SIGTERM to its parent (benchtrap, pid 12)"), and the
 * benchmark is killed; its result then carries that error
 * (guard_take()). What harms nobody goes on: signal 0, prlimit that only
 * reads, an fcntl that sets no owner.
 *
 * What a path names, the filter cannot see: /proc/BENCHTRAP/mem is out of
 * reach because benchtrap is not dumpable and its children lose
 * CAP_SYS_PTRACE at exec, even as root; opening it fails with EACCES and the
 * benchmark goes on (so do ptrace and process_vm_writev, refused above).
 *
 * Where seccomp filters cannot be installed (no seccomp, a listener already
 * installed above benchtrap), children run without one.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Who is protected, as the filter and the words see them. */
struct guard_who {
	pid_t front;  /* the process the user started (0: none) */
	pid_t worker; /* the process that holds the results */
	pid_t thread; /* the worker's answering thread */
	pid_t group;  /* the process group of both */
};

/* A call the filter stopped, as the kernel handed it. */
struct guard_call {
	int nr;		     /* the system call (SYS_kill, ...) */
	uint64_t args[6];
	pid_t caller;	     /* the calling thread */
	pid_t caller_parent; /* its process's parent, or 0 if unknown */
	pid_t server;	     /* the fork server whose filter stopped it, or 0 */
	bool unread;	     /* F_SETOWN_EX: its struct could not be read */
};

/*
 * Is the call an offence, and what did the benchmark do. Returns true and
 * the words in buf ("sent SIGTERM to its parent (benchtrap, pid 12)") when
 * it would signal a protected process; false when it may go on (signal 0, a
 * server signalling itself, a target that is no longer protected).
 */
bool guard_judge(const struct guard_who *w, const struct guard_call *c, char *buf,
		 size_t size);

/*
 * Prepare the filter for children started from now on (once; later calls
 * do nothing) and start the answering thread. Returns 0, or -errno (then
 * children run unguarded).
 */
int guard_start(void);

/*
 * In a child between fork and exec (async-signal-safe): install the filter,
 * protecting also the child itself if 'server', and send its listener over
 * the socket 'sock'. Returns 0 or -errno; nothing is installed when
 * guard_start() had not succeeded.
 */
int guard_child(int sock, bool server);

/* In the parent: receive a child's listener from 'sock' (its other end
 * closed) and hand it to the answering thread; 'server' is the child's
 * pid when it is a fork server, else 0. */
void guard_adopt(int sock, pid_t server);

/* Whether guard_start() succeeded. */
bool guard_ready(void);

/*
 * The offence recorded for the process 'pid' (or one it descends from),
 * taken away: returns a string to free, or NULL if there is none. With
 * pid 0, any offence recorded.
 */
char *guard_take(pid_t pid);

#endif
