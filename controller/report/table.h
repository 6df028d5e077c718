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
/* Aligned text, two spaces between columns, no trailing blanks; a cell
 * over 60 characters overflows its column instead of widening it. */
void table_print_text(const struct table *t, FILE *f);
void table_print_markdown(const struct table *t, FILE *f);

#endif
