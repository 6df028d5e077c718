/* SPDX-License-Identifier: MIT */
/* One line per finished benchmark, for a stderr that is not a terminal,
 * and observe's live line (progress.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats/stats.h"
#include "report/progress.h"

/* The headline in the result's unit: a duration carries its unit, a size
 * is what was allocated ("4.00 KiB allocated"), a count is followed by its
 * unit ("21,891 instructions"). */
static void headline(const struct bench_result *r, char *buf, size_t size)
{
	char v[48];

	if (stats_format_value(r->unit, r->value, v, sizeof(v)) < 0)
		snprintf(v, sizeof(v), "?");
	if (!r->unit || !strcmp(r->unit, "ns"))
		snprintf(buf, size, "%s", v);
	else if (!strcmp(r->unit, "bytes"))
		snprintf(buf, size, "%s allocated", v);
	else
		snprintf(buf, size, "%s %s", v, r->unit);
}

/* " ± 0.8%": half the 95% interval of the median, relative to it; "" when
 * there are too few samples for an interval to mean anything (as the
 * table's "-"), or no time to be relative to. */
static void spread(const struct bench_result *r, char *buf, size_t size)
{
	const struct stats_summary *s = &r->stats;
	double half;

	buf[0] = '\0';
	if (r->no_time || s->n < 5 || !(s->median > 0) || !isfinite(s->ci_low) ||
	    !isfinite(s->ci_high) || s->ci_high < s->ci_low)
		return;
	half = (s->ci_high - s->ci_low) / 2 / s->median * 100;
	snprintf(buf, size, " ± %.1f%%", half);
}

int report_progress_line(const struct bench_result *r, size_t k, size_t n, const char *side,
			 char **ret_line)
{
	const char *name = r->spec && r->spec->name ? r->spec->name : "?";
	char where[16] = "", figure[96], pm[32];
	char *line;
	int len;

	if (side)
		snprintf(where, sizeof(where), " (%s)", side);
	if (r->status != BENCH_OK) {
		const char *e = r->error ? r->error : "?";

		len = asprintf(&line, "[%zu/%zu] %s%s  failed: %.*s", k, n, name, where,
			       (int)strcspn(e, "\n"), e);
	} else {
		headline(r, figure, sizeof(figure));
		spread(r, pm, sizeof(pm));
		len = asprintf(&line, "[%zu/%zu] %s%s  %s%s", k, n, name, where, figure, pm);
	}
	if (len < 0)
		return -ENOMEM;
	*ret_line = line;
	return 0;
}

/* The time observed so far: "4.2 s", "12 min 05 s", "3 h 07 min". */
static void elapsed(int64_t ns, char *buf, size_t size)
{
	int64_t tenths = ns > 0 ? ns / 100000000 : 0, sec = tenths / 10;

	if (sec < 60)
		snprintf(buf, size, "%d.%d s", (int)sec, (int)(tenths % 10));
	else if (sec < 3600)
		snprintf(buf, size, "%d min %02d s", (int)(sec / 60), (int)(sec % 60));
	else
		snprintf(buf, size, "%lld h %02d min", (long long)(sec / 3600),
			 (int)(sec / 60 % 60));
}

int report_observe_progress(uint64_t calls, size_t funcs, int64_t elapsed_ns, char *buf,
			    size_t size)
{
	char count[32], t[40], line[128];
	int len;

	if (stats_format_count((double)calls, count, sizeof(count)) < 0)
		snprintf(count, sizeof(count), "%llu", (unsigned long long)calls);
	elapsed(elapsed_ns, t, sizeof(t));
	len = snprintf(line, sizeof(line), "observing: %s call%s of %zu function%s, %s", count,
		       calls == 1 ? "" : "s", funcs, funcs == 1 ? "" : "s", t);
	if (len < 0 || (size_t)len >= sizeof(line) || (size_t)len >= size)
		return -ENOBUFS;
	memcpy(buf, line, (size_t)len + 1);
	return 0;
}
