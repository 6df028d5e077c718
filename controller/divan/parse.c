/* SPDX-License-Identifier: MIT */
/*
 * What a divan binary says, in its own formats (its terse list, its --test
 * tree, its table), and how it is recognized. Pure functions but for
 * divan_detect, which reads the symbols.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf.h"
#include "util/strutil.h"
#include "divan/divan.h"

#define SYNC_FN "divan::benchmark::BenchContext::sample_recorder::"
#define SYNC_END "::sync_impl"

bool divan_sync_fn(const struct elf_file *ef, uint64_t *ret_addr, uint64_t *ret_size,
		   char **ret_name)
{
	for (size_t i = 0; i < elf_symbol_count(ef); i++) {
		const struct elf_symbol *s = elf_symbol(ef, i);
		const char *d = s->demangled, *end;

		if (!s->addr || !strstr(s->name, "5divan9benchmark12BenchContext") ||
		    strncmp(d, SYNC_FN, sizeof(SYNC_FN) - 1))
			continue;
		/* "...::sync_impl::h0123456789abcdef" (legacy) or without */
		end = strstr(d, SYNC_END);
		if (!end || (end[sizeof(SYNC_END) - 1] && strncmp(end + sizeof(SYNC_END) - 1, "::h", 3)))
			continue;
		if (ret_addr)
			*ret_addr = s->addr;
		if (ret_size)
			*ret_size = s->size;
		if (ret_name)
			*ret_name = strndup(d, (size_t)(end - d) + sizeof(SYNC_END) - 1);
		return !ret_name || *ret_name;
	}
	return false;
}

bool divan_detect(struct elf_file *ef)
{
	return divan_sync_fn(ef, NULL, NULL, NULL);
}

int divan_parse_terse(const char *text, size_t len, char ***ret_names, size_t *ret_n)
{
	return str_list_lines(text, len, ": benchmark", ret_names, ret_n);
}

size_t divan_thread_counts(const char *text, size_t len, unsigned *ret, size_t max)
{
	static const char row[] = "\u2500 t=";
	size_t n = 0;

	/* "├─ t=1", "╰─ t=2": the rows of a benchmark of several counts */
	for (const char *p = text, *end = text + len;
	     (p = memmem(p, (size_t)(end - p), row, sizeof(row) - 1)); p += sizeof(row) - 1) {
		unsigned v;
		int used = 0;

		if (sscanf(p + sizeof(row) - 1, "%u%n", &v, &used) == 1 && v && n < max &&
		    (p[sizeof(row) - 1 + used] == '\n' || p + sizeof(row) - 1 + used == end))
			ret[n++] = v;
	}
	return n;
}

char *divan_instance_path(const char *name, unsigned *ret_threads)
{
	const char *t = strstr(name, "/threads:");
	unsigned n = 0;
	int used = 0;

	*ret_threads = 0;
	if (t && sscanf(t + 9, "%u%n", &n, &used) == 1 && !t[9 + used] && n) {
		*ret_threads = n;
		return strndup(name, (size_t)(t - name));
	}
	return strdup(name);
}

/* A time cell of divan's ("127.9 ns", "2.32 µs", "1.5 ms", "3 s") in ns. */
static bool time_cell(const char *s, double *ret)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "ns", 1 }, { "\u00b5s", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
	char unit[8];
	double v;

	if (sscanf(s, "%lf %7s", &v, unit) != 2)
		return false;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(unit, units[i].unit)) {
			*ret = v * units[i].ns;
			return true;
		}
	return false;
}

int divan_parse_row(const char *text, size_t len, double *ret_median_ns, uint64_t *ret_samples,
		    uint64_t *ret_iters)
{
	static const char sep[] = "\u2502";
	char *copy = strndup(text, len), *save = NULL;
	int r = -EINVAL;

	if (!copy)
		return -ENOMEM;
	/* NAME  fastest │ slowest │ median │ mean │ samples │ iters: the first
	 * row with all six. */
	for (char *line = strtok_r(copy, "\n", &save); line && r; line = strtok_r(NULL, "\n", &save)) {
		char *cell[7];
		size_t n = 0;
		unsigned long long samples, iters;
		double median, fastest;

		for (char *p = line, *q; n < 7; p = q + sizeof(sep) - 1) {
			cell[n++] = p;
			q = strstr(p, sep);
			if (!q)
				break;
			*q = '\0';
		}
		/* The first cell holds the name before the fastest time. */
		if (n != 6)
			continue;
		char *f = cell[0] + strlen(cell[0]);

		while (f > cell[0] && (isspace((unsigned char)f[-1]) || isalpha((unsigned char)f[-1]) ||
				       (unsigned char)f[-1] >= 0x80))
			f--;
		while (f > cell[0] && (isdigit((unsigned char)f[-1]) || f[-1] == '.'))
			f--;
		if (time_cell(f, &fastest) && time_cell(cell[2] + strspn(cell[2], " "), &median) &&
		    sscanf(cell[4], "%llu", &samples) == 1 && sscanf(cell[5], "%llu", &iters) == 1 &&
		    samples && iters) {
			*ret_median_ns = median;
			*ret_samples = samples;
			*ret_iters = iters;
			r = 0;
		}
	}
	free(copy);
	return r;
}
