// SPDX-License-Identifier: MIT
/*
 * Matching returns to calls, per thread. A call is identified by its return
 * address and the stack pointer its caller will have once it returned:
 * recursion gives each level its own stack pointer, and threads have their
 * own stacks. Stacks grow down, so an open frame whose stack pointer lies
 * below the thread's current one has been unwound past without returning.
 *
 *   stack (outermost first)        thread now at (ret, sp)
 *   f  sp_after 0x7f..f0            sp 0x7f..f0, ret = f's  -> f returns
 *   g  sp_after 0x7f..b0  <- dead: below the current stack pointer
 *
 * Below, and near: a frame more than OBSERVE_SAME_STACK below is another
 * stack's (a coroutine's, switched away from with swapcontext), and stays
 * open, as the patched entries' agent keeps it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "util/array.h"
#include "observe/observe.h"

int observe_stack_push(struct observe_stack *s, const struct observe_frame *f)
{
	if (array_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)) < 0)
		return -ENOMEM;
	s->v[s->n++] = *f;
	return 0;
}

void observe_stack_free(struct observe_stack *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

/* A frame left open on the stack that is now at sp_after. */
static bool under(const struct observe_frame *f, uint64_t sp_after)
{
	return f->sp_after < sp_after && sp_after - f->sp_after <= OBSERVE_SAME_STACK;
}

/* On another stack than the one now at sp_after. */
static bool elsewhere(const struct observe_frame *f, uint64_t sp_after)
{
	uint64_t d = f->sp_after > sp_after ? f->sp_after - sp_after : sp_after - f->sp_after;

	return d > OBSERVE_SAME_STACK;
}

size_t observe_stack_dead(const struct observe_stack *s, uint64_t ret_addr, uint64_t sp_after,
			  uint32_t entering)
{
	size_t k = 0, same = 0;
	bool again = false;

	while (k < s->n) {
		const struct observe_frame *f = &s->v[s->n - 1 - k];

		if (under(f, sp_after) || (f->sp_after == sp_after && f->ret_addr != ret_addr))
			k++;
		else
			break;
	}
	/* Frames with the very same pair: tail calls, or one left by a
	 * longjmp and called again. */
	while (k + same < s->n) {
		const struct observe_frame *f = &s->v[s->n - 1 - k - same];

		if (f->sp_after != sp_after || f->ret_addr != ret_addr)
			break;
		again |= entering != OBSERVE_NO_FUNC && f->func == entering;
		same++;
	}
	return again ? k + same : k;
}

size_t observe_stack_beneath(const struct observe_stack *s, uint64_t ret_addr, uint64_t sp_after,
			     size_t *ret_above)
{
	size_t k = 0;

	while (k < s->n && elsewhere(&s->v[s->n - 1 - k], sp_after))
		k++;
	*ret_above = k;
	if (!k || k == s->n)
		return 0;
	return observe_stack_returning_at(s, s->n - k, ret_addr, sp_after);
}

size_t observe_stack_returning_at(const struct observe_stack *s, size_t top, uint64_t ret_addr,
				  uint64_t sp_after)
{
	size_t k = 0;

	while (k < top) {
		const struct observe_frame *f = &s->v[top - 1 - k];

		if (f->sp_after == sp_after && f->ret_addr == ret_addr)
			k++;
		else
			break;
	}
	return k;
}

size_t observe_stack_returning(const struct observe_stack *s, uint64_t ret_addr, uint64_t sp_after)
{
	size_t k = 0;

	while (k < s->n) {
		const struct observe_frame *f = &s->v[s->n - 1 - k];

		if (f->sp_after == sp_after && f->ret_addr == ret_addr)
			k++;
		else
			break;
	}
	return k;
}
