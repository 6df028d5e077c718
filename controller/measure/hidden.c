// SPDX-License-Identifier: MIT
/*
 * Diagnostics of what a walltime figure hides (docs/run.md, "Diagnostics
 * and failures"): the time a benchmark spends in the kernel and the system
 * calls it makes, and the ptrace stops that fall inside its timed calls
 * when it creates threads or processes or receives signals. The figures
 * are gathered by walltime.c; the rules and the words are here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"
#include "measure/measure.h"

double measure_kernel_share(uint64_t stime_ticks, uint64_t cpu_ticks, long ticks_per_s,
			    double timed_ns)
{
	double stime_ns;

	/* Below MEASURE_KERNEL_MIN_TICKS, a tick either way moves the share
	 * by more than the threshold is wide. */
	if (cpu_ticks < MEASURE_KERNEL_MIN_TICKS || ticks_per_s <= 0 || !(timed_ns > 0))
		return NAN;
	stime_ns = (double)stime_ticks * 1e9 / (double)ticks_per_s;
	return stime_ns >= timed_ns ? 1 : stime_ns / timed_ns;
}

/* "getppid ×1, getpid ×0.5" over calls: the most frequent first, at most
 * four, then "…". */
static void syscall_list(const struct trace_syscall_counts *sc, uint64_t calls, char *buf,
			 size_t size)
{
	bool used[TRACE_SYSCALL_NR_MAX] = { false };
	size_t len = 0;

	buf[0] = '\0';
	for (int k = 0; k < 5; k++) {
		long best = -1;
		char name[64];

		for (long nr = 0; nr < TRACE_SYSCALL_NR_MAX; nr++)
			if (sc->count[nr] && !used[nr] &&
			    (best < 0 || sc->count[nr] > sc->count[best]))
				best = nr;
		if (best < 0)
			break;
		if (len >= size)
			break;
		if (k == 4) {
			snprintf(buf + len, size - len, ", …");
			break;
		}
		used[best] = true;
		len += (size_t)snprintf(buf + len, size - len, "%s%s ×%.3g", k ? ", " : "",
					trace_syscall_name(sc->arch, best, name, sizeof(name)),
					(double)sc->count[best] / (double)calls);
	}
}

char *measure_kernel_note(double share, const struct trace_syscall_counts *sc, uint64_t calls)
{
	double per_call = sc && calls ? (double)sc->total / (double)calls : NAN;
	char list[256] = "", head[64];
	char *s = NULL;
	int r;

	if (!(share >= MEASURE_KERNEL_MIN) && !(per_call >= MEASURE_SYSCALLS_MIN))
		return NULL;
	snprintf(head, sizeof(head), "spent %.0f%% of its time in the kernel", 100 * share);
	if (isnan(per_call)) {
		r = asprintf(&s, "%s (its system calls were not counted)", head);
	} else if (sc->total == 0) {
		r = asprintf(&s, "%s, with no system call: page faults or other traps", head);
	} else {
		syscall_list(sc, calls, list, sizeof(list));
		if (isnan(share))
			r = asprintf(&s,
				     "made %.3g system call%s per call (%s): its time includes "
				     "the kernel's",
				     per_call, per_call == 1 ? "" : "s", list);
		else
			r = asprintf(&s, "%s: %.3g system call%s per call (%s)", head, per_call,
				     per_call == 1 ? "" : "s", list);
	}
	return r < 0 ? NULL : s;
}

char *measure_events_note(const struct trace_call_counts *n, uint64_t calls)
{
	const struct {
		unsigned long count;
		const char *verb, *noun;
	} what[] = {
		{ n->clones, "created", "thread" },
		{ n->signals, "received", "signal" },
		{ n->forks, "forked", "time" },
	};
	char buf[256];
	size_t len = 0, k = 0, parts = 0;
	char *s;

	if (calls == 0)
		return NULL;
	for (size_t i = 0; i < sizeof(what) / sizeof(what[0]); i++)
		parts += what[i].count > 0;
	if (!parts)
		return NULL;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(what) / sizeof(what[0]); i++) {
		double per_call = (double)what[i].count / (double)calls;

		if (!what[i].count)
			continue;
		if (k)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s",
						k + 1 == parts ? " and " : ", ");
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s %.3g %s%s", what[i].verb,
					per_call, what[i].noun, per_call == 1 ? "" : "s");
		k++;
	}
	if (asprintf(&s,
		     "%s per call: each costs a ptrace stop inside the timed interval (tens of "
		     "µs on a VM); the figure is inflated",
		     buf) < 0)
		return NULL;
	return s;
}
