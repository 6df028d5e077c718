/* SPDX-License-Identifier: MIT */
/*
 * The instruments, one row each (docs/instruments.md). The command line
 * chooses one by name and reads here which of its options apply.
 */
#include <string.h>

#include "measure/measure.h"

static const struct measure_instrument instruments[] = {
	{
		.name = "walltime",
		.unit = "ns",
		.summary = "time per call, in a traced child",
		.run = measure_walltime,
		.options = MEASURE_OPT_THREADS | MEASURE_OPT_PROFILE,
	},
	{
		.name = "callgrind",
		.unit = "instructions",
		.summary = "exact instructions per call, under valgrind",
		.run = measure_callgrind,
		.options = MEASURE_OPT_KEEP_PROFILES | MEASURE_OPT_CACHE_SIM | MEASURE_OPT_THREADS |
			   MEASURE_OPT_PROFILE,
	},
	{
		.name = "perf",
		.unit = "instructions",
		.summary = "instructions and cycles per call, from a PMU",
		.run = measure_perf,
		.preloads = true,
	},
	{
		.name = "memory",
		.unit = "bytes",
		.summary = "bytes allocated per call; allocations, peak, leaks",
		.run = measure_memory,
		.options =
			MEASURE_OPT_WARMUP_CALLS | MEASURE_OPT_ALLOC_STACKS | MEASURE_OPT_THREADS,
		.preloads = true,
	},
};

const struct measure_instrument *measure_instruments(size_t *ret_n)
{
	*ret_n = sizeof(instruments) / sizeof(instruments[0]);
	return instruments;
}

const struct measure_instrument *measure_instrument_find(const char *name)
{
	for (size_t i = 0; i < sizeof(instruments) / sizeof(instruments[0]); i++)
		if (!strcmp(instruments[i].name, name))
			return &instruments[i];
	return NULL;
}
