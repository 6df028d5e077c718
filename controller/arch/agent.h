/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_ARCH_AGENT_H
#define BENCHTRAP_ARCH_AGENT_H

/*
 * The observe agent: code injected into an observed process that times
 * each call of a patched function without a trap (docs/observe.md, "How a
 * call is bounded"). A patched function's first bytes are a jump to its
 * trampoline; the trampoline loads its own address and jumps to the
 * agent's entry stub, which
 *
 *   - finds the thread's shadow stack (keyed by the thread pointer, the
 *     word at %fs:0, so without a system call),
 *   - pushes a frame (the real return address, where it is stored, the
 *     function) and replaces the return address with the exit stub's,
 *   - reads the time stamp counter last, and goes on to the displaced
 *     first instructions, relocated into the trampoline, which jump back
 *     into the function.
 *
 * The function returns to the exit stub, which reads the counter first,
 * pops the frame, writes one record (function, thread, the two counter
 * readings) into a ring the controller reads while the program runs, and
 * jumps to the real return address. The agent makes no system call and
 * calls nothing: if the controller goes away it runs on, and the ring
 * overwrites its oldest records.
 *
 * Memory, one block at the agent's base:
 *
 *   [0, CODE)            the code (this blob), read-only and executable
 *   [CODE, SHARED)       shared with the controller (a memfd mapped in both):
 *                        struct agent_shared, the per-function counts of
 *                        calls begun and returned, the ring of records
 *   [SHARED, TOTAL)      private to the process (a fork's child gets a copy
 *                        of its own): struct agent_private, the shadow stacks
 *
 * Built from C (arch/<arch>/agent-code.c, freestanding, no relocation: see
 * arch/blob.py) with its two stubs in assembly.
 */
#include <stddef.h>
#include <stdint.h>

#define AGENT_CODE_SIZE 0x1000u
#define AGENT_FUNCS 8192u	   /* patched functions at most */
/* The index kept for the calibration's function, whatever was selected:
 * the program's functions get the others. */
#define AGENT_FUNC_CALIB (AGENT_FUNCS - 1u)
#define AGENT_FUNCS_WORDS "8,191" /* the program's at most, for people */
#define AGENT_RING_RECORDS 524288u /* a power of two */
#define AGENT_THREADS 256u	   /* a power of two */
#define AGENT_DEPTH 119u	   /* open observed calls per thread */
#define AGENT_DROPPED 8u	   /* frames kept after they were dropped */
/* Frames stored this close below a new call's return address are on its
 * stack, and over. */
#define AGENT_SAME_STACK (1ull << 20)
#define AGENT_KEY_TOMB 2ull /* a shadow stack left with no call open */
#define AGENT_KEY_BUSY 1ull /* in a key: the agent works on it */

/* Offsets from the agent's base. */
#define AGENT_SHARED_OFF AGENT_CODE_SIZE
#define AGENT_COUNTS_OFF (AGENT_SHARED_OFF + 0x1000u)
#define AGENT_RETURNS_OFF (AGENT_COUNTS_OFF + AGENT_FUNCS * 8u)
#define AGENT_RING_OFF (AGENT_RETURNS_OFF + AGENT_FUNCS * 8u)
#define AGENT_SHARED_END (AGENT_RING_OFF + AGENT_RING_RECORDS * 32u)
#define AGENT_PRIVATE_OFF AGENT_SHARED_END
#define AGENT_THREADS_OFF (AGENT_PRIVATE_OFF + 0x1000u)
#define AGENT_TOTAL (AGENT_THREADS_OFF + AGENT_THREADS * 4096u)

/* The trampoline of one function (AGENT_TRAMP_LEN bytes), at 'tramp':
 *
 *   +0   call [rip + 2]          (the qword at +8: the entry stub; no
 *                                 register used, and the address pushed
 *                                 says which trampoline called)
 *   +8   .quad agent entry stub
 *   +16  .long function index
 *   +32  the displaced instructions, relocated, then jmp rel32 back
 *   +96  .quad the return address of a call among them (moved as
 *        push [rip] of it, then jmp to its target)
 */
#define AGENT_TRAMP_LEN 128u
#define AGENT_TRAMP_CALL_LEN 6u
#define AGENT_TRAMP_STUB 8u
#define AGENT_TRAMP_FUNC 16u
#define AGENT_TRAMP_CODE 32u
#define AGENT_TRAMP_CODE_MAX 64u
#define AGENT_TRAMP_RET 96u /* a call moved: the return address it pushes */

struct agent_record {
	uint64_t seq;	 /* its index in the ring + 1, written last */
	uint64_t t0, t1; /* time stamp counter at entry and at return */
	uint32_t func;
	uint32_t thread; /* shadow stack index + 1 */
};

struct agent_shared {
	uint64_t magic;
	uint64_t head; /* records written (the next one's index) */
	/* calls not observed, by reason */
	uint64_t lost_threads; /* no shadow stack left for the thread */
	uint64_t lost_depth;   /* AGENT_DEPTH calls open in the thread */
	uint64_t lost_nested;  /* a signal handler's call inside the agent */
	uint64_t broken;       /* a tail call the agent found no frame for */
	uint64_t recovered;    /* a return through a frame dropped as over */
	uint64_t exit_stub;    /* run-time address of the exit stub */
};

struct agent_private {
	uint64_t disabled; /* a fork's child: calls pass through untimed */
};

struct agent_frame {
	uint64_t ret;  /* the real return address; 0: a tail call's frame */
	uint64_t slot; /* where it was stored on the stack */
	uint64_t t0;
	uint32_t func;
	uint32_t pad;
};

struct agent_thread {
	/* the thread pointer (| AGENT_KEY_BUSY while the agent works on it);
	 * 0: free; AGENT_KEY_TOMB: left */
	uint64_t key;
	uint32_t depth;
	uint32_t ndropped;
	uint32_t pad[4];
	struct agent_frame f[AGENT_DEPTH];
	struct agent_frame dropped[AGENT_DROPPED];
};

_Static_assert(sizeof(struct agent_thread) == 4096, "a shadow stack is a page");
_Static_assert(sizeof(struct agent_record) == 32, "a record is 32 bytes");

/* Where thread 'key' looks for its shadow stack first (then linearly). */
static inline uint32_t agent_thread_hash(uint64_t key)
{
	return (uint32_t)((key >> 12) * 0x9e3779b97f4a7c15ull >> 56) & (AGENT_THREADS - 1);
}

/* The blob (arch/<arch>/agent-code.c via blob.py). */
extern const uint8_t arch_agent_code[];
extern const size_t arch_agent_len;
extern const size_t arch_agent_base; /* 0: the stubs find the memory from it */
extern const size_t arch_agent_entry;
extern const size_t arch_agent_exit;

#endif
