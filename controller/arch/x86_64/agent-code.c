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

/* The thread's shadow stack (its index in *ret_i), claimed when 'create';
 * 0 when there is none. */
static struct agent_thread *thread_of(uint8_t *base, int create, uint32_t *ret_i)
{
	struct agent_thread *v = (struct agent_thread *)(base + AGENT_THREADS_OFF);
	uint64_t key = thread_key();
	uint32_t i = agent_thread_hash(key);

	for (uint32_t n = 0; n < AGENT_THREADS; n++, i = (i + 1) & (AGENT_THREADS - 1)) {
		uint64_t k = __atomic_load_n(&v[i].key, __ATOMIC_ACQUIRE), zero = 0;

		if (k == key) {
			*ret_i = i;
			return &v[i];
		}
		if (k)
			continue;
		if (!create)
			return 0;
		if (__atomic_compare_exchange_n(&v[i].key, &zero, key, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE) ||
		    zero == key) {
			*ret_i = i;
			return &v[i];
		}
	}
	return 0;
}

static void record(uint8_t *base, uint32_t func, uint32_t thread, uint64_t t0, uint64_t t1)
{
	struct agent_shared *s = shared(base);
	struct agent_record *ring = (struct agent_record *)(base + AGENT_RING_OFF);
	uint64_t i = __atomic_fetch_add(&s->head, 1, __ATOMIC_RELAXED);
	struct agent_record *r = &ring[i & (AGENT_RING_RECORDS - 1)];

	r->t0 = t0;
	r->t1 = t1;
	r->func = func;
	r->thread = thread;
	__atomic_store_n(&r->seq, i + 1, __ATOMIC_RELEASE);
}

__attribute__((used, noinline, noclone)) static uint64_t agent_enter(uint64_t *slot, uint8_t *after,
								     uint8_t *base)
{
	uint8_t *tramp = after - AGENT_TRAMP_CALL_LEN;
	struct agent_shared *s = shared(base);
	uint32_t func = *(uint32_t *)(tramp + AGENT_TRAMP_FUNC), i;
	uint64_t resume = (uint64_t)(tramp + AGENT_TRAMP_CODE), ret = *slot;
	struct agent_thread *t;
	struct agent_frame *fr;
	int tail;

	if (private(base)->disabled)
		return resume;
	t = thread_of(base, 1, &i);
	if (!t) {
		__atomic_fetch_add(&s->lost_threads, 1, __ATOMIC_RELAXED);
		return resume;
	}
	if (t->busy) {
		/* A signal handler interrupted the agent in this thread. */
		__atomic_fetch_add(&s->lost_nested, 1, __ATOMIC_RELAXED);
		return resume;
	}
	t->busy = 1;
	barrier();
	/* Frames whose return address was stored at or below this one's can
	 * no longer return (a longjmp or an exception left them), but for
	 * the one this call will return through when its caller jumped here
	 * (a tail call: the return address is the exit stub already). */
	tail = ret == s->exit_stub;
	while (t->depth) {
		fr = &t->f[t->depth - 1];
		if (fr->slot > (uint64_t)slot || (fr->slot == (uint64_t)slot && tail))
			break;
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
	if (func < AGENT_FUNCS)
		__atomic_fetch_add((uint64_t *)(base + AGENT_COUNTS_OFF) + func, 1,
				   __ATOMIC_RELAXED);
	if (!tail)
		*slot = s->exit_stub;
	barrier();
	t->depth++;
	fr->t0 = tsc();
out:
	barrier();
	t->busy = 0;
	return resume;
}

__attribute__((used, noinline, noclone)) static uint64_t agent_leave(uint64_t sp, uint8_t *base)
{
	uint64_t t1 = tsc(), slot = sp - 8, ret = 0;
	struct agent_thread *t;
	uint32_t i;
	int disabled = (int)private(base)->disabled;

	t = thread_of(base, 0, &i);
	if (!t)
		__builtin_trap(); /* no frame to return through: cannot go on */
	t->busy = 1;
	barrier();
	while (t->depth && t->f[t->depth - 1].slot < slot)
		t->depth--; /* left by a longjmp */
	while (t->depth && t->f[t->depth - 1].slot == slot) {
		struct agent_frame *fr = &t->f[--t->depth];

		if (!disabled)
			record(base, fr->func, i + 1, fr->t0, t1);
		if (fr->ret) {
			ret = fr->ret;
			break;
		}
	}
	if (!ret)
		__builtin_trap();
	barrier();
	t->busy = 0;
	return ret;
}
