/* SPDX-License-Identifier: MIT */
/*
 * The observe agent (arch/agent.h) for x86-64: injected into an observed
 * process, so freestanding. No call, no system call, no data of its own,
 * no relocation; arch/blob.py refuses to build anything else. Built with
 * -fno-toplevel-reorder so that agent_base, the first thing below, is at
 * offset 0: the stubs find the agent's memory from it.
 */
#include <stdint.h>

#include "arch/agent.h"

/*
 * Both stubs keep every register and the flags as they found them: a
 * compiler that sees the observed function's body (GCC's -fipa-ra) may
 * keep a value in a call-clobbered register the function does not touch,
 * across the call, so only what the function itself changes may change.
 * The C below uses no vector or x87 register, so those stay as they are.
 * Neither stub uses a register to leave: each writes where it goes into a
 * stack slot and returns to it.
 *
 * agent_entry: a trampoline's 'call *agent_entry' came here, so [rsp] is
 * the trampoline's address + 6 and [rsp + 8] the function's return
 * address, the stack otherwise as at the function's first instruction
 * (the stack below is dead there). agent_enter() gives the address to go
 * on to: the moved instructions, which jump back into the function.
 *
 * agent_exit: an observed call returned here ('ret' popped the address the
 * entry stub put in place of the real one); rsp is the caller's, and below
 * it is dead. agent_leave() gives the real return address.
 */
__asm__(".text\n"
	".globl agent_base\n"
	"agent_base:\n"
	".Lbase:\n"
	".globl agent_entry\n"
	"agent_entry:\n"
	"	pushfq\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	push %rdi\n"
	"	push %rsi\n"
	"	push %rdx\n"
	"	push %rcx\n"
	"	push %r8\n"
	"	push %r9\n"
	"	push %rax\n"
	"	push %r10\n"
	"	push %r11\n"
	"	and $-16, %rsp\n"
	"	lea 24(%rbp), %rdi\n"
	"	mov 16(%rbp), %rsi\n"
	"	lea .Lbase(%rip), %rdx\n"
	"	call agent_enter\n"
	"	mov %rax, 16(%rbp)\n"
	"	lea -72(%rbp), %rsp\n"
	"	pop %r11\n"
	"	pop %r10\n"
	"	pop %rax\n"
	"	pop %r9\n"
	"	pop %r8\n"
	"	pop %rcx\n"
	"	pop %rdx\n"
	"	pop %rsi\n"
	"	pop %rdi\n"
	"	pop %rbp\n"
	"	popfq\n"
	"	ret\n"
	".globl agent_exit\n"
	"agent_exit:\n"
	"	lea -8(%rsp), %rsp\n"
	"	pushfq\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	push %rax\n"
	"	push %rdx\n"
	"	push %rcx\n"
	"	push %rsi\n"
	"	push %rdi\n"
	"	push %r8\n"
	"	push %r9\n"
	"	push %r10\n"
	"	push %r11\n"
	"	and $-16, %rsp\n"
	"	lea 24(%rbp), %rdi\n"
	"	lea .Lbase(%rip), %rsi\n"
	"	call agent_leave\n"
	"	mov %rax, 16(%rbp)\n"
	"	lea -72(%rbp), %rsp\n"
	"	pop %r11\n"
	"	pop %r10\n"
	"	pop %r9\n"
	"	pop %r8\n"
	"	pop %rdi\n"
	"	pop %rsi\n"
	"	pop %rcx\n"
	"	pop %rdx\n"
	"	pop %rax\n"
	"	pop %rbp\n"
	"	popfq\n"
	"	ret\n");

/* Called from the stubs by name: kept whole, under its own name. */
#ifdef __clang__
#define AGENT_FN __attribute__((used, noinline))
#else
#define AGENT_FN __attribute__((used, noinline, noclone))
#endif

static inline uint64_t tsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* The thread pointer: glibc and musl keep the thread's own address at
 * %fs:0, distinct for every live thread. */
static inline uint64_t thread_key(void)
{
	uint64_t k;

	__asm__("mov %%fs:0, %0" : "=r"(k));
	return k;
}

static inline void barrier(void)
{
	__asm__ volatile("" ::: "memory");
}

static inline struct agent_shared *shared(uint8_t *base)
{
	return (struct agent_shared *)(base + AGENT_SHARED_OFF);
}

static inline struct agent_private *private(uint8_t *base)
{
	return (struct agent_private *)(base + AGENT_PRIVATE_OFF);
}

/*
 * The thread's shadow stack, taken for the agent's work: its key word says
 * the thread's key with AGENT_KEY_BUSY set, until release(). Open
 * addressing from the key's hash: a slot is free (0), a thread's (its key,
 * maybe busy), or a tombstone (AGENT_KEY_TOMB: a thread left it with no
 * call open) that a search passes over and a claim takes; a slot never
 * becomes free again, so no thread's chain is ever cut. Every change of a
 * key word is a compare-and-swap: a signal handler of the thread may give
 * the slot back between a load and a store, and another thread take it.
 * 0 when there is none ('create' 0: none to find; *ret_busy: it is busy,
 * a signal handler interrupted the agent in this thread, and only a
 * return, 'create' 0, gets it).
 */
static struct agent_thread *take(uint8_t *base, int create, uint32_t *ret_i, int *ret_busy)
{
	struct agent_thread *v = (struct agent_thread *)(base + AGENT_THREADS_OFF);
	uint64_t key = thread_key();

	*ret_busy = 0;
	for (int attempt = 0; attempt < 8; attempt++) {
		uint32_t i = agent_thread_hash(key), tomb = AGENT_THREADS, n;
		uint64_t want = 0;

		for (n = 0; n < AGENT_THREADS; n++, i = (i + 1) & (AGENT_THREADS - 1)) {
			uint64_t k = __atomic_load_n(&v[i].key, __ATOMIC_ACQUIRE);

			if (k == (key | AGENT_KEY_BUSY)) {
				/* An entry passes (a signal handler interrupted
				 * the agent in this thread); a return must go
				 * through (the bit outlived a siglongjmp). */
				*ret_busy = 1;
				if (create)
					return 0;
				*ret_i = i;
				return &v[i];
			}
			if (k == key)
				break;
			if (k == AGENT_KEY_TOMB && tomb == AGENT_THREADS)
				tomb = i;
			if (!k)
				break;
		}
		if (n < AGENT_THREADS && __atomic_load_n(&v[i].key, __ATOMIC_ACQUIRE) == key) {
			want = key;
			if (__atomic_compare_exchange_n(&v[i].key, &want, key | AGENT_KEY_BUSY, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				*ret_i = i;
				return &v[i];
			}
			continue; /* a handler gave it back meanwhile */
		}
		if (!create)
			return 0;
		if (tomb != AGENT_THREADS) {
			i = tomb;
			want = AGENT_KEY_TOMB;
		} else if (n == AGENT_THREADS) {
			return 0; /* full */
		}
		if (__atomic_compare_exchange_n(&v[i].key, &want, key | AGENT_KEY_BUSY, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			v[i].depth = 0;
			v[i].ndropped = 0;
			for (uint32_t k = 0; k < AGENT_DROPPED; k++)
				v[i].dropped[k].slot = 0;
			*ret_i = i;
			return &v[i];
		}
	}
	return 0;
}

/* The agent's work on t is done: its key without the busy bit, or a
 * tombstone when no call is open, not even one dropped as over (a return
 * may still come through it: a coroutine's, on a stack near this one). */
static void release(struct agent_thread *t)
{
	uint64_t key = thread_key();
	int open = t->depth != 0;

	for (uint32_t k = 0; k < AGENT_DROPPED && !open; k++)
		open = t->dropped[k].slot != 0;
	__atomic_store_n(&t->key, open ? key : AGENT_KEY_TOMB, __ATOMIC_RELEASE);
}

/* A frame taken off the stack as left behind (by a longjmp): kept among
 * the last few, in case a return still comes through it. */
static void keep_dropped(struct agent_thread *t, const struct agent_frame *fr)
{
	t->dropped[t->ndropped++ % AGENT_DROPPED] = *fr;
}

/* Stored at or below 'slot' and near it: on the same stack as a call
 * whose return address is at 'slot', and so over. Far from it, another
 * stack's (a signal handler on its own stack, a coroutine). */
static int over(uint64_t fr_slot, uint64_t slot)
{
	return fr_slot <= slot && slot - fr_slot <= AGENT_SAME_STACK;
}

static void record(uint8_t *base, uint32_t func, uint32_t thread, uint64_t t0, uint64_t t1)
{
	struct agent_shared *s = shared(base);
	struct agent_record *ring = (struct agent_record *)(base + AGENT_RING_OFF);
	uint64_t i = __atomic_fetch_add(&s->head, 1, __ATOMIC_RELAXED);
	struct agent_record *r = &ring[i & (AGENT_RING_RECORDS - 1)];

	/* Invalid while written: a reader that sees the same seq before and
	 * after its copy read one record whole. */
	__atomic_store_n(&r->seq, 0, __ATOMIC_RELAXED);
	barrier();
	r->t0 = t0;
	r->t1 = t1;
	r->func = func;
	r->thread = thread;
	__atomic_store_n(&r->seq, i + 1, __ATOMIC_RELEASE);
}

static void count(uint8_t *base, uint64_t off, uint32_t func)
{
	if (func < AGENT_FUNCS)
		__atomic_fetch_add((uint64_t *)(base + off) + func, 1, __ATOMIC_RELAXED);
}

AGENT_FN static uint64_t agent_enter(uint64_t *slot, uint8_t *after,
								     uint8_t *base)
{
	uint8_t *tramp = after - AGENT_TRAMP_CALL_LEN;
	struct agent_shared *s = shared(base);
	uint32_t func = *(uint32_t *)(tramp + AGENT_TRAMP_FUNC), i;
	uint64_t resume = (uint64_t)(tramp + AGENT_TRAMP_CODE), ret = *slot;
	struct agent_thread *t;
	struct agent_frame *fr;
	int tail, busy;

	if (private(base)->disabled)
		return resume;
	t = take(base, 1, &i, &busy);
	if (!t) {
		/* busy: a signal handler interrupted the agent in this thread */
		__atomic_fetch_add(busy ? &s->lost_nested : &s->lost_threads, 1, __ATOMIC_RELAXED);
		return resume;
	}
	/*
	 * A frame whose return address was stored here is over: this call
	 * overwrote it (a longjmp left it, then the same call site called
	 * again), unless its function jumped here (a tail call: the return
	 * address is the exit stub already). Frames stored below this one,
	 * near it, are over too: the stack was unwound past them.
	 */
	tail = ret == s->exit_stub;
	while (t->depth) {
		fr = &t->f[t->depth - 1];
		if ((fr->slot == (uint64_t)slot && tail) || !over(fr->slot, (uint64_t)slot))
			break;
		keep_dropped(t, fr);
		t->depth--;
	}
	if (tail && !(t->depth && t->f[t->depth - 1].slot == (uint64_t)slot)) {
		__atomic_fetch_add(&s->broken, 1, __ATOMIC_RELAXED);
		goto out;
	}
	if (t->depth == AGENT_DEPTH) {
		__atomic_fetch_add(&s->lost_depth, 1, __ATOMIC_RELAXED);
		goto out;
	}
	fr = &t->f[t->depth];
	fr->ret = tail ? 0 : ret;
	fr->slot = (uint64_t)slot;
	fr->func = func;
	count(base, AGENT_COUNTS_OFF, func);
	if (!tail)
		*slot = s->exit_stub;
	t->depth++;
	barrier();
	fr->t0 = tsc();
out:
	barrier();
	release(t);
	return resume;
}

AGENT_FN static uint64_t agent_leave(uint64_t sp, uint8_t *base)
{
	uint64_t t1 = tsc(), slot = sp - 8, ret = 0;
	int disabled = (int)private(base)->disabled, busy;
	struct agent_thread *t;
	uint32_t i, n, keep;

	t = take(base, 0, &i, &busy);
	if (!t)
		__builtin_trap(); /* no frame to return through: cannot go on */
	/* The newest frame stored where this return came from. */
	for (n = t->depth; n && t->f[n - 1].slot != slot; n--)
		;
	if (n) {
		/* It and the tail calls' frames stored at the same place end
		 * here; the frames above them that are over (below this
		 * return, on its stack) never returned; the others are
		 * another stack's, and stay. */
		uint32_t lo = n - 1;

		while (lo && t->f[lo - 1].slot == slot && !t->f[lo].ret)
			lo--;
		for (uint32_t k = n; k-- > lo;) {
			if (!disabled) {
				record(base, t->f[k].func, i + 1, t->f[k].t0, t1);
				count(base, AGENT_RETURNS_OFF, t->f[k].func);
			}
			if (t->f[k].ret)
				ret = t->f[k].ret;
		}
		keep = lo;
		for (uint32_t k = n; k < t->depth; k++) {
			if (over(t->f[k].slot, slot))
				keep_dropped(t, &t->f[k]);
			else
				t->f[keep++] = t->f[k];
		}
		t->depth = keep;
	} else {
		/* Dropped as left behind, and it was not. */
		for (uint32_t k = 0; k < AGENT_DROPPED && !ret; k++) {
			struct agent_frame *fr = &t->dropped[k];

			if (fr->slot != slot || !fr->ret)
				continue;
			if (!disabled) {
				record(base, fr->func, i + 1, fr->t0, t1);
				count(base, AGENT_RETURNS_OFF, fr->func);
			}
			ret = fr->ret;
			fr->slot = 0;
		}
		__atomic_fetch_add(&shared(base)->recovered, 1, __ATOMIC_RELAXED);
	}
	if (!ret)
		__builtin_trap();
	barrier();
	release(t);
	return ret;
}
