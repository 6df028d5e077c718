/* SPDX-License-Identifier: MIT */
/*
 * The plots of `benchtrap report` (html-plot.h): scales and bins, the
 * frame of a plot, a run's distribution of samples and an observed
 * function's histogram of durations.
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

/* s[0..len), escaped. */
void html_esc_n(FILE *o, const char *s, size_t len)
{
	for (const char *e = s + len; s < e; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '&')
			fputs("&amp;", o);
		else if (c == '<')
			fputs("&lt;", o);
		else if (c == '>')
			fputs("&gt;", o);
		else if (c == '"')
			fputs("&quot;", o);
		else if (c == '\'')
			fputs("&#39;", o);
		else if ((c < ' ' && c != '\n' && c != '\t') || c == 0x7f)
			fputs("\xef\xbf\xbd", o);
		else
			fputc(c, o);
	}
}

void report_html_escape(FILE *o, const char *s)
{
	if (s)
		html_esc_n(o, s, strlen(s));
}

void html_esc(FILE *o, const char *s)
{
	report_html_escape(o, s);
}

/* ---- scales ------------------------------------------------------------- */

int html_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double nice_step(double x)
{
	double e = floor(log10(x)), f = x / pow(10, e);

	return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * pow(10, e);
}

size_t report_html_ticks(double lo, double hi, size_t want, double *ret, size_t max,
			 double *ret_step)
{
	double step, first;
	size_t n = 0;

	if (!isfinite(lo) || !isfinite(hi) || !(hi > lo) || want < 2)
		return 0;
	step = nice_step((hi - lo) / (double)(want - 1));
	first = ceil(lo / step - 1e-9) * step;
	for (; n < max; n++) {
		double v = first + (double)n * step;

		if (v > hi + step * 1e-9)
			break;
		ret[n] = fabs(v) < step * 1e-9 ? 0 : v;
	}
	*ret_step = step;
	return n;
}

void report_html_domain(double *lo, double *hi, size_t want)
{
	double step;

	if (!(*hi > *lo)) {
		double pad = *lo != 0 ? fabs(*lo) * 0.01 : 1;

		*lo -= pad;
		*hi += pad;
	}
	/* Until the ticks of the widened range have the step it was widened
	 * to: its ends are then ticks. */
	for (int i = 0; i < 4; i++) {
		step = nice_step((*hi - *lo) / (double)(want > 1 ? want - 1 : 1));
		*lo = floor(*lo / step + 1e-9) * step;
		*hi = ceil(*hi / step - 1e-9) * step;
	}
}

void report_html_unit(const char *unit, double maxabs, double *ret_div, char *buf, size_t size)
{
	static const char *const times[] = { "ns", "µs", "ms", "s" };
	static const char *const sizes[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	static const char *const counts[] = { "", "thousand ", "million ", "billion " };
	bool time = !unit || !strcmp(unit, "ns"), bytes = unit && !strcmp(unit, "bytes");
	double base = bytes ? 1024 : 1000, div = 1;
	size_t k = 0, top = bytes ? 4 : 3;

	/* Counts keep their digits up to 99,999: a change of a few is news. */
	while (k < top && isfinite(maxabs) && maxabs >= base * div * (time || bytes ? 1 : 100)) {
		div *= base;
		k++;
	}
	*ret_div = div;
	if (time)
		snprintf(buf, size, "%s", times[k]);
	else if (bytes)
		snprintf(buf, size, "%s", sizes[k]);
	else
		snprintf(buf, size, "%s%s", counts[k], unit);
}

size_t report_html_nbins(size_t n, double iqr, double range)
{
	double k;

	if (n < 2 || !(range > 0))
		return 6;
	if (!(iqr > 0))
		return 20;
	k = ceil(range / (2 * iqr / cbrt((double)n)));
	return k < 6 ? 6 : k > 40 ? 40 : (size_t)k;
}

void report_html_bins(const double *x, size_t n, double lo, double hi, size_t nbins,
		      size_t *ret_counts)
{
	double w = nbins ? (hi - lo) / (double)nbins : 0;

	memset(ret_counts, 0, nbins * sizeof(*ret_counts));
	for (size_t i = 0; i < n && nbins; i++) {
		double k = w > 0 ? floor((x[i] - lo) / w) : 0;

		if (!isfinite(x[i]))
			continue;
		ret_counts[k < 0 ? 0 : k >= (double)nbins ? nbins - 1 : (size_t)k]++;
	}
}

unsigned report_html_log2_bucket(double ns)
{
	int e;

	if (!(ns >= 2))
		return 0;
	frexp(ns, &e);
	return e - 1 > 63 ? 63 : (unsigned)(e - 1);
}

/* ---- text --------------------------------------------------------------- */

void html_fmt_value(double v, const char *unit, char *buf, size_t size)
{
	char num[48];

	if (!isfinite(v)) {
		snprintf(buf, size, "–");
	} else if (!unit || !strcmp(unit, "ns") || !strcmp(unit, "bytes")) {
		if (stats_format_value(unit, v, buf, size) < 0)
			snprintf(buf, size, "%g", v);
	} else {
		if (stats_format_count(v, num, sizeof(num)) < 0)
			snprintf(num, sizeof(num), "%g", v);
		snprintf(buf, size, "%s %s", num, unit);
	}
}

/* A duration tick on a logarithmic axis: "100 ns", "2 ms". */
static void fmt_duration_tick(double ns, char *buf, size_t size)
{
	static const char *const u[] = { "ns", "µs", "ms", "s" };
	size_t k = 0;

	while (k < 3 && ns >= 1000) {
		ns /= 1000;
		k++;
	}
	snprintf(buf, size, "%g %s", ns, u[k]);
}

void html_attr_num(FILE *o, const char *name, double v)
{
	if (isfinite(v))
		fprintf(o, " %s=\"%.10g\"", name, v);
}

/* <dt>k</dt><dd>v</dd> */
void html_kv(FILE *o, const char *k, const char *v)
{
	fputs("<dt>", o);
	html_esc(o, k);
	fputs("</dt><dd>", o);
	html_esc(o, v);
	fputs("</dd>", o);
}

/* ---- the frame of a plot ------------------------------------------------ */

double html_fx(const struct frame *f, double v)
{
	return f->x0 + (v - f->dlo) / (f->dhi - f->dlo) * (f->x1 - f->x0);
}

double html_fy(const struct frame *f, double v)
{
	return f->y1 - (v - f->vlo) / (f->vhi - f->vlo) * (f->y1 - f->y0);
}

/* Ticks of [lo, hi] labelled in units of 'div'. */
size_t html_linear_ticks(double lo, double hi, size_t want, double div, struct tick *t, size_t max)
{
	double v[16], step;
	size_t n = report_html_ticks(lo, hi, want, v, max < 16 ? max : 16, &step);
	int d = step / div >= 1 ? 0 : (int)ceil(-log10(step / div) - 1e-9);

	for (size_t i = 0; i < n; i++) {
		t[i].at = v[i];
		if (d > 0 || fabs(v[i] / div) < 1000 ||
		    stats_format_count(v[i] / div, t[i].label, sizeof(t[i].label)) < 0)
			snprintf(t[i].label, sizeof(t[i].label), "%.*f", d > 6 ? 6 : d, v[i] / div);
	}
	return n;
}

/* Grid lines and labels of the y ticks, the axes, the x ticks, and both
 * axes' names. */
void html_axes(FILE *o, const struct frame *f, const struct tick *yt, size_t ny,
	       const struct tick *xt, size_t nx, const char *ylabel, const char *xlabel)
{
	/* A long name of the values goes above the axis, a short one beside. */
	bool top = strlen(ylabel) > 16;

	fputs("<path class=\"grid\" d=\"", o);
	for (size_t i = 0; i < ny; i++)
		fprintf(o, "M%.1f %.1fH%.1f", f->x0, html_fy(f, yt[i].at), f->x1);
	fprintf(o, "\"/><path class=\"ax\" d=\"M%.1f %.1fV%.1fH%.1f", f->x0, f->y0, f->y1, f->x1);
	for (size_t i = 0; i < nx; i++)
		fprintf(o, "M%.1f %.1fv4", html_fx(f, xt[i].at), f->y1);
	fputs("\"/>", o);
	for (size_t i = 0; i < ny; i++)
		fprintf(o, "<text class=\"yt\" x=\"%.1f\" y=\"%.1f\">%s</text>", f->x0 - 5,
			html_fy(f, yt[i].at) + 3.5, yt[i].label);
	for (size_t i = 0; i < nx; i++) {
		fprintf(o, "<text class=\"xt\" x=\"%.1f\" y=\"%.1f\">", html_fx(f, xt[i].at),
			f->y1 + 16);
		html_esc(o, xt[i].label);
		fputs("</text>", o);
	}
	if (top)
		fprintf(o, "<text class=\"al top\" x=\"%.1f\" y=\"%.1f\">", f->x0 - 40, f->y0 - 16);
	else
		fprintf(o, "<text class=\"al\" transform=\"rotate(-90)\" x=\"%.1f\" y=\"13\">",
			-(f->y0 + f->y1) / 2);
	html_esc(o, ylabel);
	fprintf(o, "</text><text class=\"al\" x=\"%.1f\" y=\"%.1f\">", (f->x0 + f->x1) / 2,
		f->y1 + 33);
	html_esc(o, xlabel);
	fputs("</text>", o);
}

/* The y domain of counts up to 'top' and its ticks: whole numbers. */
static size_t count_axis(struct frame *f, size_t top, struct tick *t)
{
	/* Room above the highest bar for the interval's bracket. */
	f->vlo = 0;
	f->vhi = top < 4 ? 4 : (double)top * 1.12;
	report_html_domain(&f->vlo, &f->vhi, 6);
	return html_linear_ticks(f->vlo, f->vhi, 6, 1, t, 16);
}

/* "time per call (µs)", "instructions per call (thousand instructions)" */
void html_value_label(const char *unit, const char *scaled, bool observed, char *buf, size_t size)
{
	bool time = !unit || !strcmp(unit, "ns");

	if (observed)
		snprintf(buf, size, "duration of a call (logarithmic)");
	else if (time)
		snprintf(buf, size, "time per call (%s)", scaled);
	else if (!strcmp(unit, scaled))
		snprintf(buf, size, "%s per call", unit);
	else
		snprintf(buf, size, "%s per call (%s)", unit, scaled);
}

/* About how wide 's' is in the plots' 11px font. */
static double text_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return 6.4 * (double)n;
}

/* A legend at the top: the median's line and the interval's band, the
 * interval's figures left out where they would not fit. */
static void legend(FILE *o, const struct frame *f, const struct results_bench *b)
{
	char m[64], lo[48], hi[48], ci[160];
	double x;
	int k;

	if (!b->has_stats)
		return;
	html_fmt_value(b->stats.median, b->unit, lo, sizeof(lo));
	snprintf(m, sizeof(m), "median %s", lo);
	fprintf(o, "<path class=\"med\" d=\"M%.1f 11h14\"/><text x=\"%.1f\" y=\"15\">%s</text>",
		f->x0, f->x0 + 18, m);
	if (!isfinite(b->stats.ci_low) || !isfinite(b->stats.ci_high) ||
	    !(b->stats.ci_high > b->stats.ci_low))
		return;
	x = f->x0 + 18 + text_width(m) + 24;
	html_fmt_value(b->stats.ci_low, b->unit, lo, sizeof(lo));
	html_fmt_value(b->stats.ci_high, b->unit, hi, sizeof(hi));
	k = snprintf(ci, sizeof(ci), "%g%% interval of the median",
		     isfinite(b->stats.confidence) ? b->stats.confidence * 100 : 95);
	snprintf(ci + k, sizeof(ci) - (size_t)k, " %s – %s", lo, hi);
	if (x + 18 + text_width(ci) > f->x1)
		ci[k] = '\0';
	fprintf(o,
		"<rect class=\"ci\" x=\"%.1f\" y=\"5\" width=\"14\" height=\"11\"/>"
		"<text x=\"%.1f\" y=\"15\">%s</text>",
		x, x + 18, ci);
}

/* The interval of the median as a band behind the bars ('line' false), or
 * the median as a line over them. */
static void median_marks(FILE *o, const struct frame *f, const struct results_bench *b,
			 double (*pos)(double), bool line)
{
	char a[48], c[48];

	if (!b->has_stats)
		return;
	if (!line && isfinite(b->stats.ci_low) && isfinite(b->stats.ci_high)) {
		double x = html_fx(f, pos(b->stats.ci_low)),
		       w = html_fx(f, pos(b->stats.ci_high)) - x;

		html_fmt_value(b->stats.ci_low, b->unit, a, sizeof(a));
		html_fmt_value(b->stats.ci_high, b->unit, c, sizeof(c));
		fprintf(o,
			"<rect class=\"ci\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
			"<title>interval of the median: %s – %s</title></rect><path class=\"cib\" "
			"d=\"M%.1f %.1fv8m0 -4H%.1fm0 -4v8\"/>",
			x, f->y0, w < 1 ? 1 : w, f->y1 - f->y0, a, c, x, f->y0 + 1, x + w);
	}
	if (line && isfinite(b->stats.median)) {
		html_fmt_value(b->stats.median, b->unit, a, sizeof(a));
		fprintf(o,
			"<path class=\"med\" d=\"M%.1f %.1fV%.1f\">"
			"<title>median: %s</title></path>",
			html_fx(f, pos(b->stats.median)), f->y0, f->y1, a);
	}
}

static double identity(double v)
{
	return v;
}

static double log2_pos(double ns)
{
	return ns > 1 ? log2(ns) : 0;
}

/* The element standing for a plot that has no data, and why. */
int html_no_plot(FILE *o, const char *kind, const char *name, size_t n, const char *why)
{
	fprintf(o, "<div class=\"noplot\" data-kind=\"%s\" data-bench=\"", kind);
	html_esc(o, name);
	fprintf(o, "\" data-n=\"%zu\">", n);
	html_esc(o, why);
	fputs("</div>\n", o);
	return 0;
}

static const char *why_no_samples(const struct results_bench *b)
{
	switch (b->status) {
	case RESULTS_STATUS_FAILED:
		return "no samples: it failed";
	case RESULTS_STATUS_SKIPPED:
		return "no calls timed: skipped (--skip)";
	case RESULTS_STATUS_NO_CALLS:
		return "no call returned while it was observed";
	default:
		return "no raw samples in the results file";
	}
}

/* <svg ...> of a benchmark's plot, up to its data attributes. */
static void plot_open(FILE *o, const char *kind, const struct results_bench *b, int w, int h)
{
	fprintf(o,
		"<svg class=\"plot\" viewBox=\"0 0 %d %d\" role=\"img\" data-kind=\"%s\" "
		"data-bench=\"",
		w, h, kind);
	html_esc(o, b->name);
	fputs("\" data-unit=\"", o);
	html_esc(o, b->unit);
	fprintf(o, "\" data-n=\"%zu\"", b->nraw);
	if (b->has_stats) {
		html_attr_num(o, "data-median", b->stats.median);
		html_attr_num(o, "data-ci-low", b->stats.ci_low);
		html_attr_num(o, "data-ci-high", b->stats.ci_high);
	}
}

/* Every sample as a tick at the foot of the bars: one path, a tick per
 * pixel that has samples. */
void html_rug(FILE *o, const struct frame *f, const double *x, size_t n)
{
	double *px = calloc(n + 1, sizeof(*px)), last = 0;
	size_t m = 0;

	for (size_t i = 0; px && i < n; i++)
		if (isfinite(x[i]))
			px[m++] = round(html_fx(f, x[i]));
	if (!m) {
		free(px);
		return;
	}
	qsort(px, m, sizeof(*px), html_cmp_double);
	fprintf(o, "<path class=\"rug\" d=\"M%.0f %.0fv5", px[0], f->y1 - 5);
	last = px[0];
	for (size_t i = 1; i < m; i++)
		if (px[i] != last) {
			fprintf(o, "m%.0f -5v5", px[i] - last);
			last = px[i];
		}
	fputs("\"/>", o);
	free(px);
}

int report_html_samples(FILE *o, const struct results_bench *b)
{
	struct frame f = { .x0 = 58, .x1 = 584, .y0 = 26, .y1 = 138 };
	double mn = INFINITY, mx = -INFINITY, div, w;
	struct tick xt[16], yt[16];
	size_t nb, *cnt, finite = 0, top = 0, nx, ny;
	char scaled[48], label[96], a[48], c[48];

	for (size_t i = 0; b->ok && i < b->nraw; i++) {
		if (!isfinite(b->raw[i]))
			continue;
		mn = fmin(mn, b->raw[i]);
		mx = fmax(mx, b->raw[i]);
		finite++;
	}
	if (!finite)
		return html_no_plot(o, "samples", b->name, b->nraw, why_no_samples(b));
	f.dlo = mn;
	f.dhi = mx;
	if (b->has_stats && isfinite(b->stats.ci_low) && isfinite(b->stats.ci_high)) {
		f.dlo = fmin(f.dlo, b->stats.ci_low);
		f.dhi = fmax(f.dhi, b->stats.ci_high);
	}
	report_html_domain(&f.dlo, &f.dhi, 6);
	nb = report_html_nbins(finite, b->has_stats ? b->stats.q3 - b->stats.q1 : NAN,
			       f.dhi - f.dlo);
	cnt = calloc(nb, sizeof(*cnt));
	if (!cnt)
		return -ENOMEM;
	report_html_bins(b->raw, b->nraw, f.dlo, f.dhi, nb, cnt);
	for (size_t k = 0; k < nb; k++)
		top = cnt[k] > top ? cnt[k] : top;
	ny = count_axis(&f, top, yt);
	report_html_unit(b->unit, fmax(fabs(f.dlo), fabs(f.dhi)), &div, scaled, sizeof(scaled));
	nx = html_linear_ticks(f.dlo, f.dhi, 7, div, xt, 16);
	html_value_label(b->unit, scaled, false, label, sizeof(label));

	plot_open(o, "samples", b, 600, 180);
	html_attr_num(o, "data-lo", f.dlo);
	html_attr_num(o, "data-hi", f.dhi);
	fputs(" data-bins=\"", o);
	for (size_t k = 0; k < nb; k++)
		fprintf(o, "%s%zu", k ? " " : "", cnt[k]);
	fprintf(o, "\" aria-label=\"histogram of %zu samples of ", finite);
	html_esc(o, b->name);
	fputs("\">", o);
	median_marks(o, &f, b, identity, false);
	w = (f.x1 - f.x0) / (double)nb;
	for (size_t k = 0; k < nb; k++) {
		double h = (double)cnt[k] / f.vhi * (f.y1 - f.y0);

		if (!cnt[k])
			continue;
		html_fmt_value(f.dlo + (f.dhi - f.dlo) * (double)k / (double)nb, b->unit, a,
			       sizeof(a));
		html_fmt_value(f.dlo + (f.dhi - f.dlo) * (double)(k + 1) / (double)nb, b->unit, c,
			       sizeof(c));
		fprintf(o,
			"<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
			"<title>%s – %s: %zu sample%s</title></rect>",
			f.x0 + w * (double)k + 0.5, f.y1 - h, w > 2 ? w - 1 : w, h, a, c, cnt[k],
			cnt[k] == 1 ? "" : "s");
	}
	html_rug(o, &f, b->raw, b->nraw);
	median_marks(o, &f, b, identity, true);
	html_axes(o, &f, yt, ny, xt, nx, "samples", label);
	legend(o, &f, b);
	fputs("</svg>\n", o);
	free(cnt);
	return 0;
}

int report_html_observed(FILE *o, const struct results_bench *b)
{
	struct frame f = { .x0 = 58, .x1 = 584, .y0 = 26, .y1 = 138 };
	size_t cnt[64] = { 0 }, finite = 0, top = 0, ny, nx = 0;
	unsigned kmin = 63, kmax = 0;
	struct tick xt[16], yt[16];
	char a[48], c[48];

	for (size_t i = 0; b->ok && i < b->nraw; i++) {
		unsigned k = report_html_log2_bucket(b->raw[i]);

		if (!isfinite(b->raw[i]))
			continue;
		cnt[k]++;
		finite++;
		kmin = k < kmin ? k : kmin;
		kmax = k > kmax ? k : kmax;
	}
	if (!finite)
		return html_no_plot(o, "observed", b->name, b->nraw, why_no_samples(b));
	for (unsigned k = kmin; k <= kmax; k++)
		top = cnt[k] > top ? cnt[k] : top;
	f.dlo = kmin;
	f.dhi = kmax + 1;
	while (f.dhi - f.dlo < 7) {
		f.dlo -= f.dlo > 0;
		f.dhi += 1;
	}
	ny = count_axis(&f, top, yt);
	/* Powers of ten, and 2 and 5 times them on a short axis. */
	for (double p = 1; p < 1e13 && nx < 16; p *= 10)
		for (int m = 1; m <= 5 && nx < 16; m += m == 1 ? 1 : 3) {
			double at = log2(p * m);

			if ((m > 1 && f.dhi - f.dlo > 10) || at < f.dlo - 1e-9 || at > f.dhi + 1e-9)
				continue;
			xt[nx].at = at;
			fmt_duration_tick(p * m, xt[nx].label, sizeof(xt[nx].label));
			nx++;
		}
	plot_open(o, "observed", b, 600, 180);
	fputs(" data-buckets=\"", o);
	for (unsigned k = kmin; k <= kmax; k++)
		if (cnt[k])
			fprintf(o, "%s%u:%zu", k == kmin ? "" : " ", k, cnt[k]);
	fprintf(o, "\" aria-label=\"histogram of %zu calls of ", finite);
	html_esc(o, b->name);
	fputs("\">", o);
	median_marks(o, &f, b, log2_pos, false);
	for (unsigned k = kmin; k <= kmax; k++) {
		double x = html_fx(&f, k), w = html_fx(&f, k + 1) - x,
		       h = (double)cnt[k] / f.vhi * (f.y1 - f.y0);

		if (!cnt[k])
			continue;
		html_fmt_value(k ? ldexp(1, (int)k) : 0, "ns", a, sizeof(a));
		html_fmt_value(ldexp(1, (int)k + 1), "ns", c, sizeof(c));
		fprintf(o,
			"<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
			"<title>%s – %s: %zu call%s</title></rect>",
			x + 0.5, f.y1 - h, w - 1, h, a, c, cnt[k], cnt[k] == 1 ? "" : "s");
	}
	median_marks(o, &f, b, log2_pos, true);
	html_axes(o, &f, yt, ny, xt, nx, "calls", "duration of a call (logarithmic)");
	legend(o, &f, b);
	fputs("</svg>\n", o);
	return 0;
}
