/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_TRACE_BPTABLE_H
#define BENCHTRAP_TRACE_BPTABLE_H

/*
 * The breakpoint table of one address space. It knows nothing of ptrace:
 * memory is reached through a pair of callbacks, so that the table can be
 * tested over a plain array. Breakpoints are reference counted; the bytes a
 * trap replaced are kept here and patched back into every read, and writes
 * over a trap update them instead of removing the trap.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch.h"

struct trace_mem_ops {
	/* Raw memory access: 0 or a negative errno. */
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	int (*write)(void *ctx, uint64_t addr, const void *buf, size_t len);
};

struct trace_bp {
	uint64_t addr;
	unsigned refs;
	uint8_t orig[ARCH_TRAP_MAX]; /* the bytes under the trap */
};

struct trace_bpt {
	struct trace_bp *v; /* sorted by addr */
	size_t n, cap;
	const struct trace_mem_ops *ops;
	void *ctx;
	const uint8_t *trap; /* trap instruction bytes (arch_trap_insn by default) */
	size_t trap_len;
	unsigned suspended; /* trace_bpt_suspend() calls not yet resumed */
};

void trace_bpt_init(struct trace_bpt *t, const struct trace_mem_ops *ops, void *ctx);
void trace_bpt_fini(struct trace_bpt *t);

/* Add a reference; the first one saves the original bytes and writes the
 * trap. -EEXIST when the trap would overlap another breakpoint's. */
int trace_bpt_insert(struct trace_bpt *t, uint64_t addr);
/* Drop a reference; the last one writes the original bytes back. -ENOENT. */
int trace_bpt_remove(struct trace_bpt *t, uint64_t addr);
const struct trace_bp *trace_bpt_find(const struct trace_bpt *t, uint64_t addr);

/* Memory access through the table: reads show original bytes, writes keep
 * traps in place (and update the saved originals). */
int trace_bpt_read(const struct trace_bpt *t, uint64_t addr, void *buf, size_t len);
int trace_bpt_write(struct trace_bpt *t, uint64_t addr, const void *buf, size_t len);

/* Write the original bytes of every breakpoint through other memory ops
 * (a forked child's copy of the address space). The table is unchanged. */
int trace_bpt_strip_copy(const struct trace_bpt *t, const struct trace_mem_ops *ops, void *ctx);
/*
 * Take every trap out of memory, the table unchanged (a vfork child shares
 * the memory until it execs: it must meet none). While suspended, inserting
 * and removing update the table alone, and writes through it go through
 * unchanged. Nested calls count; the last trace_bpt_resume() puts every
 * trap of the table back. Return the first write error, or 0.
 */
int trace_bpt_suspend(struct trace_bpt *t);
int trace_bpt_resume(struct trace_bpt *t);

/* Forget every breakpoint without touching memory (after exec). */
void trace_bpt_forget(struct trace_bpt *t);

#endif
