/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_H
#define BENCHTRAP_H

/*
 * target-stub: register benchmarks in a program that benchtrap drives from
 * outside.
 *
 * This header carries no timing code, no FIFOs, no locks and no threads.
 * Each registration only emits a 32-byte record into the ELF section
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
 *	BENCHTRAP_THREADS(counter, 1, 2, 4)
 *	{
 *		atomic_fetch_add(&shared_counter, 1);	// on 1, 2, then 4 threads at once
 *	}
 *
 * Link with libbenchtrap-stub.a (pkg-config benchtrap-stub), which supplies
 * a weak main() that runs every benchmark once when the program is started
 * on its own; see benchtrap_main() below and docs/stub.md.
 *
 * The header is GNU C11 or later, or C++11 or later, for gcc or clang (g++,
 * clang++): it relies on section attributes, and in C on statement
 * expressions and __auto_type. In C++ register benchmarks at namespace
 * scope, each name once in the program (docs/stub.md, "From C++").
 */

#include <stdint.h>

#ifdef __cplusplus
#include <cstddef>
#include <type_traits>
#define BENCHTRAP__STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#define BENCHTRAP__EXTERN_C extern "C"
#else
#define BENCHTRAP__STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#define BENCHTRAP__EXTERN_C
#endif

/* "BTR1" read as a little-endian 32-bit integer: BENCHTRAP(),
 * BENCHTRAP_ARGS(). */
#define BENCHTRAP_MAGIC 0x31525442u
/* "BTT1": BENCHTRAP_THREADS(). */
#define BENCHTRAP_MAGIC_THREADS 0x31545442u

/*
 * One registration, as laid out in the section "benchtrap_registry". This
 * layout is read from the ELF file by the controller: keep it in step with
 * controller/elf/registry.c.
 *
 * Two kinds of record share the layout and the section, told apart by
 * their magic:
 *
 *   BENCHTRAP_MAGIC          nargs 0: fn is void (*)(void), args NULL;
 *                            nargs n > 0: fn is void (*)(int64_t), called
 *                            with each of args[0..n)
 *   BENCHTRAP_MAGIC_THREADS  fn is void (*)(void), run on args[i] threads
 *                            at once for each i < nargs (nargs > 0): the
 *                            thread counts, each from 1 to 64
 *
 * A controller that knows only BENCHTRAP_MAGIC refuses a section with the
 * other kind; one that knows both reads every older binary as before.
 *
 * Only plain pointers appear here, so in a position-independent binary each
 * of them needs nothing but an R_X86_64_RELATIVE relocation, which a reader
 * of the file can apply without running the program.
 */
struct benchtrap_entry {
	uint32_t magic;	     /* BENCHTRAP_MAGIC or BENCHTRAP_MAGIC_THREADS */
	uint32_t nargs;	     /* how many args: arguments, or thread counts */
	const char *name;    /* the registered name, NUL-terminated ("fib") */
	void (*fn)(void);    /* the benchmark function (cast, for the int64_t form) */
	const int64_t *args; /* the arguments or thread counts, NULL when nargs == 0 */
};

BENCHTRAP__STATIC_ASSERT(sizeof(struct benchtrap_entry) == 32,
			 "benchtrap_entry must be 32 bytes: benchtrap supports LP64 targets only");

/*
 * In C++ a cast between function pointer types is not a constant
 * expression, so a BENCHTRAP_ARGS record initialized with one would be
 * filled in when the program starts, not in the file the controller reads.
 * Its records are of this type instead, the same layout with fn typed as
 * what it is.
 */
#ifdef __cplusplus
struct benchtrap__entry_args {
	uint32_t magic;
	uint32_t nargs;
	const char *name;
	void (*fn)(int64_t);
	const int64_t *args;
};
static_assert(sizeof(benchtrap__entry_args) == sizeof(benchtrap_entry) &&
		      alignof(benchtrap__entry_args) == alignof(benchtrap_entry) &&
		      offsetof(benchtrap__entry_args, fn) == offsetof(benchtrap_entry, fn) &&
		      offsetof(benchtrap__entry_args, args) == offsetof(benchtrap_entry, args),
	      "benchtrap__entry_args must have benchtrap_entry's layout");
#define BENCHTRAP__ENTRY_ARGS benchtrap__entry_args
#define BENCHTRAP__FN_ARGS(fn) fn
#else
#define BENCHTRAP__ENTRY_ARGS benchtrap_entry
#define BENCHTRAP__FN_ARGS(fn) (void (*)(void)) fn
#endif

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
 * (benchtrap_bench_<name>) and a real call, which the controller makes.
 * BENCHTRAP__DECLARE gives it C linkage in C++ (still static), so that g++
 * does not mangle the symbol (clang++ does all the same: _ZL...); the
 * definition that follows inherits it. */
#define BENCHTRAP__FUNCTION static __attribute__((noinline, used))
#ifdef __cplusplus
#define BENCHTRAP__DECLARE(decl) \
	extern "C" {             \
	decl;                    \
	}
#else
#define BENCHTRAP__DECLARE(decl) decl;
#endif

/*
 * BENCHTRAP(name) { body }
 *
 * Register the benchmark 'name' (a C identifier, unique in the program).
 * The body becomes the function benchtrap_bench_<name>(void), which is
 * the symbol `benchtrap list --symbols` shows.
 */
#define BENCHTRAP(name)                                                                  \
	BENCHTRAP__DECLARE(BENCHTRAP__FUNCTION void benchtrap_bench_##name(void))        \
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
#define BENCHTRAP_ARGS(name, ...)                                                               \
	BENCHTRAP__DECLARE(BENCHTRAP__FUNCTION void benchtrap_bench_##name(int64_t arg))        \
	static const int64_t benchtrap_args_##name[] = { __VA_ARGS__ };                         \
	BENCHTRAP__STATIC_ASSERT(sizeof(benchtrap_args_##name) > 0,                             \
				 "BENCHTRAP_ARGS(" #name ", ...) needs at least one argument"); \
	static const struct BENCHTRAP__ENTRY_ARGS benchtrap_entry_##name BENCHTRAP__RECORD = {  \
		BENCHTRAP_MAGIC,                                                                \
		(uint32_t)(sizeof(benchtrap_args_##name) / sizeof(benchtrap_args_##name[0])),   \
		#name,                                                                          \
		BENCHTRAP__FN_ARGS(benchtrap_bench_##name),                                     \
		benchtrap_args_##name,                                                          \
	};                                                                                      \
	BENCHTRAP__FUNCTION void benchtrap_bench_##name(int64_t arg)

/*
 * BENCHTRAP_THREADS(name, 1, 2, 4) { body }
 *
 * Register 'name', a benchmark without arguments whose body runs on several
 * threads at once: one benchmark per count, listed as name[threads=1],
 * name[threads=2], name[threads=4] (a list of 1 alone is named 'name').
 * The program creates no thread for it: benchtrap does, with the program's
 * own pthread_create, in the measured process after main is reached, and
 * releases them into the body together
 * (docs/run.md, "Threads"); the results give each thread's own figure as
 * well. `benchtrap run --threads LIST` runs it at LIST's counts instead.
 *
 * The counts must be integer constant expressions from 1 to 64 (a count
 * below 1 makes the registry unreadable; one above 64 is refused when the
 * benchmark is run); a count given twice is run once. The stand-alone
 * runner below creates no threads: it runs the body once per count on the
 * calling thread.
 */
#define BENCHTRAP_THREADS(name, ...)                                                     \
	BENCHTRAP__DECLARE(BENCHTRAP__FUNCTION void benchtrap_bench_##name(void))        \
	static const int64_t benchtrap_threads_##name[] = { __VA_ARGS__ };               \
	BENCHTRAP__STATIC_ASSERT(sizeof(benchtrap_threads_##name) > 0,                   \
				 "BENCHTRAP_THREADS(" #name                              \
				 ", ...) needs at least one thread count");              \
	static const struct benchtrap_entry benchtrap_entry_##name BENCHTRAP__RECORD = { \
		BENCHTRAP_MAGIC_THREADS,                                                 \
		(uint32_t)(sizeof(benchtrap_threads_##name) /                            \
			   sizeof(benchtrap_threads_##name[0])),                         \
		#name,                                                                   \
		benchtrap_bench_##name,                                                  \
		benchtrap_threads_##name,                                                \
	};                                                                               \
	BENCHTRAP__FUNCTION void benchtrap_bench_##name(void)

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
 * pointers, qualifiers are dropped. In C++ the value is a copy (or a move
 * from an rvalue) of x, made by a function template.
 */
#ifdef __cplusplus
template <bool in_reg> struct benchtrap__bb;
template <> struct benchtrap__bb<true> {
	template <typename T> static inline T pass(T v)
	{
		__asm__ __volatile__("" : "+r"(v) : : "memory");
		return v;
	}
};
template <> struct benchtrap__bb<false> {
	template <typename T> static inline T pass(T v)
	{
		__asm__ __volatile__("" : "+m"(v) : : "memory");
		return v;
	}
};
/* What C decides with __builtin_classify_type: through a register or not. */
template <typename T> struct benchtrap__in_reg {
	static const bool value = sizeof(T) <= sizeof(void *) &&
				  (std::is_integral<T>::value || std::is_enum<T>::value ||
				   std::is_pointer<T>::value || std::is_floating_point<T>::value);
};
template <typename T> static inline T benchtrap__black_box(T v)
{
	return benchtrap__bb<benchtrap__in_reg<T>::value>::pass(static_cast<T &&>(v));
}
/* Variadic, so that a braced initializer's commas pass: point{1, 2}. */
#define benchtrap_black_box(...) benchtrap__black_box(__VA_ARGS__)
#else
#define benchtrap_black_box(x) BENCHTRAP__BLACK_BOX(x, BENCHTRAP__CAT(benchtrap__bb, __COUNTER__))
#endif

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
 * parameterized one once per argument, a threaded one once per count, on
 * the calling thread), printing each display name on its own line before
 * running it; with BENCHTRAP_RUN=<display name> in the
 * environment it runs only that one and prints nothing. An unknown name is
 * reported on stderr and returns 2; otherwise returns 0.
 *
 * The library's main() is weak and only calls this, so a program with its
 * own main() keeps it and may call benchtrap_main() when it likes.
 */
BENCHTRAP__EXTERN_C int benchtrap_main(int argc, char **argv);

#endif
