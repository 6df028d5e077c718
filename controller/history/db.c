/* SPDX-License-Identifier: MIT */
/*
 * The history's database (history.h, docs/history.md): two tables, runs and
 * the figures of each run's benchmarks, in one SQLite file marked as
 * benchtrap's by its application_id.
 *
 * Nothing is written to a file that is not already benchtrap's history or
 * empty: an existing file is first checked over a read-only connection
 * (SQLite's header, the application_id, PRAGMA quick_check), and only then
 * opened for writing. Writers take the write lock at BEGIN IMMEDIATE and
 * wait for it (the busy timeout), so two `history add` at once both land,
 * one after the other.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "history/internal.h"
#include "util/strutil.h"

/* "BTH1": what PRAGMA application_id holds in benchtrap's history. */
#define APPLICATION_ID 0x42544831
#define SCHEMA_VERSION 1
/* How long a writer waits for another's write to end: adds are short, a
 * minute is a machine in trouble. */
#define BUSY_TIMEOUT_MS 60000

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS runs ("
	" id INTEGER PRIMARY KEY,"
	" digest TEXT NOT NULL UNIQUE," /* of the results file: added once */
	" source TEXT,"			/* its path, as given */
	" commit_id TEXT, branch TEXT, commit_date TEXT,"
	" date TEXT NOT NULL,"	  /* the run's, environment.date */
	" ordered TEXT NOT NULL," /* commit_date, else date: a series' order */
	" added TEXT NOT NULL,"
	" machine TEXT NOT NULL, hostname TEXT, cpu TEXT, cores INTEGER, kernel TEXT,"
	" binary TEXT, build_id TEXT, instrument TEXT, benchtrap TEXT, partial TEXT);"
	"CREATE TABLE IF NOT EXISTS figures ("
	" run INTEGER NOT NULL REFERENCES runs(id),"
	" name TEXT NOT NULL, instrument TEXT NOT NULL, unit TEXT, status TEXT NOT NULL,"
	" value REAL, ci_low REAL, ci_high REAL,"
	" median REAL, mean REAL, stddev REAL, min REAL, max REAL, q1 REAL, q3 REAL,"
	" samples INTEGER, iterations INTEGER, error TEXT,"
	" raw BLOB);" /* raw_samples as doubles, in this machine's byte order */
	"CREATE INDEX IF NOT EXISTS figures_series ON figures(name, instrument, run);"
	"CREATE INDEX IF NOT EXISTS runs_ordered ON runs(ordered, id);";

int history_fail(char **ret_error, int r, const char *fmt, ...)
{
	va_list ap;

	if (ret_error) {
		va_start(ap, fmt);
		if (vasprintf(ret_error, fmt, ap) < 0)
			*ret_error = NULL;
		va_end(ap);
	}
	return r;
}

/* The errno of a SQLite result: a damaged or foreign file is bad input. */
int history_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_DONE:
	case SQLITE_ROW:
		return 0;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
	case SQLITE_FORMAT:
	case SQLITE_SCHEMA:
	case SQLITE_ERROR:
	case SQLITE_MISMATCH:
		return -EINVAL;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_CANTOPEN:
		return -EACCES;
	case SQLITE_FULL:
		return -ENOSPC;
	default:
		return -EIO;
	}
}

int history_sqlfail(struct history *h, char **ret_error, int rc, const char *what)
{
	return history_fail(ret_error, history_errno(rc) ? history_errno(rc) : -EIO, "%s: %s: %s",
			    h->path, what, sqlite3_errmsg(h->db));
}

int history_exec(struct history *h, const char *sql, char **ret_error)
{
	int rc = sqlite3_exec(h->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : history_sqlfail(h, ret_error, rc, "cannot read or write it");
}

/* One integer of a PRAGMA or a query without parameters. */
static int query_int(sqlite3 *db, const char *sql, int64_t *ret)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*ret = sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

/*
 * An existing file, read only: benchtrap's history, or a database with
 * nothing in it yet (0); anything else is -EINVAL, said in *ret_error.
 */
static int check_existing(const char *path, char **ret_error)
{
	static const char magic[16] = "SQLite format 3";
	char head[16];
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int64_t app = 0, tables = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc, r = 0;
	ssize_t got;

	if (fd < 0)
		return history_fail(ret_error, -errno, "%s: cannot open the history: %s", path,
				    strerror(errno));
	got = read(fd, head, sizeof(head));
	close(fd);
	if (got == 0)
		return 0;
	if (got != (ssize_t)sizeof(head) || memcmp(head, magic, sizeof(magic)))
		return history_fail(ret_error, -EINVAL,
				    "%s: not a benchtrap history (not an SQLite database): "
				    "left as it is; give --db another path",
				    path);
	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc == SQLITE_OK)
		sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS);
	if (rc == SQLITE_OK)
		rc = query_int(db, "PRAGMA application_id", &app);
	if (rc == SQLITE_OK)
		rc = query_int(db, "SELECT count(*) FROM sqlite_master", &tables);
	if (rc != SQLITE_OK) {
		r = history_fail(ret_error, history_errno(rc) ? history_errno(rc) : -EIO,
				 "%s: a damaged history (%s): left as it is", path,
				 db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
		goto out;
	}
	if (app != APPLICATION_ID && tables) {
		r = history_fail(ret_error, -EINVAL,
				 "%s: an SQLite database, but not a benchtrap history: left as "
				 "it is; give --db another path",
				 path);
		goto out;
	}
	/* The whole file read back: a truncated one fails here, not half way
	 * through an add. */
	rc = sqlite3_prepare_v2(db, "PRAGMA quick_check(1)", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_ROW || strcmp((const char *)sqlite3_column_text(st, 0), "ok")) {
		r = history_fail(ret_error, -EINVAL, "%s: a damaged history (%s): left as it is",
				 path,
				 rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0)
						  : sqlite3_errmsg(db));
	}
out:
	sqlite3_finalize(st);
	sqlite3_close(db);
	return r;
}

int history_open(const char *path, bool write, struct history **ret, char **ret_error)
{
	struct history *h;
	struct stat sb;
	int64_t app = 0;
	int rc, r;

	if (stat(path, &sb) < 0) {
		if (errno != ENOENT || !write)
			return history_fail(ret_error, -errno,
					    errno == ENOENT
						    ? "%s: no history here (`benchtrap history add "
						      "FILE...` makes one; --db names another)"
						    : "%s: cannot open the history: %s",
					    path, strerror(errno));
	} else if (S_ISDIR(sb.st_mode)) {
		return history_fail(ret_error, -EISDIR,
				    "%s: a directory, not a history: give --db a file's path",
				    path);
	} else if (!S_ISREG(sb.st_mode)) {
		return history_fail(ret_error, -ENODEV,
				    "%s: not a regular file: a history is one; give --db a file's "
				    "path",
				    path);
	} else if ((r = check_existing(path, ret_error)) < 0) {
		return r;
	}
	h = calloc(1, sizeof(*h));
	if (!h || !(h->path = strdup(path))) {
		free(h);
		return -ENOMEM;
	}
	rc = sqlite3_open_v2(
		path, &h->db,
		(write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY) |
			SQLITE_OPEN_NOMUTEX,
		NULL);
	if (rc != SQLITE_OK) {
		r = history_sqlfail(h, ret_error, rc, "cannot open the history");
		goto fail;
	}
	sqlite3_busy_timeout(h->db, BUSY_TIMEOUT_MS);
	if (!write)
		goto done;
	/* The tables made by the first writer; a second one, waiting at the
	 * lock, finds them made. */
	r = history_exec(h, "BEGIN IMMEDIATE", ret_error);
	if (r < 0)
		goto fail;
	rc = query_int(h->db, "PRAGMA application_id", &app);
	if (rc == SQLITE_OK && app != APPLICATION_ID) {
		char sql[sizeof(schema) + 128];

		snprintf(sql, sizeof(sql),
			 "%sPRAGMA application_id = %d; PRAGMA user_version = %d;", schema,
			 APPLICATION_ID, SCHEMA_VERSION);
		rc = sqlite3_exec(h->db, sql, NULL, NULL, NULL);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(h->db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		r = history_sqlfail(h, ret_error, rc, "cannot make the history's tables");
		sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
		goto fail;
	}
done:
	*ret = h;
	return 0;
fail:
	history_close(h);
	return r;
}

void history_close(struct history *h)
{
	if (!h)
		return;
	sqlite3_close(h->db);
	free(h->path);
	free(h);
}

/* ---- adding a run ---------------------------------------------------- */

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_real(sqlite3_stmt *st, int i, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

char *history_machine(const struct results_env *e)
{
	if (e->cpu && e->cores > 0)
		return str_fmt("%s, %d cores", e->cpu, e->cores);
	return strdup(e->cpu ? e->cpu : e->hostname ? e->hostname : "unknown");
}

static int add_figure(sqlite3_stmt *st, int64_t run, const struct results_bench *b)
{
	const struct results_stats *s = &b->stats;

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	sqlite3_bind_int64(st, 1, run);
	bind_text(st, 2, b->name);
	bind_text(st, 3, b->instrument ? b->instrument : "walltime");
	bind_text(st, 4, b->unit);
	bind_text(st, 5, results_status_name(b->status));
	bind_real(st, 6, b->ok ? b->value : NAN);
	if (b->has_stats) {
		bind_real(st, 7, s->ci_low);
		bind_real(st, 8, s->ci_high);
		bind_real(st, 9, s->median);
		bind_real(st, 10, s->mean);
		bind_real(st, 11, s->stddev);
		bind_real(st, 12, s->min);
		bind_real(st, 13, s->max);
		bind_real(st, 14, s->q1);
		bind_real(st, 15, s->q3);
		sqlite3_bind_int64(st, 16, (int64_t)s->samples);
		sqlite3_bind_int64(st, 17, (int64_t)s->iterations_per_sample);
	}
	bind_text(st, 18, b->error);
	if (b->raw && b->nraw)
		sqlite3_bind_blob64(st, 19, b->raw, b->nraw * sizeof(*b->raw), SQLITE_STATIC);
	return sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(sqlite3_db_handle(st));
}

int history_add(struct history *h, const struct results_file *f, const struct history_context *c,
		bool *ret_added, char **ret_error)
{
	static const char run_sql[] =
		"INSERT INTO runs (digest, source, commit_id, branch, commit_date, date, ordered,"
		" added, machine, hostname, cpu, cores, kernel, binary, build_id, instrument,"
		" benchtrap, partial)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, coalesce(?5, ?6), strftime('%Y-%m-%dT%H:%M:%SZ'),"
		" ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"
		" ON CONFLICT(digest) DO NOTHING";
	static const char fig_sql[] =
		"INSERT INTO figures (run, name, instrument, unit, status, value, ci_low, ci_high,"
		" median, mean, stddev, min, max, q1, q3, samples, iterations, error, raw)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,"
		" ?17, ?18, ?19)";
	sqlite3_stmt *run = NULL, *fig = NULL;
	char digest[33], *machine = NULL;
	const struct results_env *e = &f->env;
	int rc, r;

	*ret_added = false;
	if (results_digest(f, digest) < 0)
		return -EINVAL;
	machine = c->machine ? strdup(c->machine) : history_machine(e);
	if (!machine)
		return -ENOMEM;
	r = history_exec(h, "BEGIN IMMEDIATE", ret_error);
	if (r < 0)
		goto out;
	rc = sqlite3_prepare_v2(h->db, run_sql, -1, &run, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(h->db, fig_sql, -1, &fig, NULL);
	if (rc != SQLITE_OK)
		goto sqlfail;
	bind_text(run, 1, digest);
	bind_text(run, 2, f->path);
	bind_text(run, 3, c->commit);
	bind_text(run, 4, c->branch);
	bind_text(run, 5, c->commit_date);
	bind_text(run, 6, c->date ? c->date : e->date ? e->date : "1970-01-01T00:00:00Z");
	bind_text(run, 7, machine);
	bind_text(run, 8, e->hostname);
	bind_text(run, 9, e->cpu);
	if (e->cores > 0)
		sqlite3_bind_int(run, 10, e->cores);
	bind_text(run, 11, e->kernel);
	bind_text(run, 12, e->binary);
	bind_text(run, 13, e->build_id);
	bind_text(run, 14, f->instrument);
	bind_text(run, 15, e->benchtrap);
	bind_text(run, 16, f->partial);
	rc = sqlite3_step(run);
	if (rc != SQLITE_DONE)
		goto sqlfail;
	rc = SQLITE_OK;
	if (sqlite3_changes(h->db) == 1) {
		int64_t id = sqlite3_last_insert_rowid(h->db);

		for (size_t i = 0; rc == SQLITE_OK && i < f->n; i++)
			rc = add_figure(fig, id, &f->benches[i]);
		if (rc != SQLITE_OK)
			goto sqlfail;
		*ret_added = true;
	}
	rc = sqlite3_exec(h->db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		goto sqlfail;
	r = 0;
	goto out;
sqlfail:
	r = history_sqlfail(h, ret_error, rc, "cannot add the run");
	sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
	*ret_added = false;
out:
	sqlite3_finalize(run);
	sqlite3_finalize(fig);
	free(machine);
	return r;
}
