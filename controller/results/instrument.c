/* SPDX-License-Identifier: MIT */
/*
 * The instruments' names and what their figures are (instrument.h). The
 * only comparisons of an instrument's name in the tree are here; the
 * integration test instrument_names checks that.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "results/instrument.h"

static const struct results_instrument rows[RESULTS_N_INSTRUMENTS] = {
	[RESULTS_WALLTIME] = {
		.id = RESULTS_WALLTIME,
		.name = "walltime",
		.unit = "ns",
		.flags = RESULTS_INSTRUMENT_TIMED | RESULTS_INSTRUMENT_PAIRABLE,
	},
	[RESULTS_CALLGRIND] = {
		.id = RESULTS_CALLGRIND,
		.name = "callgrind",
		.unit = "instructions",
		.flags = RESULTS_INSTRUMENT_COUNTING,
	},
	[RESULTS_PERF] = {
		.id = RESULTS_PERF,
		.name = "perf",
		.unit = "instructions",
		.flags = RESULTS_INSTRUMENT_COUNTING | RESULTS_INSTRUMENT_PRELOADS,
	},
	[RESULTS_MEMORY] = {
		.id = RESULTS_MEMORY,
		.name = "memory",
		.unit = "bytes",
		.flags = RESULTS_INSTRUMENT_COUNTING | RESULTS_INSTRUMENT_PRELOADS,
	},
	[RESULTS_OBSERVE] = {
		.id = RESULTS_OBSERVE,
		.name = "observe",
		.unit = "ns",
		.flags = RESULTS_INSTRUMENT_TIMED | RESULTS_INSTRUMENT_OBSERVED,
	},
};

const struct results_instrument *results_instrument(enum results_instrument_id id)
{
	return &rows[id];
}

const struct results_instrument *results_instrument_find(const char *name)
{
	for (size_t i = 0; name && i < RESULTS_N_INSTRUMENTS; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	return NULL;
}

bool results_instrument_has(const char *name, unsigned flags)
{
	const struct results_instrument *in = results_instrument_find(name);

	return in && (in->flags & flags) == flags;
}

void results_instrument_names(char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < RESULTS_N_INSTRUMENTS && len < size; i++) {
		const char *sep = i == 0 ? "" : i + 1 == RESULTS_N_INSTRUMENTS ? " or " : ", ";
		int w = snprintf(buf + len, size - len, "%s%s", sep, rows[i].name);

		if (w < 0)
			break;
		len += (size_t)w;
	}
}
