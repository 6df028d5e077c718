/* SPDX-License-Identifier: MIT */
/*
 * What the reader checks of a results document beyond the types of its
 * fields (results/internal.h): closed sets of names, counts that cannot be
 * below zero, statistics in their order.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "results/instrument.h"
#include "results/internal.h"
#include "results/results.h"

/* 'v', at 'where', is the name of an instrument that writes results files
 * (docs/instruments.md), or observe; or a failure naming them. */
int results_check_instrument(struct parser *p, const char *where, const char *v)
{
	char names[128];

	if (results_instrument_find(v))
		return 0;
	results_instrument_names(names, sizeof(names));
	return results_failf(p, where, "unknown instrument \"%s\" (expected %s)", v, names);
}

/* Whether a figure of 'instrument' is a count, never below zero: the timed
 * ones (walltime, observe) subtract a calibration, which noise can put
 * above a short call's time. */
static bool counts(const char *instrument)
{
	return !results_instrument_has(instrument, RESULTS_INSTRUMENT_TIMED);
}

/* The statistics in the order they must be: each at most the next, up to
 * the rounding of ten significant digits; absent (NAN) ones are skipped. */
int results_check_stats(struct parser *p, const char *base, const struct results_stats *s)
{
	const struct {
		const char *name;
		double v;
	} order[] = {
		{ "min", s->min }, { "q1", s->q1 }, { "median", s->median },
		{ "q3", s->q3 },   { "max", s->max },
	};
	char where[192];
	size_t last = SIZE_MAX;

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (isnan(order[i].v))
			continue;
		if (last != SIZE_MAX &&
		    order[last].v - order[i].v > 1e-9 * fmax(fabs(order[last].v), fabs(order[i].v))) {
			snprintf(where, sizeof(where), "%s.%s", base, order[last].name);
			return results_failf(p, where, "%.10g is above %s %.10g (statistics out of order)",
				     order[last].v, order[i].name, order[i].v);
		}
		last = i;
	}
	if (!isnan(s->mean) && !isnan(s->min) && !isnan(s->max) &&
	    (s->mean < s->min - 1e-9 * fabs(s->min) || s->mean > s->max + 1e-9 * fabs(s->max))) {
		snprintf(where, sizeof(where), "%s.mean", base);
		return results_failf(p, where, "%.10g is outside min %.10g .. max %.10g", s->mean, s->min,
			     s->max);
	}
	const struct {
		const char *name;
		double v;
	} nonneg[] = { { "stddev", s->stddev }, { "cv", s->cv }, { "uncertainty", s->uncertainty } };

	for (size_t i = 0; i < sizeof(nonneg) / sizeof(nonneg[0]); i++)
		if (nonneg[i].v < 0) {
			snprintf(where, sizeof(where), "%s.%s", base, nonneg[i].name);
			return results_failf(p, where, "%.10g is below zero", nonneg[i].v);
		}
	if (s->ci_low > s->ci_high) {
		snprintf(where, sizeof(where), "%s.ci_low", base);
		return results_failf(p, where, "%.10g is above ci_high %.10g", s->ci_low, s->ci_high);
	}
	if (s->confidence <= 0 || s->confidence >= 1) {
		snprintf(where, sizeof(where), "%s.confidence", base);
		return results_failf(p, where, "%.10g is not between 0 and 1", s->confidence);
	}
	return 0;
}

/* A benchmark's figures that count (counts()) are not below zero. */
int results_check_counts(struct parser *p, const char *base, const struct results_bench *r)
{
	char where[192];

	if (!counts(r->instrument))
		return 0;
	if (r->value < 0) {
		snprintf(where, sizeof(where), "%s.value", base);
		return results_failf(p, where, "%.10g is below zero, which a count (%s) cannot be",
			     r->value, r->instrument);
	}
	for (size_t i = 0; i < r->nraw; i++)
		if (r->raw[i] < 0) {
			snprintf(where, sizeof(where), "%s.raw_samples[%zu]", base, i);
			return results_failf(p, where, "%.10g is below zero, which a count (%s) cannot be",
				     r->raw[i], r->instrument);
		}
	if (r->has_stats && r->stats.min < 0) {
		snprintf(where, sizeof(where), "%s.stats.min", base);
		return results_failf(p, where, "%.10g is below zero, which a count (%s) cannot be",
			     r->stats.min, r->instrument);
	}
	return 0;
}

