/* SPDX-License-Identifier: MIT */
/* Signals to benchtrap refused (guard.h). */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
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

/* x32 numbers are the native ones with this bit set. */
#define X32_BIT 0x40000000u

/* ---- words ------------------------------------------------------------------------ */

static int signal_of(const struct guard_call *c)
{
	switch (c->nr) {
	case SYS_kill:
	case SYS_rt_sigqueueinfo:
	case SYS_tkill:
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

bool guard_judge(const struct guard_who *w, const struct guard_call *c, char *buf, size_t size)
{
	pid_t target = (pid_t)(uint32_t)c->args[0];
	int sig = signal_of(c);
	bool any_kill = c->nr == SYS_kill || c->nr == SYS_rt_sigqueueinfo;
	const char *who = NULL;
	char sname[32], what[64];

	if (c->nr != SYS_pidfd_open && sig <= 0)
		return false; /* signal 0 signals nothing: it asks whether the target lives */
	if (c->nr == SYS_pidfd_open)
		snprintf(what, sizeof(what), "asked for a pidfd of");
	else
		snprintf(what, sizeof(what), "sent %s to", sig_name(sig, sname, sizeof(sname)));
	if (any_kill && target == -1) {
		snprintf(buf, size, "%s every process it may signal (kill -1)", what);
		return true;
	}
	if (any_kill && target < -1) {
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

#define ARG0_LO (offsetof(struct seccomp_data, args[0]) + (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 4 : 0))

enum { PROG_MAX = 32 };
static struct sock_filter prog[PROG_MAX];
static unsigned short prog_len, self_at;
static struct guard_who who;
static volatile bool ready;

#define STMT(c, k) ((struct sock_filter)BPF_STMT(c, k))
#define JUMP(c, k, t, f) ((struct sock_filter)BPF_JUMP(c, k, t, f))

/*
 *   arch native?              no: allow
 *   nr (x32 bit cleared) one of kill, rt_sigqueueinfo       -> by pid or group
 *                          tkill, tgkill, rt_tgsigqueueinfo,
 *                          pidfd_open                        -> by pid
 *   by pid or group: arg0 == -1 or -(group)                  -> notify
 *   by pid: arg0 one of front, worker, thread, self          -> notify
 *   allow
 */
static void build(void)
{
	static const int by_group[] = { SYS_kill, SYS_rt_sigqueueinfo };
	static const int by_pid[] = { SYS_tkill, SYS_tgkill, SYS_rt_tgsigqueueinfo,
				      SYS_pidfd_open };
	struct sock_filter *p = prog;
	unsigned n = 0, group_at, pid_at, notify_at, allow_at, jumps_at;

	/* Layout: 0 arch, 1 jeq, 2 nr, 3 and, 4..9 jeq per call, 10 allow,
	 * then the group test, the pid test, notify, allow. */
	p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, GUARD_ARCH, 0, 0); /* jf: allow, below */
	p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	p[n++] = STMT(BPF_ALU | BPF_AND | BPF_K, ~X32_BIT);
	jumps_at = n;
	n += 2 + 4;
	p[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	group_at = n;
	p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO);
	p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)-1, 0, 0);
	p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)-(who.group > 0 ? who.group : 1), 0, 0);
	p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)-1, 0, 0); /* -(self), patched */
	pid_at = n;
	p[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO);
	p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)who.front, 0, 0);
	p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)who.worker, 0, 0);
	p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)who.thread, 0, 0);
	self_at = (unsigned short)n;
	p[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)who.worker, 0, 0); /* self, patched */
	p[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	notify_at = n;
	p[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
	allow_at = n;
	p[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

	p[1].jf = (unsigned char)(allow_at - 2);
	for (unsigned i = 0; i < 2; i++)
		p[jumps_at + i] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)by_group[i],
				       (unsigned char)(group_at - (jumps_at + i) - 1), 0);
	for (unsigned i = 0; i < 4; i++)
		p[jumps_at + 2 + i] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)by_pid[i],
					   (unsigned char)(pid_at - (jumps_at + 2 + i) - 1), 0);
	for (unsigned i = group_at + 1; i < pid_at; i++)
		p[i].jt = (unsigned char)(notify_at - i - 1);
	for (unsigned i = pid_at + 1; i <= self_at; i++)
		p[i].jt = (unsigned char)(notify_at - i - 1);
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
	memcpy(copy, prog, sizeof(copy));
	if (server) {
		pid_t self = (pid_t)syscall(SYS_getpid);

		copy[self_at].k = (uint32_t)self;
		copy[self_at - 2].k = (uint32_t)-self;
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

/* A field of /proc/PID/status ("Tgid:", "PPid:"), or 0. */
static pid_t status_field(pid_t pid, const char *field)
{
	char path[64], line[256];
	pid_t v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
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
