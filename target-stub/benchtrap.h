/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_H
#define BENCHTRAP_H

/*
 * target-stub: register benchmarks in a program that benchtrap drives from
 * outside.
 *
 * This header carries no timing code, no FIFOs and no locks. Each
 * registration only emits a 32-byte record into the ELF section
 * "benchtrap_registry"; the benchtrap controller reads those records from
 * the binary file, starts a fresh traced process per benchmark, and calls
 * and times the function itself.
 *
 *	#include <benchtrap.h>
 *
 *	BENCHTRAP(empty_loop)
 *	{
 *		for (int i = 0; i < 1000; i++)
 *			benchtrap_black_box(i);
 *	}
 *
 *	BENCHTRAP_ARGS(fib, 10, 20, 30)
 *	{
 *		benchtrap_black_box(fib(arg));	// arg is an int64_t
 *	}
 *
 * Link with libbenchtrap-stub.a (pkg-config benchtrap-stub), which supplies
 * a weak main() that runs every benchmark once when the program is started
 * on its own; see benchtrap_main() below and docs/stub.md.
 *
 * The header is C (GNU C11 or later, gcc or clang): it relies on statement
 * expressions, __auto_type and section attributes.
 */

#include <stdint.h>

/* "BTR1" read as a little-endian 32-bit integer. */
#define BENCHTRAP_MAGIC 0x31525442u

/*
 * One registration, as laid out in the section "benchtrap_registry". This
 * layout is read from the ELF file by the controller: keep it in step with
 * controller/elf.
 *
 * Only plain pointers appear here, so in a position-independent binary each
 * of them needs nothing but an R_X86_64_RELATIVE relocation, which a reader
 * of the file can apply without running the program.
 */
struct benchtrap_entry {
	uint32_t magic;	     /* BENCHTRAP_MAGIC */
	uint32_t nargs;	     /* 0: fn is void (*)(void); n > 0: void (*)(int64_t), args[n] */
	const char *name;    /* the registered name, NUL-terminated ("fib") */
	void (*fn)(void);    /* the benchmark function (cast, for the int64_t form) */
	const int64_t *args; /* the arguments, NULL when nargs == 0 */
};

_Static_assert(sizeof(struct benchtrap_entry) == 32,
	       "benchtrap_entry must be 32 bytes: benchtrap supports LP64 targets only");

/*
 * Records are kept by the compiler ("used") and, where the compiler knows
 * it, by the linker's --gc-sections ("retain"). Every record has the same
 * size and alignment, so the section is an array of them that the linker
 * brackets with __start_benchtrap_registry and __stop_benchtrap_registry.
 * gcc would emit a file's records in reverse order when optimizing;
 * "no_reorder" keeps them in the order they are written. Across files the
 * order is the link order.
 */
#if defined(__has_attribute)
#if __has_attribute(retain)
#define BENCHTRAP__RETAIN __attribute__((retain))
#endif
#if __has_attribute(no_reorder)
#define BENCHTRAP__NO_REORDER __attribute__((no_reorder))
#endif
#endif
#ifndef BENCHTRAP__RETAIN
#define BENCHTRAP__RETAIN
#endif
#ifndef BENCHTRAP__NO_REORDER
#define BENCHTRAP__NO_REORDER
#endif

#define BENCHTRAP__RECORD                                                \
	__attribute__((used, section("benchtrap_registry"), aligned(8))) \
	BENCHTRAP__RETAIN BENCHTRAP__NO_REORDER

/* noinline and used: the function keeps its own symbol
 * (benchtrap_bench_<name>) and a real call, which the controller makes. */
#define BENCHTRAP__FUNCTION static __attribute__((noinline, used))

/*
 * BENCHTRAP(name) { body }
 *
 * Register the benchmark 'name' (a C identifier, unique in the program).
 * The body becomes the function benchtrap_bench_<name>(void), which is
 * the symbol `benchtrap list --symbols` shows.
 */
#define BENCHTRAP(name)                                                                  \
	BENCHTRAP__FUNCTION void benchtrap_bench_##name(void);                           \
	static const struct benchtrap_entry benchtrap_entry_##name BENCHTRAP__RECORD = { \
		BENCHTRAP_MAGIC, 0, #name, benchtrap_bench_##name, 0                     \
	};                                                                               \
	BENCHTRAP__FUNCTION void benchtrap_bench_##name(void)

/*
 * BENCHTRAP_ARGS(name, a, b, ...) { body using arg }
 *
 * Register 'name' once per integer argument; the body sees it as
 * 'int64_t arg' and the benchmarks are listed as name[a], name[b], ...
 * The arguments must be integer constant expressions.
 */
#define BENCHTRAP_ARGS(name, ...)                                                             \
	BENCHTRAP__FUNCTION void benchtrap_bench_##name(int64_t arg);                         \
	static const int64_t benchtrap_args_##name[] = { __VA_ARGS__ };                       \
	_Static_assert(sizeof(benchtrap_args_##name) > 0,                                     \
		       "BENCHTRAP_ARGS(" #name ", ...) needs at least one argument");         \
	static const struct benchtrap_entry benchtrap_entry_##name BENCHTRAP__RECORD = {      \
		BENCHTRAP_MAGIC,                                                              \
		(uint32_t)(sizeof(benchtrap_args_##name) / sizeof(benchtrap_args_##name[0])), \
		#name,                                                                        \
		(void (*)(void))benchtrap_bench_##name,                                       \
		benchtrap_args_##name,                                                        \
	};                                                                                    \
	BENCHTRAP__FUNCTION void benchtrap_bench_##name(int64_t arg)

/*
 * benchtrap_black_box(x): evaluates to x, but the compiler must assume that
 * the value was used and may have been changed, and that any memory may
 * have been read or written, by an empty asm statement it cannot see into.
 * So a computation whose result goes through it is neither removed nor
 * folded into a constant, and stores before it are not dropped.
 *
 * Works for any type: integers, pointers and floating point values that fit
 * in a general register pass through one (no memory access at all); wider
 * values (long double, structs) pass through a stack slot. Arrays decay to
 * pointers, qualifiers are dropped.
 */
#define benchtrap_black_box(x) BENCHTRAP__BLACK_BOX(x, BENCHTRAP__CAT(benchtrap__bb, __COUNTER__))

#define BENCHTRAP__CAT2(a, b) a##b
#define BENCHTRAP__CAT(a, b) BENCHTRAP__CAT2(a, b)
#define BENCHTRAP__IN_REG(v)                                                          \
	(sizeof(v) <= sizeof(void *) &&                                               \
	 (__builtin_classify_type(v) <= 5 /* integer, char, enum, bool, pointer */ || \
	  __builtin_classify_type(v) == 8 /* real */))
#define BENCHTRAP__ASM(constraint, v) \
	__extension__({ __asm__ __volatile__("" : constraint(v) : : "memory"); })
#define BENCHTRAP__BLACK_BOX(x, v)                                                   \
	__extension__({                                                              \
		__auto_type v = (x);                                                 \
		__builtin_choose_expr(BENCHTRAP__IN_REG(v), BENCHTRAP__ASM("+r", v), \
				      BENCHTRAP__ASM("+m", v));                      \
		v;                                                                   \
	})

/*
 * The stand-alone runner in libbenchtrap-stub.a. Without a controller, a
 * program linked with the library runs every registered benchmark once (a
 * parameterized one once per argument), printing each display name on its
 * own line before running it; with BENCHTRAP_RUN=<display name> in the
 * environment it runs only that one and prints nothing. An unknown name is
 * reported on stderr and returns 2; otherwise returns 0.
 *
 * The library's main() is weak and only calls this, so a program with its
 * own main() keeps it and may call benchtrap_main() when it likes.
 */
int benchtrap_main(int argc, char **argv);

#endif
