/* SPDX-License-Identifier: MIT */
/*
 * The example suite: small benchmarks, each here because it shows one thing
 * about measuring from outside the process. Run them with
 *
 *	benchtrap run ./examples
 *
 * or start ./examples on its own to run each once and list their names.
 */

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <benchtrap.h>

/* Nothing at all: what is left is the cost of calling a function, which
 * the controller measures and subtracts; this should come out near zero. */
BENCHTRAP(empty)
{
}

/*
 * A known amount of work: 1000 additions that each depend on the one
 * before, about one cycle each, so about 330 ns per call on a 3 GHz core.
 * The black box keeps the compiler from replacing the loop by its closed
 * form, and costs no instruction.
 */
#define LOOP_STEPS 1000

BENCHTRAP(loop_300ns)
{
	uint64_t x = 0;

	for (uint64_t i = 0; i < LOOP_STEPS; i++)
		x = benchtrap_black_box(x + i);
	benchtrap_black_box(x);
}

/* A parameterized benchmark: one function, listed as fib[10], fib[15] and
 * fib[20], each called with its argument by the controller. */
static int64_t fib(int64_t n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

BENCHTRAP_ARGS(fib, 10, 15, 20)
{
	benchtrap_black_box(fib(benchtrap_black_box(arg)));
}

/*
 * State that ripples from one benchmark into the next. The first free() of
 * a block that calloc() got from mmap() makes glibc raise its mmap
 * threshold, so in one process the second and third benchmarks get heap
 * memory that calloc() must clear, and measure far more than the first.
 * Each benchmark in a fresh process measures the same as the others.
 */
#define RIPPLE_BYTES (4u << 20)
#define RIPPLE_PAGE 4096u

static void allocator_ripple(void)
{
	char *p = calloc(1, RIPPLE_BYTES);

	if (!p)
		abort();
	for (size_t i = 0; i < RIPPLE_BYTES; i += RIPPLE_PAGE)
		p[i] = 1;
	/* The page writes and the calloc()/free() pair would be removed
	 * as dead without this. */
	benchtrap_black_box(p);
	free(p);
}

BENCHTRAP(allocator_ripple_1)
{
	allocator_ripple();
}

BENCHTRAP(allocator_ripple_2)
{
	allocator_ripple();
}

BENCHTRAP(allocator_ripple_3)
{
	allocator_ripple();
}

/*
 * A process that already has threads when the benchmark starts: two
 * workers created before main(). Isolating benchmarks by fork() hangs here
 * (the child gets the pool's memory, locked mutexes included, but not its
 * threads); benchtrap starts each benchmark in a freshly executed process
 * instead. Each call hands both workers half of an array to sum and waits
 * for them; idle workers sleep on a condition variable.
 */
#define POOL_WORKERS 2
#define POOL_ITEMS 4096

static struct {
	pthread_mutex_t lock;
	pthread_cond_t work; /* a job was posted: generation changed */
	pthread_cond_t done; /* pending reached zero */
	uint64_t generation; /* number of jobs posted so far */
	int pending;	     /* workers that have not finished the current job */
	int64_t partial[POOL_WORKERS];
} pool = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
};

static int64_t pool_data[POOL_ITEMS];

static void *pool_worker(void *arg)
{
	size_t id = (size_t)(uintptr_t)arg;
	size_t begin = id * (POOL_ITEMS / POOL_WORKERS);
	size_t end = begin + POOL_ITEMS / POOL_WORKERS;
	uint64_t seen = 0;

	pthread_mutex_lock(&pool.lock);
	for (;;) {
		int64_t sum = 0;

		while (pool.generation == seen)
			pthread_cond_wait(&pool.work, &pool.lock);
		seen = pool.generation;
		pthread_mutex_unlock(&pool.lock);

		for (size_t i = begin; i < end; i++)
			sum += pool_data[i];

		pthread_mutex_lock(&pool.lock);
		pool.partial[id] = sum;
		if (--pool.pending == 0)
			pthread_cond_signal(&pool.done);
	}
	return NULL;
}

__attribute__((constructor)) static void pool_start(void)
{
	pthread_attr_t attr;
	int err;

	for (size_t i = 0; i < POOL_ITEMS; i++)
		pool_data[i] = (int64_t)i;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (size_t i = 0; i < POOL_WORKERS; i++) {
		pthread_t thread;

		err = pthread_create(&thread, &attr, pool_worker, (void *)(uintptr_t)i);
		if (err) {
			fprintf(stderr, "examples: cannot start the worker pool: %s\n",
				strerror(err));
			exit(1);
		}
	}
	pthread_attr_destroy(&attr);
}

BENCHTRAP(threaded_pool)
{
	int64_t sum = 0;

	pthread_mutex_lock(&pool.lock);
	pool.generation++;
	pool.pending = POOL_WORKERS;
	pthread_cond_broadcast(&pool.work);
	while (pool.pending > 0)
		pthread_cond_wait(&pool.done, &pool.lock);
	for (size_t i = 0; i < POOL_WORKERS; i++)
		sum += pool.partial[i];
	pthread_mutex_unlock(&pool.lock);
	benchtrap_black_box(sum);
}

/*
 * Deliberately broken: the result is computed and thrown away without
 * benchtrap_black_box(), so an optimizing compiler removes the loop and
 * the function is a bare return. It is here to show the diagnostic that
 * a benchmark measured no execution time beyond an empty call.
 */
BENCHTRAP(optimized_away)
{
	uint64_t sum = 0;

	for (uint64_t i = 0; i < LOOP_STEPS; i++)
		sum += i * i;
	(void)sum;
}

/* One real system call per call. getppid() through syscall(), because the
 * libc wrapper of some calls may answer from a cache without entering the
 * kernel. Shows the cost of a kernel round trip, and that time spent in
 * the kernel is part of the measurement. */
BENCHTRAP(syscall_getppid)
{
	benchtrap_black_box(syscall(SYS_getppid));
}
