// SPDX-License-Identifier: MIT
/*
 * The trace engine's test target. With no argument main returns 41 (so a
 * test that injects calls at main and resumes sees whether the registers
 * were restored). Other modes:
 *   threads N K   N threads call hit() K times each; exit 0 when the count
 *                 is exactly N*K
 *   fork          a child calls hit() 3 times, the parent once after it;
 *                 exit 0 when the child exited 0 (its breakpoints removed)
 *   crash         main dereferences a bad pointer
 *   sleep         sleeps until killed
 * The functions below are also called by injected calls.
 */
#include <fenv.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noipa, used))

void hit(void);
long add6(long a, long b, long c, long d, long e, long f);
unsigned long hit_count(void);
void round_down(void);
long rounding(void);
void crash_null(void);
void do_abort(void);
void do_exit(void);
void hang(void);
void empty(void);
void three_syscalls(void);
void make_thread(void);
void fork_child(void);
void handled_signal(void);

static unsigned long hits;

NOINLINE void hit(void)
{
	__atomic_add_fetch(&hits, 1, __ATOMIC_RELAXED);
}

NOINLINE long add6(long a, long b, long c, long d, long e, long f)
{
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f;
}

/* Change the rounding mode (MXCSR and the x87 control word), and read it. */
NOINLINE void round_down(void)
{
	fesetround(FE_DOWNWARD);
}

NOINLINE long rounding(void)
{
	return fegetround();
}

NOINLINE unsigned long hit_count(void)
{
	return __atomic_load_n(&hits, __ATOMIC_RELAXED);
}

NOINLINE void crash_null(void)
{
	int *volatile bad = (int *)16;

	*bad = 1;
}

NOINLINE void do_abort(void)
{
	abort();
}

NOINLINE void do_exit(void)
{
	exit(7);
}

NOINLINE void hang(void)
{
	for (;;)
		__asm__ volatile("");
}

NOINLINE void empty(void)
{
}

/* getppid twice and getpid once, as system calls (not a cached value). */
NOINLINE void three_syscalls(void)
{
	syscall(SYS_getppid);
	syscall(SYS_getpid);
	syscall(SYS_getppid);
}

static void *nothing(void *arg)
{
	return arg;
}

/* One thread created and joined. */
NOINLINE void make_thread(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, nothing, NULL) == 0)
		pthread_join(t, NULL);
}

/* One process forked, which exits at once, and waited for. */
NOINLINE void fork_child(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void on_usr1(int sig)
{
	(void)sig;
}

/* SIGUSR1 raised and handled by the program. */
NOINLINE void handled_signal(void)
{
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
}

static long per_thread;

static void *worker(void *arg)
{
	for (long i = 0; i < per_thread; i++)
		hit();
	return arg;
}

static int threads(int n, long k)
{
	pthread_t t[64];

	if (n > 64)
		n = 64;
	per_thread = k;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			return 2;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return hit_count() == (unsigned long)n * (unsigned long)k ? 0 : 1;
}

static int forking(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return 2;
	if (pid == 0) {
		for (int i = 0; i < 3; i++)
			hit();
		_exit(hit_count() == 3 ? 0 : 1);
	}
	if (waitpid(pid, &status, 0) < 0)
		return 2;
	hit();
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 3;
}

int main(int argc, char **argv)
{
	if (argc > 3 && strcmp(argv[1], "threads") == 0)
		return threads(atoi(argv[2]), atol(argv[3]));
	if (argc > 1 && strcmp(argv[1], "fork") == 0)
		return forking();
	if (argc > 1 && strcmp(argv[1], "crash") == 0)
		crash_null();
	if (argc > 1 && strcmp(argv[1], "sleep") == 0)
		for (;;)
			pause();
	return argc + 40;
}
