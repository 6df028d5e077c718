/* SPDX-License-Identifier: MIT */
/* The report of benchtrap compare: text, Markdown and JSON (report.h). */
#include <errno.h>
#include <math.h>
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

void report_compare_summary(const struct results_comparison *c, char *buf, size_t size)
{
	double pct;

	if (!c->has_geomean) {
		snprintf(buf, size, "no benchmark was measured in both base and head");
		return;
	}
	pct = (c->geomean - 1.0) * 100.0;
	if (fabs(pct) < NO_CHANGE_PCT)
		snprintf(buf, size,
			 "this change does not change performance measurably (geometric mean "
			 "of %zu benchmark%s)",
			 c->ngeomean, c->ngeomean == 1 ? "" : "s");
	else
		snprintf(buf, size,
			 "this change %s performance by %.1f%% (geometric mean of %zu "
			 "benchmark%s)",
			 pct > 0 ? "degrades" : "improves", fabs(pct), c->ngeomean,
			 c->ngeomean == 1 ? "" : "s");
}

static void counts_line(const struct results_comparison *c, char *buf, size_t size, bool markdown)
{
	static const enum results_verdict order[] = { RESULTS_REGRESSED, RESULTS_IMPROVED,
						      RESULTS_UNCHANGED, RESULTS_FAILED,
						      RESULTS_NEW,	 RESULTS_MISSING };
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]) && o < size; i++) {
		size_t k = c->counts[order[i]];
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
	char name[512], base[64], head[64], change[32], ci[80], verdict[32];
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

static void pair_cells(const struct results_pair *p, bool mixed, struct cells *c)
{
	if (mixed)
		snprintf(c->name, sizeof(c->name), "%s (%s)", p->name, p->instrument);
	else
		snprintf(c->name, sizeof(c->name), "%s", p->name);
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
}

static struct table *pairs_table(const struct results_comparison *c, bool only_changed,
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
	for (size_t i = 0; i < c->n; i++) {
		const struct results_pair *p = &c->pairs[i];
		struct cells cl;
		char verdict[40];

		if (only_changed && p->verdict == RESULTS_UNCHANGED)
			continue;
		pair_cells(p, mixed, &cl);
		if (markdown && (p->verdict == RESULTS_REGRESSED || p->verdict == RESULTS_FAILED))
			snprintf(verdict, sizeof(verdict), "**%s**", cl.verdict);
		else
			snprintf(verdict, sizeof(verdict), "%s", cl.verdict);
		if (table_add(t, (const char *const[]){ cl.name, cl.base, cl.head, cl.change, cl.ci,
							verdict, cl.note }) < 0) {
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
		t = pairs_table(c, false, false);
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

void report_compare_markdown(const struct results_comparison *c, FILE *f)
{
	char line[512];
	struct table *t;
	size_t changed = c->n - c->counts[RESULTS_UNCHANGED];

	report_compare_summary(c, line, sizeof(line));
	fprintf(f, "### benchtrap: %s\n\n", line);
	counts_line(c, line, sizeof(line), true);
	fprintf(f, "%s\n\n", line);
	if (c->same_build)
		fprintf(f, "%s\n\n", same_build_line);
	if (changed) {
		t = pairs_table(c, true, true);
		if (t) {
			table_print_markdown(t, f);
			table_free(t);
		}
		fputc('\n', f);
	} else {
		fputs("No benchmark changed beyond the threshold.\n\n", f);
	}
	if (c->nwarnings) {
		fputs("**Warnings**\n\n", f);
		for (size_t i = 0; i < c->nwarnings; i++) {
			fputs("- ", f);
			md_line(f, c->warnings[i]);
			fputc('\n', f);
		}
		fputc('\n', f);
	}
	fprintf(f, "<details><summary>All %zu benchmarks</summary>\n\n", c->n);
	t = pairs_table(c, false, true);
	if (t) {
		table_print_markdown(t, f);
		table_free(t);
	}
	for (size_t i = 0; i < c->nnotes; i++) {
		fputs(i ? "" : "\n", f);
		fputs("- ", f);
		md_line(f, c->notes[i]);
		fputc('\n', f);
	}
	fputs("\n</details>\n", f);
}

static json_t *num_or_null(bool has, double v)
{
	return has && isfinite(v) ? json_real(v) : json_null();
}

static json_t *pair_json(const struct results_pair *p)
{
	double b = bench_value(p->base), h = bench_value(p->head);

	return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:b, s:o, s:o, "
			 "s:o}",
			 "name", p->name, "instrument", p->instrument, "unit", p->unit, "verdict",
			 results_verdict_name(p->verdict), "base", num_or_null(true, b), "head",
			 num_or_null(true, h), "ratio", num_or_null(p->has_ratio, p->ratio),
			 "change_pct", num_or_null(p->has_ratio, (p->ratio - 1.0) * 100.0),
			 "ci_low_pct", num_or_null(p->has_interval, (p->ratio_low - 1.0) * 100.0),
			 "ci_high_pct", num_or_null(p->has_interval, (p->ratio_high - 1.0) * 100.0),
			 "significant", p->significant, "paired", p->paired, "note",
			 p->note ? json_string(p->note) : json_null(), "base_status",
			 results_json_str(status_of(p->base)), "head_status",
			 results_json_str(status_of(p->head)));
}

int report_compare_json(const struct results_comparison *c, const char *base, const char *head,
			FILE *f)
{
	json_t *doc, *pairs = json_array(), *counts = json_object(), *w = json_array(),
		     *notes = json_array();
	char sentence[512];

	report_compare_summary(c, sentence, sizeof(sentence));
	for (size_t i = 0; i < c->n; i++)
		json_array_append_new(pairs, pair_json(&c->pairs[i]));
	for (int v = 0; v < RESULTS_NVERDICTS; v++)
		json_object_set_new(counts, results_verdict_name(v),
				    json_integer((json_int_t)c->counts[v]));
	for (size_t i = 0; i < c->nwarnings; i++)
		json_array_append_new(w, json_string(c->warnings[i]));
	for (size_t i = 0; i < c->nnotes; i++)
		json_array_append_new(notes, json_string(c->notes[i]));
	doc = json_pack(
		"{s:s, s:s, s:s, s:f, s:f, s:{s:s, s:o, s:o, s:I, s:o}, s:b, s:b, s:s, "
		"s:o, s:o, s:o}",
		"schema", COMPARE_SCHEMA, "base", base, "head", head, "threshold_pct",
		c->threshold * 100.0, "confidence", c->confidence, "summary", "sentence", sentence,
		"geomean_ratio", num_or_null(c->has_geomean, c->geomean), "geomean_change_pct",
		num_or_null(c->has_geomean, (c->geomean - 1.0) * 100.0), "benchmarks_in_geomean",
		(json_int_t)c->ngeomean, "counts", counts, "same_build", c->same_build, "paired",
		c->paired, "gate", c->gate_failed ? "fail" : "pass", "benchmarks", pairs,
		"warnings", w, "notes", notes);
	return results_json_dump(doc, f);
}
