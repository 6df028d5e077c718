/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_ARCH_PATCH_H
#define BENCHTRAP_ARCH_PATCH_H
/*
 * A function's entry replaced by a jump to a trampoline, its first
 * instructions relocated there (arch/x86_64/patch.c, with Capstone): the
 * one relocator of the architecture, serving observe's patched entries and
 * the bracket engine's patched clock functions (measure/bracket.c).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most bytes a patch replaces: up to 4 bytes of instructions before
 * the one that reaches the fifth, which is at most 15. */
#define ARCH_PATCH_MAX 19

/* What patching one function writes (patch.c). */
struct arch_patch {
	uint8_t entry[ARCH_PATCH_MAX]; /* over its first 'displaced' bytes: jmp
					     rel32 to the trampoline, then int3s */
	size_t displaced;	       /* bytes replaced, whole instructions, >= 5 */
	uint8_t code[64];	       /* at the trampoline's AGENT_TRAMP_CODE: those
					  instructions relocated, then jmp rel32 back */
	size_t code_len;
	uint64_t call_return;  /* a call was moved: the return address it pushes
				  (at the trampoline's AGENT_TRAMP_RET), or 0 */
	uint64_t inner_target; /* internal: a branch target near the entry */
};

/*
 * Whether the function at run-time address 'addr', whose code (the file's
 * bytes) is code[0..size), can have its entry replaced by a jump to a
 * trampoline at 'at' (AGENT_TRAMP_LEN bytes, within ±2 GiB): the
 * instructions moved are decoded whole; a direct jump among them is
 * rewritten to reach its target, and the last one may also be a return,
 * an indirect jump or a direct call (pushing the original return address,
 * then jumping); no other branch, and no trap, is moved; an operand
 * relative to rip is rewritten for the new place; and no direct branch in
 * the function lands inside the bytes replaced. 0 with
 * *ret filled, or a negative errno with the reason, a phrase, in why.
 */
int arch_patch_plan(const uint8_t *code, size_t size, uint64_t addr, uint64_t at,
		    struct arch_patch *ret, char *why, size_t whysize);

/*
 * Jumps from elsewhere into the bytes a patch replaces, (lo, hi): whether
 * a direct branch of the code at 'addr' (a neighbouring function, decoded
 * whole) lands there; and, over an object's whole code, every place a
 * rel32 jump or call (e8, e9, 0f 8x) could land, read from every byte
 * that could start one (more than there are: a target not in the list is
 * never jumped to by one), sorted, to ask with arch_targets_into().
 */
bool arch_patch_jumps_into(const uint8_t *code, size_t size, uint64_t addr, uint64_t lo,
			   uint64_t hi);
int arch_jump_targets(const uint8_t *code, size_t size, uint64_t addr, uint64_t **ret,
		      size_t *ret_n);
bool arch_targets_into(const uint64_t *v, size_t n, uint64_t lo, uint64_t hi);

/* The trampoline of function index 'func' at run-time address 'at', going
 * to the agent's entry stub (arch/agent.h has its layout). */
void arch_tramp_build(uint8_t *out, uint64_t at, uint64_t entry_stub, uint32_t func,
		      const struct arch_patch *p);

#endif
