/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_HISTORY_H
#define BENCHTRAP_HISTORY_H

/*
 * The results history (docs/history.md): every benchmark's figures of every
 * run added, with the run's context, in one SQLite database. sqlite3 stays
 * inside this module (db.c). Functions return 0 or a negative errno and,
 * where there is more to say, a one-line message in *ret_error (to free).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "results/results.h"

/* The database used without --db: BENCHTRAP_HISTORY, else this file in the
 * current directory. */
#define HISTORY_DEFAULT_PATH "benchtrap-history.db"
#define HISTORY_ENV "BENCHTRAP_HISTORY"

/* One run's figure of one benchmark. */
struct history_point {
	int64_t run;		/* the run's id in the database */
	char *commit;		/* or NULL */
	char *branch;		/* or NULL */
	char *date;		/* the run's (UTC, ISO 8601) */
	bool ok;		/* status ok: value is its headline */
	double value;		/* NAN unless ok */
	double ci_low, ci_high; /* the interval of its median; NAN when absent */
	size_t samples;
};

/* One benchmark measured by one instrument on one machine, its runs in
 * order (commit date, then the order they were added). */
struct history_series {
	char *name, *instrument, *unit;
	char *machine; /* hostname and CPU model: "vm (AMD EPYC)" */
	struct history_point *points;
	size_t n;
};

void history_series_free(struct history_series *v, size_t n);

struct history; /* an open database */

/*
 * Open the history at 'path': for reading only, or for 'write', which makes
 * the file and its tables when there is none. For reading a missing file is
 * -ENOENT;
 * a file that is not benchtrap's history (another SQLite database, not
 * SQLite at all, truncated) is -EINVAL and is left exactly as it was.
 */
int history_open(const char *path, bool write, struct history **ret, char **ret_error);
void history_close(struct history *h);

/* What a run is, beyond its results file: each NULL when unknown. */
struct history_context {
	const char *commit, *branch;
	const char *commit_date; /* orders the runs where given (ISO 8601) */
	const char *date;	 /* the run's, instead of the file's environment.date */
	const char *machine;	 /* instead of its CPU model and cores */
};

/* Add the run of results file f (head's side of a paired comparison):
 * *ret_added is false when a file with the same bytes is in already. */
int history_add(struct history *h, const struct results_file *f, const struct history_context *c,
		bool *ret_added, char **ret_error);

/* A run in the history, as `history list` shows it. */
struct history_run {
	int64_t id;
	char *commit, *branch, *date, *machine, *instrument, *source;
	size_t benchmarks;
};

/* Every run, in the order of the series (commit date, else date; then the
 * order added); *ret to history_runs_free. */
int history_runs(struct history *h, struct history_run **ret, size_t *ret_n, char **ret_error);
void history_runs_free(struct history_run *v, size_t n);

/* What to forget: the runs of a commit (its hash, or a prefix of 4 digits
 * or more), those before a date (ISO 8601, compared as text), one run by
 * id; each unused when NULL or 0. */
struct history_forget {
	const char *commit, *before;
	int64_t run;
};

/* Forget those runs and their figures: *ret_n runs. */
int history_forget(struct history *h, const struct history_forget *what, size_t *ret_n,
		   char **ret_error);

/* Every series whose benchmark name matches the glob 'name' (NULL: all),
 * sorted by name, instrument and machine; *ret to history_series_free. */
int history_series(struct history *h, const char *name, struct history_series **ret, size_t *ret_n,
		   char **ret_error);

/* ---- change points (check.c) ---------------------------------------- */

#include "stats/changepoint.h"

/* What `history check` found in one series. */
struct history_finding {
	const struct history_series *series;
	struct changepoint *changes; /* in order; 'at' indexes series->points */
	size_t nchanges;
	/* The newest change point is a step up beyond the threshold: every
	 * instrument's figure is better lower. */
	bool regressed;
};

/*
 * The change points of every series of v[0..n) (noisy or exact by its
 * instrument, results_instrument_exact), and whether each newest one is a
 * regression beyond 'threshold' (a fraction: 0.05). *ret has n findings, in
 * the order of v; free with history_findings_free.
 */
int history_check(const struct history_series *v, size_t n, double threshold,
		  struct history_finding **ret);
void history_findings_free(struct history_finding *v, size_t n);

#endif
