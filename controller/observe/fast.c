// SPDX-License-Identifier: MIT
/*
 * Patched entries (session.h): the agent (arch/agent.h) injected into the
 * process, a trampoline per function within reach of its code, the entry
 * replaced by a jump, and the agent's records read from the ring it shares
 * with benchtrap. A call so observed costs its two passes through the agent
 * and no stop.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "arch/agent.h"
#include "util/array.h"
#include "util/clock.h"
#include "util/procmaps.h"
#include "observe/session.h"

/* Trampolines per region mapped next to an object. */
#define REGION_SIZE (256u * 1024u)
/* How far from an object a region may lie: a jump reaches ±2 GiB. */
#define REACH (1ull << 30)

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* The time stamp counter as a clock: the same rate on every processor and
 * in every power state, or durations in it mean nothing. */
static const char *tsc_unusable(void)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[4096];
	bool constant = false, nonstop = false;

	if (!f)
		return "/proc/cpuinfo cannot be read to tell whether the time stamp counter is "
		       "a clock";
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	if (!constant || !nonstop)
		return "the processor's time stamp counter does not run at a constant rate "
		       "(no constant_tsc and nonstop_tsc in /proc/cpuinfo)";
	return NULL;
}

static int remote(struct session *s, long nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
		  uint64_t a4, uint64_t a5, int64_t *ret)
{
	uint64_t args[6] = { a0, a1, a2, a3, a4, a5 };
	int r = trace_syscall(s->p, nr, args, ret);

	if (r < 0)
		return r;
	if (*ret < 0 && *ret > -4096)
		return (int)*ret;
	return 0;
}

/* A forked child runs on with a copy of the agent whose shadow stacks are
 * its own (private memory), but whose ring is benchtrap's: it records
 * nothing more. */
static void on_fork(void *userdata, pid_t child)
{
	struct session *s = userdata;
	uint64_t one = 1;
	struct iovec local = { &one, sizeof(one) };
	struct iovec rem = { (void *)(uintptr_t)(s->agent + AGENT_PRIVATE_OFF), sizeof(one) };

	if (process_vm_writev(child, &local, 1, &rem, 1, 0) != (ssize_t)sizeof(one))
		observe_diagnose(s, "a forked child's copy of the agent could not be told it is a "
				    "copy: its calls may be counted as the parent's");
}

int observe_fast_start(struct session *s)
{
	static const char name[] = "benchtrap-observe";
	uint64_t page = 0, base;
	int64_t fd = -1, res;
	char path[64];
	int r, myfd = -1;
	void *map;
	const char *why = tsc_unusable();

	if (!why && arch_agent_base != 0)
		why = "the agent was built wrong (its base is not at offset 0)";
	if (why) {
		s->fast_off = strdup(why);
		return 0;
	}
	r = remote(s, SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   (uint64_t)-1, 0, &res);
	if (r < 0)
		goto fail;
	page = (uint64_t)res;
	r = trace_write(s->p, page, name, sizeof(name));
	if (r == 0)
		r = remote(s, SYS_memfd_create, page, MFD_CLOEXEC, 0, 0, 0, 0, &fd);
	if (r < 0)
		goto fail;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)s->pid, (int)fd);
	myfd = open(path, O_RDWR | O_CLOEXEC);
	if (myfd < 0) {
		r = -errno;
		goto fail;
	}
	if (ftruncate(myfd, AGENT_SHARED_END - AGENT_SHARED_OFF) < 0) {
		r = -errno;
		goto fail;
	}
	map = mmap(NULL, AGENT_SHARED_END - AGENT_SHARED_OFF, PROT_READ | PROT_WRITE, MAP_SHARED,
		   myfd, 0);
	if (map == MAP_FAILED) {
		r = -errno;
		goto fail;
	}
	s->agent_map = map;
	/* The whole block private first, then the shared part over it. */
	r = remote(s, SYS_mmap, 0, AGENT_TOTAL, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   (uint64_t)-1, 0, &res);
	if (r < 0)
		goto fail;
	base = (uint64_t)res;
	s->agent = base;
	r = remote(s, SYS_mmap, base + AGENT_SHARED_OFF, AGENT_SHARED_END - AGENT_SHARED_OFF,
		   PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, (uint64_t)fd, 0, &res);
	if (r == 0)
		r = trace_write(s->p, base, arch_agent_code, arch_agent_len);
	if (r == 0)
		r = remote(s, SYS_mprotect, base, AGENT_CODE_SIZE, PROT_READ | PROT_EXEC, 0, 0, 0,
			   &res);
	if (r < 0)
		goto fail;
	remote(s, SYS_close, (uint64_t)fd, 0, 0, 0, 0, 0, &res);
	fd = -1;
	remote(s, SYS_munmap, page, 4096, 0, 0, 0, 0, &res);
	page = 0;
	close(myfd);
	{
		struct agent_shared *sh = (struct agent_shared *)s->agent_map;

		sh->magic = 0x6265746368747270ull;
		sh->exit_stub = base + arch_agent_exit;
	}
	trace_set_fork_hook(s->p, on_fork, s);
	{
		/* What one reading of the counter costs: no duration between
		 * two readings is resolved finer. */
		uint64_t d[64];

		for (size_t i = 0; i < 64; i++) {
			uint64_t a = rdtsc();

			d[i] = rdtsc() - a;
		}
		for (size_t i = 1; i < 64; i++)
			for (size_t j = i; j > 0 && d[j - 1] > d[j]; j--) {
				uint64_t t = d[j];

				d[j] = d[j - 1];
				d[j - 1] = t;
			}
		s->tsc_read = d[32];
	}
	s->tsc0 = rdtsc();
	s->tsc0_ns = clock_now_ns();
	return 0;
fail:
	if (fd >= 0)
		remote(s, SYS_close, (uint64_t)fd, 0, 0, 0, 0, 0, &res);
	if (page)
		remote(s, SYS_munmap, page, 4096, 0, 0, 0, 0, &res);
	if (myfd >= 0)
		close(myfd);
	if (s->agent_map)
		munmap(s->agent_map, AGENT_SHARED_END - AGENT_SHARED_OFF);
	s->agent_map = NULL;
	if (s->agent)
		remote(s, SYS_munmap, s->agent, AGENT_TOTAL, 0, 0, 0, 0, &res);
	s->agent = 0;
	if (asprintf(&s->fast_off, "the agent could not be put into the process (%s)",
		     trace_strerror(r)) < 0)
		s->fast_off = NULL;
	return r;
}

/* ---- trampolines ---------------------------------------------------------------- */

/* Room for one trampoline next to object o: its address. */
int observe_fast_slot(struct session *s, struct obj *o, uint64_t *ret)
{
	if (!o->tramp || o->tramp_used + AGENT_TRAMP_LEN > REGION_SIZE) {
		uint64_t at;
		int r = trace_map_near(s->p, o->lo, o->hi, REGION_SIZE, REACH, &at);

		if (r < 0)
			return r;
		o->tramp = at;
		o->tramp_used = 0;
	}
	*ret = o->tramp + o->tramp_used;
	return 0;
}

/* The threads' program counters, for the check that none is inside the
 * bytes a patch replaces (the process is stopped). */
static bool thread_inside(struct session *s, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < trace_thread_count(s->p); i++) {
		struct arch_regs regs;

		if (trace_get_regs(s->p, trace_thread_tid(s->p, i), &regs) < 0)
			continue;
		if (arch_pc(&regs) > lo && arch_pc(&regs) < hi)
			return true;
	}
	return false;
}

int observe_fast_install(struct session *s, struct obj *o, uint32_t fi, uint64_t at,
			 const struct arch_patch *pt, const char **why)
{
	struct func *f = &s->funcs[fi];
	uint8_t tramp[AGENT_TRAMP_LEN];
	struct patched *pd;
	int r;

	*why = NULL;
	if (!f->calib && fi >= AGENT_FUNC_CALIB) {
		*why = "beyond the " AGENT_FUNCS_WORDS " functions the agent can patch (select "
		       "fewer to patch them all)";
		return -ENOSPC;
	}
	if (thread_inside(s, f->addr, f->addr + pt->displaced)) {
		*why = "a thread was inside its first instructions when it was to be patched";
		return -EBUSY;
	}
	if (array_grow((void **)&s->patched, &s->cappatched, s->npatched + 1, sizeof(*s->patched)) <
	    0)
		return -ENOMEM;
	pd = &s->patched[s->npatched];
	memset(pd, 0, sizeof(*pd));
	pd->addr = f->addr;
	pd->len = pt->displaced;
	pd->func = fi;
	r = trace_read(s->p, f->addr, pd->orig, pd->len);
	if (r < 0)
		return r;
	arch_tramp_build(tramp, at, s->agent + arch_agent_entry, f->calib ? AGENT_FUNC_CALIB : fi,
			 pt);
	r = trace_write(s->p, at, tramp, sizeof(tramp));
	if (r == 0)
		r = trace_write(s->p, f->addr, pt->entry, pt->displaced);
	if (r < 0)
		return r;
	o->tramp_used += AGENT_TRAMP_LEN;
	s->npatched++;
	f->fast = true;
	return 0;
}

/* Entries back as the files have them (the process is stopped). Every
 * trampoline and the agent stay mapped: a thread may be inside one, or
 * inside an observed call that returns through the exit stub. */
static void unpatch(struct session *s, struct patched *pd)
{
	if (trace_write(s->p, pd->addr, pd->orig, pd->len) < 0)
		observe_diagnose(s, "the entry of %s could not be restored",
				 s->funcs[pd->func].name);
	pd->gone = true;
	s->funcs[pd->func].armed = false;
}

void observe_fast_unpatch(struct session *s, uint32_t fi)
{
	for (size_t i = 0; i < s->npatched; i++)
		if (s->patched[i].func == fi && !s->patched[i].gone)
			unpatch(s, &s->patched[i]);
}

void observe_fast_unpatch_all(struct session *s)
{
	for (size_t i = 0; i < s->npatched; i++) {
		struct patched *pd = &s->patched[i];

		if (pd->gone)
			continue;
		unpatch(s, pd);
	}
}

/* An object unmapped: its patches went with it. */
void observe_fast_forget(struct session *s, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < s->npatched; i++)
		if (s->patched[i].addr >= lo && s->patched[i].addr < hi)
			s->patched[i].gone = true;
}

/* ---- exceptions ------------------------------------------------------------------ */

/*
 * An unwinder reads the return addresses on the stack to find each frame's
 * unwind table, and the exit stub has none: an exception thrown through a
 * patched call would end the program. So at the unwinder's entry every
 * return address the agent replaced in the thread is put back (those calls
 * are then seen no more: unmatched, unless caught inside), and at the catch
 * the calls above it, still live, get the exit stub again.
 */
/* Thread 'tid''s shadow stack: read whole into *t, at *ret_at in the
 * process. -ENOENT when the thread has none. */
static int shadow_of(struct session *s, pid_t tid, struct agent_thread *t, uint64_t *ret_at,
		     uint64_t *ret_sp)
{
	struct arch_regs regs;
	uint64_t key, at;
	uint32_t i;

	if (!s->agent || trace_get_regs(s->p, tid, &regs) < 0)
		return -ESRCH;
	*ret_sp = arch_sp(&regs);
	if (trace_read(s->p, arch_thread_pointer(&regs), &key, sizeof(key)) < 0 || !key)
		return -ENOENT;
	i = agent_thread_hash(key);
	for (uint32_t n = 0; n < AGENT_THREADS; n++, i = (i + 1) & (AGENT_THREADS - 1)) {
		at = s->agent + AGENT_THREADS_OFF + (uint64_t)i * sizeof(*t);
		if (trace_read(s->p, at, &t->key, sizeof(t->key)) < 0 || !t->key)
			return -ENOENT;
		if ((t->key & ~AGENT_KEY_BUSY) == key) {
			if (trace_read(s->p, at, t, sizeof(*t)) < 0 || t->depth > AGENT_DEPTH)
				return -ENOENT;
			*ret_at = at;
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * An unwinder reads the return addresses on the stack to find each frame's
 * unwind table, and the exit stub has none: an exception thrown through a
 * patched call would end the program. So at the unwinder's entry the
 * return addresses the agent replaced in the thread are put back (those
 * calls are then seen no more: unmatched, unless caught inside), and at
 * the catch the calls above it, still live, get the exit stub again; the
 * frames below it are over, and leave the shadow stack. A slot is written
 * only when it holds what the frame says it should (the exit stub, or the
 * frame's own return address): a frame left behind by an earlier exception
 * or a longjmp may name a slot that is now another call's, and leaves.
 */
void observe_fast_unwinding(struct session *s, pid_t tid, bool restore)
{
	struct agent_thread t;
	uint64_t at, sp, stub = s->agent + arch_agent_exit;
	uint32_t keep = 0;

	if (shadow_of(s, tid, &t, &at, &sp) < 0 || (t.key & AGENT_KEY_BUSY))
		return;
	for (uint32_t k = 0; k < t.depth; k++) {
		const struct agent_frame *fr = &t.f[k];
		uint64_t word;

		if (!fr->ret) {
			/* a tail call's: it goes with the frame below it */
			if (keep && t.f[keep - 1].slot == fr->slot)
				t.f[keep++] = *fr;
			continue;
		}
		if (trace_read(s->p, fr->slot, &word, sizeof(word)) < 0)
			continue;
		if (word != stub && word != fr->ret)
			continue; /* its slot is another call's now */
		if (!restore && fr->slot <= sp)
			continue; /* unwound: below the catch */
		if (restore && word == stub)
			trace_write(s->p, fr->slot, &fr->ret, sizeof(fr->ret));
		else if (!restore && word == fr->ret)
			trace_write(s->p, fr->slot, &stub, sizeof(stub));
		t.f[keep++] = *fr;
	}
	if (keep == t.depth)
		return;
	t.depth = keep;
	trace_write(s->p, at + offsetof(struct agent_thread, f), t.f, keep * sizeof(t.f[0]));
	trace_write(s->p, at + offsetof(struct agent_thread, depth), &t.depth, sizeof(t.depth));
}

/*
 * Observing ends while the program runs on (a detach, --duration, a
 * failure): the agent records nothing more, and every return address it
 * replaced on a stack is put back, so that no exception thrown later
 * meets the exit stub. A thread inside the agent at this moment keeps
 * its frames: they return through the stub, which stays.
 */
void observe_fast_quiesce(struct session *s)
{
	struct agent_thread *v;
	uint64_t one = 1, stub = s->agent + arch_agent_exit;

	if (!s->agent)
		return;
	trace_write(s->p, s->agent + AGENT_PRIVATE_OFF, &one, sizeof(one));
	v = malloc(AGENT_THREADS * sizeof(*v));
	if (!v ||
	    trace_read(s->p, s->agent + AGENT_THREADS_OFF, v, AGENT_THREADS * sizeof(*v)) < 0) {
		free(v);
		observe_diagnose(s, "the agent's return addresses could not be put back: an "
				    "exception through a call open now would end the program");
		return;
	}
	for (uint32_t i = 0; i < AGENT_THREADS; i++) {
		if (v[i].key <= AGENT_KEY_TOMB || (v[i].key & AGENT_KEY_BUSY) ||
		    v[i].depth > AGENT_DEPTH)
			continue;
		for (uint32_t k = 0; k < v[i].depth; k++) {
			const struct agent_frame *fr = &v[i].f[k];
			uint64_t word;

			if (fr->ret && trace_read(s->p, fr->slot, &word, sizeof(word)) == 0 &&
			    word == stub)
				trace_write(s->p, fr->slot, &fr->ret, sizeof(fr->ret));
		}
	}
	free(v);
}

/* ---- records ------------------------------------------------------------------- */

uint64_t observe_fast_drain(struct session *s)
{
	const struct agent_record *ring;
	struct agent_shared *sh;
	uint64_t head, from = s->ring_tail;
	uint32_t fi;

	if (!s->agent_map)
		return 0;
	sh = (struct agent_shared *)s->agent_map;
	ring = (const struct agent_record *)(s->agent_map + (AGENT_RING_OFF - AGENT_SHARED_OFF));
	head = __atomic_load_n(&sh->head, __ATOMIC_ACQUIRE);
	if (head - s->ring_tail > AGENT_RING_RECORDS) {
		s->ring_lost += head - s->ring_tail - AGENT_RING_RECORDS;
		s->ring_tail = head - AGENT_RING_RECORDS;
	}
	while (s->ring_tail < head) {
		const struct agent_record *rp = &ring[s->ring_tail & (AGENT_RING_RECORDS - 1)];
		struct agent_record rec;

		if (__atomic_load_n(&rp->seq, __ATOMIC_ACQUIRE) != s->ring_tail + 1)
			break; /* still being written */
		rec = *rp;
		if (__atomic_load_n(&rp->seq, __ATOMIC_ACQUIRE) != s->ring_tail + 1) {
			s->ring_lost++; /* overwritten while read */
			s->ring_tail++;
			continue;
		}
		s->ring_tail++;
		fi = rec.func == AGENT_FUNC_CALIB ? s->calib_fast_func : rec.func;
		if (fi >= s->nfuncs || !s->funcs[fi].fast)
			continue;
		observe_fast_call(s, fi, rec.thread, rec.t0, rec.t1);
	}
	return s->ring_tail - from;
}

/* The agent's counter 'off' of session function fi (the calibration's
 * at its kept index). */
static uint64_t counter(const struct session *s, uint64_t off, uint32_t fi)
{
	if (fi < s->nfuncs && s->funcs[fi].calib)
		fi = AGENT_FUNC_CALIB;
	else if (fi >= AGENT_FUNC_CALIB)
		return 0;
	if (!s->agent_map)
		return 0;
	return __atomic_load_n((const uint64_t *)(s->agent_map + (off - AGENT_SHARED_OFF)) + fi,
			       __ATOMIC_RELAXED);
}

uint64_t observe_fast_entered(const struct session *s, uint32_t fi)
{
	return counter(s, AGENT_COUNTS_OFF, fi);
}

uint64_t observe_fast_returned(const struct session *s, uint32_t fi)
{
	return counter(s, AGENT_RETURNS_OFF, fi);
}
void observe_fast_counters(const struct session *s, uint64_t *lost, uint64_t *broken,
			   uint64_t *recovered)
{
	const struct agent_shared *sh = (const struct agent_shared *)s->agent_map;

	*lost = *broken = *recovered = 0;
	if (!sh)
		return;
	*lost = sh->lost_threads + sh->lost_depth + sh->lost_nested;
	*broken = sh->broken;
	*recovered = sh->recovered;
}

/* The controller's clock of counter reading 't': the rate fitted from the
 * session's start to now. */
int64_t observe_fast_ns(struct session *s, uint64_t t)
{
	if (!s->tsc_rate) {
		uint64_t t1 = rdtsc();
		int64_t n1 = clock_now_ns();

		if (n1 <= s->tsc0_ns || t1 <= s->tsc0)
			return s->tsc0_ns;
		s->tsc_rate = (double)(t1 - s->tsc0) / (double)(n1 - s->tsc0_ns);
	}
	return s->tsc0_ns + (int64_t)((double)(int64_t)(t - s->tsc0) / s->tsc_rate);
}

void observe_fast_free(struct session *s)
{
	if (s->agent_map)
		munmap(s->agent_map, AGENT_SHARED_END - AGENT_SHARED_OFF);
	s->agent_map = NULL;
	free(s->patched);
	s->patched = NULL;
	free(s->fast_off);
	s->fast_off = NULL;
	free(s->checkpoints);
	s->checkpoints = NULL;
	trace_set_fork_hook(s->p, NULL, NULL);
}
