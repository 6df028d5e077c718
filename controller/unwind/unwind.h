/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_UNWIND_H
#define BENCHTRAP_UNWIND_H

/*
 * Backtraces of a traced thread. Frames are found by libunwind-ptrace
 * (which reads the stopped thread's registers and memory) and named by libdw
 * (symbols, and source lines where debug information exists). Neither
 * library's types appear here. Nothing prints.
 */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define UNWIND_MAX_FRAMES 32

struct unwind_frame {
	uint64_t pc;	  /* the frame's pc (for callers: the return address) */
	uint64_t offset;  /* pc - symbol start, when 'func' is set */
	char func[128];	  /* symbol containing pc (raw name), or "": its first
			     127 bytes, see 'name' */
	const char *name; /* the whole raw name, from unwind_session_backtrace():
			     valid until that session is freed; else NULL */
	char module[160]; /* file the code comes from, or "" */
	char file[160];	  /* source file, or "" */
	int line;	  /* source line, or 0 */
};

/*
 * Unwind thread 'tid' of process 'pid', which must be in a ptrace stop, and
 * symbolize up to 'max' frames into 'frames', innermost first. Frames in
 * memory no module covers (code the controller injected) end the walk.
 * Returns -ESRCH when the thread is gone, -EIO when unwinding cannot start.
 */
int unwind_backtrace(pid_t pid, pid_t tid, struct unwind_frame *frames, size_t max,
		     size_t *ret_n);

/*
 * Many backtraces of one thread (stack sampling): the unwinder's address
 * space (with its cache of unwind tables) and the symbol tables are kept
 * from one backtrace to the next instead of read again each time, which
 * for frames in a large library costs tens of milliseconds. Valid while
 * the process's mappings do not change in ways that matter (code loaded
 * later is not named). unwind_session_new() returns NULL when out of
 * memory; a session's backtrace is unwind_backtrace()'s.
 */
struct unwind_session;
struct unwind_session *unwind_session_new(pid_t pid, pid_t tid);
int unwind_session_backtrace(struct unwind_session *s, struct unwind_frame *frames, size_t max,
			     size_t *ret_n);
void unwind_session_free(struct unwind_session *s);

/* A frame's function as people read it: the demangled name (C++, Rust),
 * to free, or NULL when 'func' is not mangled or is empty. */
char *unwind_frame_demangled(const struct unwind_frame *f);
/* A frame's raw name, whole when the frame has it ('name'), or 'func'. */
const char *unwind_frame_name(const struct unwind_frame *f);

/* Symbolize one address of process 'pid' (no unwinding). */
int unwind_symbolize(pid_t pid, uint64_t pc, struct unwind_frame *ret);
/* Symbolize n return addresses (each named by the call before it, at
 * pc - 1) of a process that may be gone, from a copy of its
 * /proc/PID/maps. -EINVAL when the maps cannot be read. */
int unwind_symbolize_maps(const char *maps, const uint64_t *pcs, size_t n,
			  struct unwind_frame *ret);

#endif
