/* SPDX-License-Identifier: MIT */
/*
 * A traced child's failure, built and put in words (failure.h).
 */
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"
#include "unwind/unwind.h"
#include "measure/failure.h"
#include "measure/measure.h"
#include "util/strutil.h"

bool measure_fatal_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE ||
	       sig == SIGABRT || sig == SIGSYS || sig == SIGTRAP;
}

void measure_failure_signal(struct trace_proc *p, const struct trace_event *ev,
			    struct trace_failure *f)
{
	size_t nf = 0;

	memset(f, 0, sizeof(*f));
	f->kind = TRACE_FAIL_SIGNAL;
	f->tid = ev->tid;
	f->sig = ev->sig;
	f->code = ev->code;
	f->addr = ev->addr;
	f->pc = ev->pc;
	if (unwind_backtrace(trace_pid(p), ev->tid, f->frames, UNWIND_MAX_FRAMES, &nf) == 0)
		f->nframes = nf;
}

void measure_failure_timeout(struct trace_proc *p, uint64_t timeout_ns, struct trace_failure *f)
{
	memset(f, 0, sizeof(*f));
	f->kind = TRACE_FAIL_TIMEOUT;
	f->timeout_ms = (int)(timeout_ns / 1000000 > INT_MAX ? INT_MAX : timeout_ns / 1000000);
	if (trace_stop(p) == 0) {
		size_t nf = 0;

		f->tid = trace_current_tid(p);
		if (unwind_backtrace(trace_pid(p), f->tid, f->frames, UNWIND_MAX_FRAMES, &nf) == 0)
			f->nframes = nf;
	}
}

char *measure_failure_words(const struct trace_failure *f, uint64_t timeout_ns)
{
	struct trace_failure *g = malloc(sizeof(*g));
	char *buf = malloc(8192), *out;

	if (!g || !buf) {
		free(g);
		free(buf);
		return NULL;
	}
	*g = *f;
	if (g->kind == TRACE_FAIL_TIMEOUT && timeout_ns)
		g->timeout_ms =
			(int)(timeout_ns / 1000000 > INT_MAX ? INT_MAX : timeout_ns / 1000000);
	trace_failure_format(g, buf, 8192);
	out = strdup(buf);
	free(g);
	free(buf);
	return out;
}

char *measure_failure_line(const struct trace_failure *f)
{
	char *buf = measure_failure_words(f, 0);
	size_t l = buf ? strlen(buf) : 0;

	/* The format ends in a newline after the last frame. */
	while (l && buf[l - 1] == '\n')
		buf[--l] = '\0';
	return buf;
}

void bench_result_fail_with(struct bench_result *res, const struct trace_failure *f)
{
	/* Failed even when it cannot be said (out of memory). */
	bench_result_fail(res, measure_failure_line(f));
}

void bench_result_fail(struct bench_result *res, char *msg)
{
	res->status = BENCH_FAILED;
	free(res->error);
	res->error = msg ? msg : strdup("failed");
}

void bench_result_fail_exit(struct bench_result *res, int code, const char *stderr_path,
			    char *(*said)(const char *path))
{
	char *last = !stderr_path ? NULL : said ? said(stderr_path) : str_tail_lines(stderr_path, 3);

	bench_result_fail(res, str_fmt("exited with status %d%s%s", code,
				       last ? "; its last words:" : "", last ? last : ""));
	free(last);
}
