// SPDX-License-Identifier: MIT
/*
 * The bracket engine's pure parts: which first instructions may run
 * displaced (arch/bracket.h), the stubs' encodings, and the mapping of
 * bracketed calls to batches and of batches to Google Benchmark's
 * repetitions (measure/bracket.h, gbench/gbench.h).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "arch/bracket.h"
#include "gbench/gbench.h"
#include "measure/bracket.h"

struct insn {
	const char *what;
	uint8_t bytes[16];
	size_t n;   /* bytes given */
	size_t len; /* expected: its length, 0 refused */
};

static const struct insn insns[] = {
	{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa, 0x55 }, 5, 4 },
	{ "push rbp", { 0x55, 0x48 }, 2, 1 },
	{ "push r12", { 0x41, 0x54, 0x49 }, 3, 2 },
	{ "pop rbx", { 0x5b }, 1, 1 },
	{ "nop", { 0x90, 0x90 }, 2, 1 },
	{ "sub rsp, 0x28", { 0x48, 0x83, 0xec, 0x28, 0x90 }, 5, 4 },
	{ "add rsp, 8", { 0x48, 0x83, 0xc4, 0x08 }, 4, 4 },
	{ "sub rsp, 0x1000", { 0x48, 0x81, 0xec, 0x00, 0x10, 0x00, 0x00, 0x90 }, 8, 7 },
	{ "mov rbp, rsp", { 0x48, 0x89, 0xe5, 0x90 }, 4, 3 },
	{ "mov r12, rdi", { 0x49, 0x89, 0xfc }, 3, 3 },
	{ "mov ebp, 0xbb8", { 0xbd, 0xb8, 0x0b, 0x00, 0x00, 0x90 }, 6, 5 },
	{ "movabs rax, imm64", { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8, 0x90 }, 11, 10 },
	{ "xor eax, eax", { 0x31, 0xc0, 0xc3 }, 3, 2 },
	{ "test rdi, rdi", { 0x48, 0x85, 0xff }, 3, 3 },
	{ "cmp byte [rdi+0x1a], 0", { 0x80, 0x7f, 0x1a, 0x00, 0x74 }, 5, 4 },
	{ "mov rbx, [rdi+0x10]", { 0x48, 0x8b, 0x5f, 0x10 }, 4, 4 },
	{ "mov [rsp+8], rbx (SIB)", { 0x48, 0x89, 0x5c, 0x24, 0x08, 0x90 }, 6, 5 },
	{ "mov rax, [rsp+0x100] (SIB, disp32)",
	  { 0x48, 0x8b, 0x84, 0x24, 0x00, 0x01, 0x00, 0x00 },
	  8,
	  8 },
	{ "lea rbp, [rsp+0x10]", { 0x48, 0x8d, 0x6c, 0x24, 0x10 }, 5, 5 },
	{ "mov rax, fs:0x28", { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00 }, 9, 9 },
	{ "mov dword [rsp], 1", { 0xc7, 0x04, 0x24, 0x01, 0x00, 0x00, 0x00 }, 7, 7 },
	{ "nopl 0(rax)", { 0x0f, 0x1f, 0x40, 0x00 }, 4, 4 },
	{ "movzx eax, byte [rdi]", { 0x0f, 0xb6, 0x07 }, 3, 3 },
	{ "mov ax, 7 (operand size)", { 0x66, 0xb8, 0x07, 0x00 }, 4, 4 },
	/* Refused: what reads the pc, branches, and what is not on the list. */
	{ "mov rax, [rip+0x10]", { 0x48, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00 }, 7, 0 },
	{ "lea rdi, [rip+0x10]", { 0x48, 0x8d, 0x3d, 0x10, 0x00, 0x00, 0x00 }, 7, 0 },
	{ "cmp byte [rip+x], 0", { 0x80, 0x3d, 0x10, 0x00, 0x00, 0x00, 0x00 }, 7, 0 },
	{ "jmp rel32", { 0xe9, 0x00, 0x00, 0x00, 0x00 }, 5, 0 },
	{ "jmp rel8", { 0xeb, 0x00 }, 2, 0 },
	{ "call rel32", { 0xe8, 0x00, 0x00, 0x00, 0x00 }, 5, 0 },
	{ "je rel8", { 0x74, 0x10 }, 2, 0 },
	{ "jne rel32", { 0x0f, 0x85, 0, 0, 0, 0 }, 6, 0 },
	{ "ret", { 0xc3 }, 1, 0 },
	{ "jmp [rax]", { 0xff, 0x20 }, 2, 0 },
	{ "int3", { 0xcc }, 1, 0 },
	{ "syscall", { 0x0f, 0x05 }, 2, 0 },
	{ "lea with a register operand", { 0x48, 0x8d, 0xc0 }, 3, 0 },
	{ "mov r/m, imm with /1", { 0xc7, 0xc8, 0, 0, 0, 0 }, 6, 0 },
	/* Cut short: the bytes do not hold the whole instruction. */
	{ "sub rsp, imm32 cut", { 0x48, 0x81, 0xec, 0x00 }, 4, 0 },
	{ "a REX prefix alone", { 0x48 }, 1, 0 },
	{ "nothing", { 0 }, 0, 0 },
};

static void test_displace_len(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(insns) / sizeof(insns[0]); i++) {
		size_t got = arch_displace_len(insns[i].bytes, insns[i].n);

		if (got != insns[i].len)
			fail_msg("%s: %zu, expected %zu", insns[i].what, got, insns[i].len);
	}
}

static void test_trampoline(void **state)
{
	uint8_t out[ARCH_BRACKET_TRAMP_LEN], insn[15] = { 0x55 };
	uint64_t back = 0x5555555551234ull, got;

	(void)state;
	/* push rbp ; jmp [rip+0] ; .quad back */
	assert_int_equal(arch_bracket_trampoline(out, insn, 1, back), 15);
	assert_int_equal(out[0], 0x55);
	assert_memory_equal(out + 1, ((const uint8_t[]){ 0xff, 0x25, 0, 0, 0, 0 }), 6);
	memcpy(&got, out + 7, 8);
	assert_true(got == back);
	/* The longest instruction still fits; nothing longer, nor nothing. */
	assert_int_equal(arch_bracket_trampoline(out, insn, 15, back), 29);
	assert_int_equal(arch_bracket_trampoline(out, insn, 0, back), 0);
	assert_int_equal(arch_bracket_trampoline(out, insn, 19, back), 0);
}

static void test_slot_stub(void **state)
{
	uint8_t out[ARCH_BRACKET_STUB_LEN];
	uint64_t slot = 0x7ffff7fe0040, slot_got, clock_word = 0;

	(void)state;
	/* movabs r11, slot ; jmp [r11 + NEXT] */
	arch_bracket_slot_stub(out, slot);
	assert_int_equal(out[0], 0x49);
	assert_int_equal(out[1], 0xbb);
	memcpy(&slot_got, out + 2, 8);
	assert_true(slot_got == slot);
	assert_memory_equal(out + 10, ((const uint8_t[]){ 0x41, 0xff, 0x63, ARCH_BRACKET_NEXT }), 4);
	/* The common code: each trap point is one nop the controller's
	 * breakpoint goes on, inside the code; the end stub's clock word is
	 * aligned, inside it, and what its call reads. */
	assert_true(arch_bracket_trap_off < arch_bracket_len);
	assert_true(arch_bracket_exit_off < arch_bracket_trap_off);
	assert_int_equal(arch_bracket_code[arch_bracket_trap_off], 0x90);
	assert_true(arch_bracket_end_off < arch_bracket_end_trap_off);
	assert_true(arch_bracket_end_trap_off < arch_bracket_clock_word_off);
	assert_int_equal(arch_bracket_code[arch_bracket_end_trap_off], 0x90);
	assert_int_equal(arch_bracket_clock_word_off % 8, 0);
	assert_true(arch_bracket_clock_word_off + 8 <= arch_bracket_len);
	memcpy(&clock_word, arch_bracket_code + arch_bracket_clock_word_off, 8);
	assert_true(clock_word == 0);
	{
		/* call [rip + d] just before the trap reaches the word */
		int32_t d;

		assert_memory_equal(arch_bracket_code + arch_bracket_end_trap_off - 6,
				    ((const uint8_t[]){ 0xff, 0x15 }), 2);
		memcpy(&d, arch_bracket_code + arch_bracket_end_trap_off - 4, 4);
		assert_int_equal(arch_bracket_end_trap_off + (size_t)d,
				 arch_bracket_clock_word_off);
	}
	/* The start stub goes on to the slot's resume word; the end stub's
	 * way out adds what leads from the address its trampoline's call
	 * pushed to the moved instructions. */
	assert_memory_equal(arch_bracket_code + arch_bracket_end_off - 0x10,
			    ((const uint8_t[]){ 0x41, 0xff, 0x63, ARCH_BRACKET_RESUME }), 4);
}

static void test_batch_spans(void **state)
{
	/* Two threads, three batches. */
	const struct bracket_call c[] = {
		{ 0, 11, 100, 200 }, { 0, 12, 90, 210 },  /* batch 0: 90..210, 100..200 */
		{ 0, 12, 300, 350 }, { 0, 11, 310, 400 }, /* batch 1: 300..400, 310..350 */
		{ 0, 11, 500, 600 }, { 0, 12, 605, 690 }, /* batch 2: 500..690, none */
	};
	uint64_t spans[6] = { 0 }, keep[3] = { 7, 7, 7 };

	(void)state;
	/* Outer: [least t0, greatest t1]. */
	assert_int_equal(bracket_batch_spans(c, 6, 2, false, spans), 0);
	assert_int_equal(spans[0], 120);
	assert_int_equal(spans[1], 100);
	assert_int_equal(spans[2], 190);
	/* Inner: [greatest t0, least t1], the outer where that is empty. */
	assert_int_equal(bracket_batch_spans(c, 6, 2, true, spans), 0);
	assert_int_equal(spans[0], 100);
	assert_int_equal(spans[1], 40);
	assert_int_equal(spans[2], 190);
	/* One thread: each call its own batch, inner and outer alike. */
	assert_int_equal(bracket_batch_spans(c, 6, 1, true, spans), 0);
	assert_int_equal(spans[0], 100);
	assert_int_equal(spans[1], 120);
	assert_int_equal(spans[5], 85);
	/* Calls that are not whole batches: nothing written. */
	assert_int_equal(bracket_batch_spans(c, 5, 2, false, keep), -EINVAL);
	assert_int_equal(bracket_batch_spans(c, 6, 0, false, keep), -EINVAL);
	assert_int_equal(keep[0], 7);
}

static void test_final_batches(void **state)
{
	/* Repetition 1 grows 1, 10, 100, 1000; repetitions 2 and 3 run 1000
	 * at once: the samples are the last three batches. */
	const uint64_t spans[] = { 50, 400, 3000, 20000, 22000, 21000 };
	const uint64_t counts[] = { 1, 10, 100, 1000, 1000, 1000 };
	const uint64_t reps[] = { 1000, 1000, 1000 };
	const uint64_t wrong[] = { 1000, 999, 1000 };
	double v[3] = { 0 }, keep[3] = { -1, -1, -1 };

	(void)state;
	assert_int_equal(gbench_final_batches(spans, 6, counts, 6, reps, 3, v), 0);
	assert_true(v[0] == 20.0 && v[1] == 22.0 && v[2] == 21.0);
	/* One repetition: its final batch alone. */
	assert_int_equal(gbench_final_batches(spans, 4, counts, 4, reps, 1, v), 0);
	assert_true(v[0] == 20.0);
	/* Calls and logged batches in different numbers, a repetition's count
	 * that is not its batch's, more repetitions than batches, none: the
	 * calls cannot be matched and nothing is written. */
	assert_int_equal(gbench_final_batches(spans, 6, counts, 5, reps, 3, keep), -EINVAL);
	assert_int_equal(gbench_final_batches(spans, 6, counts, 6, wrong, 3, keep), -EINVAL);
	assert_int_equal(gbench_final_batches(spans, 2, counts, 2, reps, 3, keep), -EINVAL);
	assert_int_equal(gbench_final_batches(spans, 6, counts, 6, reps, 0, keep), -EINVAL);
	assert_true(keep[0] == -1 && keep[2] == -1);
}

static void test_name_threads(void **state)
{
	(void)state;
	assert_int_equal(gbench_name_threads("BM_x"), 1);
	assert_int_equal(gbench_name_threads("BM_x/threads:2"), 2);
	assert_int_equal(gbench_name_threads("BM_x/8/threads:16"), 16);
	assert_int_equal(gbench_name_threads("BM_x/threads:4/real_time"), 4);
	assert_int_equal(gbench_name_threads("BM_x/threads:"), 1);
	assert_int_equal(gbench_name_threads("BM_x/threads:0"), 1);
	assert_int_equal(gbench_name_threads("BM_x/threads:2x"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_displace_len),  cmocka_unit_test(test_trampoline),
		cmocka_unit_test(test_slot_stub),     cmocka_unit_test(test_batch_spans),
		cmocka_unit_test(test_final_batches), cmocka_unit_test(test_name_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
