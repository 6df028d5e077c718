/* SPDX-License-Identifier: MIT */
/* Starting processes and making sure none outlives benchtrap (launch.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/fd.h"
#include "util/guard.h"
#include "util/launch.h"

extern char **environ;

/* ---- the kill registry ---------------------------------------------------------
 * Read by launch_kill_all() and launch_terminate() from signal handlers: plain stores of pid_t,
 * no locks, no allocation. A slot is reserved before fork and filled with
 * the pid after it. */
#define MAX_LIVE 256
static volatile pid_t live_pids[MAX_LIVE];
static volatile sig_atomic_t live_group[MAX_LIVE];
static volatile sig_atomic_t live_reserved[MAX_LIVE];

#define MAX_TEMP_DIRS 8
#define TEMP_DIR_LEN 256
static char temp_dirs[MAX_TEMP_DIRS][TEMP_DIR_LEN];
static volatile sig_atomic_t temp_used[MAX_TEMP_DIRS];

static pid_t front_pid;		       /* the process the user started (launch_guard) */
static volatile sig_atomic_t stopping; /* launch_stop() */

static int slot_reserve(void)
{
	for (int i = 0; i < MAX_LIVE; i++) {
		if (!live_reserved[i]) {
			live_reserved[i] = 1;
			live_pids[i] = 0;
			return i;
		}
	}
	return -EAGAIN;
}

static void slot_release(int i)
{
	live_pids[i] = 0;
	live_group[i] = 0;
	live_reserved[i] = 0;
}

static bool registered(pid_t pid)
{
	for (int i = 0; i < MAX_LIVE; i++)
		if (live_pids[i] == pid)
			return true;
	return false;
}

void launch_forget(pid_t pid)
{
	for (int i = 0; pid > 0 && i < MAX_LIVE; i++)
		if (live_pids[i] == pid)
			slot_release(i);
}

size_t launch_live_count(void)
{
	size_t n = 0;

	for (int i = 0; i < MAX_LIVE; i++)
		n += live_pids[i] > 0;
	return n;
}

/* ---- starting a child ------------------------------------------------------------ */

void launch_opts_init(struct launch_opts *o, const char *path, char *const *argv)
{
	memset(o, 0, sizeof(*o));
	o->path = path;
	o->argv = argv;
	o->cpu = -1;
	o->stdio[0] = o->stdio[1] = o->stdio[2] = -1;
}

/* In the child, between fork and exec: async-signal-safe calls only. */
static void child(const struct launch_opts *o, int errfd, int gofd, int guardfd, pid_t parent)
{
	int moved[3 + LAUNCH_MAX_FDS], e;
	char c;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* benchtrap is not dumpable (util/guard.h); its child must be, to be
	 * traced by a benchtrap without CAP_SYS_PTRACE. */
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	if (getppid() != parent)
		_exit(127);
	/* Before the hold: the parent waits for the listener (or for the
	 * socket's end) at once. */
	if (guardfd >= 0) {
		guard_child(guardfd, o->server);
		close(guardfd);
	}
	if (o->hold && read(gofd, &c, 1) != 1)
		_exit(127);
	if (o->process_group && setpgid(0, 0) < 0)
		goto fail;
	if (!o->aslr) {
		int pers = personality(0xffffffff);

		if (pers != -1)
			personality((unsigned long)pers | ADDR_NO_RANDOMIZE);
	}
	if (o->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(o->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0)
			goto fail;
	}
	/* Every source out of the way of every target first: a source may
	 * have the number of another's target. */
	for (unsigned i = 0; i < 3 + o->nfds; i++) {
		int from = i < 3 ? o->stdio[i] : o->fds[i - 3].from;

		moved[i] = from < 0 ? -1 : fcntl(from, F_DUPFD_CLOEXEC, 64);
		if (from >= 0 && moved[i] < 0)
			goto fail;
	}
	for (unsigned i = 0; i < 3 + o->nfds; i++) {
		int to = i < 3 ? (int)i : o->fds[i - 3].to;

		/* dup2 clears close-on-exec on the target. */
		if (moved[i] >= 0 && dup2(moved[i], to) < 0)
			goto fail;
	}
	execve(o->path, o->argv, o->envp ? o->envp : environ);
fail:
	e = errno;
	if (write(errfd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/*
 * Wait for 'pid' to end, letting it go on from any ptrace stop (a traced
 * child stops at exec or exit events on its way out), then forget it.
 * Async-signal-safe.
 */
static void reap(pid_t pid)
{
	for (int i = 0; i < 1000; i++) {
		int status;

		if (waitpid(pid, &status, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			break; /* reaped by someone else */
		}
		if (WIFEXITED(status) || WIFSIGNALED(status))
			break;
		ptrace(PTRACE_CONT, pid, 0, 0);
	}
	launch_forget(pid);
}

void launch_kill_reap(pid_t pid, bool group)
{
	if (group)
		kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	reap(pid);
}

/*
 * What the exec-error pipe says: 0 once it closed on exec. A stop
 * (launch_stop) gives up waiting, kills the child and returns -ECANCELED:
 * a traced child killed before its exec waits at its exit event for its
 * tracer, this thread, with the pipe still open, and a read would wait for
 * ever. So the pipe is polled, and the stop looked at between polls.
 */
static int exec_result(pid_t pid, int errfd, int *ret_errno)
{
	struct pollfd p = { .fd = errfd, .events = POLLIN };
	ssize_t n;
	int e, k;

	for (;;) {
		if (stopping) {
			kill(pid, SIGKILL);
			reap(pid);
			return -ECANCELED;
		}
		k = poll(&p, 1, 100);
		if (k > 0 || (k < 0 && errno != EINTR))
			break;
	}
	do
		n = read(errfd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(e))
		return 0;
	reap(pid);
	if (ret_errno)
		*ret_errno = e;
	return -LAUNCH_E_EXEC;
}

int launch_start(const struct launch_opts *o, struct launch *ret, int *ret_errno)
{
	int errpipe[2], gopipe[2] = { -1, -1 }, guard[2] = { -1, -1 }, slot, r;
	pid_t pid, parent = getpid();

	if (!o->path || !o->argv || !o->argv[0] || o->nfds > LAUNCH_MAX_FDS)
		return -EINVAL;
	if (stopping)
		return -ECANCELED;
	if (pipe2(errpipe, O_CLOEXEC) < 0)
		return -errno;
	if (o->hold && pipe2(gopipe, O_CLOEXEC) < 0) {
		r = -errno;
		goto out_err;
	}
	/* Signals to benchtrap refused (util/guard.h); without the guard,
	 * the child runs as before. */
	if (o->process_group && guard_start() == 0 &&
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, guard) < 0)
		guard[0] = guard[1] = -1;
	slot = slot_reserve();
	if (slot < 0) {
		r = slot;
		goto out_go;
	}
	pid = fork();
	if (pid < 0) {
		r = -errno;
		slot_release(slot);
		goto out_go;
	}
	if (pid == 0)
		child(o, errpipe[1], gopipe[0], guard[1], parent);
	live_group[slot] = o->process_group;
	live_pids[slot] = pid;
	/* Also here, so that the group exists before anything can be sent
	 * to it, whichever of parent and child runs first. */
	if (o->process_group)
		setpgid(pid, pid);
	/* A stop between the test above and the slot's filling missed it. */
	if (stopping)
		kill(pid, SIGKILL);
	close(errpipe[1]);
	if (guard[0] >= 0) {
		close(guard[1]);
		guard_adopt(guard[0], o->server ? pid : 0);
		close(guard[0]);
		guard[0] = guard[1] = -1;
	}
	if (o->hold) {
		close(gopipe[0]);
		*ret = (struct launch){ .pid = pid, .errfd = errpipe[0], .gofd = gopipe[1] };
		return 0;
	}
	r = exec_result(pid, errpipe[0], ret_errno);
	close(errpipe[0]);
	if (r == 0)
		*ret = (struct launch){ .pid = pid, .errfd = -1, .gofd = -1 };
	return r;

out_go:
	fd_close(guard[0]);
	fd_close(guard[1]);
	if (gopipe[0] >= 0) {
		close(gopipe[0]);
		close(gopipe[1]);
	}
out_err:
	close(errpipe[0]);
	close(errpipe[1]);
	return r;
}

int launch_release(struct launch *l, int *ret_errno)
{
	int r = 0;

	/* A child that died before reading it must not take us with it
	 * (SIGPIPE): EPIPE is an error like another. */
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	ssize_t n;

	sigaction(SIGPIPE, &ign, &old);
	n = write(l->gofd, "g", 1);
	r = n < 0 ? -errno : 0;
	sigaction(SIGPIPE, &old, NULL);
	if (n != 1) {
		r = r ? r : -EPIPE;
		close(l->gofd);
		l->gofd = -1;
		launch_abort(l);
		return r;
	}
	close(l->gofd);
	l->gofd = -1;
	r = exec_result(l->pid, l->errfd, ret_errno);
	close(l->errfd);
	l->errfd = -1;
	return r;
}

void launch_abort(struct launch *l)
{
	fd_close(l->gofd);
	fd_close(l->errfd);
	l->gofd = l->errfd = -1;
	kill(l->pid, SIGKILL);
	reap(l->pid);
}

/* ---- strays ------------------------------------------------------------------------
 * Everything here is async-signal-safe: launch_terminate() runs it from a
 * signal handler. */

/*
 * Our children, from /proc/thread-self/children (the controller has one
 * thread: the one re-parented orphans are given to). Returns how many pids
 * were stored; a list longer than the buffer is cut at its last whole pid,
 * and what it left out is found in the next round.
 */
static size_t children(pid_t *v, size_t max)
{
	static char buf[16384]; /* static: a signal handler's stack is small */
	size_t n = 0, used = 0;
	ssize_t k;
	int fd;

	fd = open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (used < sizeof(buf) - 1 && (k = read(fd, buf + used, sizeof(buf) - 1 - used)) > 0)
		used += (size_t)k;
	close(fd);
	/* Full: the last number may be cut short. */
	if (used == sizeof(buf) - 1)
		while (used > 0 && buf[used - 1] != ' ')
			used--;
	for (size_t i = 0; i < used && n < max;) {
		pid_t pid = 0;

		while (i < used && (buf[i] < '0' || buf[i] > '9'))
			i++;
		if (i == used)
			break;
		while (i < used && buf[i] >= '0' && buf[i] <= '9')
			pid = pid * 10 + (buf[i++] - '0');
		v[n++] = pid;
	}
	return n;
}

/* Kill and reap the children no owner holds, and what they started, until
 * none is left (re-parenting makes a grandchild a child once its parent is
 * reaped). */
static void sweep_strays(void)
{
	for (int round = 0; round < 100; round++) {
		pid_t v[256];
		size_t n = children(v, 256), killed = 0;

		for (size_t i = 0; i < n; i++) {
			if (registered(v[i]))
				continue;
			launch_kill_reap(v[i], true);
			killed++;
		}
		if (!killed)
			return;
	}
}

void launch_sweep(void)
{
	sweep_strays();
}

/*
 * Kill every child, registered or not, and reap it without ever blocking:
 * a traced multi-threaded child ends only once each of its threads has
 * been let go from its exit stop, and waitpid() on its pid alone would wait
 * for ever. Gives up after about two seconds.
 */
static void sweep_all(void)
{
	static const struct timespec tick = { 0, 1000000 };

	for (int round = 0; round < 2000; round++) {
		pid_t v[256], pid;
		size_t n;
		int status;

		while ((pid = waitpid(-1, &status, __WALL | WNOHANG)) > 0)
			if (WIFSTOPPED(status))
				ptrace(PTRACE_CONT, pid, 0, 0);
		n = children(v, 256);
		if (n == 0)
			break;
		for (size_t i = 0; i < n; i++) {
			kill(-v[i], SIGKILL);
			kill(v[i], SIGKILL);
		}
		nanosleep(&tick, NULL);
	}
	for (int i = 0; i < MAX_LIVE; i++)
		if (live_reserved[i])
			slot_release(i);
}

/* Remove the files in 'path' (not subdirectories). Async-signal-safe. */
/* Everything in the directory open as fd, subdirectories and all (a
 * program benchtrap runs may write a tree there: criterion's reports), by
 * system calls alone: it runs in launch_terminate() too. Symbolic links are
 * removed, never followed; 'depth' bounds the recursion. */
static void empty_dirfd(int fd, int depth)
{
	char buf[4096];
	long n;

	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			/* struct linux_dirent64: ino, off, reclen, type, name */
			unsigned short reclen;
			unsigned char type = (unsigned char)buf[off + 18];
			const char *name = buf + off + 19;

			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
			    unlinkat(fd, name, 0) < 0 && (type == DT_DIR || type == DT_UNKNOWN) &&
			    depth > 0) {
				int sub = openat(fd, name,
						 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

				if (sub >= 0) {
					empty_dirfd(sub, depth - 1);
					close(sub);
					unlinkat(fd, name, AT_REMOVEDIR);
				}
			}
			off += reclen;
		}
	}
}

static void empty_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	empty_dirfd(fd, 16);
	close(fd);
}

static void remove_dir(const char *path)
{
	empty_dir(path);
	rmdir(path);
}

void launch_kill_all(void)
{
	for (int i = 0; i < MAX_LIVE; i++) {
		pid_t pid = live_pids[i];

		if (pid > 0) {
			if (live_group[i])
				kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
		}
	}
}

void launch_stop(void)
{
	stopping = 1;
	launch_kill_all();
}

bool launch_stopping(void)
{
	return stopping;
}

void launch_terminate(void)
{
	launch_kill_all();
	/* Whatever was re-parented to us, and the registered ones, reaped:
	 * a stray is re-parented only once its parent has exited. */
	sweep_all();
	for (int i = 0; i < MAX_TEMP_DIRS; i++)
		if (temp_used[i])
			remove_dir(temp_dirs[i]);
}

/* ---- temporary directories ------------------------------------------------------ */

int launch_temp_dir(char *tmpl)
{
	int slot = -1;

	if (strlen(tmpl) >= TEMP_DIR_LEN)
		return -ENAMETOOLONG;
	for (int i = 0; i < MAX_TEMP_DIRS && slot < 0; i++)
		if (!temp_used[i])
			slot = i;
	if (slot < 0)
		return -EAGAIN;
	if (!mkdtemp(tmpl))
		return -errno;
	strcpy(temp_dirs[slot], tmpl);
	temp_used[slot] = 1;
	return 0;
}

void launch_temp_dir_empty(const char *path)
{
	empty_dir(path);
}

void launch_temp_dir_remove(const char *path)
{
	for (int i = 0; i < MAX_TEMP_DIRS; i++) {
		if (temp_used[i] && !strcmp(temp_dirs[i], path)) {
			temp_used[i] = 0;
			remove_dir(temp_dirs[i]);
			return;
		}
	}
	remove_dir(path);
}

/* ---- the guard ------------------------------------------------------------------ */

static volatile pid_t worker_pid;

/* The first process passes on what is sent to it; a signal typed at the
 * terminal (si_code SI_KERNEL) reached the worker already: same group. */
static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (worker_pid > 0 && (!si || si->si_code != SI_KERNEL))
		kill(worker_pid, sig);
}

bool launch_orphaned(void)
{
	return front_pid > 0 && getppid() != front_pid;
}

pid_t launch_front(void)
{
	return front_pid;
}

int launch_guard(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa = { .sa_sigaction = forward, .sa_flags = SA_SIGINFO | SA_RESTART };
	pid_t front = getpid(), pid;
	int status;

	/* This process is a subreaper too: should the worker die without
	 * cleaning up (a crash, a signal it does not handle), what it
	 * started is re-parented here, and swept below. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		front_pid = front;
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		if (getppid() != front)
			raise(SIGTERM);
		return 0;
	}
	worker_pid = pid;
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); /* as the worker: util/guard.h */
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&sa.sa_mask, sigs[i]);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			_exit(2);
	sweep_all();
	if (WIFEXITED(status))
		_exit(WEXITSTATUS(status));
	/* Die as the worker died, for the shell's sake; it dumped any core. */
	int sig = WTERMSIG(status);
	struct rlimit no_core = { 0, 0 };
	sigset_t set;

	setrlimit(RLIMIT_CORE, &no_core);
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	_exit(128 + sig);
}

/* A process not traced: wait for it until 'deadline' (CLOCK_MONOTONIC
 * ns), then kill it. *ret_status: its wait status; *ret_killed: killed. */
int launch_wait_until(pid_t pid, uint64_t deadline, int *ret_status, bool *ret_killed)
{
	int st = 0;

	*ret_killed = false;
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -errno;
		if ((uint64_t)clock_now_ns() >= deadline) {
			launch_kill_reap(pid, true);
			*ret_killed = true;
			*ret_status = 0;
			launch_sweep();
			return 0;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 2000000 }, NULL);
	}
	launch_forget(pid);
	/* What the binary started and left behind goes with it. */
	kill(-pid, SIGKILL);
	launch_sweep();
	*ret_status = st;
	return 0;
}

int launch_capture(const char *path, char *const *argv, char *const *envp, unsigned timeout_ms,
		   char **ret_text)
{
	struct launch_opts o;
	struct launch l;
	int out[2], devnull, status, exec_errno = 0, r = 0;
	char *text = NULL;
	size_t len = 0, cap = 0;
	uint64_t deadline = (uint64_t)clock_now_ns() / 1000000 + timeout_ms;

	if (pipe2(out, O_CLOEXEC) < 0)
		return -errno;
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	launch_opts_init(&o, path, argv);
	o.envp = envp;
	o.aslr = true;
	o.stdio[0] = devnull;
	o.stdio[1] = out[1];
	o.stdio[2] = devnull;
	r = launch_start(&o, &l, &exec_errno);
	close(out[1]);
	fd_close(devnull);
	if (r < 0) {
		close(out[0]);
		return r == -LAUNCH_E_EXEC ? -exec_errno : r;
	}
	for (;;) {
		struct pollfd p = { .fd = out[0], .events = POLLIN };
		uint64_t t = (uint64_t)clock_now_ns() / 1000000;
		ssize_t got;

		if (t >= deadline) {
			r = -ETIMEDOUT;
			break;
		}
		if (poll(&p, 1, (int)(deadline - t)) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (!p.revents)
			continue;
		if (len + 4097 > cap) {
			char *v = realloc(text, cap = 2 * (len + 4097));

			if (!v) {
				r = -ENOMEM;
				break;
			}
			text = v;
		}
		got = read(out[0], text + len, 4096);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	close(out[0]);
	if (r < 0) {
		launch_kill_reap(l.pid, false);
		free(text);
		return r;
	}
	while (waitpid(l.pid, &status, 0) < 0 && errno == EINTR)
		;
	launch_forget(l.pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		free(text);
		return -ENOEXEC;
	}
	if (!text && !(text = malloc(1)))
		return -ENOMEM;
	text[len] = '\0';
	*ret_text = text;
	return 0;
}
