// SPDX-License-Identifier: MIT
/* The breakpoint table over a fake memory: a 256-byte array at 0x1000. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "trace/bptable.h"

#define BASE 0x1000
#define SIZE 256

struct fake {
	uint8_t mem[SIZE];
	int writes;
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;

	if (addr < BASE || addr + len > BASE + SIZE)
		return -EFAULT;
	memcpy(buf, f->mem + (addr - BASE), len);
	return 0;
}

static int fake_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	struct fake *f = ctx;

	if (addr < BASE || addr + len > BASE + SIZE)
		return -EFAULT;
	memcpy(f->mem + (addr - BASE), buf, len);
	f->writes++;
	return 0;
}

static const struct trace_mem_ops ops = { fake_read, fake_write };

static struct fake fake;
static struct trace_bpt bpt;

static int setup(void **state)
{
	for (int i = 0; i < SIZE; i++)
		fake.mem[i] = (uint8_t)(i * 7 + 1);
	fake.writes = 0;
	trace_bpt_init(&bpt, &ops, &fake);
	return 0;
}

static int teardown(void **state)
{
	trace_bpt_fini(&bpt);
	return 0;
}

static void test_insert_remove(void **state)
{
	uint8_t orig = fake.mem[0x10];

	assert_int_equal(trace_bpt_insert(&bpt, BASE + 0x10), 0);
	assert_memory_equal(&fake.mem[0x10], arch_trap_insn, arch_trap_len);
	assert_non_null(trace_bpt_find(&bpt, BASE + 0x10));
	assert_null(trace_bpt_find(&bpt, BASE + 0x11));
	assert_int_equal(trace_bpt_remove(&bpt, BASE + 0x10), 0);
	assert_int_equal(fake.mem[0x10], orig);
	assert_null(trace_bpt_find(&bpt, BASE + 0x10));
	assert_int_equal(trace_bpt_remove(&bpt, BASE + 0x10), -ENOENT);
	assert_int_equal(trace_bpt_insert(&bpt, 0x10), -EFAULT);
	assert_null(trace_bpt_find(&bpt, 0x10));
}

static void test_refcount(void **state)
{
	uint8_t orig = fake.mem[0x20];

	assert_int_equal(trace_bpt_insert(&bpt, BASE + 0x20), 0);
	assert_int_equal(trace_bpt_insert(&bpt, BASE + 0x20), 0);
	assert_int_equal(fake.writes, 1);
	assert_int_equal(trace_bpt_remove(&bpt, BASE + 0x20), 0);
	assert_memory_equal(&fake.mem[0x20], arch_trap_insn, arch_trap_len);
	assert_int_equal(trace_bpt_remove(&bpt, BASE + 0x20), 0);
	assert_int_equal(fake.mem[0x20], orig);
}

static void test_reads_hide_traps(void **state)
{
	uint8_t before[SIZE], after[SIZE];
	uint64_t addrs[] = { BASE + 0x40, BASE, BASE + SIZE - 1, BASE + 0x41, BASE + 0x80 };

	memcpy(before, fake.mem, SIZE);
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		int r = trace_bpt_insert(&bpt, addrs[i]);

		/* Adjacent traps overlap when a trap is longer than a byte. */
		assert_true(r == 0 || (r == -EEXIST && arch_trap_len > 1));
	}
	assert_memory_not_equal(before, fake.mem, SIZE);
	assert_int_equal(trace_bpt_read(&bpt, BASE, after, SIZE), 0);
	assert_memory_equal(before, after, SIZE);
	/* Every window, including ones starting or ending inside a trap. */
	for (size_t start = 0; start < SIZE; start += 3) {
		for (size_t len = 1; start + len <= SIZE; len += 5) {
			assert_int_equal(trace_bpt_read(&bpt, BASE + start, after, len), 0);
			assert_memory_equal(before + start, after, len);
		}
	}
}

static void test_writes_keep_traps(void **state)
{
	uint8_t data[32], back[32];

	assert_int_equal(trace_bpt_insert(&bpt, BASE + 0x50), 0);
	memset(data, 0x90, sizeof(data));
	assert_int_equal(trace_bpt_write(&bpt, BASE + 0x48, data, sizeof(data)), 0);
	/* Memory holds the trap, reads show what was written. */
	assert_memory_equal(&fake.mem[0x50], arch_trap_insn, arch_trap_len);
	assert_int_equal(trace_bpt_read(&bpt, BASE + 0x48, back, sizeof(back)), 0);
	assert_memory_equal(data, back, sizeof(data));
	/* Removing it restores the newly written byte. */
	assert_int_equal(trace_bpt_remove(&bpt, BASE + 0x50), 0);
	assert_int_equal(fake.mem[0x50], 0x90);
}

static void test_strip_copy_and_forget(void **state)
{
	struct fake copy;
	uint8_t orig[SIZE];

	memcpy(orig, fake.mem, SIZE);
	assert_int_equal(trace_bpt_insert(&bpt, BASE + 0x30), 0);
	assert_int_equal(trace_bpt_insert(&bpt, BASE + 0x90), 0);
	memcpy(&copy, &fake, sizeof(copy)); /* fork */
	assert_int_equal(trace_bpt_strip_copy(&bpt, &ops, &copy), 0);
	assert_memory_equal(copy.mem, orig, SIZE);
	assert_memory_equal(&fake.mem[0x30], arch_trap_insn, arch_trap_len);
	trace_bpt_forget(&bpt); /* exec */
	assert_null(trace_bpt_find(&bpt, BASE + 0x30));
	assert_int_equal(trace_bpt_remove(&bpt, BASE + 0x90), -ENOENT);
}

/* A vfork child shares the memory: suspended, memory holds no trap while
 * the table keeps every breakpoint; changes meanwhile reach the table
 * alone; nested suspends need as many resumes; resuming puts back every
 * trap of the table as it then is. */
static void test_suspend_resume(void **state)
{
	uint8_t orig[SIZE];

	memcpy(orig, fake.mem, SIZE);
	assert_int_equal(trace_bpt_insert(&bpt, BASE + 0x30), 0);
	assert_int_equal(trace_bpt_insert(&bpt, BASE + 0x90), 0);
	assert_int_equal(trace_bpt_suspend(&bpt), 0);
	assert_memory_equal(fake.mem, orig, SIZE);
	assert_non_null(trace_bpt_find(&bpt, BASE + 0x30));
	/* Inserted and removed while suspended: no trap written. */
	assert_int_equal(trace_bpt_insert(&bpt, BASE + 0x50), 0);
	assert_int_equal(trace_bpt_remove(&bpt, BASE + 0x90), 0);
	assert_memory_equal(fake.mem, orig, SIZE);
	/* A second vfork child: the first resume keeps the traps out. */
	assert_int_equal(trace_bpt_suspend(&bpt), 0);
	assert_int_equal(trace_bpt_resume(&bpt), 0);
	assert_memory_equal(fake.mem, orig, SIZE);
	assert_int_equal(trace_bpt_resume(&bpt), 0);
	assert_memory_equal(&fake.mem[0x30], arch_trap_insn, arch_trap_len);
	assert_memory_equal(&fake.mem[0x50], arch_trap_insn, arch_trap_len);
	assert_memory_equal(&fake.mem[0x90], &orig[0x90], arch_trap_len);
	/* Removing now writes the original back, as it always did. */
	assert_int_equal(trace_bpt_remove(&bpt, BASE + 0x50), 0);
	assert_memory_equal(&fake.mem[0x50], &orig[0x50], arch_trap_len);
	/* A resume without a suspend changes nothing. */
	assert_int_equal(trace_bpt_resume(&bpt), 0);
	assert_memory_equal(&fake.mem[0x30], arch_trap_insn, arch_trap_len);
}

static void test_many_sorted(void **state)
{
	for (int i = SIZE - 8; i >= 0; i -= 8)
		assert_int_equal(trace_bpt_insert(&bpt, BASE + (uint64_t)i), 0);
	for (int i = 0; i < SIZE; i += 8)
		assert_non_null(trace_bpt_find(&bpt, BASE + (uint64_t)i));
	for (int i = 0; i < SIZE; i += 16)
		assert_int_equal(trace_bpt_remove(&bpt, BASE + (uint64_t)i), 0);
	for (int i = 0; i < SIZE; i += 8)
		assert_true((trace_bpt_find(&bpt, BASE + (uint64_t)i) != NULL) == (i % 16 != 0));
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_insert_remove),	       T(test_refcount),
		T(test_reads_hide_traps),      T(test_writes_keep_traps),
		T(test_strip_copy_and_forget), T(test_many_sorted),
		T(test_suspend_resume),
	};

	return cmocka_run_group_tests_name("trace-bptable", tests, NULL, NULL);
}
