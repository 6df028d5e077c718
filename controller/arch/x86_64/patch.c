// SPDX-License-Identifier: MIT
/*
 * Whether a function's entry can be patched with a jump to a trampoline,
 * and the trampoline's code (arch/patch.h).
 *
 * The instructions decoded by Capstone (libcapstone): a prologue is any
 * instruction, and an instruction copied elsewhere must be decoded whole to
 * be moved safely. What cannot be moved, or only by rewriting it into
 * another instruction, is refused with the reason, and the function keeps
 * its breakpoints.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "arch/agent.h"
#include "arch/patch.h"

#define JMP_LEN 5

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static bool branch_like(const cs_insn *in)
{
	const cs_detail *d = in->detail;

	for (uint8_t i = 0; i < d->groups_count; i++) {
		switch (d->groups[i]) {
		case CS_GRP_JUMP:
		case CS_GRP_CALL:
		case CS_GRP_RET:
		case CS_GRP_INT:
		case CS_GRP_IRET:
		case CS_GRP_BRANCH_RELATIVE:
			return true;
		default:
			break;
		}
	}
	return in->id == X86_INS_UD2 || in->id == X86_INS_HLT || in->id == X86_INS_INT3 ||
	       in->id == X86_INS_SYSCALL;
}

/* A direct branch's target, or 0. */
static uint64_t direct_target(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	if (!branch_like(in))
		return 0;
	for (uint8_t i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_IMM)
			return (uint64_t)x->operands[i].imm;
	return 0;
}

/* An instruction's memory operand relative to rip, or NULL. */
static const cs_x86_op *rip_operand(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	for (uint8_t i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM && x->operands[i].mem.base == X86_REG_RIP)
			return &x->operands[i];
	return NULL;
}

/* A return, or a jump through a register or memory: the same wherever it
 * runs (an operand relative to rip is rewritten as any). */
static bool moved_whole(const cs_insn *in)
{
	if (in->id == X86_INS_RET)
		return true;
	return in->id == X86_INS_JMP && !direct_target(in);
}

/*
 * A direct jump or conditional jump among the bytes moved, rewritten to
 * reach the same target from 'at' (rel32 forms: jmp e9, jcc 0f 8x). The
 * target must lie outside the bytes replaced ('moved' so far, at least
 * the jump's): a jump to them would land in the int3s. Calls are refused
 * (the callee would return into the trampoline, which no unwinder knows),
 * as are jrcxz and loop (no rel32 form). Returns the bytes written, 0 when
 * refused.
 */
static size_t relocate_branch(const cs_insn *in, uint64_t addr, size_t moved, uint64_t at,
			      uint8_t *out, size_t room)
{
	uint64_t target = direct_target(in);
	const uint8_t *b = in->bytes;
	int64_t rel;
	int32_t r32;
	size_t n;

	if (!target || (target >= addr && target < addr + moved + in->size))
		return 0;
	if (in->size == 2 && b[0] == 0xeb) {
		out[0] = 0xe9;
		n = 5;
	} else if (in->size == 5 && b[0] == 0xe9) {
		out[0] = 0xe9;
		n = 5;
	} else if (in->size == 2 && (b[0] & 0xf0) == 0x70) {
		out[0] = 0x0f;
		out[1] = (uint8_t)(0x80 | (b[0] & 0x0f));
		n = 6;
	} else if (in->size == 6 && b[0] == 0x0f && (b[1] & 0xf0) == 0x80) {
		out[0] = 0x0f;
		out[1] = b[1];
		n = 6;
	} else {
		return 0;
	}
	if (n > room)
		return 0;
	rel = (int64_t)target - (int64_t)(at + n);
	if (!fits32(rel))
		return 0;
	r32 = (int32_t)rel;
	memcpy(out + n - 4, &r32, 4);
	return n;
}

int arch_patch_plan(const uint8_t *code, size_t size, uint64_t addr, uint64_t at,
		    struct arch_patch *ret, char *why, size_t whysize)
{
	uint64_t code_at = at + AGENT_TRAMP_CODE, back;
	const size_t room = AGENT_TRAMP_CODE_MAX;
	size_t moved = 0, out = 0, n;
	cs_insn *insn = NULL;
	int r = -EINVAL;
	csh h;

	memset(ret, 0, sizeof(*ret));
	if (size < JMP_LEN) {
		snprintf(why, whysize, "too short for a jump (%zu bytes)", size);
		return -EINVAL;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
		snprintf(why, whysize, "the instruction decoder could not be started");
		return -ENOMEM;
	}
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	n = cs_disasm(h, code, size, addr, 0, &insn);
	/* The whole function decoded from its first byte, so that a branch
	 * into the bytes the jump replaces is seen. */
	{
		size_t decoded = 0;

		for (size_t i = 0; i < n; i++)
			decoded += insn[i].size;
		if (decoded < size) {
			snprintf(why, whysize,
				 "an instruction at +%zu that cannot be decoded, so a jump into "
				 "its first bytes cannot be ruled out",
				 decoded);
			goto out;
		}
		for (size_t i = 0; i < n; i++) {
			uint64_t t = direct_target(&insn[i]);

			/* the nearest, checked against the bytes moved below */
			if (t > addr && t < addr + JMP_LEN + 15 &&
			    (!ret->inner_target || t < ret->inner_target))
				ret->inner_target = t;
		}
	}
	for (size_t i = 0; moved < JMP_LEN; i++) {
		const cs_insn *in = &insn[i];
		const cs_x86 *x = &in->detail->x86;

		bool last = moved + in->size >= JMP_LEN;

		if (branch_like(in) && last && moved_whole(in)) {
			/* A return or an indirect jump runs the same anywhere;
			 * after it, nothing moved runs. */
		} else if (branch_like(in) && last && in->size == 5 && in->bytes[0] == 0xe8) {
			/* call rel32: push the original return address, jump */
			uint64_t slot = at + AGENT_TRAMP_RET, target = direct_target(in);
			int64_t d = (int64_t)slot - (int64_t)(code_at + out + 6);
			int64_t t = (int64_t)target - (int64_t)(code_at + out + 11);
			int32_t r32;

			if (!fits32(d) || !fits32(t) || out + 11 > room - JMP_LEN) {
				snprintf(why, whysize, "a call in its first bytes out of reach");
				goto out;
			}
			ret->code[out] = 0xff; /* push qword [rip + d] */
			ret->code[out + 1] = 0x35;
			r32 = (int32_t)d;
			memcpy(ret->code + out + 2, &r32, 4);
			ret->code[out + 6] = 0xe9;
			r32 = (int32_t)t;
			memcpy(ret->code + out + 7, &r32, 4);
			ret->call_return = addr + moved + in->size;
			out += 11;
			moved += in->size;
			continue;
		} else if (branch_like(in)) {
			size_t w = relocate_branch(in, addr, moved, code_at + out, ret->code + out,
						   room - JMP_LEN - out);

			if (!w) {
				snprintf(why, whysize,
					 "a branch in its first %d bytes that cannot be moved (%s "
					 "%s at +%zu)",
					 JMP_LEN, in->mnemonic, in->op_str, moved);
				goto out;
			}
			out += w;
			moved += in->size;
			continue;
		}
		if (out + in->size > room - JMP_LEN) {
			snprintf(why, whysize, "its first instructions are too long to move");
			goto out;
		}
		memcpy(ret->code + out, in->bytes, in->size);
		if (rip_operand(in)) {
			int64_t disp;
			int32_t d32;

			/* Relative to rip, the displacement is always 32 bits
			 * (Capstone 4 misreports disp_size for some prefixed
			 * instructions): found where it says, and checked
			 * against the operand it decoded. */
			if (!x->encoding.disp_offset || x->encoding.disp_offset + 4u > in->size) {
				snprintf(why, whysize,
					 "an instruction relative to rip it cannot move");
				goto out;
			}
			memcpy(&d32, in->bytes + x->encoding.disp_offset, 4);
			if ((int64_t)d32 != rip_operand(in)->mem.disp) {
				snprintf(why, whysize,
					 "an instruction relative to rip it cannot move");
				goto out;
			}
			/* the same target from the new place */
			disp = (int64_t)d32 + (int64_t)(in->address + in->size) -
			       (int64_t)(code_at + out + in->size);
			if (!fits32(disp)) {
				snprintf(why, whysize,
					 "no trampoline within reach of what it addresses");
				goto out;
			}
			d32 = (int32_t)disp;
			memcpy(ret->code + out + x->encoding.disp_offset, &d32, 4);
		}
		out += in->size;
		moved += in->size;
	}
	if (ret->inner_target && ret->inner_target < addr + moved) {
		snprintf(why, whysize, "a jump into its first %zu bytes (to +%llu)", moved,
			 (unsigned long long)(ret->inner_target - addr));
		goto out;
	}
	ret->inner_target = 0;
	if (moved > ARCH_PATCH_MAX) {
		snprintf(why, whysize, "its first instructions are too long to move");
		goto out;
	}
	back = addr + moved;
	{
		int64_t rel = (int64_t)back - (int64_t)(code_at + out + JMP_LEN);
		int64_t to = (int64_t)at - (int64_t)(addr + JMP_LEN);
		int32_t r32;

		if (!fits32(rel) || !fits32(to)) {
			snprintf(why, whysize, "no trampoline within reach");
			goto out;
		}
		r32 = (int32_t)rel;
		ret->code[out] = 0xe9;
		memcpy(ret->code + out + 1, &r32, 4);
		out += JMP_LEN;
		r32 = (int32_t)to;
		ret->entry[0] = 0xe9;
		memcpy(ret->entry + 1, &r32, 4);
		for (size_t i = JMP_LEN; i < moved; i++)
			ret->entry[i] = 0xcc;
	}
	ret->code_len = out;
	ret->displaced = moved;
	r = 0;
out:
	if (insn)
		cs_free(insn, n);
	cs_close(&h);
	return r;
}

void arch_tramp_build(uint8_t *out, uint64_t at, uint64_t entry_stub, uint32_t func,
		      const struct arch_patch *p)
{
	memset(out, 0xcc, AGENT_TRAMP_LEN);
	/* call [rip + 2]: the qword at +8 */
	memcpy(out, (const uint8_t[]){ 0xff, 0x15, 0x02, 0, 0, 0 }, AGENT_TRAMP_CALL_LEN);
	memcpy(out + AGENT_TRAMP_STUB, &entry_stub, 8);
	memcpy(out + AGENT_TRAMP_FUNC, &func, 4);
	memset(out + AGENT_TRAMP_FUNC + 4, 0, 4);
	(void)at;
	memcpy(out + AGENT_TRAMP_CODE, p->code, p->code_len);
	if (p->call_return)
		memcpy(out + AGENT_TRAMP_RET, &p->call_return, 8);
}

bool arch_patch_jumps_into(const uint8_t *code, size_t size, uint64_t addr, uint64_t lo,
			   uint64_t hi)
{
	cs_insn *insn = NULL;
	bool hit = false;
	size_t n;
	csh h;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return true; /* cannot tell: as if it did */
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	n = cs_disasm(h, code, size, addr, 0, &insn);
	for (size_t i = 0; i < n && !hit; i++) {
		uint64_t t = direct_target(&insn[i]);

		hit = t > lo && t < hi;
	}
	if (insn)
		cs_free(insn, n);
	cs_close(&h);
	return hit;
}

int arch_jump_targets(const uint8_t *code, size_t size, uint64_t addr, uint64_t **ret,
		      size_t *ret_n)
{
	uint64_t *v = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i + 5 <= size; i++) {
		size_t at;
		int32_t rel;
		uint64_t t;

		if (code[i] == 0xe8 || code[i] == 0xe9)
			at = i + 1;
		else if (code[i] == 0x0f && (code[i + 1] & 0xf0) == 0x80 && i + 6 <= size)
			at = i + 2;
		else
			continue;
		memcpy(&rel, code + at, 4);
		t = addr + at + 4 + (uint64_t)(int64_t)rel;
		if (t < addr || t >= addr + size)
			continue;
		if (n == cap) {
			uint64_t *nv = realloc(v, (cap ? cap * 2 : 1024) * sizeof(*v));

			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
			cap = cap ? cap * 2 : 1024;
		}
		v[n++] = t;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_u64);
	*ret = v;
	*ret_n = n;
	return 0;
}

bool arch_targets_into(const uint64_t *v, size_t n, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = n;

	/* the first target above lo */
	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (v[m] <= lo)
			a = m + 1;
		else
			b = m;
	}
	return a < n && v[a] < hi;
}
