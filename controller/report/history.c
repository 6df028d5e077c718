/* SPDX-License-Identifier: MIT */
/* The history's printed forms (report.h): `history list`, `show`, `check`. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "results/json.h"

/* Seven digits of a commit, as git shows it; "-" for none. */
static const char *short_commit(const char *c, char buf[16])
{
	if (!c)
		return "-";
	snprintf(buf, 16, "%.12s", c);
	if (strlen(c) > 12 && strspn(c, "0123456789abcdef") == strlen(c))
		buf[7] = '\0';
	return buf;
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? results_json_num(v) : json_null();
}

static json_t *point_json(const struct history_point *p)
{
	json_t *o = json_object();

	json_object_set_new(o, "run", json_integer(p->run));
	json_object_set_new(o, "commit", results_json_str(p->commit));
	json_object_set_new(o, "branch", results_json_str(p->branch));
	json_object_set_new(o, "date", results_json_str(p->date));
	json_object_set_new(o, "status", json_string(p->ok ? "ok" : "failed"));
	json_object_set_new(o, "value", num_or_null(p->value));
	json_object_set_new(o, "ci_low", num_or_null(p->ci_low));
	json_object_set_new(o, "ci_high", num_or_null(p->ci_high));
	json_object_set_new(o, "samples", json_integer((json_int_t)p->samples));
	return o;
}

static json_t *series_head(const struct history_series *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "name", results_json_str(s->name));
	json_object_set_new(o, "instrument", results_json_str(s->instrument));
	json_object_set_new(o, "unit", results_json_str(s->unit));
	json_object_set_new(o, "machine", results_json_str(s->machine));
	return o;
}

/* results_json_dump() takes the document: it is gone after. */
static int dump(json_t *doc, FILE *f)
{
	return doc ? results_json_dump(doc, f) : -ENOMEM;
}

/* A CSV field, quoted when it must be (RFC 4180). */
static void csv_field(FILE *f, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void csv_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.10g", v);
}

int report_history_series(FILE *f, const struct history_series *v, size_t n,
			  enum report_history_format fmt)
{
	char c[16];

	if (fmt == REPORT_HISTORY_JSON) {
		json_t *doc = json_object(), *all = json_array();

		for (size_t i = 0; i < n; i++) {
			json_t *s = series_head(&v[i]), *pts = json_array();

			for (size_t j = 0; j < v[i].n; j++)
				json_array_append_new(pts, point_json(&v[i].points[j]));
			json_object_set_new(s, "points", pts);
			json_array_append_new(all, s);
		}
		json_object_set_new(doc, "series", all);
		return dump(doc, f);
	}
	if (fmt == REPORT_HISTORY_CSV) {
		fputs("name,instrument,unit,machine,run,commit,branch,date,status,value,ci_low,"
		      "ci_high,samples\n",
		      f);
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < v[i].n; j++) {
				const struct history_point *p = &v[i].points[j];

				csv_field(f, v[i].name);
				fputc(',', f);
				csv_field(f, v[i].instrument);
				fputc(',', f);
				csv_field(f, v[i].unit);
				fputc(',', f);
				csv_field(f, v[i].machine);
				fprintf(f, ",%" PRId64 ",", p->run);
				csv_field(f, p->commit);
				fputc(',', f);
				csv_field(f, p->branch);
				fputc(',', f);
				csv_field(f, p->date);
				fprintf(f, ",%s,", p->ok ? "ok" : "failed");
				csv_num(f, p->value);
				fputc(',', f);
				csv_num(f, p->ci_low);
				fputc(',', f);
				csv_num(f, p->ci_high);
				fprintf(f, ",%zu\n", p->samples);
			}
		return ferror(f) ? -EIO : 0;
	}
	for (size_t i = 0; i < n; i++) {
		const struct history_series *s = &v[i];

		fprintf(f, "%s%s (%s, %s): %zu run(s)\n", i ? "\n" : "", s->name, s->instrument,
			s->machine, s->n);
		fprintf(f, "  %-12s %-20s %14s  %-25s %s\n", "commit", "date",
			s->unit ? s->unit : "", "interval", "samples");
		for (size_t j = 0; j < s->n; j++) {
			const struct history_point *p = &s->points[j];
			char iv[64] = "";

			if (isfinite(p->ci_low) && isfinite(p->ci_high))
				snprintf(iv, sizeof(iv), "%.6g .. %.6g", p->ci_low, p->ci_high);
			if (p->ok)
				fprintf(f, "  %-12s %-20.20s %14.6g  %-25s %zu\n",
					short_commit(p->commit, c), p->date ? p->date : "-",
					p->value, iv, p->samples);
			else
				fprintf(f, "  %-12s %-20.20s %14s\n", short_commit(p->commit, c),
					p->date ? p->date : "-", "failed");
		}
	}
	return ferror(f) ? -EIO : 0;
}

int report_history_runs(FILE *f, const struct history_run *v, size_t n,
			enum report_history_format fmt)
{
	char c[16];

	if (fmt == REPORT_HISTORY_JSON) {
		json_t *doc = json_object(), *all = json_array();

		for (size_t i = 0; i < n; i++) {
			json_t *o = json_object();

			json_object_set_new(o, "run", json_integer(v[i].id));
			json_object_set_new(o, "commit", results_json_str(v[i].commit));
			json_object_set_new(o, "branch", results_json_str(v[i].branch));
			json_object_set_new(o, "date", results_json_str(v[i].date));
			json_object_set_new(o, "machine", results_json_str(v[i].machine));
			json_object_set_new(o, "instrument", results_json_str(v[i].instrument));
			json_object_set_new(o, "source", results_json_str(v[i].source));
			json_object_set_new(o, "benchmarks",
					    json_integer((json_int_t)v[i].benchmarks));
			json_array_append_new(all, o);
		}
		json_object_set_new(doc, "runs", all);
		return dump(doc, f);
	}
	fprintf(f, "%6s  %-12s %-16s %-20s %-10s %10s  %s\n", "run", "commit", "branch", "date",
		"instrument", "benchmarks", "machine");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%6" PRId64 "  %-12s %-16.16s %-20.20s %-10s %10zu  %s\n", v[i].id,
			short_commit(v[i].commit, c), v[i].branch ? v[i].branch : "-",
			v[i].date ? v[i].date : "-", v[i].instrument ? v[i].instrument : "-",
			v[i].benchmarks, v[i].machine ? v[i].machine : "-");
	return ferror(f) ? -EIO : 0;
}

/* The commits either side of change point c of series s. */
static void sides(const struct history_series *s, const struct changepoint *c,
		  const struct history_point **before, const struct history_point **after)
{
	*after = &s->points[c->at];
	*before = NULL;
	for (size_t j = c->at; j-- > 0;)
		if (s->points[j].ok) {
			*before = &s->points[j];
			break;
		}
}

int report_history_findings(FILE *f, const struct history_finding *v, size_t n, double threshold,
			    enum report_history_format fmt)
{
	size_t nseries = 0, nchanges = 0, nregressed = 0;
	char c1[16], c2[16];

	if (fmt == REPORT_HISTORY_JSON) {
		json_t *doc = json_object(), *all = json_array();

		for (size_t i = 0; i < n; i++) {
			const struct history_series *s = v[i].series;
			json_t *o, *cps;

			if (!v[i].nchanges)
				continue;
			o = series_head(s);
			cps = json_array();
			for (size_t k = 0; k < v[i].nchanges; k++) {
				const struct changepoint *c = &v[i].changes[k];
				const struct history_point *b, *a;
				json_t *x = json_object();

				sides(s, c, &b, &a);
				json_object_set_new(x, "commit", results_json_str(a->commit));
				json_object_set_new(x, "date", results_json_str(a->date));
				json_object_set_new(x, "previous",
						    results_json_str(b ? b->commit : NULL));
				json_object_set_new(x, "before", num_or_null(c->before));
				json_object_set_new(x, "after", num_or_null(c->after));
				json_object_set_new(x, "step", num_or_null(c->step));
				json_object_set_new(x, "p", num_or_null(c->p));
				json_array_append_new(cps, x);
			}
			json_object_set_new(o, "change_points", cps);
			json_object_set_new(o, "regressed", json_boolean(v[i].regressed));
			json_array_append_new(all, o);
		}
		json_object_set_new(doc, "threshold", results_json_num(threshold));
		json_object_set_new(doc, "series_checked", json_integer((json_int_t)n));
		json_object_set_new(doc, "series", all);
		return dump(doc, f);
	}
	for (size_t i = 0; i < n; i++) {
		const struct history_series *s = v[i].series;

		nseries++;
		for (size_t k = 0; k < v[i].nchanges; k++) {
			const struct changepoint *c = &v[i].changes[k];
			const struct history_point *b, *a;
			bool newest = k + 1 == v[i].nchanges;
			const char *word = newest && v[i].regressed ? "REGRESSED"
					   : c->step > 0	    ? "worse"
								    : "better";

			sides(s, c, &b, &a);
			nchanges++;
			fprintf(f, "%-9s %s (%s, %s): %+.2f %% at %s (after %s), %.6g -> %.6g %s",
				word, s->name, s->instrument, s->machine, 100 * c->step,
				short_commit(a->commit, c1), short_commit(b ? b->commit : NULL, c2),
				c->before, c->after, s->unit ? s->unit : "");
			if (c->p > 0)
				fprintf(f, ", p = %.3g", c->p);
			else if (results_instrument_exact(s->instrument))
				fputs(", exact", f);
			fputc('\n', f);
		}
		nregressed += v[i].regressed;
	}
	fprintf(f,
		"%s%zu series checked: %zu change point(s), %zu newest a regression beyond %g %%\n",
		nchanges ? "\n" : "", nseries, nchanges, nregressed, 100 * threshold);
	return ferror(f) ? -EIO : 0;
}
