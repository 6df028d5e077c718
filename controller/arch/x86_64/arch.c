// SPDX-License-Identifier: MIT
/*
 * x86-64 (System V ABI) implementation of arch/arch.h.
 */
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "arch/arch.h"

const uint8_t arch_trap_insn[] = { 0xcc }; /* int3 */
const size_t arch_trap_len = 1;

const uint8_t arch_code_syscall[] = { 0x0f, 0x05, 0xcc }; /* syscall; int3 */
const size_t arch_code_syscall_len = sizeof(arch_code_syscall);
const uint8_t arch_code_trap[] = { 0xcc }; /* int3 */
const size_t arch_code_trap_len = sizeof(arch_code_trap);

const unsigned arch_elf_machine = EM_X86_64;
const char arch_name[] = "x86-64";
const char arch_vdso_clock_symbol[] = "__vdso_clock_gettime";

/* Bytes below the stack pointer that a leaf function may use (the red zone),
 * which an injected call must not overwrite. */
#define RED_ZONE 128

uint64_t arch_pc(const struct arch_regs *regs)
{
	return regs->r.rip;
}

void arch_set_pc(struct arch_regs *regs, uint64_t pc)
{
	regs->r.rip = pc;
}

uint64_t arch_sp(const struct arch_regs *regs)
{
	return regs->r.rsp;
}

uint64_t arch_retval(const struct arch_regs *regs)
{
	return regs->r.rax;
}

void arch_set_syscall_result(struct arch_regs *regs, uint64_t v)
{
	regs->r.rax = v;
	regs->r.orig_rax = (uint64_t)-1;
}

/* Where the integer arguments 0 to 5 are passed (System V AMD64 ABI). */
static const size_t arg_regs[] = {
	offsetof(struct user_regs_struct, rdi), offsetof(struct user_regs_struct, rsi),
	offsetof(struct user_regs_struct, rdx), offsetof(struct user_regs_struct, rcx),
	offsetof(struct user_regs_struct, r8),	offsetof(struct user_regs_struct, r9),
};

uint64_t arch_arg(const struct arch_regs *regs, unsigned i)
{
	unsigned long long v;

	if (i >= sizeof(arg_regs) / sizeof(arg_regs[0]))
		return 0;
	memcpy(&v, (const char *)&regs->r + arg_regs[i], sizeof(v));
	return v;
}

void arch_set_arg(struct arch_regs *regs, unsigned i, uint64_t v)
{
	unsigned long long w = v;

	if (i >= sizeof(arg_regs) / sizeof(arg_regs[0]))
		return;
	memcpy((char *)&regs->r + arg_regs[i], &w, sizeof(w));
}

uint64_t arch_trap_addr(uint64_t pc_after_trap)
{
	return pc_after_trap - arch_trap_len;
}

bool arch_siginfo_is_trap_insn(const siginfo_t *si)
{
	/* int3 raises SIGTRAP with si_code SI_KERNEL; a single step gives
	 * TRAP_TRACE, kill() gives SI_USER and tgkill() SI_TKILL. */
	return si->si_signo == SIGTRAP && si->si_code == SI_KERNEL;
}

void arch_setup_syscall(struct arch_regs *regs, uint64_t insn, long nr, const uint64_t args[6])
{
	regs->r.rip = insn;
	regs->r.rax = (uint64_t)nr;
	regs->r.rdi = args[0];
	regs->r.rsi = args[1];
	regs->r.rdx = args[2];
	regs->r.r10 = args[3];
	regs->r.r8 = args[4];
	regs->r.r9 = args[5];
	/* No system call in progress: the kernel must not restart one. */
	regs->r.orig_rax = (uint64_t)-1;
}

int arch_setup_call(struct arch_regs *regs, uint64_t fn, uint64_t ret_addr, const uint64_t *args,
		    unsigned nargs, bool *ret_push, uint64_t *ret_push_addr, uint64_t *ret_push_val)
{
	uint64_t sp;

	if (nargs > ARCH_MAX_ARGS)
		return -E2BIG;
	for (unsigned i = 0; i < ARCH_MAX_ARGS; i++)
		arch_set_arg(regs, i, i < nargs ? args[i] : 0);
	/* At a function's entry, rsp + 8 is 16-byte aligned: the call pushed
	 * the return address onto an aligned stack. */
	sp = (regs->r.rsp - RED_ZONE) & ~(uint64_t)15;
	sp -= 8;
	regs->r.rsp = sp;
	regs->r.rip = fn;
	regs->r.rax = 0; /* no vector registers used by a variadic callee */
	regs->r.orig_rax = (uint64_t)-1;
	*ret_push = true;
	*ret_push_addr = sp;
	*ret_push_val = ret_addr;
	return 0;
}

bool arch_step_was_call(const struct arch_regs *before, const struct arch_regs *after,
			uint64_t stack_word)
{
	/* A call pushes the address of the next instruction; call encodings
	 * are at most 15 bytes long. */
	return after->r.rsp == before->r.rsp - 8 && stack_word > before->r.rip &&
	       stack_word <= before->r.rip + 15;
}

bool arch_entry_return_address(const struct arch_regs *regs, uint64_t *ret_slot,
			       uint64_t *ret_addr)
{
	(void)ret_addr;
	*ret_slot = regs->r.rsp; /* pushed by the call */
	return true;
}

uint64_t arch_entry_sp_after_return(const struct arch_regs *regs)
{
	return regs->r.rsp + 8;
}

uint64_t arch_thread_pointer(const struct arch_regs *regs)
{
	return regs->r.fs_base;
}

void arch_return_now(struct arch_regs *regs, uint64_t ret_addr, uint64_t value)
{
	regs->r.rip = ret_addr;
	regs->r.rsp += 8;
	regs->r.rax = value;
}

/*
 *  0: nopl 0(%rax); ret                 the empty function
 *  8: push %rbx; mov %rdi, %rbx
 * 12: call 0; dec %rbx; jnz 12          n calls
 * 22: pop %rbx; ret
 * The push keeps the stack 16-byte aligned at the empty function's entry.
 */
const uint8_t arch_code_calib[] = {
	0x0f, 0x1f, 0x40, 0x00, 0xc3, 0x90, 0x90, 0x90,	      /* fn */
	0x53, 0x48, 0x89, 0xfb,				      /* push rbx; mov rbx, rdi */
	0xe8, 0xef, 0xff, 0xff, 0xff,			      /* call fn (rel -17) */
	0x48, 0xff, 0xcb,				      /* dec rbx */
	0x75, 0xf6,					      /* jnz -10 */
	0x5b, 0xc3,					      /* pop rbx; ret */
};
const size_t arch_code_calib_len = sizeof(arch_code_calib);
const size_t arch_code_calib_fn_off = 0;
const size_t arch_code_calib_loop_off = 8;
/* nopl 0(%rax,%rax); ret: five bytes of instructions before the return. */
const uint8_t arch_code_calib_roomy_fn[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3 };
const size_t arch_code_calib_roomy_fn_len = sizeof(arch_code_calib_roomy_fn);
