// SPDX-License-Identifier: MIT
/* The program benches/observe_cost.c observes: main calls observed_fn() N
 * times (argv[1]), nothing else. */
#include <stdlib.h>

void observed_fn(void);

static volatile int sink;

__attribute__((noinline)) void observed_fn(void)
{
	sink++;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;

	for (long i = 0; i < n; i++)
		observed_fn();
	return sink == (int)n ? 0 : 1;
}
