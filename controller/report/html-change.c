/* SPDX-License-Identifier: MIT */
/*
 * The plots of `benchtrap report` over two files and over time
 * (html-plot.h): a comparison's changes with their intervals, and a
 * history's series with its change points.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "stats/stats.h"
#include "util/strutil.h"
#include "report/report.h"
#include "report/html.h"
#include "report/html-plot.h"

/* ---- comparisons -------------------------------------------------------- */

#define CW 260 /* a row's interval plot */

/* Half the width of the change axis, as a fraction: the 95th percentile
 * of how far the pairs' intervals reach, at least twice the threshold. */
static double change_extent(const struct results_comparison *c)
{
	double *e = calloc(c->n + 1, sizeof(*e)), d = 2 * c->threshold, v[16], step;
	size_t m = 0;

	for (size_t i = 0; e && i < c->n; i++) {
		const struct results_pair *p = &c->pairs[i];
		double x = p->has_ratio ? fabs(p->ratio - 1) : 0;

		if (p->has_interval)
			x = fmax(x, fmax(fabs(p->ratio_low - 1), fabs(p->ratio_high - 1)));
		if (p->has_ratio && isfinite(x))
			e[m++] = x;
	}
	if (m) {
		qsort(e, m, sizeof(*e), html_cmp_double);
		d = fmax(d, e[m < 20 ? m - 1 : (size_t)(0.95 * (double)(m - 1))] * 1.1);
	}
	free(e);
	d = fmax(d, 0.01);
	if (report_html_ticks(-d, d, 5, v, 16, &step))
		d = ceil(d / step - 1e-9) * step;
	return d;
}

static void fmt_pct(double ratio, char *buf, size_t size)
{
	snprintf(buf, size, "%+.1f%%", (ratio - 1) * 100);
}

static void change_row_svg(FILE *o, const struct results_pair *p, const struct frame *f, double t)
{
	char a[32], b[32], r[32];

	fprintf(o,
		"<svg class=\"cirow\" viewBox=\"0 0 %d 22\" role=\"img\"><rect class=\"band\" "
		"x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"22\"/><path class=\"thr\" "
		"d=\"M%.1f 0V22M%.1f 0V22\"/><path class=\"zero\" d=\"M%.1f 0V22\"/>",
		CW, html_fx(f, -t), html_fx(f, t) - html_fx(f, -t), html_fx(f, -t), html_fx(f, t),
		html_fx(f, 0));
	if (p->has_interval) {
		double lo = fmax(p->ratio_low - 1, f->dlo), hi = fmin(p->ratio_high - 1, f->dhi);

		fprintf(o, "<path class=\"civ\" d=\"M%.1f 11H%.1f\"/>", html_fx(f, lo),
			html_fx(f, hi));
		if (p->ratio_low - 1 < f->dlo)
			fprintf(o, "<path class=\"clip\" d=\"M%.1f 11l6 -5v10z\"/>", f->x0 - 2);
		if (p->ratio_high - 1 > f->dhi)
			fprintf(o, "<path class=\"clip\" d=\"M%.1f 11l-6 -5v10z\"/>", f->x1 + 2);
	}
	if (p->has_ratio && isfinite(p->ratio))
		fprintf(o, "<circle class=\"dot\" cx=\"%.1f\" cy=\"11\" r=\"4\"/>",
			html_fx(f, fmin(fmax(p->ratio - 1, f->dlo), f->dhi)));
	fmt_pct(p->ratio, r, sizeof(r));
	fmt_pct(p->ratio_low, a, sizeof(a));
	fmt_pct(p->ratio_high, b, sizeof(b));
	if (p->has_interval)
		fprintf(o, "<title>change %s, interval %s … %s</title>", r, a, b);
	else if (p->has_ratio)
		fprintf(o, "<title>change %s</title>", r);
	fputs("</svg>", o);
}

static void cell_value(FILE *o, const struct results_bench *b, const char *unit)
{
	char v[64];

	if (!b)
		snprintf(v, sizeof(v), "–");
	else if (!b->ok)
		snprintf(v, sizeof(v), "%s",
			 b->status == RESULTS_STATUS_NO_CALLS ? "no calls"
							      : results_status_name(b->status));
	else
		html_fmt_value(b->value, unit, v, sizeof(v));
	fprintf(o, "<td class=\"num\">%s</td>", v);
}

static void compare_head(FILE *o, const struct results_comparison *c)
{
	static const enum results_verdict order[] = { RESULTS_REGRESSED, RESULTS_IMPROVED,
						      RESULTS_UNCHANGED, RESULTS_INCONCLUSIVE,
						      RESULTS_FAILED,	 RESULTS_NEW,
						      RESULTS_MISSING };
	char buf[512];

	report_compare_summary(c, buf, sizeof(buf));
	fputs("<p class=\"summary\">", o);
	html_esc(o, buf);
	fputs("</p>\n<p class=\"counts\">", o);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (c->counts[order[i]])
			fprintf(o, "<span class=\"badge v-%s\">%zu %s</span> ",
				results_verdict_name(order[i]), c->counts[order[i]],
				results_verdict_name(order[i]));
	fprintf(o, "<span class=\"muted\">threshold %g%%, %g%% intervals</span></p>\n",
		c->threshold * 100, c->confidence * 100);
	for (size_t i = 0; i < c->nwarnings; i++) {
		fputs("<p class=\"warn\">", o);
		html_esc(o, c->warnings[i]);
		fputs("</p>\n", o);
	}
	for (size_t i = 0; i < c->nnotes; i++) {
		fputs("<p class=\"note\">", o);
		html_esc(o, c->notes[i]);
		fputs("</p>\n", o);
	}
}

int report_html_comparison(FILE *o, const struct results_comparison *c)
{
	double d = change_extent(c), t = c->threshold;
	struct frame f = { .x0 = 22, .x1 = CW - 22, .dlo = -d, .dhi = d };
	struct tick xt[16];
	size_t nx = html_linear_ticks(-d, d, 5, 0.01, xt, 16);
	bool mixed = false;

	for (size_t i = 1; i < c->n; i++)
		mixed |= strcmp(c->pairs[i].instrument, c->pairs[0].instrument) != 0;
	compare_head(o, c);
	fprintf(o,
		"<p class=\"muted\">Each row draws the change of head against base and its "
		"%g%% interval on one scale, ±%g%%; the shaded band is the threshold, ±%g%%. "
		"An arrow: the interval reaches beyond the scale.</p>\n"
		"<table class=\"cmp\" data-kind=\"comparison\" data-n=\"%zu\" "
		"data-threshold=\"%g\"><thead><tr><th>benchmark</th><th class=\"num\">base</th>"
		"<th class=\"num\">head</th><th class=\"num\">change</th><th class=\"civ\">"
		"<svg class=\"cirow\" viewBox=\"0 0 %d 22\" role=\"img\" aria-label=\"scale of "
		"the change\">",
		c->confidence * 100, d * 100, t * 100, c->n, t, CW);
	for (size_t i = 0; i < nx; i++)
		fprintf(o, "<text class=\"xt\" x=\"%.1f\" y=\"15\">%s%s%%</text>",
			html_fx(&f, xt[i].at), xt[i].at > 0 ? "+" : "", xt[i].label);
	fputs("</svg></th><th>verdict</th><th>note</th></tr></thead><tbody>\n", o);
	for (size_t i = 0; i < c->n; i++) {
		const struct results_pair *p = &c->pairs[i];
		char ch[32] = "–";

		fprintf(o, "<tr class=\"v-%s\" data-kind=\"change\" data-bench=\"",
			results_verdict_name(p->verdict));
		html_esc(o, p->name);
		fputs("\" data-instrument=\"", o);
		html_esc(o, p->instrument);
		fprintf(o, "\" data-verdict=\"%s\"", results_verdict_name(p->verdict));
		if (p->has_ratio)
			html_attr_num(o, "data-ratio", p->ratio);
		if (p->has_interval) {
			html_attr_num(o, "data-low", p->ratio_low);
			html_attr_num(o, "data-high", p->ratio_high);
		}
		fputs("><td class=\"name\">", o);
		html_esc(o, p->name);
		if (mixed) {
			fputs(" <small>(", o);
			html_esc(o, p->instrument);
			fputs(")</small>", o);
		}
		fputs("</td>", o);
		cell_value(o, p->base, p->unit);
		cell_value(o, p->head, p->unit);
		if (p->has_ratio)
			fmt_pct(p->ratio, ch, sizeof(ch));
		fprintf(o, "<td class=\"num\">%s</td><td class=\"civ\">", ch);
		change_row_svg(o, p, &f, t);
		fprintf(o, "</td><td><span class=\"badge\">%s</span></td><td class=\"note\">",
			results_verdict_name(p->verdict));
		html_esc(o, p->note);
		fputs("</td></tr>\n", o);
	}
	fputs("</tbody></table>\n", o);
	return 0;
}

/* ---- a history's series ------------------------------------------------- */

static void point_label(const struct history_point *p, char *buf, size_t size)
{
	if (p->commit)
		snprintf(buf, size, "%.7s", p->commit);
	else
		snprintf(buf, size, "#%lld", (long long)p->run);
}

int report_html_series(FILE *o, const struct history_series *s, const struct changepoint *cp,
		       size_t ncp)
{
	struct frame f = { .x0 = 62, .x1 = 706, .y0 = 40, .y1 = 166 };
	double lo = INFINITY, hi = -INFINITY, div, step;
	struct tick xt[16], yt[16];
	char scaled[48], label[96], v[48], a[48], c[48], who[32];
	size_t nx = 0, ny, start = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct history_point *p = &s->points[i];

		if (!p->ok || !isfinite(p->value))
			continue;
		lo = fmin(lo, isfinite(p->ci_low) ? fmin(p->ci_low, p->value) : p->value);
		hi = fmax(hi, isfinite(p->ci_high) ? fmax(p->ci_high, p->value) : p->value);
	}
	if (!(lo <= hi))
		return html_no_plot(o, "history", s->name, s->n, "no run of it has a figure");
	report_html_domain(&lo, &hi, 5);
	f.vlo = lo;
	f.vhi = hi;
	f.dlo = -0.5;
	f.dhi = s->n > 1 ? (double)s->n - 0.5 : 0.5;
	report_html_unit(s->unit, fmax(fabs(lo), fabs(hi)), &div, scaled, sizeof(scaled));
	ny = html_linear_ticks(lo, hi, 5, div, yt, 16);
	step = s->n > 8 ? ceil((double)(s->n - 1) / 7) : 1;
	for (double k = 0; k < (double)s->n && nx < 16; k += step, nx++) {
		xt[nx].at = k;
		point_label(&s->points[(size_t)k], xt[nx].label, sizeof(xt[nx].label));
	}
	html_value_label(s->unit, scaled, false, label, sizeof(label));
	fputs("<svg class=\"plot wide\" viewBox=\"0 0 720 210\" role=\"img\" data-kind=\"history\" "
	      "data-bench=\"",
	      o);
	html_esc(o, s->name);
	fputs("\" data-instrument=\"", o);
	html_esc(o, s->instrument);
	fputs("\" data-machine=\"", o);
	html_esc(o, s->machine);
	fprintf(o, "\" data-n=\"%zu\" data-changepoints=\"", s->n);
	for (size_t j = 0; j < ncp; j++)
		fprintf(o, "%s%zu", j ? " " : "", cp[j].at);
	fprintf(o, "\" aria-label=\"%zu runs of ", s->n);
	html_esc(o, s->name);
	fprintf(o, ", %zu change point%s\">", ncp, ncp == 1 ? "" : "s");
	snprintf(a, sizeof(a), "commits, oldest to newest (%zu run%s)", s->n, s->n == 1 ? "" : "s");
	html_axes(o, &f, yt, ny, xt, nx, label, a);
	/* Each segment's level between change points, then the steps. */
	fputs("<path class=\"seg\" d=\"", o);
	for (size_t j = 0; j <= ncp && ncp; j++) {
		size_t end = j < ncp ? cp[j].at : s->n;
		double level = j < ncp ? cp[j].before : cp[j - 1].after;

		if (end > start && isfinite(level))
			fprintf(o, "M%.1f %.1fH%.1f", html_fx(&f, (double)start - 0.3),
				html_fy(&f, level), html_fx(&f, (double)end - 0.7));
		start = end;
	}
	fputs("\"/>", o);
	for (size_t j = 0; j < ncp; j++) {
		double x = html_fx(&f, (double)cp[j].at - 0.5);

		point_label(&s->points[cp[j].at], who, sizeof(who));
		html_fmt_value(cp[j].before, s->unit, a, sizeof(a));
		html_fmt_value(cp[j].after, s->unit, c, sizeof(c));
		if (isfinite(cp[j].step))
			snprintf(v, sizeof(v), "%+.1f%%", cp[j].step * 100);
		else
			snprintf(v, sizeof(v), "step");
		fprintf(o,
			"<g class=\"cp\" data-at=\"%zu\"><path d=\"M%.1f %.1fV%.1f\"/><text "
			"x=\"%.1f\" y=\"%.1f\">%s</text><title>change point at ",
			cp[j].at, x, f.y0, f.y1, x, f.y0 - 6, v);
		html_esc(o, who);
		fprintf(o, ": %s, %s → %s</title></g>", v, a, c);
	}
	fputs("<path class=\"whisk\" d=\"", o);
	for (size_t i = 0; i < s->n; i++) {
		const struct history_point *p = &s->points[i];

		if (p->ok && isfinite(p->ci_low) && isfinite(p->ci_high))
			fprintf(o, "M%.1f %.1fV%.1f", html_fx(&f, (double)i),
				html_fy(&f, p->ci_low), html_fy(&f, p->ci_high));
	}
	fputs("\"/><path class=\"line\" d=\"", o);
	for (size_t i = 0, pen = 0; i < s->n; i++) {
		const struct history_point *p = &s->points[i];

		if (!p->ok || !isfinite(p->value))
			continue;
		fprintf(o, "%c%.1f %.1f", pen++ ? 'L' : 'M', html_fx(&f, (double)i),
			html_fy(&f, p->value));
	}
	fputs("\"/>", o);
	for (size_t i = 0; i < s->n; i++) {
		const struct history_point *p = &s->points[i];
		bool ok = p->ok && isfinite(p->value);
		double x = html_fx(&f, (double)i), y = ok ? html_fy(&f, p->value) : f.y1 - 6;

		point_label(p, who, sizeof(who));
		if (ok)
			html_fmt_value(p->value, s->unit, v, sizeof(v));
		else
			snprintf(v, sizeof(v), "failed");
		fprintf(o, "<g class=\"pt%s\" tabindex=\"0\" data-commit=\"", ok ? "" : " fail");
		html_esc(o, p->commit);
		fputc('"', o);
		if (ok)
			html_attr_num(o, "data-value", p->value);
		if (ok)
			fprintf(o, "><circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\"/>", x, y);
		else
			fprintf(o, "><path d=\"M%.1f %.1fl6 6m0 -6l-6 6\"/>", x - 3, y - 3);
		fprintf(o, "<text class=\"tip\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x,
			y < f.y0 + 20 ? y + 18 : y - 9, x > (f.x0 + f.x1) / 2 ? "end" : "start");
		html_esc(o, who);
		fprintf(o, " · %s</text><title>", v);
		html_esc(o, p->commit ? p->commit : who);
		if (p->branch) {
			fputs(" (", o);
			html_esc(o, p->branch);
			fputc(')', o);
		}
		fputs(", ", o);
		html_esc(o, p->date);
		fprintf(o, ": %s", v);
		if (ok && isfinite(p->ci_low) && isfinite(p->ci_high)) {
			html_fmt_value(p->ci_low, s->unit, a, sizeof(a));
			html_fmt_value(p->ci_high, s->unit, c, sizeof(c));
			fprintf(o, " (interval %s – %s)", a, c);
		}
		fputs("</title></g>", o);
	}
	fputs("</svg>\n", o);
	return 0;
}
