/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_HISTORY_INTERNAL_H
#define BENCHTRAP_HISTORY_INTERNAL_H

/* What db.c and series.c share: the open database and its errors. */

#include <sqlite3.h>
#include <stdarg.h>

#include "history/history.h"

struct history {
	sqlite3 *db;
	char *path;
};

/* *ret_error = the formatted line; returns r. */
int history_fail(char **ret_error, int r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The negative errno of SQLite's result code rc (0 for OK, ROW, DONE). */
int history_errno(int rc);
/* "PATH: WHAT: SQLite's message" for a failed rc. */
int history_sqlfail(struct history *h, char **ret_error, int rc, const char *what);
int history_exec(struct history *h, const char *sql, char **ret_error);
/* The machine a run's series belong to, from its environment: its CPU
 * model and cores (not the host name, which a CI runner changes every
 * run). */
char *history_machine(const struct results_env *e);

#endif
