/* SPDX-License-Identifier: MIT */
/*
 * The memory instrument's half of the driver (built into
 * libbenchtrap-driver-memory.so only, so that the callgrind and perf
 * drivers add no instruction to any allocation): the C allocator's entry
 * points, wrapped. Each calls glibc's own allocator (__libc_malloc and
 * its kin, which glibc exports for this) and, while a call is counted,
 * accounts for it (memacct.h). Every language that allocates through the
 * C allocator is seen: C++'s operator new calls malloc, and glibc's own
 * functions (strdup, fopen...) call the malloc the program resolves.
 *
 * Counting covers every thread of the process while the benchmark runs;
 * a spin lock keeps the accounts whole when several allocate at once.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "alloc.h"

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

/* Blocks live at once that the table can hold: 3/4 of 2^22. */
#define TABLE_CAP ((size_t)1 << 22)

static struct memacct counts;
static struct memacct_block *table;
static atomic_bool counting;
static atomic_flag busy = ATOMIC_FLAG_INIT;

/* A benchmark that forks while another of its threads allocates: the
 * child must not inherit the lock held. */
static void hold(void)
{
	while (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire))
		;
}

static void release(void)
{
	atomic_flag_clear_explicit(&busy, memory_order_release);
}

int alloc_prepare(void)
{
	void *p = mmap(NULL, TABLE_CAP * sizeof(*table), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	table = p;
	return -pthread_atfork(hold, release, release);
}

const char *alloc_foreign(void)
{
	void *first = dlsym(RTLD_DEFAULT, "malloc");
	Dl_info theirs, ours;

	/* table: an object of this library, for its base address. */
	if (!first || !dladdr(first, &theirs) || !dladdr(&table, &ours) ||
	    theirs.dli_fbase == ours.dli_fbase)
		return NULL;
	return theirs.dli_fname && theirs.dli_fname[0] ? theirs.dli_fname : "the program";
}

void alloc_start(void)
{
	memacct_start(&counts, table, TABLE_CAP);
	atomic_store(&counting, true);
}

void alloc_stop(struct memacct *out)
{
	atomic_store(&counting, false);
	while (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire))
		;
	*out = counts;
	atomic_flag_clear_explicit(&busy, memory_order_release);
}

static bool lock(void)
{
	if (!atomic_load_explicit(&counting, memory_order_relaxed))
		return false;
	while (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire))
		;
	return true;
}

static void unlock(void)
{
	atomic_flag_clear_explicit(&busy, memory_order_release);
}

static void *allocated(void *p, size_t size)
{
	if (lock()) {
		memacct_alloc(&counts, p, size);
		unlock();
	}
	return p;
}

void *malloc(size_t size)
{
	return allocated(__libc_malloc(size), size);
}

void *calloc(size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total))
		total = SIZE_MAX;
	return allocated(__libc_calloc(n, size), total);
}

void *realloc(void *old, size_t size)
{
	void *p = __libc_realloc(old, size);

	if (lock()) {
		memacct_realloc(&counts, old, p, size);
		unlock();
	}
	return p;
}

void *reallocarray(void *old, size_t n, size_t size)
{
	size_t total;

	if (__builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return allocated(NULL, SIZE_MAX);
	}
	return realloc(old, total);
}

void free(void *p)
{
	if (lock()) {
		memacct_free(&counts, p);
		unlock();
	}
	__libc_free(p);
}

void *memalign(size_t align, size_t size)
{
	return allocated(__libc_memalign(align, size), size);
}

void *aligned_alloc(size_t align, size_t size)
{
	return allocated(__libc_memalign(align, size), size);
}

int posix_memalign(void **ret, size_t align, size_t size)
{
	void *p;

	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	p = __libc_memalign(align, size);
	allocated(p, size);
	if (!p)
		return ENOMEM;
	*ret = p;
	return 0;
}

void *valloc(size_t size)
{
	return allocated(__libc_valloc(size), size);
}

void *pvalloc(size_t size)
{
	return allocated(__libc_pvalloc(size), size);
}
