/* SPDX-License-Identifier: MIT */
/*
 * The instruments, one row each (docs/instruments.md), indexed by id. The
 * command line chooses one by name (results/instrument.c, where names are
 * compared and each one's flags are) and reads here how it runs and which
 * of its options apply. Each row's name and unit are its results/ row's
 * (tests/unit/test_measure.c checks).
 */
#include "measure/measure.h"

static const struct measure_instrument instruments[MEASURE_N_INSTRUMENTS] = {
	[MEASURE_WALLTIME] = {
		.id = MEASURE_WALLTIME,
		.name = "walltime",
		.unit = "ns",
		.summary = "time per call, in a traced child",
		.run = measure_walltime,
		.options = MEASURE_OPT_THREADS | MEASURE_OPT_PROFILE |
			   MEASURE_OPT_ISOLATION_SHARED,
	},
	[MEASURE_CALLGRIND] = {
		.id = MEASURE_CALLGRIND,
		.name = "callgrind",
		.unit = "instructions",
		.summary = "exact instructions per call, under valgrind",
		.run = measure_callgrind,
		.options = MEASURE_OPT_KEEP_PROFILES | MEASURE_OPT_CACHE_SIM | MEASURE_OPT_THREADS |
			   MEASURE_OPT_PROFILE | MEASURE_OPT_ISOLATION_SHARED,
	},
	[MEASURE_PERF] = {
		.id = MEASURE_PERF,
		.name = "perf",
		.unit = "instructions",
		.summary = "instructions and cycles per call, from a PMU",
		.run = measure_perf,
		.options = MEASURE_OPT_ISOLATION_SHARED,
	},
	[MEASURE_MEMORY] = {
		.id = MEASURE_MEMORY,
		.name = "memory",
		.unit = "bytes",
		.summary = "bytes allocated per call; allocations, peak, leaks",
		.run = measure_memory,
		.options = MEASURE_OPT_WARMUP_CALLS | MEASURE_OPT_ALLOC_STACKS |
			   MEASURE_OPT_THREADS | MEASURE_OPT_ISOLATION_SHARED,
	},
};

const struct measure_instrument *measure_instruments(size_t *ret_n)
{
	*ret_n = MEASURE_N_INSTRUMENTS;
	return instruments;
}

const struct measure_instrument *measure_instrument_of(enum measure_instrument_id id)
{
	return &instruments[id];
}

const struct measure_instrument *measure_instrument_find(const char *name)
{
	const struct results_instrument *in = results_instrument_find(name);

	return in && (int)in->id < (int)MEASURE_N_INSTRUMENTS ? &instruments[in->id] : NULL;
}

bool measure_instrument_has(const struct measure_instrument *in, unsigned flags)
{
	return (results_instrument((enum results_instrument_id)in->id)->flags & flags) == flags;
}
