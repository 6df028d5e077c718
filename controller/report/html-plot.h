/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_HTML_PLOT_H
#define BENCHTRAP_HTML_PLOT_H

/*
 * The HTML report's writing and plotting primitives (html-plot.c: text
 * escaped, scales, frames, a run's plots), on which html.c (the page and
 * its sections) and html-change.c (a comparison's and a history's plots)
 * draw; nothing here calls up into them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "report/html.h"

/* The plot's area in the viewBox, and the domains shown on its axes. */
struct frame {
	double x0, x1, y0, y1;
	double dlo, dhi, vlo, vhi;
};

struct tick {
	double at; /* in the domain */
	char label[32];
};

/* Text and attributes, escaped. */
void html_esc(FILE *o, const char *s);
void html_esc_n(FILE *o, const char *s, size_t len);
void html_attr_num(FILE *o, const char *name, double v);
/* A key and its value, a row of a fact list. */
void html_kv(FILE *o, const char *k, const char *v);
/* v in 'unit' with a scaled unit: "1.217 µs". */
void html_fmt_value(double v, const char *unit, char *buf, size_t size);
/* qsort's order of doubles. */
int html_cmp_double(const void *a, const void *b);

/* A value of a frame's domains at its place in the viewBox. */
double html_fx(const struct frame *f, double v);
double html_fy(const struct frame *f, double v);
/* Up to max ticks between lo and hi, labelled in units of div. */
size_t html_linear_ticks(double lo, double hi, size_t want, double div, struct tick *t, size_t max);
/* The frame's axes, their ticks and labels. */
void html_axes(FILE *o, const struct frame *f, const struct tick *yt, size_t ny,
	       const struct tick *xt, size_t nx, const char *ylabel, const char *xlabel);
/* The label of a value axis: "time per call (µs)". */
void html_value_label(const char *unit, const char *scaled, bool observed, char *buf, size_t size);
/* A plot that has nothing to draw, and why, with its data attributes. */
int html_no_plot(FILE *o, const char *kind, const char *name, size_t n, const char *why);
/* A tick per sample under the frame. */
void html_rug(FILE *o, const struct frame *f, const double *x, size_t n);

#endif
