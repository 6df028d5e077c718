/* SPDX-License-Identifier: MIT */
/*
 * --profile DIR (profile.h): stacks of a benchmark, recorded in a pass of
 * their own once it was measured, so that nothing of it falls in a timed
 * interval.
 *
 * walltime: a fresh child, as measuring had, with the harness in place;
 * the harness is started calling the benchmark a practically endless
 * number of times (its second pass, never reached, calls the empty
 * function), and the controller
 *
 *     resume ─ wait PROFILE_PERIOD_US ─ stop ─ unwind the calling thread ─ resume ...
 *
 * until PROFILE_MAX_SAMPLES stacks or PROFILE_BUDGET_NS have passed, then
 * kills the child. The unwinder (libunwind-ptrace, DWARF call frame
 * information) ends each walk at the injected harness, whose page no
 * module covers: what is left is the benchmark's function and what it
 * called. A stop that falls in the harness's own loop (code no module
 * covers, so no frame at all) is not recorded.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "arch/harness.h"
#include "elf/elf.h"
#include "report/flamegraph.h"
#include "trace/trace.h"
#include "unwind/unwind.h"
#include "util/atomic.h"
#include "util/strutil.h"
#include "measure/harness.h"
#include "measure/profile.h"

void measure_profile_write(struct folded *f, const char *dir, size_t index, const char *unit,
			   struct bench_result *res)
{
	char base[96], title[256];
	struct {
		const char *ext;
		char *dest;
	} files[] = { { "folded", res->profile_folded }, { "svg", res->profile_svg } };

	report_profile_basename(res->spec->name, base, sizeof(base));
	snprintf(title, sizeof(title), "%s (%s)", res->spec->name, res->instrument);
	for (size_t i = 0; i < 2; i++) {
		char path[MEASURE_PROFILE_PATH], *name;
		int r;

		if (snprintf(path, sizeof(path), "%s/%03zu-%s.%s", dir, index, base,
			     files[i].ext) >= (int)sizeof(path)) {
			bench_result_diagnose(res,
					      "not profiled: the directory's name is too long");
			return;
		}
		name = path + strlen(dir) + 1;
		r = report_profile_write(f, dir, name, i == 0 ? NULL : title, unit);
		if (r < 0) {
			bench_result_diagnose(res, "not profiled: cannot write %s: %s", path,
					      atomic_strerror(r));
			bench_result_unwritten(res, path, r);
			continue;
		}
		memcpy(files[i].dest, path, strlen(path) + 1);
	}
}

/* One stack: frames[0..n) innermost first, the benchmark's function the
 * outermost unless the walk was cut at PROFILE_MAX_FRAMES. */
static int add_stack(struct folded *f, const struct unwind_frame *frames, size_t n, bool cut)
{
	const char *names[PROFILE_MAX_FRAMES + 1];
	char *owned[PROFILE_MAX_FRAMES] = { 0 };
	char unknown[PROFILE_MAX_FRAMES][48];
	size_t k = 0;
	int r;

	if (cut)
		names[k++] = "[deeper]";
	for (size_t i = n; i-- > 0;) {
		const struct unwind_frame *fr = &frames[i];

		if (fr->func[0]) {
			owned[i] = unwind_frame_demangled(fr);
			names[k++] = owned[i] ? owned[i] : unwind_frame_name(fr);
		} else {
			snprintf(unknown[i], sizeof(unknown[i]), "[%s]",
				 fr->module[0] ? str_basename(fr->module) : "unknown");
			names[k++] = unknown[i];
		}
	}
	r = folded_add(f, names, k, 1);
	for (size_t i = 0; i < n; i++)
		free(owned[i]);
	return r;
}

/*
 * Start the endless harness call: the benchmark at fn in the first pass.
 * It returns, if ever, to a breakpoint on an empty instruction of 'page'
 * away from the empty function; *ret_end is that address.
 */
static int start_loop(struct harness *c, uint64_t fn, uint64_t page, pid_t tid, uint64_t *ret_end)
{
	uint64_t empty = page + (fn & (PAGE - 1));
	uint64_t off = ((fn & (PAGE - 1)) + PAGE / 2) % PAGE;
	uint64_t end = page + off - off % arch_harness_empty_insn_len;
	uint64_t args[6] = {
		fn, empty, UINT64_C(1) << 62, c->data + DATA_ARGS, c->clock, c->data + DATA_OUT
	};
	uint64_t push_addr, push_val;
	struct arch_regs regs;
	bool push;
	int r;

	r = trace_get_regs(c->p, tid, &regs);
	if (r == 0)
		r = arch_setup_call(&regs, c->harness, end, args, 6, &push, &push_addr, &push_val);
	if (r == 0 && push)
		r = trace_write(c->p, push_addr, &push_val, sizeof(push_val));
	if (r == 0)
		r = trace_set_regs(c->p, tid, &regs);
	if (r == 0)
		r = trace_bp_insert(c->p, end);
	if (r == 0)
		*ret_end = end;
	return r;
}

static const char *signame(int sig)
{
	const char *s = sigabbrev_np(sig);

	return s ? s : "?";
}

/* Sample the running loop until done; *ret_outside counts the stops that
 * fell in the harness's own code (no frame of a module). */
static int sample_loop(struct harness *c, pid_t tid, uint64_t end, struct folded *out,
		       size_t *ret_outside, char **ret_why)
{
	struct unwind_frame *frames = calloc(PROFILE_MAX_FRAMES, sizeof(*frames));
	struct unwind_session *us = unwind_session_new(trace_pid(c->p), tid);
	uint64_t stop_at = measure_now_ns() + PROFILE_BUDGET_NS;
	size_t taken = 0;
	char where[192] = "";
	int r;

	if (!frames || !us) {
		free(frames);
		unwind_session_free(us);
		return -ENOMEM;
	}
	r = trace_resume(c->p);
	while (r == 0 && taken < PROFILE_MAX_SAMPLES && measure_now_ns() < stop_at) {
		struct trace_event ev;
		size_t n = 0;

		r = trace_wait(c->p, PROFILE_PERIOD_US / 1000 ? PROFILE_PERIOD_US / 1000 : 1, &ev);
		if (r == 0) {
			switch (ev.kind) {
			case TRACE_EV_BREAKPOINT:
				if (ev.addr == end) {
					*ret_why = strdup("the loop ended");
					r = 1;
					break;
				}
				r = trace_resume(c->p);
				continue;
			case TRACE_EV_SIGNAL:
				/* The program's own (a handler it set, or the
				 * signal's default action) as in any run; where
				 * it came, should it end the child. */
				where[0] = '\0';
				if (unwind_backtrace(trace_pid(c->p), ev.tid, frames, 1, &n) == 0 &&
				    n == 1 && frames[0].func[0])
					snprintf(where, sizeof(where), ", in %s+0x%" PRIx64,
						 frames[0].func, frames[0].offset);
				r = trace_resume(c->p);
				continue;
			case TRACE_EV_EXITED:
				if (asprintf(ret_why, "the child exited with status %d during it",
					     ev.code) < 0)
					*ret_why = NULL;
				r = 1;
				break;
			case TRACE_EV_KILLED:
				if (asprintf(ret_why, "the child was killed by SIG%s during it%s",
					     signame(ev.sig), where) < 0)
					*ret_why = NULL;
				r = 1;
				break;
			default:
				if (asprintf(ret_why, "the child executed another program") < 0)
					*ret_why = NULL;
				r = 1;
				break;
			}
			break;
		}
		if (r != -ETIMEDOUT)
			break;
		r = trace_stop(c->p);
		if (r < 0)
			break;
		taken++;
		if (unwind_session_backtrace(us, frames, PROFILE_MAX_FRAMES, &n) < 0)
			n = 0;
		/* The harness's own frame is cut off: the benchmark is the
		 * root. Its page may lie in a library's range, whose name
		 * the walk then gave it ([libgcc_s.so.1] at the root of C++
		 * profiles). */
		while (n > 0 && (harness_owns(c, frames[n - 1].pc) ||
				 (!frames[n - 1].func[0] && !frames[n - 1].module[0])))
			n--;
		if (n > 0) {
			/* A walk cut short has lost the benchmark's frame. */
			bool cut = n == PROFILE_MAX_FRAMES;

			r = add_stack(out, frames, n, cut);
			if (r < 0)
				break;
		} else {
			(*ret_outside)++;
		}
		r = trace_resume(c->p);
	}
	free(frames);
	unwind_session_free(us);
	return r > 0 ? 0 : r;
}

void measure_profile_walltime(const struct measure_target *t, const struct bench_spec *s,
			      const struct measure_plan *plan, const char *dir, size_t index,
			      struct bench_result *res)
{
	struct bench_result scratch = { .spec = s };
	struct folded stacks = { 0 };
	struct harness c = { 0 };
	struct trace_failure f;
	uint64_t fn, page, end;
	size_t outside = 0;
	char *why = NULL, *ended = NULL;
	bool no_vdso;
	pid_t tid;
	int r;

	if (s->threads > 1) {
		bench_result_diagnose(res, "not profiled: --profile samples benchmarks on one "
					   "thread only");
		return;
	}
	r = harness_start(t, measure_now_ns() + plan->timeout_ns, plan->timeout_ns, &c, &no_vdso,
			  &why);
	if (r < 0)
		goto fail;
	r = harness_address(&c, s, &scratch, &fn, &f);
	if (r < 0) {
		why = scratch.error	     ? strdup(scratch.error)
		      : r == -TRACE_E_FAILED ? harness_failure(&f, plan->timeout_ns)
					     : strdup(trace_strerror(r));
		goto fail;
	}
	tid = trace_current_tid(c.p);
	r = harness_map_empty(&c, fn, &page);
	if (r == 0)
		r = harness_set_args(&c, s);
	if (r == 0)
		r = start_loop(&c, fn, page, tid, &end);
	if (r == 0)
		r = sample_loop(&c, tid, end, &stacks, &outside, &ended);
	if (r < 0) {
		why = strdup(trace_strerror(r));
		goto fail;
	}
	if (ended && stacks.total == 0) {
		why = ended;
		ended = NULL;
		goto fail;
	}
	if (ended)
		bench_result_diagnose(
			res, "profile: %s; the profile has the %" PRIu64 " stacks recorded before",
			ended, stacks.total);
	if (stacks.total == 0) {
		bench_result_diagnose(res,
				      "not profiled: none of %zu stops of the profiling pass fell "
				      "in the benchmark's function, or none could be unwound",
				      outside);
		goto out;
	}
	measure_profile_write(&stacks, dir, index, "samples", res);
	goto out;
fail:
	bench_result_diagnose(res, "not profiled: %s", why ? why : "out of memory");
out:
	free(why);
	free(ended);
	free(scratch.error);
	folded_free(&stacks);
	harness_free(&c);
}
