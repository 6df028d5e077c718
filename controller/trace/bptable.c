// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "trace/bptable.h"

void trace_bpt_init(struct trace_bpt *t, const struct trace_mem_ops *ops, void *ctx)
{
	memset(t, 0, sizeof(*t));
	t->ops = ops;
	t->ctx = ctx;
	t->trap = arch_trap_insn;
	t->trap_len = arch_trap_len;
}

void trace_bpt_fini(struct trace_bpt *t)
{
	if (!t)
		return;
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}

/* Index of the first breakpoint with addr >= 'addr'. */
static size_t lower_bound(const struct trace_bpt *t, uint64_t addr)
{
	return array_lower_bound_u64(t->v, t->n, sizeof(*t->v), offsetof(struct trace_bp, addr),
				     addr);
}

const struct trace_bp *trace_bpt_find(const struct trace_bpt *t, uint64_t addr)
{
	size_t i = lower_bound(t, addr);

	return i < t->n && t->v[i].addr == addr ? &t->v[i] : NULL;
}

int trace_bpt_insert(struct trace_bpt *t, uint64_t addr)
{
	size_t i = lower_bound(t, addr);
	struct trace_bp bp = { .addr = addr, .refs = 1 };
	int r;

	if (i < t->n && t->v[i].addr == addr) {
		t->v[i].refs++;
		return 0;
	}
	if ((i > 0 && t->v[i - 1].addr + t->trap_len > addr) ||
	    (i < t->n && addr + t->trap_len > t->v[i].addr))
		return -EEXIST;
	if (array_grow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v)) < 0)
		return -ENOMEM;
	r = t->ops->read(t->ctx, addr, bp.orig, t->trap_len);
	if (r < 0)
		return r;
	r = t->suspended ? 0 : t->ops->write(t->ctx, addr, t->trap, t->trap_len);
	if (r < 0)
		return r;
	memmove(&t->v[i + 1], &t->v[i], (t->n - i) * sizeof(*t->v));
	t->v[i] = bp;
	t->n++;
	return 0;
}

int trace_bpt_remove(struct trace_bpt *t, uint64_t addr)
{
	size_t i = lower_bound(t, addr);
	int r;

	if (i == t->n || t->v[i].addr != addr)
		return -ENOENT;
	if (--t->v[i].refs > 0)
		return 0;
	r = t->suspended ? 0 : t->ops->write(t->ctx, addr, t->v[i].orig, t->trap_len);
	memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof(*t->v));
	t->n--;
	/* The breakpoint is gone either way: a failed write means the page
	 * went away with it. */
	return r;
}

/* Calls fn for the overlap of every breakpoint with [addr, addr + len). */
static void for_overlaps(const struct trace_bpt *t, uint64_t addr, size_t len,
			 void (*fn)(const struct trace_bpt *t, struct trace_bp *bp, uint64_t from,
				    size_t n, uint64_t addr, void *buf),
			 void *buf)
{
	size_t i = lower_bound(t, addr >= t->trap_len ? addr - t->trap_len + 1 : 0);

	for (; i < t->n && t->v[i].addr < addr + len; i++) {
		uint64_t from = t->v[i].addr > addr ? t->v[i].addr : addr;
		uint64_t to = t->v[i].addr + t->trap_len;

		if (to > addr + len)
			to = addr + len;
		if (from < to)
			fn(t, &t->v[i], from, to - from, addr, buf);
	}
}

static void patch_read(const struct trace_bpt *t, struct trace_bp *bp, uint64_t from, size_t n,
		       uint64_t addr, void *buf)
{
	memcpy((uint8_t *)buf + (from - addr), bp->orig + (from - bp->addr), n);
}

int trace_bpt_read(const struct trace_bpt *t, uint64_t addr, void *buf, size_t len)
{
	int r = t->ops->read(t->ctx, addr, buf, len);

	if (r < 0)
		return r;
	for_overlaps(t, addr, len, patch_read, buf);
	return 0;
}

static void save_written(const struct trace_bpt *t, struct trace_bp *bp, uint64_t from, size_t n,
			 uint64_t addr, void *buf)
{
	memcpy(bp->orig + (from - bp->addr), (const uint8_t *)buf + (from - addr), n);
}

static void keep_trap(const struct trace_bpt *t, struct trace_bp *bp, uint64_t from, size_t n,
		      uint64_t addr, void *buf)
{
	memcpy((uint8_t *)buf + (from - addr), t->trap + (from - bp->addr), n);
}

int trace_bpt_write(struct trace_bpt *t, uint64_t addr, const void *buf, size_t len)
{
	uint8_t stack[256];
	uint8_t *copy = len <= sizeof(stack) ? stack : malloc(len);
	int r;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, len);
	if (!t->suspended)
		for_overlaps(t, addr, len, keep_trap, copy);
	r = t->ops->write(t->ctx, addr, copy, len);
	if (r == 0)
		for_overlaps(t, addr, len, save_written, (void *)buf);
	if (copy != stack)
		free(copy);
	return r;
}

int trace_bpt_strip_copy(const struct trace_bpt *t, const struct trace_mem_ops *ops, void *ctx)
{
	int ret = 0;

	for (size_t i = 0; i < t->n; i++) {
		int r = ops->write(ctx, t->v[i].addr, t->v[i].orig, t->trap_len);

		if (r < 0 && ret == 0)
			ret = r;
	}
	return ret;
}

int trace_bpt_suspend(struct trace_bpt *t)
{
	if (t->suspended++)
		return 0;
	return trace_bpt_strip_copy(t, t->ops, t->ctx);
}

int trace_bpt_resume(struct trace_bpt *t)
{
	int ret = 0;

	if (!t->suspended || --t->suspended)
		return 0;
	for (size_t i = 0; i < t->n; i++) {
		int r = t->ops->write(t->ctx, t->v[i].addr, t->trap, t->trap_len);

		if (r < 0 && ret == 0)
			ret = r;
	}
	return ret;
}

void trace_bpt_forget(struct trace_bpt *t)
{
	t->n = 0;
	t->suspended = 0; /* a new image: nothing shares it */
}
