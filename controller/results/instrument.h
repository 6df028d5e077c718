/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_RESULTS_INSTRUMENT_H
#define BENCHTRAP_RESULTS_INSTRUMENT_H

/*
 * The instruments by name, and what their figures are (instrument.c): the
 * one place in the tree that compares an instrument's name. The results
 * layer reads names from files ("observe" included, which no `run`
 * measures); measure/instruments.c's rows are the same instruments by the
 * same ids (enum measure_instrument_id), with how each runs. Callers ask a
 * flag, never a name: a new instrument is a row here and a row there.
 */

#include <stdbool.h>
#include <stddef.h>

/* The rows, by id; measure's ids (measure.h) are the first ones. */
enum results_instrument_id {
	RESULTS_WALLTIME,
	RESULTS_CALLGRIND,
	RESULTS_PERF,
	RESULTS_MEMORY,
	RESULTS_OBSERVE, /* the calls of a real run (`observe`), not a `run` instrument */
	RESULTS_N_INSTRUMENTS,
};

enum {
	/* Figures are times with a calibration subtracted, which noise can
	 * push below zero for a short call (walltime, observe). */
	RESULTS_INSTRUMENT_TIMED = 1 << 0,
	/* `compare BASE HEAD` alternates the samples of the two builds, so
	 * that the machine's changes of speed fall on both alike. */
	RESULTS_INSTRUMENT_PAIRABLE = 1 << 1,
	/* Exact counts, one sample (callgrind, perf, memory): never below
	 * zero, no interval. */
	RESULTS_INSTRUMENT_COUNTING = 1 << 2,
	/* Preloads a library into the target: a static binary cannot be
	 * measured by it. */
	RESULTS_INSTRUMENT_PRELOADS = 1 << 3,
	/* Observed calls: the stops' cost removed with one calibration per
	 * run, whose spread (stats.uncertainty) every call shares. */
	RESULTS_INSTRUMENT_OBSERVED = 1 << 4,
};

struct results_instrument {
	enum results_instrument_id id;
	const char *name; /* --instrument NAME, the results' "instrument" */
	const char *unit; /* of the headline value, per call */
	unsigned flags;	  /* RESULTS_INSTRUMENT_* */
};

/* The row of 'id' (below RESULTS_N_INSTRUMENTS). */
const struct results_instrument *results_instrument(enum results_instrument_id id);

/* The row named 'name', or NULL (NULL too for a NULL name). */
const struct results_instrument *results_instrument_find(const char *name);

/* Whether the instrument named 'name' has every flag of 'flags'; false for
 * a name of no row. */
bool results_instrument_has(const char *name, unsigned flags);

/* "walltime, callgrind, perf, memory or observe": every name, for a
 * message, into buf (cut to fit). */
void results_instrument_names(char *buf, size_t size);

#endif
