/* SPDX-License-Identifier: MIT */
/*
 * The HTML page of `benchtrap report` (html.h, docs/report.md). Plots are
 * SVG in a viewBox of fixed size that CSS scales to the page: coordinates
 * are written with one decimal, each plot's data in attributes, a hover
 * text in a <title> and, where a reader must reach a point with the
 * keyboard (a commit of a series), a focusable element whose text CSS
 * shows on :focus. Histograms of fixed bins keep a benchmark's plot at a
 * few kilobytes however many samples it has.
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

#define MAX_FLAME (32L * 1024 * 1024) /* the largest flame graph inlined */

/* ---- what the reader does not keep, read again with jansson ------------- */

/* One benchmark's fields that struct results_bench has no room for. */
struct extra {
	char *svg;		    /* "flamegraph": {"svg": PATH}, or NULL */
	long long calls, unmatched; /* observe's "calls", "unmatched_returns"; -1: absent */
};

static void extras_free(struct extra *x, size_t n)
{
	for (size_t i = 0; x && i < n; i++)
		free(x[i].svg);
	free(x);
}

static long long int_member(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

/* Those of f's benchmarks, by position: NULL when the file cannot be read
 * again (stdin, a pipe) or has none of them. */
static struct extra *extras_load(const struct results_file *f)
{
	struct extra *x = NULL;
	struct stat st;
	json_t *root, *v;
	size_t len;
	char *text;

	if (!f->n || !strcmp(f->path, "-") || stat(f->path, &st) != 0 || !S_ISREG(st.st_mode))
		return NULL;
	text = str_read_file(f->path, &len);
	if (!text)
		return NULL;
	if (!memmem(text, len, "\"flamegraph\"", 12) && !results_file_observed(f)) {
		free(text);
		return NULL;
	}
	root = json_loadb(text, len, 0, NULL);
	free(text);
	v = json_object_get(root, "benchmarks");
	if (json_is_array(v) && json_array_size(v) == f->n)
		x = calloc(f->n, sizeof(*x));
	for (size_t i = 0; x && i < f->n; i++) {
		json_t *b = json_array_get(v, i);
		const char *name = json_string_value(json_object_get(b, "name"));
		const char *svg =
			json_string_value(json_object_get(json_object_get(b, "flamegraph"), "svg"));

		x[i].calls = int_member(b, "calls");
		x[i].unmatched = int_member(b, "unmatched_returns");
		if (name && svg && !strcmp(name, f->benches[i].name))
			x[i].svg = strdup(svg);
	}
	json_decref(root);
	return x;
}

/* The number after name=" in the tag s..end, or 'dflt'. */
static double tag_number(const char *s, const char *end, const char *name, double dflt)
{
	size_t len = strlen(name);

	for (const char *p = s; p + len + 2 < end; p++)
		if (p[0] == ' ' && !strncmp(p + 1, name, len) && p[len + 1] == '=' &&
		    p[len + 2] == '"') {
			double v = strtod(p + len + 3, NULL);

			return v > 0 && isfinite(v) ? v : dflt;
		}
	return dflt;
}

/* The flame graph 'svg' of benchmark 'name' in a sandboxed frame of its
 * own (its script and ids stay apart), or why it is not there. */
static void flame(FILE *o, const struct results_file *f, const char *svg, const char *name)
{
	const char *path = svg, *why = NULL, *slash = strrchr(f->path, '/'), *s = NULL, *end = NULL;
	char *alt = NULL, *text = NULL;
	struct stat st;
	int err = 0;

	if (stat(path, &st) != 0) {
		err = errno;
		if (svg[0] != '/' && slash &&
		    (alt = str_fmt("%.*s/%s", (int)(slash - f->path), f->path, svg)) &&
		    stat(alt, &st) == 0) {
			path = alt;
			err = 0;
		}
	}
	if (err)
		why = str_errno(err);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (st.st_size > MAX_FLAME)
		why = "larger than 32 MiB";
	else if (!(text = str_read_file(path, NULL)))
		why = "cannot be read";
	else if (!(s = strstr(text, "<svg")) || !(end = strchr(s, '>')))
		why = "not an SVG file";
	if (why) {
		fputs("<p class=\"note\">flame graph <code>", o);
		html_esc(o, svg);
		fputs("</code>: ", o);
		html_esc(o, why);
		fputs("</p>\n", o);
		goto out;
	}
	fputs("<details class=\"flame\" open><summary>flame graph <code>", o);
	html_esc(o, path);
	fprintf(o,
		"</code> <span class=\"muted\">(click a frame to zoom)</span></summary><iframe "
		"class=\"flame\" sandbox=\"allow-scripts\" style=\"aspect-ratio:%.0f/%.0f\" "
		"data-kind=\"flamegraph\" data-bench=\"",
		tag_number(s, end, "width", 1200), tag_number(s, end, "height", 300));
	html_esc(o, name);
	fputs("\" title=\"flame graph of ", o);
	html_esc(o, name);
	fputs("\" srcdoc=\"", o);
	html_esc(o,
		 "<!DOCTYPE html><meta charset=\"utf-8\"><style>html,body{margin:0;overflow:hidden}"
		 "svg{display:block;width:100%;height:auto}</style>");
	html_esc(o, s);
	fputs("\"></iframe></details>\n", o);
out:
	free(text);
	free(alt);
}

/* ---- sections ----------------------------------------------------------- */

static const char *status_word(const struct results_bench *b)
{
	return b->status == RESULTS_STATUS_NO_CALLS ? "no calls" : results_status_name(b->status);
}

/* "a – b", or "a" alone when both read the same. */
static void range_text(double lo, double hi, const char *unit, char *buf, size_t size)
{
	char a[64], b[64];

	html_fmt_value(lo, unit, a, sizeof(a));
	html_fmt_value(hi, unit, b, sizeof(b));
	if (!strcmp(a, b))
		snprintf(buf, size, "%s", a);
	else
		snprintf(buf, size, "%s – %s", a, b);
}

static void bench_facts(FILE *o, const struct results_bench *b, const struct extra *x, bool obs)
{
	const struct results_stats *s = &b->stats;
	char v[64], w[64], buf[200], what[32];

	fputs("<div class=\"facts\"><dl class=\"kv\">", o);
	html_kv(o, "status", status_word(b));
	if (b->ok) {
		html_fmt_value(b->value, b->unit, v, sizeof(v));
		html_kv(o, obs ? "median call" : "value", v);
	}
	if (b->has_stats) {
		snprintf(what, sizeof(what), "%g%% interval",
			 isfinite(s->confidence) ? s->confidence * 100 : 95);
		range_text(s->ci_low, s->ci_high, b->unit, buf, sizeof(buf));
		html_kv(o, what, buf);
		html_fmt_value(s->mean, b->unit, v, sizeof(v));
		html_fmt_value(s->stddev, b->unit, w, sizeof(w));
		snprintf(buf, sizeof(buf), "%s ± %s", v, w);
		html_kv(o, "mean ± sd", buf);
		range_text(s->min, s->max, b->unit, buf, sizeof(buf));
		html_kv(o, "min – max", buf);
		if (obs)
			snprintf(buf, sizeof(buf), "%lld",
				 x && x->calls >= 0 ? x->calls : (long long)s->samples);
		else if (stats_format_count((double)s->iterations_per_sample, w, sizeof(w)) == 0)
			snprintf(buf, sizeof(buf), "%zu × %s iteration%s", s->samples, w,
				 s->iterations_per_sample == 1 ? "" : "s");
		html_kv(o, obs ? "calls" : "samples", buf);
		if (isfinite(s->cv)) {
			snprintf(buf, sizeof(buf), "%.2f%%", s->cv * 100);
			html_kv(o, "cv", buf);
		}
		if (isfinite(s->uncertainty)) {
			html_fmt_value(s->uncertainty, b->unit, v, sizeof(v));
			snprintf(buf, sizeof(buf), "± %s", v);
			html_kv(o, "each call", buf);
		}
	}
	if (obs && x && x->unmatched >= 0) {
		snprintf(buf, sizeof(buf), "%lld", x->unmatched);
		html_kv(o, "unmatched returns", buf);
	}
	if (b->threads) {
		snprintf(buf, sizeof(buf), "%u", b->threads);
		html_kv(o, "threads", buf);
	}
	for (size_t i = 0; i < b->ncounters && i < 8; i++) {
		if (stats_format_count(b->counter_values[i], v, sizeof(v)) < 0)
			snprintf(v, sizeof(v), "–");
		html_kv(o, b->counter_names[i], v);
	}
	fputs("</dl>", o);
	if (b->ndiagnostics)
		fputs("<ul class=\"diag\">", o);
	for (size_t i = 0; i < b->ndiagnostics; i++) {
		fputs("<li>", o);
		html_esc(o, b->diagnostics[i]);
		fputs("</li>", o);
	}
	if (b->ndiagnostics)
		fputs("</ul>", o);
	if (b->error) {
		fputs("<pre class=\"err\">", o);
		html_esc(o, b->error);
		fputs("</pre>", o);
	}
	fputs("</div>", o);
}

/* What the program was given after "--" and its input, from
 * results_file.target's lines ("arg X", "input Y"). */
static void target(FILE *o, const char *t, bool obs)
{
	bool any = false;

	for (const char *p = t; p && *p;) {
		size_t len = strcspn(p, "\n");

		if (!strncmp(p, "arg ", 4) || !strncmp(p, "input ", 6)) {
			if (!any)
				fprintf(o, "<dt>%s</dt><dd><code>", obs ? "program" : "arguments");
			else
				fputc(' ', o);
			if (*p == 'i')
				fputs("&lt; ", o);
			html_esc_n(o, strchr(p, ' ') + 1, (size_t)(p + len - strchr(p, ' ') - 1));
			any = true;
		}
		p += len + (p[len] == '\n');
	}
	if (any)
		fputs("</code></dd>", o);
}

static void env(FILE *o, const struct results_file *f)
{
	const struct results_env *e = &f->env;
	char buf[64];

	fputs("<dl class=\"env\">", o);
	if (e->binary)
		html_kv(o, "binary", e->binary);
	target(o, f->target, results_file_observed(f));
	if (f->instrument)
		html_kv(o, "instrument", f->instrument);
	if (f->isolation)
		html_kv(o, "isolation", f->isolation);
	if (e->cpu) {
		snprintf(buf, sizeof(buf), "%d", e->cores);
		html_kv(o, "cpu", e->cpu);
		if (e->cores > 0)
			html_kv(o, "cores", buf);
	}
	if (e->kernel)
		html_kv(o, "kernel", e->kernel);
	if (e->date)
		html_kv(o, "date", e->date);
	if (e->benchtrap)
		html_kv(o, "benchtrap", e->benchtrap);
	fputs("</dl>\n", o);
	if (f->partial) {
		fputs("<p class=\"warn\">partial: ", o);
		html_esc(o, f->partial);
		fputs("</p>\n", o);
	}
}

/* The benchmarks of a file at a glance, each linked to its plot. */
static void summary_table(FILE *o, const struct results_file *f, size_t idx)
{
	char v[64], ci[160];

	fputs("<table class=\"sum\"><thead><tr><th>benchmark</th><th class=\"num\">value</th>"
	      "<th class=\"num\">interval of the median</th><th class=\"num\">samples</th>"
	      "<th>status</th></tr></thead><tbody>\n",
	      o);
	for (size_t i = 0; i < f->n; i++) {
		const struct results_bench *r = &f->benches[i];

		html_fmt_value(r->ok ? r->value : NAN, r->unit, v, sizeof(v));
		range_text(r->has_stats ? r->stats.ci_low : NAN,
			   r->has_stats ? r->stats.ci_high : NAN, r->unit, ci, sizeof(ci));
		fprintf(o, "<tr class=\"s-%s\"><td class=\"name\"><a href=\"#f%zu-b%zu\">",
			results_status_name(r->status), idx, i);
		html_esc(o, r->name);
		fprintf(o,
			"</a></td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
			"<td class=\"num\">%zu</td><td>%s</td></tr>\n",
			v, ci, r->nraw, status_word(r));
	}
	fputs("</tbody></table>\n", o);
}

static int file_section(FILE *o, const struct results_file *f, size_t idx)
{
	bool obs = results_file_observed(f);
	struct extra *x = extras_load(f);
	const char *kind = obs ? "observe" : "run";
	int r = 0;

	fprintf(o, "<section class=\"%s\" id=\"f%zu\" data-kind=\"%s\" data-file=\"", kind, idx,
		kind);
	html_esc(o, f->path);
	fprintf(o, "\" data-n=\"%zu\"><h2><span class=\"tag\">%s</span> ", f->n,
		obs		 ? "observed calls"
		: f->paired_base ? "run (head)"
				 : "run");
	html_esc(o, f->path);
	fputs("</h2>\n", o);
	env(o, f);
	summary_table(o, f, idx);
	for (size_t i = 0; i < f->n && r == 0; i++) {
		const struct results_bench *b = &f->benches[i];

		fprintf(o, "<article class=\"bench\" id=\"f%zu-b%zu\" data-bench=\"", idx, i);
		html_esc(o, b->name);
		fprintf(o, "\" data-status=\"%s\"><h3>", results_status_name(b->status));
		html_esc(o, b->name);
		if (!b->ok)
			fprintf(o, " <span class=\"badge v-%s\">%s</span>",
				b->status == RESULTS_STATUS_FAILED ? "failed" : "missing",
				status_word(b));
		fputs("</h3><div class=\"row\"><div class=\"fig\">", o);
		r = obs ? report_html_observed(o, b) : report_html_samples(o, b);
		fputs("</div>", o);
		bench_facts(o, b, x ? &x[i] : NULL, obs);
		fputs("</div>", o);
		if (x && x[i].svg)
			flame(o, f, x[i].svg, b->name);
		fputs("</article>\n", o);
	}
	fputs("</section>\n", o);
	extras_free(x, f->n);
	return r;
}

static int compare_section(FILE *o, const struct report_html *h, const struct results_file *base,
			   const struct results_file *head, size_t idx)
{
	struct results_comparison c = { 0 };
	int r = results_compare(base, head, &h->compare, &c);

	if (r < 0)
		return r;
	fprintf(o, "<section class=\"compare\" id=\"c%zu\" data-kind=\"compare\" data-base=\"",
		idx);
	html_esc(o, base->path);
	fputs("\" data-head=\"", o);
	html_esc(o, head->path);
	fputs("\"><h2><span class=\"tag\">comparison</span> ", o);
	html_esc(o, base->path);
	fputs(" → ", o);
	html_esc(o, head->path);
	fputs("</h2>\n", o);
	r = report_html_comparison(o, &c);
	fputs("</section>\n", o);
	results_comparison_clear(&c);
	return r;
}

static int history_section(FILE *o, const struct report_html *h)
{
	struct history_finding *found = NULL;
	int r;

	fprintf(o,
		"<section class=\"history\" id=\"history\" data-kind=\"history-db\" "
		"data-n=\"%zu\"><h2><span class=\"tag\">history</span> ",
		h->nseries);
	html_esc(o, h->history);
	fprintf(o,
		"</h2>\n<p class=\"muted\">%zu series. A dashed line marks a change point, "
		"where the series' level steps (docs/history.md), with the step; the red "
		"lines are the medians between them, the whiskers each run's interval. "
		"Hover over a run, or reach it with Tab, for its commit.</p>\n",
		h->nseries);
	/* The change points `history check` finds: the same call. */
	r = history_check(h->series, h->nseries, h->compare.threshold, &found);
	if (r < 0)
		return r;
	for (size_t i = 0; i < h->nseries && r == 0; i++) {
		const struct history_series *s = &h->series[i];

		fputs("<article class=\"bench\" data-bench=\"", o);
		html_esc(o, s->name);
		fputs("\"><h3>", o);
		html_esc(o, s->name);
		fputs(" <small>", o);
		html_esc(o, s->instrument);
		fputs(" · ", o);
		html_esc(o, s->machine);
		fputs("</small></h3>", o);
		r = report_html_series(o, s, found[i].changes, found[i].nchanges);
		fputs("</article>\n", o);
	}
	history_findings_free(found, h->nseries);
	if (r < 0)
		return r;
	fputs("</section>\n", o);
	return 0;
}

/* ---- the page ----------------------------------------------------------- */

/* No request of any kind; inline styles and scripts (the flame graphs'
 * too: a srcdoc frame inherits this policy). */
static const char head_start[] =
	"<!DOCTYPE html>\n<html lang=\"en\" data-errors=\"0\">\n<head>\n<meta charset=\"utf-8\">\n"
	"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	"style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
	"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	"<meta name=\"generator\" content=\"benchtrap " BENCHTRAP_VERSION "\">\n"
	"<script>addEventListener('error',function(e){var d=document.documentElement;"
	"d.setAttribute('data-errors',+d.getAttribute('data-errors')+1);"
	"d.setAttribute('data-error',String(e.message));});</script>\n";

static const char style_page[] =
	"<style>\n"
	":root{--fg:#1c2430;--muted:#5c6773;--line:#dde2e8;--bg:#f4f6f8;--reg:#b42318;"
	"--imp:#137333;--unch:#5f6b76;--inc:#a15c00;--fail:#7a1410;--new:#1f5fae;"
	"--miss:#77828c;--acc:#2c6cb0}\n"
	"*{box-sizing:border-box}\n"
	"body{margin:0;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica "
	"Neue',Arial,sans-serif;color:var(--fg);background:var(--bg)}\n"
	"header{background:#1d2733;color:#fff;padding:18px 32px}\n"
	"header h1{margin:0;font-size:21px;font-weight:600;letter-spacing:.2px}\n"
	"header p{margin:4px 0 0;color:#aeb9c5;font-size:13px}\n"
	"nav{background:#fff;border-bottom:1px solid var(--line);padding:8px 32px;font-size:13px}\n"
	"nav a{margin-right:18px}\n"
	"main{max-width:1200px;margin:0 auto;padding:22px 32px}\n"
	"section{background:#fff;border:1px solid var(--line);border-radius:8px;padding:18px "
	"24px;margin:0 0 24px;box-shadow:0 1px 2px rgba(16,24,40,.04)}\n"
	"h2{font-size:17px;margin:0 0 10px;font-weight:600;overflow-wrap:anywhere}\n"
	"h3{font:600 13.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;margin:0 0 "
	"8px;overflow-wrap:anywhere}\n"
	"h3 small{font:12px system-ui,sans-serif;color:var(--muted);margin-left:6px}\n"
	".tag{display:inline-block;font-size:11px;font-weight:700;text-transform:uppercase;"
	"letter-spacing:.6px;color:var(--acc);background:#e8f0fa;border-radius:4px;padding:2px "
	"7px;margin-right:8px;vertical-align:2px}\n"
	"a{color:var(--acc);text-decoration:none}a:hover{text-decoration:underline}\n"
	".muted{color:var(--muted)}\n"
	"dl.env{display:grid;grid-template-columns:max-content minmax(0,1fr) max-content "
	"minmax(0,1fr);gap:2px 14px;margin:0 0 14px;font-size:12.5px}\n"
	"dl.env dt{color:var(--muted)}dl.env dd{margin:0;word-break:break-word}\n"
	".bench{border-top:1px solid var(--line);padding:16px 0 10px;content-visibility:auto;"
	"contain-intrinsic-size:auto 250px}\n"
	".row{display:flex;gap:28px;align-items:flex-start;flex-wrap:wrap}\n"
	".fig{flex:1 1 560px;max-width:660px}.facts{flex:1 1 260px;font-size:13px}\n"
	"dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0}\n"
	"dl.kv dt{color:var(--muted)}dl.kv dd{margin:0;font-variant-numeric:tabular-nums}\n"
	"ul.diag{margin:8px 0 0;padding-left:18px;color:#6a4a00}\n"
	"pre.err{margin:8px 0 0;padding:8px 10px;background:#fdf0ef;border:1px solid #f1c6c2;"
	"border-radius:4px;white-space:pre-wrap;font-size:12px;color:#5c1410}\n"
	".noplot{display:flex;align-items:center;justify-content:center;height:120px;"
	"border:1px dashed var(--line);border-radius:6px;color:var(--muted)}\n"
	"p.warn{background:#fff6e5;border-left:3px solid var(--inc);padding:6px 10px;margin:6px "
	"0}\np.note{color:var(--muted);margin:6px 0}\n"
	"p.summary{font-size:15px;font-weight:600;margin:0 0 6px}\n"
	"p.counts .badge{margin-right:4px}\n"
	"details.flame{margin-top:10px}details.flame summary{cursor:pointer;font-size:13px;"
	"color:var(--muted)}\n"
	"iframe.flame{display:block;width:100%;border:1px solid var(--line);border-radius:4px;"
	"margin-top:6px;background:#fdfaf4}\n"
	"footer{color:var(--muted);font-size:12px;text-align:center;padding:0 0 24px}\n"
	"</style>\n";

static const char style_tables[] =
	"<style>\n"
	"table{border-collapse:collapse;width:100%;font-size:13px;margin:8px 0 6px}\n"
	"th,td{padding:4px 10px;border-bottom:1px solid var(--line);text-align:left;"
	"vertical-align:middle}\n"
	"th{font-weight:600;color:var(--muted);font-size:12px;background:#fff;position:sticky;"
	"top:0;z-index:1}\n"
	"tbody tr:hover{background:#f7f9fb}\n"
	"td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
	"td.name{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px;"
	"overflow-wrap:anywhere}\ntd.name "
	"small{white-space:nowrap;font-family:system-ui,sans-serif;"
	"color:var(--muted)}\n"
	"td.civ,th.civ{padding:0 6px;width:272px}td.note{color:var(--muted);font-size:12px}\n"
	".badge{display:inline-block;padding:0 8px;border-radius:10px;font-size:12px;"
	"font-weight:600;line-height:19px;border:1px solid currentColor;white-space:nowrap}\n"
	".v-regressed{--c:var(--reg)}.v-improved{--c:var(--imp)}.v-unchanged{--c:var(--unch)}"
	".v-inconclusive{--c:var(--inc)}.v-failed{--c:var(--fail)}.v-new{--c:var(--new)}"
	".v-missing{--c:var(--miss)}\n"
	".badge,.v-regressed .badge,.v-improved .badge,.v-unchanged .badge,.v-inconclusive "
	".badge,.v-failed .badge,.v-new .badge,.v-missing .badge{color:var(--c,var(--unch))}\n"
	".v-regressed .badge,.badge.v-regressed{background:#fdecea}.v-improved .badge,"
	".badge.v-improved{background:#e7f5ec}.v-inconclusive .badge,.badge.v-inconclusive"
	"{background:#fff3df}.v-failed .badge,.badge.v-failed{background:#f9e3e1}\n"
	"tr.s-failed td{color:var(--fail)}\n"
	"</style>\n";

static const char style_plots[] =
	"<style>\n"
	"svg.plot{display:block;width:100%;height:auto;overflow:visible}\n"
	"svg.plot.wide{max-width:860px}\n"
	"svg text{font:11px system-ui,-apple-system,'Segoe UI',Roboto,Arial,sans-serif;"
	"fill:#46515c}\n"
	"text.yt{text-anchor:end}text.xt,text.al{text-anchor:middle}text.al{fill:#2a333d}"
	"text.al.top{text-anchor:start}\n"
	".grid{stroke:#e9edf1;fill:none}.ax{stroke:#8a949e;fill:none}\n"
	".bar{fill:#6c9bd2}.bar:hover{fill:#2c6cb0}\n"
	"rect.ci{fill:#f2b84b;fill-opacity:.3}.cib{stroke:#b07a12;stroke-width:1.5;fill:none}\n"
	".med{stroke:#b42318;stroke-width:2;fill:none}\n"
	".rug{stroke:#1d2733;stroke-opacity:.5;fill:none}\n"
	"svg.cirow{display:block;width:260px;height:22px;overflow:visible}\n"
	"svg.cirow text.xt{fill:#3d4752;font-weight:600}\n"
	".band{fill:#eef1f5}.thr{stroke:#a3adb7;stroke-dasharray:3 2}.zero{stroke:#5c6773}\n"
	"path.civ{stroke:var(--c);stroke-width:3;stroke-linecap:round}.dot{fill:var(--c);"
	"stroke:#fff;stroke-width:1.5}.clip{fill:var(--c)}\n"
	".line{stroke:#9bbbe3;stroke-width:1.5;fill:none}.whisk{stroke:#9bbbe3;fill:none}\n"
	".seg{stroke:#b42318;stroke-opacity:.55;stroke-width:2;fill:none}\n"
	".cp path{stroke:#b42318;stroke-dasharray:4 3}.cp text{fill:#b42318;font-weight:600;"
	"text-anchor:middle}\n"
	".pt{outline:none;cursor:default}.pt circle{fill:#2c6cb0;stroke:#fff;stroke-width:1}\n"
	".pt.fail path{stroke:var(--fail);stroke-width:1.8}\n"
	".pt .tip{visibility:hidden;fill:#111;font-weight:600;paint-order:stroke;stroke:#fff;"
	"stroke-width:4px;stroke-linejoin:round}\n"
	".pt:hover .tip,.pt:focus .tip{visibility:visible}\n"
	".pt:focus circle,.pt:hover circle{stroke:#111;stroke-width:2;r:5px}\n"
	"</style>\n";

/* Where each section is, at the top. */
static void nav(FILE *o, const struct report_html *h)
{
	fputs("<nav>", o);
	for (size_t i = 0; i < h->nfiles; i++) {
		const struct results_file *f = h->files[i];

		if (h->base || f->paired_base) {
			fprintf(o, "<a href=\"#c%zu\">comparison: ", i);
			html_esc(o, f->path);
			fputs("</a>", o);
		}
		fprintf(o, "<a href=\"#f%zu\">%s: ", i,
			results_file_observed(f) ? "observed" : "run");
		html_esc(o, f->path);
		fputs("</a>", o);
	}
	if (h->history) {
		fputs("<a href=\"#history\">history: ", o);
		html_esc(o, h->history);
		fputs("</a>", o);
	}
	fputs("</nav>\n", o);
}

int report_html_write(const struct report_html *h, FILE *o)
{
	const char *title = h->title ? h->title : "benchtrap report";
	int r = 0;

	fputs(head_start, o);
	fputs("<title>", o);
	html_esc(o, title);
	fputs("</title>\n", o);
	fputs(style_page, o);
	fputs(style_tables, o);
	fputs(style_plots, o);
	fputs("</head>\n<body>\n<header><h1>", o);
	html_esc(o, title);
	if (h->nfiles)
		fprintf(o, "</h1><p>%zu results file%s%s", h->nfiles, h->nfiles == 1 ? "" : "s",
			h->history ? " and a history" : "");
	else
		fputs("</h1><p>a history", o);
	if (h->base) {
		fputs(", compared against ", o);
		html_esc(o, h->base->path);
	}
	fputs("</p></header>\n", o);
	nav(o, h);
	fputs("<main>\n", o);
	for (size_t i = 0; i < h->nfiles && r == 0; i++) {
		const struct results_file *f = h->files[i];
		const struct results_file *base = h->base ? h->base : f->paired_base;

		if (base)
			r = compare_section(o, h, base, f, i);
		if (r == 0)
			r = file_section(o, f, i);
	}
	if (r == 0 && h->history)
		r = history_section(o, h);
	fputs("</main>\n<footer>written by benchtrap " BENCHTRAP_VERSION
	      " report: one file, no request made when it opens</footer>\n</body>\n</html>\n",
	      o);
	errno = 0;
	if (r == 0 && (fflush(o) != 0 || ferror(o)))
		r = errno > 0 ? -errno : -EIO;
	return r;
}
