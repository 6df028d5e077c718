/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_REPORT_JSON_H
#define BENCHTRAP_REPORT_JSON_H

/*
 * JSON pieces shared by the report module's files (results.c, observe.c,
 * compare.c, export.c), and by them alone: jansson stays inside report/.
 */

#include <stdio.h>

#include <jansson.h>

#include "report/report.h"

/* A string, or null for NULL. */
json_t *report_json_str(const char *s);
/* A number, or null when it is not finite (JSON has no NaN or infinity). */
json_t *report_json_num(double v);
/* The "environment" object of a results document. */
json_t *report_json_env(const struct results_env *e);
/* Write 'doc' indented, with a final newline, and release it. 'doc' may be
 * NULL (a failed json_pack): -ENOMEM. 0, or the write's -errno (-ENOSPC on a
 * full disk; -EIO when the stream gave none) when writing failed. */
int report_json_dump(json_t *doc, FILE *f);

#endif
