/* SPDX-License-Identifier: MIT */
/* One line per finished benchmark, for a stderr that is not a terminal
 * (progress.h). */
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
