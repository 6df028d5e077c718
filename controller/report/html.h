/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_REPORT_HTML_H
#define BENCHTRAP_REPORT_HTML_H

/*
 * `benchtrap report` (docs/report.md): one self-contained HTML page of
 * results files, comparisons, a history and observed calls. Every plot is
 * inline SVG written here, every style inline, and the page's only script
 * records errors; a Content-Security-Policy forbids every request, so the
 * page opens offline and loads nothing. A flame graph's SVG file is put in
 * a sandboxed <iframe srcdoc>, where its own zooming script runs apart
 * from the page and from the other flame graphs.
 *
 * Each plot carries its data in the DOM for programs (and tests) to read:
 *
 *	<svg class="plot" data-kind="samples" data-bench="fib[20]" data-n="42"
 *	     data-bins="1 4 9 ..." data-lo="8000" data-hi="9600" ...>
 *
 * data-kind is "samples" (a run's benchmark), "observed" (a function of
 * `benchtrap observe`), "change" (a row of a comparison), "history" (a
 * series over commits), "flamegraph" (the frame of one).
 *
 * Functions return 0 or a negative errno; nothing here prints.
 */

#include <stddef.h>
#include <stdio.h>

#include "history/history.h"
#include "results/results.h"
#include "stats/changepoint.h"

/* What a page shows. */
struct report_html {
	const char *title; /* the heading; NULL: "benchtrap report" */
	/* Results files, in order: each a run (with its comparison when it is
	 * a paired one, or against 'base'), or a file of observed calls. */
	const struct results_file *const *files;
	size_t nfiles;
	/* --base: every file is compared against it (instead of its own
	 * paired base); NULL when none. */
	const struct results_file *base;
	struct results_compare_opts compare;
	/* --history: its series, and the database's path for the heading. */
	const struct history_series *series;
	size_t nseries;
	const char *history;
};

/*
 * Write the page to 'out'. A flame graph is read from the path its results
 * file names (as given, else beside the results file); one that cannot be
 * read is said on the page. 0, -ENOMEM, -EINVAL (files that cannot be
 * compared), or -EIO when 'out' failed.
 */
int report_html_write(const struct report_html *h, FILE *out);

/* ---- the pieces, for the tests ----------------------------------------- */

/* 's' as HTML text or a quoted attribute's value: & < > " ' escaped,
 * control characters but newline and tab replaced by U+FFFD. NULL writes
 * nothing. */
void report_html_escape(FILE *out, const char *s);

/*
 * Axis ticks over [lo, hi]: about 'want' (2 or more) multiples of a step of
 * 1, 2 or 5 times a power of ten, into ret[0..max). Returns how many, the
 * step in *ret_step; 0 when hi <= lo or either is not finite.
 */
size_t report_html_ticks(double lo, double hi, size_t want, double *ret, size_t max,
			 double *ret_step);

/* [*lo, *hi] widened to the multiples of the step report_html_ticks()
 * gives for 'want' ticks; a range of one value is widened around it. */
void report_html_domain(double *lo, double *hi, size_t want);

/*
 * The unit an axis of values up to 'maxabs' in 'unit' ("ns", "bytes",
 * "instructions", ...) is labelled in: the divisor in *ret_div and its
 * name into buf ("µs", "KiB", "thousand instructions").
 */
void report_html_unit(const char *unit, double maxabs, double *ret_div, char *buf, size_t size);

/* How many bins a histogram of n values with that interquartile range
 * spread over 'range' takes: the Freedman-Diaconis width, 6 to 40 bins. */
size_t report_html_nbins(size_t n, double iqr, double range);

/* Count the finite x[0..n) into nbins equal bins over [lo, hi] (values
 * outside go to the first or last bin) in ret_counts[0..nbins). */
void report_html_bins(const double *x, size_t n, double lo, double hi, size_t nbins,
		      size_t *ret_counts);

/* The log2 bucket of a duration in ns, as observe's table has them: 0 for
 * [0, 2) (and below), k for [2^k, 2^(k+1)). */
unsigned report_html_log2_bucket(double ns);

/* The plot of one benchmark's samples: a histogram, the median and its
 * interval; a <div data-kind="samples" data-n="0"> saying why for one
 * without samples. */
int report_html_samples(FILE *out, const struct results_bench *b);

/* The same for an observed function: its calls' durations in log2
 * buckets, on a logarithmic axis. */
int report_html_observed(FILE *out, const struct results_bench *b);

/* A comparison: its summary, the counts, and a table of every pair in the
 * comparison's order, each row's interval drawn against the threshold. */
int report_html_comparison(FILE *out, const struct results_comparison *c);

/* A series over commits, its change points cp[0..ncp) marked. */
int report_html_series(FILE *out, const struct history_series *s, const struct changepoint *cp,
		       size_t ncp);

#endif
