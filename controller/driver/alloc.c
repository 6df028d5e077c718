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
 * Counting covers every thread of the process while the benchmark runs,
 * but for the threads of a round outside their counted calls (alloc.h);
 * a spin lock keeps the accounts whole when several allocate at once.
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "alloc.h"
#include "driver-protocol.h"

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

/* A round's threads, each its own share (memacct.h); and the calling
 * thread's: its share (NULL: not a round's thread) and whether it is out
 * of its call. Initial-exec: the preloaded library's TLS is static, so
 * that reading it in a wrapper never allocates. */
static struct memacct_thread shares[DRIVER_MAX_THREADS];
static __thread struct memacct_thread *share __attribute__((tls_model("initial-exec")));
static __thread bool idle __attribute__((tls_model("initial-exec")));

/* --alloc-stacks: where the counted call allocated, by call stack. */
#define SITES_CAP 4096
struct site {
	uint64_t hash; /* 0: empty */
	uint64_t bytes, count;
	unsigned n;
	void *pc[DRIVER_STACK_MAX];
};
static struct site *sites;
static unsigned depth, used; /* frames to keep (0: no stacks); sites in use */
static bool sites_full;
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

int alloc_prepare(unsigned stack_depth)
{
	void *p = mmap(NULL, TABLE_CAP * sizeof(*table), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	table = p;
	if (stack_depth) {
		void *pc[4];

		p = mmap(NULL, SITES_CAP * sizeof(*sites), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		sites = p;
		depth = stack_depth < DRIVER_STACK_MAX ? stack_depth : DRIVER_STACK_MAX;
		/* Its first call loads the unwinder (and allocates): now, not
		 * inside a counted call. */
		backtrace(pc, 4);
	}
	return -pthread_atfork(hold, release, release);
}

static int by_bytes(const void *a, const void *b)
{
	const struct site *x = *(const struct site *const *)a, *y = *(const struct site *const *)b;

	return (x->bytes < y->bytes) - (x->bytes > y->bytes);
}

void alloc_sites(unsigned i, void (*say)(const char *fmt, ...))
{
	static const struct site *top[SITES_CAP];
	size_t n = 0;

	if (!depth)
		return;
	for (size_t k = 0; k < SITES_CAP; k++)
		if (sites[k].hash)
			top[n++] = &sites[k];
	qsort(top, n, sizeof(*top), by_bytes);
	for (size_t r = 0; r < n && r < DRIVER_SITES_MAX; r++) {
		say("site %u %zu %" PRIu64 " %" PRIu64 " %u\n", i, r, top[r]->bytes, top[r]->count,
		    top[r]->n);
		for (unsigned f = 0; f < top[r]->n; f++)
			say("frame %u %zu %" PRIu64 "\n", i, r, (uint64_t)(uintptr_t)top[r]->pc[f]);
	}
	if (sites_full)
		say("lost %u\n", i);
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
	if (depth && used) {
		memset(sites, 0, SITES_CAP * sizeof(*sites));
		used = 0;
		sites_full = false;
	}
	memacct_start(&counts, table, TABLE_CAP);
	memset(shares, 0, sizeof(shares));
	atomic_store(&counting, true);
}

void alloc_thread(unsigned k, bool in_call)
{
	share = &shares[k];
	idle = !in_call;
}

void alloc_stop(struct memacct *out, struct memacct_thread *threads, unsigned n)
{
	atomic_store(&counting, false);
	while (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire))
		;
	*out = counts;
	if (n)
		memcpy(threads, shares, n * sizeof(*threads));
	atomic_flag_clear_explicit(&busy, memory_order_release);
}

static bool lock(void)
{
	if (!atomic_load_explicit(&counting, memory_order_relaxed) || idle)
		return false;
	while (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire))
		;
	return true;
}

static void unlock(void)
{
	atomic_flag_clear_explicit(&busy, memory_order_release);
}

/* The stack of this allocation, added to its site (the lock is held). */
static void site(size_t size)
{
	void *pc[DRIVER_STACK_MAX];
	int n = backtrace(pc, (int)depth);
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (int k = 0; k < n; k++)
		h = (h ^ (uint64_t)(uintptr_t)pc[k]) * 1099511628211ull;
	h |= 1;
	for (i = h % SITES_CAP; sites[i].hash && sites[i].hash != h; i = (i + 1) % SITES_CAP)
		;
	if (!sites[i].hash) {
		/* Kept below three quarters full, so that probes end. */
		if (used >= SITES_CAP / 4 * 3) {
			sites_full = true;
			return;
		}
		used++;
		sites[i].hash = h;
		sites[i].n = (unsigned)n;
		memcpy(sites[i].pc, pc, (size_t)n * sizeof(*pc));
	}
	sites[i].bytes += size;
	sites[i].count++;
}

static void *allocated(void *p, size_t size)
{
	if (lock()) {
		memacct_alloc(&counts, share, p, size);
		if (depth)
			site(size);
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
		memacct_realloc(&counts, share, old, p, size);
		if (depth && (size || !old))
			site(size);
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
		memacct_free(&counts, share, p);
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
