/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_ARCH_H
#define BENCHTRAP_ARCH_H

/*
 * The architecture interface of the trace engine: everything that depends on
 * the instruction set. Nothing outside controller/arch/ names a machine
 * register; it asks this interface for "the program counter" or "the third
 * integer argument".
 *
 * One implementation per architecture lives in arch/<arch>/ (x86_64 now;
 * aarch64 fits the same shape: a 4-byte BRK trap that leaves the pc on the
 * trap, the return address in a link register instead of on the stack).
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

/* The general registers of a stopped thread, as PTRACE_GETREGSET with
 * NT_PRSTATUS reads them. Callers treat it as opaque. */
struct arch_regs {
	struct user_regs_struct r;
};

/* Longest trap instruction of any supported architecture. */
#define ARCH_TRAP_MAX 4
/* Integer arguments an injected call can pass in registers. */
#define ARCH_MAX_ARGS 6

/* The breakpoint instruction (int3 on x86-64) and its length. */
extern const uint8_t arch_trap_insn[];
extern const size_t arch_trap_len;

/*
 * Code templates written into the tracee's scratch page. Each ends in a trap
 * so that the controller regains control at a known address.
 *   arch_code_syscall:  one system call instruction, then a trap. Run with the
 *                       registers set by arch_setup_syscall().
 *   arch_code_trap:     a trap alone; the return address of injected calls.
 * arch_code_*_trap_off is the offset of the trap inside the template.
 */
extern const uint8_t arch_code_syscall[];
extern const size_t arch_code_syscall_len;
extern const uint8_t arch_code_trap[];
extern const size_t arch_code_trap_len;

/* The ELF machine this implementation runs (EM_X86_64), and its name. */
extern const unsigned arch_elf_machine;
extern const char arch_name[];

/* The vDSO's clock_gettime as the kernel names it for this architecture
 * ("__vdso_clock_gettime" on x86-64, "__kernel_clock_gettime" on aarch64). */
extern const char arch_vdso_clock_symbol[];

uint64_t arch_pc(const struct arch_regs *regs);
void arch_set_pc(struct arch_regs *regs, uint64_t pc);
uint64_t arch_sp(const struct arch_regs *regs);
/* The thread pointer (x86-64: the fs base). */
uint64_t arch_thread_pointer(const struct arch_regs *regs);
/* The integer return value of a call, or the result of a system call. */
uint64_t arch_retval(const struct arch_regs *regs);
/* Registers of a thread stopped inside a system call, made those of the
 * thread just after it returned 'v', with no call in progress to restart
 * (x86-64: rax, and orig_rax -1). */
void arch_set_syscall_result(struct arch_regs *regs, uint64_t v);
/* The i-th integer argument (0-based, i < ARCH_MAX_ARGS) at a function's
 * first instruction. */
uint64_t arch_arg(const struct arch_regs *regs, unsigned i);
/* ... and made v (an argument rewritten before the function reads it). */
void arch_set_arg(struct arch_regs *regs, unsigned i, uint64_t v);

/*
 * Where a trap instruction that stopped a thread starts, given the pc the
 * kernel reports: x86-64 reports the address after int3, aarch64 the
 * address of BRK itself.
 */
uint64_t arch_trap_addr(uint64_t pc_after_trap);

/* True when 'si' (the siginfo of a SIGTRAP stop) comes from executing a
 * trap instruction, as opposed to a single-step, a hardware breakpoint or a
 * SIGTRAP sent by kill(). */
bool arch_siginfo_is_trap_insn(const siginfo_t *si);

/*
 * Prepare 'regs' (a copy of a stopped thread's registers) to run a system
 * call at 'insn' (the address of arch_code_syscall). Also makes the kernel
 * forget any system call the thread was stopped in, so that restarting it
 * does not rewind the pc (restoring the saved registers afterwards brings
 * the interrupted call back).
 */
void arch_setup_syscall(struct arch_regs *regs, uint64_t insn, long nr, const uint64_t args[6]);

/*
 * Prepare 'regs' to call 'fn' with 'nargs' integer arguments so that it
 * returns to 'ret_addr'. The stack pointer moves below the red zone and is
 * aligned as the ABI wants at a function's entry. When the return address
 * lives in memory, *ret_push_addr and *ret_push_val say what to write there
 * (and *ret_push is true); on architectures with a link register, *ret_push
 * is false.
 */
int arch_setup_call(struct arch_regs *regs, uint64_t fn, uint64_t ret_addr, const uint64_t *args,
		    unsigned nargs, bool *ret_push, uint64_t *ret_push_addr, uint64_t *ret_push_val);

/*
 * Locating main in a stripped binary: single-step from the ELF entry point
 * until the first call. 'before' are the registers before a step, 'after'
 * after it, 'stack_word' the word at arch_sp(after). True when that step
 * was a call (on x86-64: the stack grew by one word holding an address just
 * past 'before's pc). Then arch_arg(after, 0) is the call's first argument,
 * which for glibc's _start calling __libc_start_main is main.
 */
bool arch_step_was_call(const struct arch_regs *before, const struct arch_regs *after,
			uint64_t stack_word);

/* ---- observing calls (benchtrap observe) ---- */

/*
 * Where a function's return address is at its first instruction. In memory
 * (x86-64: the word at the stack pointer): true, with its address in
 * *ret_slot. In a register (aarch64: the link register): false, with the
 * address itself in *ret_addr.
 */
bool arch_entry_return_address(const struct arch_regs *regs, uint64_t *ret_slot,
			       uint64_t *ret_addr);

/*
 * At a function's first instruction: the stack pointer its caller sees
 * once it has returned (x86-64: sp + 8). The pair (return address, stack
 * pointer after return) identifies one call of a thread, recursion
 * included.
 */
uint64_t arch_entry_sp_after_return(const struct arch_regs *regs);

/* Make a thread stopped at a function's first instruction return at once to
 * 'ret_addr' with the integer return value 'value', without running the
 * body (x86-64: pop the return address, rax = value). */
void arch_return_now(struct arch_regs *regs, uint64_t ret_addr, uint64_t value);

/*
 * Calibration code for observed calls: an empty function at
 * arch_code_calib_fn_off, and at arch_code_calib_loop_off a function
 * loop(n) that calls it n times (n >= 1) and returns. Position independent;
 * arch_code_calib_len bytes.
 */
extern const uint8_t arch_code_calib[];
extern const size_t arch_code_calib_len;
extern const size_t arch_code_calib_fn_off;
extern const size_t arch_code_calib_loop_off;
/* Another empty function for that place, with room at its entry for the
 * jump observe patches in (arch/agent.h): written over the first one. */
extern const uint8_t arch_code_calib_roomy_fn[];
extern const size_t arch_code_calib_roomy_fn_len;

#endif
