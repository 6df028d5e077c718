/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_ARCH_BRACKET_H
#define BENCHTRAP_ARCH_BRACKET_H

/*
 * The code measure/bracket.c injects to time a call the program makes
 * itself (the program's own main, traced): a thread stopped at a bracketed
 * function's entry is sent to the enter stub with the address of a
 * per-call slot in a scratch register; the stub reads the clock into the
 * slot and runs the function (its first instruction displaced, or the
 * function itself). The function returns to a per-slot exit stub, which
 * loads the slot's address and jumps to the common exit: it reads the
 * clock into the slot and reaches the exit trap, where the controller
 * takes both readings and sends the thread on to the real return address.
 * No trap falls between the two clock readings.
 *
 * A framework that reads its own clock inside a function (Google
 * Benchmark's loop) is timed from the return of the function that starts
 * its clock to the entry of the one that stops it: the first returns to
 * its slot stub, which goes to the start stub (the clock into the slot,
 * then the real return address: no trap); the second's entry is patched
 * with a jump to a trampoline that calls the end stub (the clock onto the
 * stack, then the end trap, where the controller takes the reading, then
 * the function's moved instructions). The only code between the two
 * readings is the program's own.
 *
 * A slot (ARCH_BRACKET_SLOT bytes, in a writable page of the child):
 *
 *   +T0     struct timespec  clock at entry (written by the enter stub)
 *   +T1     struct timespec  clock at return (written by the exit stub)
 *   +CLOCK  clock_gettime(clockid, struct timespec *) to call
 *   +RESUME where the enter stub jumps to: the displaced copy of the
 *           function's first instruction (a trampoline), or the function;
 *           for the start stub, the real return address
 *   +NEXT   where the slot stub goes: the common exit, or the start stub
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"

#define ARCH_BRACKET_T0 0
#define ARCH_BRACKET_T1 16
#define ARCH_BRACKET_CLOCK 32
#define ARCH_BRACKET_RESUME 40
#define ARCH_BRACKET_NEXT 48
#define ARCH_BRACKET_SLOT 64

/* The enter stub (at offset 0) and the common exit (at
 * arch_bracket_exit_off), position independent; the exit's trap point,
 * an instruction the controller puts a breakpoint on, is at
 * arch_bracket_trap_off. */
extern const uint8_t arch_bracket_code[];
extern const size_t arch_bracket_len;
extern const size_t arch_bracket_exit_off;
extern const size_t arch_bracket_trap_off;
/* The start stub, the end stub and its trap point, and the word the end
 * stub calls for the clock (the controller writes clock_gettime's address
 * there). */
extern const size_t arch_bracket_start_off;
extern const size_t arch_bracket_end_off;
extern const size_t arch_bracket_end_trap_off;
extern const size_t arch_bracket_clock_word_off;

/* A per-slot stub, position independent: loads 'slot' and goes where the
 * slot's NEXT word says. ARCH_BRACKET_STUB_LEN bytes into out. */
#define ARCH_BRACKET_STUB_LEN 16
void arch_bracket_slot_stub(uint8_t out[ARCH_BRACKET_STUB_LEN], uint64_t slot);

/* At the end trap: where the reading is (a struct timespec on the
 * thread's stack), and where the address that says which trampoline
 * called is (the trampoline + AGENT_TRAMP_CALL_LEN, arch/agent.h). */
uint64_t arch_bracket_end_reading(const struct arch_regs *regs);
uint64_t arch_bracket_end_caller(const struct arch_regs *regs);
/* ... and where the patched function's integer argument i was saved (0:
 * not one of those the stub saves), and its stack pointer at entry (the
 * word there is its return address). */
uint64_t arch_bracket_end_arg(const struct arch_regs *regs, unsigned i);
uint64_t arch_bracket_end_entry_sp(const struct arch_regs *regs);

/*
 * A trampoline: the 'len' bytes of a function's first instruction, then a
 * jump to 'back' (the function's address + len) that uses no register.
 * Returns its length (at most ARCH_BRACKET_TRAMP_LEN), 0 when len is too
 * long.
 */
#define ARCH_BRACKET_TRAMP_LEN 32
size_t arch_bracket_trampoline(uint8_t out[ARCH_BRACKET_TRAMP_LEN], const uint8_t *insn, size_t len,
			       uint64_t back);

/*
 * The length of the instruction at code[0..avail) when a copy of it runs
 * elsewhere exactly as it runs in place (it reads no pc-relative memory,
 * is no branch, call or return), or 0 when it is not known to be so. A
 * whitelist of what prologues start with: endbr64, push and pop of a
 * register, add/sub/and/cmp/mov/xor/test/lea between registers or with
 * memory addressed by registers, moves of immediates, nops.
 */
size_t arch_displace_len(const uint8_t *code, size_t avail);

/* A thread stopped at a function's first instruction goes to the enter
 * stub at 'stub' with slot 'slot' (x86-64: rip, r11, which the ABI leaves
 * free at a function's entry). */
void arch_bracket_enter(struct arch_regs *regs, uint64_t stub, uint64_t slot);
/* At the exit trap: the slot the exit stub loaded (x86-64: r11). */
uint64_t arch_bracket_slot(const struct arch_regs *regs);

#endif
