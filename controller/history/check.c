/* SPDX-License-Identifier: MIT */
/* history check: each series' change points, and whether the newest is a
 * regression (history.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "history/history.h"

void history_findings_free(struct history_finding *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].changes);
	free(v);
}

int history_check(const struct history_series *v, size_t n, double threshold,
		  struct history_finding **ret)
{
	struct history_finding *f = calloc(n + 1, sizeof(*f));
	double *x = NULL;
	size_t cap = 0;

	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct history_series *s = &v[i];
		struct changepoint_opts o;
		int r;

		if (s->n > cap) {
			free(x);
			cap = s->n;
			x = malloc(cap * sizeof(*x));
			if (!x) {
				history_findings_free(f, i);
				return -ENOMEM;
			}
		}
		for (size_t j = 0; j < s->n; j++)
			x[j] = s->points[j].ok ? s->points[j].value : NAN;
		changepoint_opts_default(&o);
		o.exact = results_instrument_exact(s->instrument);
		f[i].series = s;
		r = changepoints_find(x, s->n, &o, &f[i].changes, &f[i].nchanges);
		if (r < 0) {
			free(x);
			history_findings_free(f, i + 1);
			return r;
		}
		if (f[i].nchanges) {
			const struct changepoint *c = &f[i].changes[f[i].nchanges - 1];

			f[i].regressed = isfinite(c->step) && c->step > threshold;
		}
	}
	free(x);
	*ret = f;
	return 0;
}
