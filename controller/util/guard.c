/* SPDX-License-Identifier: MIT */
/* Signals to benchtrap refused (guard.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/launch.h"
#include "util/guard.h"

/* The architecture whose system calls the filter knows; a call made
 * through another (int 0x80 in a 64-bit process) is not looked at. */
#if defined(__x86_64__)
#define GUARD_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define GUARD_ARCH AUDIT_ARCH_AARCH64
#endif

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

/* x32 numbers are the native ones with this bit set. */
#define X32_BIT 0x40000000u

/* ---- words ------------------------------------------------------------------------ */

static int signal_of(const struct guard_call *c)
{
	switch (c->nr) {
	case SYS_kill:
	case SYS_rt_sigqueueinfo:
	case SYS_tkill:
	case SYS_pidfd_send_signal:
		return (int)c->args[1];
	case SYS_tgkill:
	case SYS_rt_tgsigqueueinfo:
		return (int)c->args[2];
	default:
		return -1;
	}
}

static const char *sig_name(int sig, char *buf, size_t size)
{
	const char *abbrev = sigabbrev_np(sig);

	if (abbrev)
		snprintf(buf, size, "SIG%s", abbrev);
	else
		snprintf(buf, size, "signal %d", sig);
	return buf;
}

/*
 * What call c does to whom: *target as kill(2) reads a pid (> 0 a process,
 * < -1 a process group, -1 every process, 0 nobody), *groups whether a
 * negative target means a group, and the verb in what. False when the call
 * harms nobody whatever its target (signal 0, prlimit that only reads, an
 * fcntl that sets no owner).
 */
static bool aim_of(const struct guard_call *c, pid_t *target, bool *groups, char *what, size_t size)
{
	int sig = signal_of(c);
	char sname[32];

	*target = (pid_t)(uint32_t)c->args[0];
	*groups = false;
	switch (c->nr) {
	case SYS_kill:
	case SYS_rt_sigqueueinfo:
		*groups = true;
		/* fall through */
	case SYS_tkill:
	case SYS_tgkill:
	case SYS_rt_tgsigqueueinfo:
	case SYS_pidfd_send_signal:
		/* signal 0 signals nothing: it asks whether the target lives */
		if (sig <= 0)
			return false;
		snprintf(what, size, "sent %s to", sig_name(sig, sname, sizeof(sname)));
		return true;
	case SYS_pidfd_open:
		snprintf(what, size, "asked for a pidfd of");
		return true;
	case SYS_prlimit64:
		snprintf(what, size, "changed the resource limits of");
		return c->args[2] != 0; /* no new limit: only reads them */
	case SYS_process_vm_writev:
		snprintf(what, size, "wrote into the memory of");
		return true;
	case SYS_ptrace:
		*target = (pid_t)(uint32_t)c->args[1];
		snprintf(what, size, "tried to ptrace");
		return true;
	case SYS_fcntl:
		if (c->args[1] != F_SETOWN && c->args[1] != F_SETOWN_EX)
			return false;
		/* F_SETOWN's argument, or F_SETOWN_EX's struct read as one */
		*target = (pid_t)(uint32_t)c->args[2];
		*groups = true;
		snprintf(what, size, "gave a descriptor's signals (%s) to",
			 c->args[1] == F_SETOWN ? "F_SETOWN" : "F_SETOWN_EX");
		return *target != 0 || c->unread;
	default:
		return false;
	}
}

bool guard_judge(const struct guard_who *w, const struct guard_call *c, char *buf, size_t size)
{
	const char *who = NULL;
	char what[64];
	pid_t target;
	bool groups;

	if (!aim_of(c, &target, &groups, what, sizeof(what)))
		return false;
	if (c->unread) {
		/* Where the signals would go is unknown: refused, as it may
		 * be benchtrap. */
		snprintf(buf, size, "%s a process whose id benchtrap could not read", what);
		return true;
	}
	if (groups && target == -1 && c->nr != SYS_fcntl) {
		snprintf(buf, size, "%s every process it may signal (kill -1)", what);
		return true;
	}
	if (groups && target < 0) {
		if (w->group > 0 && -target == w->group)
			snprintf(buf, size, "%s benchtrap's process group (%d)", what, -target);
		else if (c->server > 0 && -target == c->server)
			snprintf(buf, size, "%s its fork server's process group (%d)", what, -target);
		else
			return false;
		return true;
	}
	if (target <= 0)
		return false;
	if (target == w->front || target == w->worker || target == w->thread)
		who = "benchtrap";
	else if (c->server > 0 && target == c->server)
		who = "the fork server";
	if (!who)
		return false;
	if (target == w->thread && w->worker > 0)
		target = w->worker;
	if (c->caller_parent > 0 && target == c->caller_parent)
		snprintf(buf, size, "%s its parent (%s, pid %d)", what, who, target);
	else
		snprintf(buf, size, "%s %s (pid %d)", what, who, target);
	return true;
}

/* ---- the filter ------------------------------------------------------------------- */

#define ARG_LO(i) \
	(offsetof(struct seccomp_data, args[i]) + (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 4 : 0))

enum { PROG_MAX = 48 };
static struct sock_filter prog[PROG_MAX];
static unsigned short prog_len, self_at, self_group_at;
static struct guard_who who;
static volatile bool ready;

/*
 *   arch native?                            no: allow
 *   nr (x32 bit cleared):
 *     kill, rt_sigqueueinfo                 -> group, then pid of arg0
 *     tkill, tgkill, rt_tgsigqueueinfo,
 *     pidfd_open, prlimit64,
 *     process_vm_writev                     -> pid of arg0
 *     ptrace                                -> pid of arg1
 *     fcntl                                 -> owner
 *     pidfd_send_signal                     -> notify (the descriptor is
 *                                              looked up by the answer)
 *   group: arg0 == -1, -(group), -(self)    -> notify
 *   owner: arg1 == F_SETOWN, F_SETOWN_EX    -> notify
 *   pid:   one of front, worker, thread, self -> notify
 *   allow
 *
 * The self slots (a fork server's own pid and group) hold a value that
 * repeats another until guard_child() patches them.
 */
enum label { L_NEXT, L_GROUP, L_OWNER, L_PID0, L_PID1, L_PIDCMP, L_NOTIFY, L_ALLOW, L_COUNT };

struct insn {
	struct sock_filter f;
	enum label jt, jf; /* jumps; for BPF_JA, jt is the target */
};

static unsigned emit(struct insn *v, unsigned n, uint16_t code, uint32_t k, enum label jt,
		     enum label jf)
{
	if (n >= PROG_MAX)
		abort(); /* the program outgrew its array: a bug here */
	v[n] = (struct insn){ .f = { .code = code, .k = k }, .jt = jt, .jf = jf };
	return n + 1;
}

static void build(void)
{
	static const struct {
		int nr;
		enum label to;
	} calls[] = {
		{ SYS_kill, L_GROUP },
		{ SYS_rt_sigqueueinfo, L_GROUP },
		{ SYS_tkill, L_PID0 },
		{ SYS_tgkill, L_PID0 },
		{ SYS_rt_tgsigqueueinfo, L_PID0 },
		{ SYS_pidfd_open, L_PID0 },
		{ SYS_prlimit64, L_PID0 },
		{ SYS_process_vm_writev, L_PID0 },
		{ SYS_ptrace, L_PID1 },
		{ SYS_fcntl, L_OWNER },
		{ SYS_pidfd_send_signal, L_NOTIFY },
	};
	const uint16_t ld = BPF_LD | BPF_W | BPF_ABS, jeq = BPF_JMP | BPF_JEQ | BPF_K;
	const uint16_t ret = BPF_RET | BPF_K, ja = BPF_JMP | BPF_JA;
	struct insn v[PROG_MAX];
	unsigned at[L_COUNT] = { 0 }, n = 0;

	n = emit(v, n, ld, offsetof(struct seccomp_data, arch), L_NEXT, L_NEXT);
	n = emit(v, n, jeq, GUARD_ARCH, L_NEXT, L_ALLOW);
	n = emit(v, n, ld, offsetof(struct seccomp_data, nr), L_NEXT, L_NEXT);
	n = emit(v, n, BPF_ALU | BPF_AND | BPF_K, ~X32_BIT, L_NEXT, L_NEXT);
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		n = emit(v, n, jeq, (uint32_t)calls[i].nr, calls[i].to, L_NEXT);
	n = emit(v, n, ret, SECCOMP_RET_ALLOW, L_NEXT, L_NEXT);

	at[L_GROUP] = n;
	n = emit(v, n, ld, ARG_LO(0), L_NEXT, L_NEXT);
	n = emit(v, n, jeq, (uint32_t)-1, L_NOTIFY, L_NEXT);
	n = emit(v, n, jeq, (uint32_t) - (who.group > 0 ? who.group : 1), L_NOTIFY, L_NEXT);
	self_group_at = (unsigned short)n;
	n = emit(v, n, jeq, (uint32_t)-1, L_NOTIFY, L_NEXT); /* -(self), patched */
	n = emit(v, n, ja, 0, L_PIDCMP, L_NEXT);

	at[L_OWNER] = n;
	n = emit(v, n, ld, ARG_LO(1), L_NEXT, L_NEXT);
	n = emit(v, n, jeq, F_SETOWN, L_NOTIFY, L_NEXT);
	n = emit(v, n, jeq, F_SETOWN_EX, L_NOTIFY, L_NEXT);
	n = emit(v, n, ret, SECCOMP_RET_ALLOW, L_NEXT, L_NEXT);

	at[L_PID1] = n;
	n = emit(v, n, ld, ARG_LO(1), L_NEXT, L_NEXT);
	n = emit(v, n, ja, 0, L_PIDCMP, L_NEXT);
	at[L_PID0] = n;
	n = emit(v, n, ld, ARG_LO(0), L_NEXT, L_NEXT);
	at[L_PIDCMP] = n;
	n = emit(v, n, jeq, (uint32_t)who.front, L_NOTIFY, L_NEXT);
	n = emit(v, n, jeq, (uint32_t)who.worker, L_NOTIFY, L_NEXT);
	n = emit(v, n, jeq, (uint32_t)who.thread, L_NOTIFY, L_NEXT);
	self_at = (unsigned short)n;
	n = emit(v, n, jeq, (uint32_t)who.worker, L_NOTIFY, L_NEXT); /* self, patched */
	n = emit(v, n, ret, SECCOMP_RET_ALLOW, L_NEXT, L_NEXT);
	at[L_NOTIFY] = n;
	n = emit(v, n, ret, SECCOMP_RET_USER_NOTIF, L_NEXT, L_NEXT);
	at[L_ALLOW] = n;
	n = emit(v, n, ret, SECCOMP_RET_ALLOW, L_NEXT, L_NEXT);

	/* Jumps are relative to the next instruction. */
	for (unsigned i = 0; i < n; i++) {
		struct sock_filter f = v[i].f;

		if (f.code == ja) {
			f.k = at[v[i].jt] - i - 1;
		} else if (BPF_CLASS(f.code) == BPF_JMP) {
			f.jt = (unsigned char)(v[i].jt == L_NEXT ? 0 : at[v[i].jt] - i - 1);
			f.jf = (unsigned char)(v[i].jf == L_NEXT ? 0 : at[v[i].jf] - i - 1);
		}
		prog[i] = f;
	}
	prog_len = (unsigned short)n;
}

/* In the child: async-signal-safe. */
int guard_child(int sock, bool server)
{
	struct sock_filter copy[PROG_MAX];
	struct sock_fprog fp = { .len = prog_len, .filter = copy };
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = "l", .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	long fd;

	if (!ready)
		return -ENOSYS;
	/* No CAP_SYS_PTRACE after exec, not even as root: benchtrap is not
	 * dumpable (guard_start), so its memory (/proc/PID/mem) and ptrace of
	 * it are then out of reach (process_vm_writev and ptrace are refused
	 * by the filter too). Fails without CAP_SETPCAP: a container that
	 * grants CAP_SYS_PTRACE alone leaves it to the child
	 * (docs/processes.md, "Limits"). */
	prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE, 0, 0, 0);
	memcpy(copy, prog, sizeof(copy));
	if (server) {
		pid_t self = (pid_t)syscall(SYS_getpid);

		copy[self_at].k = (uint32_t)self;
		copy[self_group_at].k = (uint32_t)-self;
	}
	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fp);
	if (fd < 0 && errno == EACCES) {
		/* Without CAP_SYS_ADMIN, a filter needs no_new_privs. */
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			     SECCOMP_FILTER_FLAG_NEW_LISTENER, &fp);
	}
	if (fd < 0)
		return -errno;
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &(int){ (int)fd }, sizeof(int));
	if (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0) {
		close((int)fd);
		return -errno;
	}
	close((int)fd);
	return 0;
}

/* ---- the answering thread --------------------------------------------------------- */

#define MAX_LISTENERS 64
#define MAX_OFFENCES 16
#define CHAIN 8

struct listener {
	int fd;
	pid_t server; /* the child it was installed in, when a fork server */
};

struct offence {
	pid_t chain[CHAIN]; /* the caller's process, then its ancestors */
	char text[192];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct listener listeners[MAX_LISTENERS];
static size_t nlisteners;
static struct offence offences[MAX_OFFENCES];
static size_t noffences;
static int wake[2] = { -1, -1 };

/* A field of the "Name:\tvalue" file at path, as a number, or 0. */
static pid_t status_field_of(const char *path, const char *field)
{
	char line[256];
	pid_t v = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, strlen(field))) {
			v = (pid_t)atoi(line + strlen(field));
			break;
		}
	fclose(f);
	return v;
}

/* A field of /proc/PID/status ("Tgid:", "PPid:"), or 0. */
static pid_t status_field(pid_t pid, const char *field)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	return status_field_of(path, field);
}

static void record(pid_t tgid, const char *text)
{
	struct offence o = { 0 };
	pid_t p = tgid;

	for (int i = 0; i < CHAIN && p > 1 && p != who.worker; i++) {
		o.chain[i] = p;
		p = status_field(p, "PPid:");
	}
	snprintf(o.text, sizeof(o.text), "%s", text);
	pthread_mutex_lock(&lock);
	if (noffences == MAX_OFFENCES) {
		memmove(offences, offences + 1, sizeof(offences[0]) * (MAX_OFFENCES - 1));
		noffences--;
	}
	offences[noffences++] = o;
	pthread_mutex_unlock(&lock);
}

/* The process the descriptor fd of thread tid refers to (its own table,
 * which unshare(CLONE_FILES) may have made its own), as a pidfd ("Pid:" of
 * its fdinfo) or a /proc/PID directory; 0 if neither. */
static pid_t pid_of_fd(pid_t tid, int fd)
{
	char path[64], link[64];
	pid_t pid;
	ssize_t k;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)tid, fd);
	pid = status_field_of(path, "Pid:");
	if (pid > 0)
		return pid;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)tid, fd);
	k = readlink(path, link, sizeof(link) - 1);
	if (k <= 0)
		return 0;
	link[k] = 0;
	if (strncmp(link, "/proc/", 6) || !link[6] ||
	    strspn(link + 6, "0123456789") != strlen(link + 6))
		return 0;
	return (pid_t)atoi(link + 6);
}

/*
 * What the filter cannot see, read from the caller: the process of
 * pidfd_send_signal's descriptor into args[0], F_SETOWN_EX's owner into
 * args[2] as F_SETOWN would give it (a pid, or minus a group); a struct
 * that cannot be read sets c->unread. The calling thread waits in the
 * call, but another thread of its process may change what it passed before
 * the call goes on: a benchmark that races itself so can still aim a
 * descriptor at benchtrap (docs/processes.md, "Limits").
 */
static void resolve(struct guard_call *c)
{
	if (c->nr == SYS_pidfd_send_signal) {
		c->args[0] = c->caller > 0 ? (uint32_t)pid_of_fd(c->caller, (int)c->args[0]) : 0;
	} else if (c->nr == SYS_fcntl && c->args[1] == F_SETOWN_EX) {
		struct f_owner_ex o = { 0 };
		struct iovec local = { &o, sizeof(o) };
		struct iovec remote = { (void *)(uintptr_t)c->args[2], sizeof(o) };

		if (process_vm_readv(c->caller, &local, 1, &remote, 1, 0) != (ssize_t)sizeof(o))
			c->unread = true;
		c->args[2] = (uint32_t)(o.type == F_OWNER_PGRP ? -o.pid : o.pid);
	}
}

static void answer(const struct listener *l)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp = { 0 };
	struct guard_call c = { 0 };
	char text[192];
	pid_t tgid;

	memset(&req, 0, sizeof(req));
	if (ioctl(l->fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return;
	resp.id = req.id;
	c.nr = (int)((unsigned)req.data.nr & ~X32_BIT);
	memcpy(c.args, req.data.args, sizeof(c.args));
	c.caller = (pid_t)req.pid;
	c.server = l->server;
	tgid = c.caller > 0 ? status_field(c.caller, "Tgid:") : 0;
	c.caller_parent = tgid > 0 ? status_field(tgid, "PPid:") : 0;
	resolve(&c);
	/* Gone meanwhile (what was read may be another process's): its
	 * answer would reach no one. */
	if (ioctl(l->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &req.id) < 0)
		return;
	if (tgid > 0 && tgid == l->server) {
		/* The server itself (valgrind signals its own threads). */
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	} else if (guard_judge(&who, &c, text, sizeof(text))) {
		resp.error = -EPERM;
		if (tgid > 0) {
			record(tgid, text);
			kill(tgid, SIGKILL);
		}
	} else {
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	}
	ioctl(l->fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

static void *answering(void *arg)
{
	(void)arg;
	__atomic_store_n(&who.thread, (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	for (;;) {
		struct pollfd p[1 + MAX_LISTENERS];
		struct listener l[MAX_LISTENERS];
		size_t n;
		char c[64];

		pthread_mutex_lock(&lock);
		n = nlisteners;
		memcpy(l, listeners, n * sizeof(l[0]));
		pthread_mutex_unlock(&lock);
		p[0] = (struct pollfd){ .fd = wake[0], .events = POLLIN };
		for (size_t i = 0; i < n; i++)
			p[1 + i] = (struct pollfd){ .fd = l[i].fd, .events = POLLIN };
		if (poll(p, 1 + n, -1) < 0)
			continue;
		if (p[0].revents & POLLIN)
			while (read(wake[0], c, sizeof(c)) > 0)
				;
		for (size_t i = 0; i < n; i++) {
			if (p[1 + i].revents & POLLIN) {
				answer(&l[i]);
			} else if (p[1 + i].revents & (POLLHUP | POLLERR | POLLNVAL)) {
				/* No process uses the filter any more. */
				pthread_mutex_lock(&lock);
				for (size_t k = 0; k < nlisteners; k++)
					if (listeners[k].fd == l[i].fd) {
						listeners[k] = listeners[--nlisteners];
						break;
					}
				pthread_mutex_unlock(&lock);
				close(l[i].fd);
			}
		}
	}
	return NULL;
}

int guard_start(void)
{
	static int started;
	sigset_t all, old;
	pthread_t t;
	int r;

	if (started)
		return ready ? 0 : -ENOSYS;
	started = 1;
#ifndef GUARD_ARCH
	return -ENOSYS;
#else
	if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	who.worker = getpid();
	who.front = launch_front() > 0 ? launch_front() : who.worker;
	/* Out of reach of its children's /proc/PID/mem and ptrace (with
	 * CAP_SYS_PTRACE dropped in them, guard_child); launch.c makes each
	 * child dumpable again, so that it can be traced. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	who.group = getpgid(0);
	/* The thread takes no signal: the fatal-signal handlers must run on
	 * the thread the children and orphans belong to. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&t, NULL, answering, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r)
		return -r;
	pthread_detach(t);
	/* Its tid is part of the filter. */
	while (!__atomic_load_n(&who.thread, __ATOMIC_SEQ_CST))
		sched_yield();
	build();
	ready = true;
	return 0;
#endif
}

bool guard_ready(void)
{
	return ready;
}

void guard_adopt(int sock, pid_t server)
{
	char cbuf[CMSG_SPACE(sizeof(int))], b;
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	ssize_t k;
	int fd = -1;

	do
		k = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	while (k < 0 && errno == EINTR);
	if (k <= 0)
		return;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	if (fd < 0)
		return;
	pthread_mutex_lock(&lock);
	if (nlisteners < MAX_LISTENERS) {
		listeners[nlisteners++] = (struct listener){ .fd = fd, .server = server };
		fd = -1;
	}
	pthread_mutex_unlock(&lock);
	/* No room: closed, the filtered calls fail with ENOSYS (still refused). */
	if (fd >= 0)
		close(fd);
	if (write(wake[1], "w", 1) < 0) {
		/* full: the thread is awake already */
	}
}

char *guard_take(pid_t pid)
{
	char *s = NULL;

	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < noffences && !s; i++) {
		bool match = pid == 0;

		for (int k = 0; k < CHAIN && !match; k++)
			match = offences[i].chain[k] == pid && pid > 0;
		if (match) {
			s = strdup(offences[i].text);
			memmove(offences + i, offences + i + 1,
				sizeof(offences[0]) * (noffences - i - 1));
			noffences--;
		}
	}
	pthread_mutex_unlock(&lock);
	return s;
}
