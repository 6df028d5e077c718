/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/table.h"
#include "util/array.h"

#define TABLE_MAX_WIDTH 60

struct table {
	size_t ncols, nrows, cap;
	char **cells; /* (nrows + 1) * ncols; row 0 is the header */
	enum table_align *align;
	bool keep_long; /* table_keep_long_cells() */
};

static size_t width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80; /* count UTF-8 lead bytes */
	return w;
}

struct table *table_new(size_t ncols, const char *const *headers, const enum table_align *align)
{
	struct table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->ncols = ncols;
	t->align = calloc(ncols, sizeof(*t->align));
	if (!t->align || table_add(t, headers) < 0) {
		table_free(t);
		return NULL;
	}
	t->nrows = 0; /* the header row is not counted */
	if (align)
		memcpy(t->align, align, ncols * sizeof(*align));
	return t;
}

void table_free(struct table *t)
{
	if (!t)
		return;
	if (t->cells)
		for (size_t i = 0; i < (t->nrows + 1) * t->ncols; i++)
			free(t->cells[i]);
	free(t->cells);
	free(t->align);
	free(t);
}

int table_add(struct table *t, const char *const *cells)
{
	size_t used = t->cells ? (t->nrows + 1) * t->ncols : 0;

	if (array_grow((void **)&t->cells, &t->cap, used + t->ncols, sizeof(*t->cells)) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < t->ncols; i++) {
		t->cells[used + i] = strdup(cells[i] ? cells[i] : "");
		if (!t->cells[used + i]) {
			while (i-- > 0)
				free(t->cells[used + i]);
			return -ENOMEM;
		}
	}
	if (used)
		t->nrows++;
	return 0;
}

size_t table_rows(const struct table *t)
{
	return t->nrows;
}

void table_keep_long_cells(struct table *t)
{
	t->keep_long = true;
}

/* Byte offset of the character 'n' characters into 's' (UTF-8). */
static size_t char_offset(const char *s, size_t n)
{
	size_t i = 0;

	for (; s[i]; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && n-- == 0)
			break;
	return i;
}

/* Cell 's' of 'sw' characters in TABLE_MAX_WIDTH of them: its start, "…"
 * and its end, which tells template instances apart more often than the
 * start alone would. */
static void print_cut(const char *s, size_t sw, FILE *f)
{
	size_t head = (TABLE_MAX_WIDTH - 1) / 2, tail = TABLE_MAX_WIDTH - 1 - head;

	fprintf(f, "%.*s…%s", (int)char_offset(s, head), s, s + char_offset(s, sw - tail));
}

void table_print_text(const struct table *t, FILE *f)
{
	size_t *w = calloc(t->ncols, sizeof(*w));

	if (!w)
		return;
	/* A very long cell (a C++ name of 700 characters) is cut to
	 * TABLE_MAX_WIDTH in every column but the last, so the columns after
	 * it stay aligned; with table_keep_long_cells() it overflows its
	 * column rather than widening it for every row. */
	for (size_t r = 0; r <= t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			size_t cw = width(t->cells[r * t->ncols + c]);

			if (cw > TABLE_MAX_WIDTH && !t->keep_long && c + 1 < t->ncols)
				cw = TABLE_MAX_WIDTH;
			if (cw > w[c] && cw <= TABLE_MAX_WIDTH)
				w[c] = cw;
		}
	for (size_t r = 0; r <= t->nrows; r++) {
		/* Pad only up to the last non-empty cell: no trailing blanks. */
		size_t last = t->ncols;

		while (last > 0 && !*t->cells[r * t->ncols + last - 1])
			last--;
		for (size_t c = 0; c < last; c++) {
			const char *s = t->cells[r * t->ncols + c];
			size_t sw = width(s);
			int pad = sw < w[c] ? (int)(w[c] - sw) : 0;

			if (c)
				fputs("  ", f);
			if (sw > TABLE_MAX_WIDTH && !t->keep_long && c + 1 < t->ncols) {
				print_cut(s, sw, f);
				if (c + 1 < last)
					fprintf(f, "%*s", (int)(w[c] - TABLE_MAX_WIDTH), "");
			} else if (t->align[c] == TABLE_RIGHT)
				fprintf(f, "%*s%s", pad, "", s);
			else if (c + 1 < last)
				fprintf(f, "%s%*s", s, pad, "");
			else
				fputs(s, f);
		}
		fputc('\n', f);
	}
	free(w);
}

/* A cell's text: '|' would end the cell, and '<' would start an HTML tag
 * GitHub drops ("twice<long>" would show as "twice"). */
static void markdown_cell(const char *s, FILE *f)
{
	for (; *s; s++) {
		if (*s == '|' || *s == '<')
			fputc('\\', f);
		fputc(*s, f);
	}
}

void table_print_markdown(const struct table *t, FILE *f)
{
	for (size_t r = 0; r <= t->nrows; r++) {
		fputc('|', f);
		for (size_t c = 0; c < t->ncols; c++) {
			fputc(' ', f);
			markdown_cell(t->cells[r * t->ncols + c], f);
			fputs(" |", f);
		}
		fputc('\n', f);
		if (r == 0) {
			fputc('|', f);
			for (size_t c = 0; c < t->ncols; c++)
				fputs(t->align[c] == TABLE_RIGHT ? " ---: |" : " --- |", f);
			fputc('\n', f);
		}
	}
}
