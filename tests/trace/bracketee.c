// SPDX-License-Identifier: MIT
/*
 * The fixture of the bracket engine's tests (test-bracket.c): functions
 * whose first instruction is known, written in assembly, called from main
 * (or from two threads) a known number of times. The program checks every
 * result itself: a register the engine's stubs failed to keep shows as a
 * wrong result and exit status 1.
 *
 *   bracketee plain    disp_ok and disp_refused, CALLS times each
 *   bracketee rec      rec(5), CALLS times: each calls itself 5 deep
 *   bracketee threads  disp_ok CALLS times on each of two threads
 *   bracketee toggle   CALLS samples: sync_point(p, 1), a loop, sync_point(p, 0),
 *                      as divan times a sample (sync_point returns its
 *                      second argument: checked)
 *   bracketee crash    crash_in(): a store through a null pointer (with
 *                      unwind information, so a backtrace walks past it)
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define CALLS 50

/* Both return the sum of the six integer arguments (rax) and of the eight
 * double ones (xmm0); disp_ok starts with push rbp (displaced), disp_refused
 * with a load relative to rip (refused: run in place). */
struct pair {
	long sum;
	double dsum;
};
struct pair disp_ok(long a, long b, long c, long d, long e, long f, double x0, double x1,
		    double x2, double x3, double x4, double x5, double x6, double x7);
struct pair disp_refused(long a, long b, long c, long d, long e, long f, double x0, double x1,
			 double x2, double x3, double x4, double x5, double x6, double x7);
long rec(long n);
long sync_point(void *barrier, long is_start);
void crash_in(void);

#define BODY                                                                                   \
	"	mov %rsp, %rbp\n"                                                                  \
	"	lea (%rdi,%rsi), %rax\n"                                                           \
	"	add %rdx, %rax\n"                                                                  \
	"	add %rcx, %rax\n"                                                                  \
	"	add %r8, %rax\n"                                                                   \
	"	add %r9, %rax\n"                                                                   \
	"	addsd %xmm1, %xmm0\n"                                                              \
	"	addsd %xmm2, %xmm0\n"                                                              \
	"	addsd %xmm3, %xmm0\n"                                                              \
	"	addsd %xmm4, %xmm0\n"                                                              \
	"	addsd %xmm5, %xmm0\n"                                                              \
	"	addsd %xmm6, %xmm0\n"                                                              \
	"	addsd %xmm7, %xmm0\n"                                                              \
	"	pop %rbp\n"                                                                        \
	"	ret\n"

__asm__(".text\n"
	".globl disp_ok\n"
	".type disp_ok, @function\n"
	"disp_ok:\n"
	"	push %rbp\n" BODY ".size disp_ok, .-disp_ok\n"
	".globl disp_refused\n"
	".type disp_refused, @function\n"
	"disp_refused:\n"
	"	lea disp_refused(%rip), %r11\n"
	"	push %rbp\n" BODY ".size disp_refused, .-disp_refused\n"
	".globl rec\n"
	".type rec, @function\n"
	"rec:\n"
	"	push %rbx\n"
	"	xor %eax, %eax\n"
	"	test %rdi, %rdi\n"
	"	je 1f\n"
	"	mov %rdi, %rbx\n"
	"	lea -1(%rdi), %rdi\n"
	"	call rec\n"
	"	add $1, %rax\n"
	"1:	pop %rbx\n"
	"	ret\n"
	".size rec, .-rec\n"
	".globl sync_point\n"
	".type sync_point, @function\n"
	"sync_point:\n"
	"	push %rbp\n"
	"	mov %rsi, %rax\n"
	"	pop %rbp\n"
	"	ret\n"
	".size sync_point, .-sync_point\n"
	".globl crash_in\n"
	".type crash_in, @function\n"
	"crash_in:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	xor %eax, %eax\n"
	"	movl $1, (%rax)\n"
	"	pop %rbp\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size crash_in, .-crash_in\n");

static int check(struct pair (*fn)(long, long, long, long, long, long, double, double, double,
				    double, double, double, double, double),
		 long k)
{
	struct pair p = fn(k, 2, 3, 4, 5, 6, 0.5, 1, 2, 3, 4, 5, 6, 7);

	return p.sum == k + 20 && p.dsum == 28.5;
}

static void *worker(void *arg)
{
	long bad = 0;

	for (long k = 0; k < CALLS; k++)
		bad += !check(disp_ok, k);
	return (void *)bad;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "plain";
	long bad = 0;

	if (!strcmp(mode, "plain")) {
		for (long k = 0; k < CALLS; k++) {
			bad += !check(disp_ok, k);
			bad += !check(disp_refused, k);
		}
	} else if (!strcmp(mode, "rec")) {
		for (long k = 0; k < CALLS; k++)
			bad += rec(5) != 5;
	} else if (!strcmp(mode, "threads")) {
		pthread_t t[2];
		void *r;

		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, worker, NULL);
		for (int i = 0; i < 2; i++) {
			pthread_join(t[i], &r);
			bad += (long)r;
		}
	} else if (!strcmp(mode, "toggle")) {
		for (long k = 0; k < CALLS; k++) {
			volatile long x = 0;

			bad += sync_point(NULL, 1) != 1;
			for (int i = 0; i < 1000; i++)
				x += i;
			bad += sync_point(&bad, 0) != 0 || x != 499500;
		}
	} else if (!strcmp(mode, "crash")) {
		crash_in();
	}
	if (bad)
		fprintf(stderr, "bracketee: %ld wrong results\n", bad);
	return bad ? 1 : 0;
}
