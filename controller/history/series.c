/* SPDX-License-Identifier: MIT */
/* Reading the history back: its series, its runs; forgetting runs. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history/internal.h"
#include "util/array.h"
#include "util/match.h"

static char *column_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	return s ? strdup((const char *)s) : NULL;
}

static double column_real(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

static bool column_is(sqlite3_stmt *st, int i, const char *s)
{
	const unsigned char *v = sqlite3_column_text(st, i);

	return v && s && !strcmp((const char *)v, s);
}

void history_series_free(struct history_series *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		for (size_t j = 0; j < v[i].n; j++) {
			free(v[i].points[j].commit);
			free(v[i].points[j].branch);
			free(v[i].points[j].date);
		}
		free(v[i].points);
		free(v[i].name);
		free(v[i].instrument);
		free(v[i].unit);
		free(v[i].machine);
	}
	free(v);
}

/* A new series for the row at st, appended to *v. */
static int series_start(sqlite3_stmt *st, struct history_series **v, size_t *n, size_t *cap)
{
	struct history_series *s;

	if (array_grow((void **)v, cap, *n + 1, sizeof(**v)) < 0)
		return -ENOMEM;
	s = &(*v)[(*n)++];
	*s = (struct history_series){ .name = column_dup(st, 0),
				      .instrument = column_dup(st, 1),
				      .unit = column_dup(st, 2),
				      .machine = column_dup(st, 3) };
	return s->name && s->instrument && s->machine ? 0 : -ENOMEM;
}

int history_series(struct history *h, const char *name, struct history_series **ret, size_t *ret_n,
		   char **ret_error)
{
	static const char sql[] =
		"SELECT f.name, f.instrument, f.unit, r.machine, r.id, r.commit_id, r.branch,"
		" r.date, f.status, f.value, f.ci_low, f.ci_high, f.samples"
		" FROM figures f JOIN runs r ON r.id = f.run"
		" ORDER BY f.name, f.instrument, r.machine, r.ordered, r.id";
	struct history_series *v = NULL;
	size_t n = 0, cap = 0, pcap = 0;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(h->db, sql, -1, &st, NULL), r = 0;

	if (rc != SQLITE_OK)
		return history_sqlfail(h, ret_error, rc, "cannot read the history");
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct history_series *s = n ? &v[n - 1] : NULL;
		struct history_point *p;
		const unsigned char *bn = sqlite3_column_text(st, 0);

		if (!bn || (name && !match_glob(name, (const char *)bn)))
			continue;
		if (!s || !column_is(st, 0, s->name) || !column_is(st, 1, s->instrument) ||
		    !column_is(st, 3, s->machine)) {
			r = series_start(st, &v, &n, &cap);
			if (r < 0)
				break;
			s = &v[n - 1];
			pcap = 0;
		}
		if (array_grow((void **)&s->points, &pcap, s->n + 1, sizeof(*s->points)) < 0) {
			r = -ENOMEM;
			break;
		}
		p = &s->points[s->n++];
		*p = (struct history_point){
			.run = sqlite3_column_int64(st, 4),
			.commit = column_dup(st, 5),
			.branch = column_dup(st, 6),
			.date = column_dup(st, 7),
			.ok = column_is(st, 8, "ok"),
			.value = column_real(st, 9),
			.ci_low = column_real(st, 10),
			.ci_high = column_real(st, 11),
			.samples = (size_t)sqlite3_column_int64(st, 12),
		};
		if (!p->ok)
			p->value = NAN;
	}
	sqlite3_finalize(st);
	if (r == 0 && rc != SQLITE_DONE)
		r = history_sqlfail(h, ret_error, rc, "cannot read the history");
	if (r < 0) {
		history_series_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

void history_runs_free(struct history_run *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].commit);
		free(v[i].branch);
		free(v[i].date);
		free(v[i].machine);
		free(v[i].instrument);
		free(v[i].source);
	}
	free(v);
}

int history_runs(struct history *h, struct history_run **ret, size_t *ret_n, char **ret_error)
{
	static const char sql[] =
		"SELECT r.id, r.commit_id, r.branch, r.date, r.machine, r.instrument, r.source,"
		" (SELECT count(*) FROM figures f WHERE f.run = r.id)"
		" FROM runs r ORDER BY r.ordered, r.id";
	struct history_run *v = NULL;
	size_t n = 0, cap = 0;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(h->db, sql, -1, &st, NULL), r = 0;

	if (rc != SQLITE_OK)
		return history_sqlfail(h, ret_error, rc, "cannot read the history");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct history_run *x;

		if (array_grow((void **)&v, &cap, n + 1, sizeof(*v)) < 0) {
			r = -ENOMEM;
			break;
		}
		x = &v[n++];
		*x = (struct history_run){
			.id = sqlite3_column_int64(st, 0),
			.commit = column_dup(st, 1),
			.branch = column_dup(st, 2),
			.date = column_dup(st, 3),
			.machine = column_dup(st, 4),
			.instrument = column_dup(st, 5),
			.source = column_dup(st, 6),
			.benchmarks = (size_t)sqlite3_column_int64(st, 7),
		};
	}
	sqlite3_finalize(st);
	if (r == 0 && rc != SQLITE_DONE)
		r = history_sqlfail(h, ret_error, rc, "cannot read the history");
	if (r < 0) {
		history_runs_free(v, n);
		return r;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int history_forget(struct history *h, const struct history_forget *what, size_t *ret_n,
		   char **ret_error)
{
	static const char which[] = "(?1 IS NOT NULL AND substr(commit_id, 1, length(?1)) = ?1)"
				    " OR (?2 IS NOT NULL AND ordered < ?2) OR id = ?3";
	char sql[512];
	sqlite3_stmt *st = NULL;
	int rc, r = history_exec(h, "BEGIN IMMEDIATE", ret_error);

	*ret_n = 0;
	if (r < 0)
		return r;
	for (int k = 0; k < 2; k++) {
		snprintf(sql, sizeof(sql),
			 k == 0 ? "DELETE FROM figures WHERE run IN (SELECT id FROM runs WHERE %s)"
				: "DELETE FROM runs WHERE %s",
			 which);
		rc = sqlite3_prepare_v2(h->db, sql, -1, &st, NULL);
		if (rc != SQLITE_OK)
			goto fail;
		if (what->commit)
			sqlite3_bind_text(st, 1, what->commit, -1, SQLITE_STATIC);
		if (what->before)
			sqlite3_bind_text(st, 2, what->before, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, what->run);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		st = NULL;
		if (rc != SQLITE_DONE)
			goto fail;
	}
	*ret_n = (size_t)sqlite3_changes(h->db);
	rc = sqlite3_exec(h->db, "COMMIT", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		return 0;
fail:
	r = history_sqlfail(h, ret_error, rc, "cannot forget the runs");
	sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
	*ret_n = 0;
	return r;
}
