/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_REPORT_TABLE_H
#define BENCHTRAP_REPORT_TABLE_H

/*
 * A table of text cells printed with aligned columns (text output) or as
 * a GitHub-flavoured Markdown table. Cells are copied. Widths count UTF-8
 * characters, so "µs" aligns.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum table_align { TABLE_LEFT, TABLE_RIGHT };

struct table;

/* A table with 'ncols' columns; 'headers' and 'align' have ncols entries. */
struct table *table_new(size_t ncols, const char *const *headers, const enum table_align *align);
void table_free(struct table *t);
/* Add a row of ncols cells (NULL prints as empty). 0 or -ENOMEM. */
int table_add(struct table *t, const char *const *cells);
size_t table_rows(const struct table *t);
/* Cells over 60 characters overflow their column in table_print_text()
 * instead of being cut: for a table whose cells are to be copied whole
 * (benchtrap list's names). */
void table_keep_long_cells(struct table *t);
/* Aligned text, two spaces between columns, no trailing blanks. A cell
 * over 60 characters in any column but the last is cut to 60: its start,
 * "…" and its end (--json and the results file keep it whole). */
void table_print_text(const struct table *t, FILE *f);
/* GitHub-flavoured Markdown; '|' and '<' in cells are escaped. */
void table_print_markdown(const struct table *t, FILE *f);

#endif
