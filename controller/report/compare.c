/* SPDX-License-Identifier: MIT */
/* The report of benchtrap compare: text, Markdown and JSON (report.h). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "stats/stats.h"
#include "results/json.h"
#include "report/report.h"
#include "report/table.h"

#define COMPARE_SCHEMA "benchtrap-compare/1"

/* Changes below this (in percent, after rounding) read as none. */
#define NO_CHANGE_PCT 0.05

/* "N benchmark" or "N benchmarks". */
static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

void report_compare_summary(const struct results_comparison *c, char *buf, size_t size)
{
	size_t reg = c->counts[RESULTS_REGRESSED], imp = c->counts[RESULTS_IMPROVED];
	size_t inc = c->counts[RESULTS_INCONCLUSIVE], n = c->ngeomean;
	double pct;

	/* Benchmarks in both files may still have no ratio between them: an
	 * observed function shorter than a stop resolves, one that failed,
	 * was skipped or returned no call. */
	if (!c->has_geomean && c->nboth) {
		snprintf(buf, size,
			 "no change could be judged in the %zu benchmark%s found in both base "
			 "and head (each one's note says why)",
			 c->nboth, plural(c->nboth));
		return;
	}
	if (!c->has_geomean) {
		snprintf(buf, size, "no benchmark was measured in both base and head");
		return;
	}
	pct = (c->geomean - 1.0) * 100.0;
	if (fabs(pct) < NO_CHANGE_PCT)
		pct = 0.0;
	/* The headline agrees with the verdicts: a direction only when some
	 * benchmark changed beyond the threshold, and none for one binary
	 * measured twice, whose every change is noise. */
	if (c->same_build)
		snprintf(buf, size,
			 "the same binary was measured twice: every change is noise "
			 "(geometric mean %+.1f%% of %zu benchmark%s)",
			 pct, n, plural(n));
	else if (!reg && !imp && inc)
		snprintf(buf, size,
			 "cannot tell whether this change affects performance: %zu of %zu "
			 "benchmark%s %s too noisy to judge (%s)",
			 inc, n, plural(n), inc == 1 ? "is" : "are",
			 c->paired ? "measure longer with --time"
				   : "`benchtrap compare BASE_BINARY HEAD_BINARY` measures both "
				     "builds side by side");
	else if (!reg && !imp && pct == 0.0)
		snprintf(buf, size,
			 "this change does not change performance measurably (geometric mean "
			 "of %zu benchmark%s)",
			 n, plural(n));
	else if (!reg && !imp)
		snprintf(buf, size,
			 "no benchmark changed beyond the threshold (geometric mean %+.1f%% of "
			 "%zu benchmark%s)",
			 pct, n, plural(n));
	else if (reg && imp)
		snprintf(buf, size,
			 "this change degrades %zu benchmark%s and improves %zu beyond the "
			 "threshold (geometric mean %+.1f%% of %zu benchmark%s)",
			 reg, plural(reg), imp, pct, n, plural(n));
	else if ((reg && pct > 0.0) || (imp && pct < 0.0))
		snprintf(buf, size,
			 "this change %s performance by %.1f%% (geometric mean of %zu "
			 "benchmark%s)",
			 reg ? "degrades" : "improves", fabs(pct), n, plural(n));
	else
		snprintf(buf, size,
			 "this change %s %zu benchmark%s beyond the threshold (geometric mean "
			 "%+.1f%% of %zu benchmark%s)",
			 reg ? "degrades" : "improves", reg ? reg : imp, plural(reg ? reg : imp),
			 pct, n, plural(n));
}

static void counts_line(const struct results_comparison *c, char *buf, size_t size, bool markdown)
{
	static const enum results_verdict order[] = { RESULTS_REGRESSED, RESULTS_IMPROVED,
						      RESULTS_UNCHANGED, RESULTS_INCONCLUSIVE,
						      RESULTS_FAILED,	 RESULTS_NEW,
						      RESULTS_MISSING };
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]) && o < size; i++) {
		size_t k = c->counts[order[i]];

		/* Said only when there are some: lines without stay as they
		 * were before the verdict existed. */
		if (order[i] == RESULTS_INCONCLUSIVE && !k)
			continue;
		bool bold = markdown && k &&
			    (order[i] == RESULTS_REGRESSED || order[i] == RESULTS_FAILED);

		o += (size_t)snprintf(buf + o, size - o, "%s%s%zu %s%s", i ? ", " : "",
				      bold ? "**" : "", k, results_verdict_name(order[i]),
				      bold ? "**" : "");
	}
	if (o < size)
		snprintf(buf + o, size - o, " (threshold %g%%, %g%% intervals)",
			 c->threshold * 100.0, c->confidence * 100.0);
}

static void format_value(double v, const char *unit, char *buf, size_t size)
{
	char num[48];

	if (!isfinite(v)) {
		snprintf(buf, size, "-");
		return;
	}
	if (!unit || !strcmp(unit, "ns") || !strcmp(unit, "bytes")) {
		if (stats_format_value(unit, v, buf, size) < 0)
			snprintf(buf, size, "-");
		return;
	}
	if (stats_format_count(v, num, sizeof(num)) < 0)
		snprintf(num, sizeof(num), "%g", v);
	snprintf(buf, size, "%s %s", num, unit ? unit : "");
}

static double bench_value(const struct results_bench *b)
{
	return b && b->ok ? b->value : NAN;
}

static void format_pct(double ratio, char *buf, size_t size)
{
	snprintf(buf, size, "%+.1f%%", (ratio - 1.0) * 100.0);
}

static bool mixed_instruments(const struct results_comparison *c)
{
	for (size_t i = 1; i < c->n; i++)
		if (strcmp(c->pairs[i].instrument, c->pairs[0].instrument))
			return true;
	return false;
}

/* The cells of one pair: name, base, head, change, interval, verdict, note. */
struct cells {
	char *name; /* whole (a template instance can take kilobytes); to free */
	char base[64], head[64], change[32], ci[80], verdict[32];
	const char *note;
};

/* A side's status: "ok", or why it has no figure ("failed", observe's
 * "skipped" and "no_calls"); NULL when the side has no such benchmark. */
static const char *status_of(const struct results_bench *b)
{
	if (!b)
		return NULL;
	if (b->ok)
		return "ok";
	if (b->status == RESULTS_STATUS_SKIPPED || b->status == RESULTS_STATUS_NO_CALLS)
		return results_status_name(b->status);
	return "failed";
}

/* A side without a figure: "failed", "skipped", "no calls". */
static void status_cell(const struct results_bench *b, char *buf, size_t size)
{
	const char *s = status_of(b);

	snprintf(buf, size, "%s", !strcmp(s, "no_calls") ? "no calls" : s);
}

/* 0, or -ENOMEM with nothing to free. */
static int pair_cells(const struct results_pair *p, bool mixed, struct cells *c)
{
	if (mixed ? asprintf(&c->name, "%s (%s)", p->name, p->instrument) < 0
		  : !(c->name = strdup(p->name)))
		return -ENOMEM;
	format_value(bench_value(p->base), p->unit, c->base, sizeof(c->base));
	format_value(bench_value(p->head), p->unit, c->head, sizeof(c->head));
	if (p->base && !p->base->ok)
		status_cell(p->base, c->base, sizeof(c->base));
	if (p->head && !p->head->ok)
		status_cell(p->head, c->head, sizeof(c->head));
	if (p->has_ratio)
		format_pct(p->ratio, c->change, sizeof(c->change));
	else
		snprintf(c->change, sizeof(c->change), "-");
	if (p->has_interval) {
		char lo[32], hi[32];

		format_pct(p->ratio_low, lo, sizeof(lo));
		format_pct(p->ratio_high, hi, sizeof(hi));
		snprintf(c->ci, sizeof(c->ci), "%s … %s", lo, hi);
	} else {
		snprintf(c->ci, sizeof(c->ci), "-");
	}
	snprintf(c->verdict, sizeof(c->verdict), "%s", results_verdict_name(p->verdict));
	c->note = p->note ? p->note : "";
	return 0;
}

/* A table of the pairs order[0..n) of c, or of every pair when order is
 * NULL. */
static struct table *pairs_table(const struct results_comparison *c, const size_t *order, size_t n,
				 bool markdown)
{
	static const char *const headers[] = { "BENCHMARK", "BASE",    "HEAD", "CHANGE",
					       "CI",	    "VERDICT", "NOTE" };
	static const char *const md_headers[] = { "benchmark", "base",	  "head", "change",
						  "interval",  "verdict", "note" };
	static const enum table_align align[] = { TABLE_LEFT,  TABLE_RIGHT, TABLE_RIGHT,
						  TABLE_RIGHT, TABLE_RIGHT, TABLE_LEFT,
						  TABLE_LEFT };
	char ci_header[32];
	const char *h[7];
	bool mixed = mixed_instruments(c);
	struct table *t;

	memcpy(h, markdown ? md_headers : headers, sizeof(h));
	snprintf(ci_header, sizeof(ci_header), markdown ? "%g%% interval" : "%g%% CI",
		 c->confidence * 100.0);
	h[4] = ci_header;
	t = table_new(7, h, align);
	if (!t)
		return NULL;
	if (!order)
		n = c->n;
	for (size_t i = 0; i < n; i++) {
		const struct results_pair *p = &c->pairs[order ? order[i] : i];
		struct cells cl;
		char verdict[40];
		int r;

		if (pair_cells(p, mixed, &cl) < 0) {
			table_free(t);
			return NULL;
		}
		if (markdown && (p->verdict == RESULTS_REGRESSED || p->verdict == RESULTS_FAILED))
			snprintf(verdict, sizeof(verdict), "**%s**", cl.verdict);
		else
			snprintf(verdict, sizeof(verdict), "%s", cl.verdict);
		r = table_add(t, (const char *const[]){ cl.name, cl.base, cl.head, cl.change, cl.ci,
							verdict, cl.note });
		free(cl.name);
		if (r < 0) {
			table_free(t);
			return NULL;
		}
	}
	return t;
}

/* Said once, under the counts, whatever the format. */
static const char same_build_line[] =
	"base and head have the same build-id: the same binary was measured twice, so every "
	"change is noise and no regression fails the gate (exit 0)";

void report_compare_text(const struct results_comparison *c, FILE *f, bool color)
{
	char line[512];
	struct table *t;

	report_compare_summary(c, line, sizeof(line));
	fprintf(f, "%s%s%s\n", color ? "\033[1m" : "", line, color ? "\033[0m" : "");
	counts_line(c, line, sizeof(line), false);
	fprintf(f, "%s\n", line);
	if (c->same_build)
		fprintf(f, "%s\n", same_build_line);
	if (c->n) {
		fputc('\n', f);
		t = pairs_table(c, NULL, 0, false);
		if (t) {
			table_print_text(t, f);
			table_free(t);
		}
	}
	if (c->nwarnings) {
		fputs("\nwarnings:\n", f);
		for (size_t i = 0; i < c->nwarnings; i++)
			fprintf(f, "  %s%s%s\n", color ? "\033[33m" : "", c->warnings[i],
				color ? "\033[0m" : "");
	}
	if (c->nnotes) {
		fputs("\nnotes:\n", f);
		for (size_t i = 0; i < c->nnotes; i++)
			fprintf(f, "  %s\n", c->notes[i]);
	}
}

/* Markdown text in a table cell or a list item: pipes and newlines escaped. */
static void md_line(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|' || *s == '*' || *s == '_' || *s == '`' || *s == '<' || *s == '[')
			fputc('\\', f);
		fputc(*s == '\n' ? ' ' : *s, f);
	}
}

/* The heading, the counts and the same-build line. */
static void markdown_head(const struct results_comparison *c, FILE *f)
{
	char line[512];

	report_compare_summary(c, line, sizeof(line));
	fprintf(f, "### benchtrap: %s\n\n", line);
	counts_line(c, line, sizeof(line), true);
	fprintf(f, "%s\n\n", line);
	if (c->same_build)
		fprintf(f, "%s\n\n", same_build_line);
}

static const char no_change_line[] = "No benchmark changed beyond the threshold.\n\n";
static const char warnings_heading[] = "**Warnings**\n\n";

static void markdown_warning(FILE *f, const char *w)
{
	fputs("- ", f);
	md_line(f, w);
	fputc('\n', f);
}

static const enum results_verdict comment_order[] = { RESULTS_FAILED,	RESULTS_REGRESSED,
						      RESULTS_IMPROVED, RESULTS_INCONCLUSIVE,
						      RESULTS_NEW,	RESULTS_MISSING };

size_t report_compare_changed_order(const struct results_comparison *c, size_t *ret_order)
{
	size_t k = 0;

	for (size_t v = 0; v < sizeof(comment_order) / sizeof(comment_order[0]); v++)
		for (size_t i = 0; i < c->n; i++)
			if (c->pairs[i].verdict == comment_order[v])
				ret_order[k++] = i;
	return k;
}

size_t report_rows_fitting(const size_t *sizes, size_t n, size_t budget)
{
	size_t k = 0;

	while (k < n && sizes[k] <= budget)
		budget -= sizes[k++];
	return k;
}

/* The table of the changed pairs, in the comment's order, printed to f. */
static int markdown_changed(const struct results_comparison *c, FILE *f)
{
	size_t *order = malloc((c->n ? c->n : 1) * sizeof(*order));
	struct table *t;
	size_t k;

	if (!order)
		return -ENOMEM;
	k = report_compare_changed_order(c, order);
	t = pairs_table(c, order, k, true);
	free(order);
	if (!t)
		return -ENOMEM;
	table_print_markdown(t, f);
	table_free(t);
	return 0;
}

static int markdown_full(const struct results_comparison *c, FILE *f)
{
	struct table *t;
	size_t changed = c->n - c->counts[RESULTS_UNCHANGED];

	markdown_head(c, f);
	if (changed) {
		if (markdown_changed(c, f) < 0)
			return -ENOMEM;
		fputc('\n', f);
	} else {
		fputs(no_change_line, f);
	}
	if (c->nwarnings) {
		fputs(warnings_heading, f);
		for (size_t i = 0; i < c->nwarnings; i++)
			markdown_warning(f, c->warnings[i]);
		fputc('\n', f);
	}
	fprintf(f, "<details><summary>All %zu benchmarks</summary>\n\n", c->n);
	t = pairs_table(c, NULL, 0, true);
	if (!t)
		return -ENOMEM;
	table_print_markdown(t, f);
	table_free(t);
	for (size_t i = 0; i < c->nnotes; i++) {
		fputs(i ? "" : "\n", f);
		markdown_warning(f, c->notes[i]);
	}
	fputs("\n</details>\n", f);
	return 0;
}

void report_compare_markdown(const struct results_comparison *c, FILE *f)
{
	markdown_full(c, f);
}

/* Text written to memory: a memstream that the writer fills. */
struct mem {
	char *buf;
	size_t len;
	FILE *f;
};

static int mem_open(struct mem *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	return m->f ? 0 : -ENOMEM;
}

/* Closes the stream; the text stays in m->buf (free it). */
static int mem_close(struct mem *m)
{
	int r = fclose(m->f) == 0 ? 0 : -ENOMEM;

	m->f = NULL;
	if (r < 0) {
		free(m->buf);
		m->buf = NULL;
	}
	return r;
}

/* What a capped comment leaves out: 'left' changed rows ('more' when some
 * are shown), 'unchanged' ones. */
static char *omitted_line(size_t left, bool more, size_t unchanged, size_t max_bytes,
			  const char *url)
{
	const char *m = more ? "more " : "";
	char what[128], *line;

	if (left && unchanged)
		snprintf(what, sizeof(what), "%zu %schanged benchmark%s and %zu unchanged are",
			 left, m, left == 1 ? "" : "s", unchanged);
	else if (left)
		snprintf(what, sizeof(what), "%zu %schanged benchmark%s", left, m,
			 left == 1 ? " is" : "s are");
	else if (unchanged)
		snprintf(what, sizeof(what), "%zu unchanged benchmark%s", unchanged,
			 unchanged == 1 ? " is" : "s are");
	else
		snprintf(what, sizeof(what), "the table of every benchmark is");
	if (asprintf(&line, "**%s not shown here** (at most %zu bytes)%s%s%s.\n", what, max_bytes,
		     url ? ": see [the full report](" : "", url ? url : "", url ? ")" : "") < 0)
		return NULL;
	return line;
}

static char *more_warnings_line(size_t n)
{
	char *line;

	if (asprintf(&line, "- %zu more warning%s in the full report\n", n, n == 1 ? "" : "s") < 0)
		return NULL;
	return line;
}

/* The longest omitted_line() for up to 'changed' and 'unchanged' rows. */
static size_t omitted_reserve(size_t changed, size_t unchanged, size_t max_bytes, const char *url)
{
	const size_t counts[4][2] = {
		{ changed, unchanged }, { changed, 0 }, { 0, unchanged }, { 0, 0 }
	};
	size_t most = 0;

	for (size_t i = 0; i < 4; i++) {
		char *l = omitted_line(counts[i][0], true, counts[i][1], max_bytes, url);

		if (!l)
			return SIZE_MAX;
		if (strlen(l) > most)
			most = strlen(l);
		free(l);
	}
	return most;
}

/* Splits text into its lines; ret_sizes[i] is line i's length with its
 * newline. Returns how many, or 0 on failure. */
static size_t line_sizes(const char *text, size_t len, size_t *ret_sizes, size_t room)
{
	size_t n = 0, start = 0;

	for (size_t i = 0; i < len; i++)
		if (text[i] == '\n') {
			if (n == room)
				return 0;
			ret_sizes[n++] = i + 1 - start;
			start = i + 1;
		}
	return start == len ? n : 0;
}

int report_compare_markdown_limited(const struct results_comparison *c,
				    const struct report_markdown_limit *lim, FILE *f,
				    bool *ret_capped)
{
	struct mem full = { 0 }, head = { 0 }, table = { 0 }, warn = { 0 };
	size_t changed = c->n - c->counts[RESULTS_UNCHANGED], unchanged = c->n - changed;
	size_t *sizes = NULL, *wsizes = NULL, fixed, avail, krows = 0, kwarn = 0, hdr = 0;
	size_t max = lim->max_bytes;
	char *omitted = NULL, *more = NULL;
	int r = -ENOMEM;

	if (mem_open(&full) < 0)
		return -ENOMEM;
	if (markdown_full(c, full.f) < 0 || mem_close(&full) < 0) {
		if (full.f)
			fclose(full.f);
		free(full.buf);
		return -ENOMEM;
	}
	if (!max || full.len <= max) {
		fwrite(full.buf, 1, full.len, f);
		free(full.buf);
		if (ret_capped)
			*ret_capped = false;
		return 0;
	}
	free(full.buf);

	if (mem_open(&head) < 0)
		goto out;
	markdown_head(c, head.f);
	if (mem_close(&head) < 0)
		goto out;
	sizes = malloc((changed + 2) * sizeof(*sizes));
	wsizes = malloc((c->nwarnings + 1) * sizeof(*wsizes));
	if (!sizes || !wsizes || mem_open(&table) < 0)
		goto out;
	if (changed && markdown_changed(c, table.f) < 0)
		goto out;
	if (mem_close(&table) < 0)
		goto out;
	if (mem_open(&warn) < 0)
		goto out;
	for (size_t i = 0; i < c->nwarnings; i++)
		markdown_warning(warn.f, c->warnings[i]);
	if (mem_close(&warn) < 0)
		goto out;
	if ((changed && line_sizes(table.buf, table.len, sizes, changed + 2) != changed + 2) ||
	    (c->nwarnings &&
	     line_sizes(warn.buf, warn.len, wsizes, c->nwarnings) != c->nwarnings)) {
		r = -EINVAL; /* a cell or a warning with a newline of its own */
		goto out;
	}
	more = more_warnings_line(c->nwarnings);
	if (!more)
		goto out;

	/* What is written whatever fits: the heading, the line of what is
	 * left out (at its longest), the warnings' heading and their last
	 * line (at its longest), and the blank lines between. */
	fixed = omitted_reserve(changed, unchanged, max, lim->full_report);
	if (fixed == SIZE_MAX)
		goto out;
	fixed += head.len + (changed ? 0 : strlen(no_change_line)) + 1;
	if (c->nwarnings)
		fixed += strlen(warnings_heading) + strlen(more) + 1;
	if (fixed > max) {
		r = -ENOSPC;
		goto out;
	}
	avail = max - fixed;
	if (changed) {
		hdr = sizes[0] + sizes[1] + 1; /* header, separator, blank line */
		if (hdr <= avail) {
			krows = report_rows_fitting(sizes + 2, changed, avail - hdr);
			if (krows) {
				avail -= hdr;
				for (size_t i = 0; i < krows; i++)
					avail -= sizes[2 + i];
			}
		}
	}
	kwarn = report_rows_fitting(wsizes, c->nwarnings, avail);

	omitted = omitted_line(changed - krows, krows > 0, unchanged, max, lim->full_report);
	free(more);
	more = more_warnings_line(c->nwarnings - kwarn);
	if (!omitted || !more)
		goto out;
	fwrite(head.buf, 1, head.len, f);
	if (!changed)
		fputs(no_change_line, f);
	if (krows) {
		size_t len = 0;

		for (size_t i = 0; i < krows + 2; i++)
			len += sizes[i];
		fwrite(table.buf, 1, len, f);
		fputc('\n', f);
	}
	fprintf(f, "%s\n", omitted);
	if (c->nwarnings) {
		size_t len = 0;

		fputs(warnings_heading, f);
		for (size_t i = 0; i < kwarn; i++)
			len += wsizes[i];
		fwrite(warn.buf, 1, len, f);
		if (kwarn < c->nwarnings)
			fputs(more, f);
		fputc('\n', f);
	}
	if (ret_capped)
		*ret_capped = true;
	r = 0;
out:
	if (head.f)
		fclose(head.f);
	if (table.f)
		fclose(table.f);
	if (warn.f)
		fclose(warn.f);
	free(head.buf);
	free(table.buf);
	free(warn.buf);
	free(sizes);
	free(wsizes);
	free(omitted);
	free(more);
	return r;
}

static json_t *num_or_null(bool has, double v)
{
	return has && isfinite(v) ? json_real(v) : json_null();
}

static json_t *pair_json(const struct results_pair *p)
{
	double b = bench_value(p->base), h = bench_value(p->head);

	return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:b, s:o, "
			 "s:o, s:o}",
			 "name", p->name, "instrument", p->instrument, "unit", p->unit, "verdict",
			 results_verdict_name(p->verdict), "base", num_or_null(true, b), "head",
			 num_or_null(true, h), "ratio", num_or_null(p->has_ratio, p->ratio),
			 "change_pct", num_or_null(p->has_ratio, (p->ratio - 1.0) * 100.0),
			 "ci_low_pct", num_or_null(p->has_interval, (p->ratio_low - 1.0) * 100.0),
			 "ci_high_pct", num_or_null(p->has_interval, (p->ratio_high - 1.0) * 100.0),
			 "resolution_pct", num_or_null(true, p->resolution * 100.0), "significant",
			 p->significant, "paired", p->paired, "note",
			 p->note ? json_string(p->note) : json_null(), "base_status",
			 results_json_str(status_of(p->base)), "head_status",
			 results_json_str(status_of(p->head)));
}

/* The pairs in order, one object at a time (results_json_next_fn). */
struct pair_source {
	const struct results_comparison *c;
	size_t i;
};

static int next_pair(void *ctx, json_t **ret)
{
	struct pair_source *s = ctx;

	if (s->i == s->c->n)
		return 0;
	*ret = pair_json(&s->c->pairs[s->i++]);
	return *ret ? 1 : -ENOMEM;
}

int report_compare_json(const struct results_comparison *c, const char *base, const char *head,
			FILE *f)
{
	json_t *doc, *counts = json_object(), *w = json_array(), *notes = json_array();
	struct pair_source src = { c, 0 };
	char sentence[512];

	report_compare_summary(c, sentence, sizeof(sentence));
	for (int v = 0; v < RESULTS_NVERDICTS; v++)
		json_object_set_new(counts, results_verdict_name(v),
				    json_integer((json_int_t)c->counts[v]));
	for (size_t i = 0; i < c->nwarnings; i++)
		json_array_append_new(w, json_string(c->warnings[i]));
	for (size_t i = 0; i < c->nnotes; i++)
		json_array_append_new(notes, json_string(c->notes[i]));
	/* "benchmarks" stands in for the pairs, written one by one: a tree of
	 * every pair would take several times the output's size. */
	doc = json_pack(
		"{s:s, s:s, s:s, s:f, s:f, s:{s:s, s:o, s:o, s:I, s:o}, s:b, s:b, s:s, "
		"s:o, s:o, s:o}",
		"schema", COMPARE_SCHEMA, "base", base, "head", head, "threshold_pct",
		c->threshold * 100.0, "confidence", c->confidence, "summary", "sentence", sentence,
		"geomean_ratio", num_or_null(c->has_geomean, c->geomean), "geomean_change_pct",
		num_or_null(c->has_geomean, (c->geomean - 1.0) * 100.0), "benchmarks_in_geomean",
		(json_int_t)c->ngeomean, "counts", counts, "same_build", c->same_build, "paired",
		c->paired, "gate", c->gate_failed ? "fail" : "pass", "benchmarks", json_array(),
		"warnings", w, "notes", notes);
	return results_json_dump_stream(doc, "benchmarks", next_pair, &src, f);
}
