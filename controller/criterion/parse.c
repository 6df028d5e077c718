/* SPDX-License-Identifier: MIT */
/*
 * What a criterion binary says, in its own formats (its list, its
 * sample.json), and the figures benchtrap makes of them. Pure functions:
 * the unit tests feed them text and numbers.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util/array.h"
#include "util/strutil.h"
#include "criterion/criterion.h"

int criterion_parse_list(const char *text, size_t len, char ***ret_names, size_t *ret_n)
{
	/* Only "ID: bench": criterion prints its warnings on stdout too. */
	return str_list_lines(text, len, ": bench", ret_names, ret_n);
}

char *criterion_filter_regex(const char *id)
{
	/* The characters regex::escape escapes: every one that may mean
	 * something to the regex crate's parser. */
	return str_regex_exact(id, "\\.+*?()|[]{}^$#&-~");
}

int criterion_parse_sample(const char *text, size_t len, uint64_t **ret_iters, double **ret_times,
			   size_t *ret_n)
{
	json_t *doc = json_loadb(text, len, 0, NULL), *iters, *times;
	uint64_t *iv = NULL;
	double *tv = NULL;
	size_t n;
	int r = -EINVAL;

	if (!doc)
		return -EINVAL;
	iters = json_object_get(doc, "iters");
	times = json_object_get(doc, "times");
	if (!json_is_array(iters) || !json_is_array(times) ||
	    json_array_size(iters) != json_array_size(times) || json_array_size(iters) == 0)
		goto out;
	n = json_array_size(iters);
	iv = calloc(n, sizeof(*iv));
	tv = calloc(n, sizeof(*tv));
	if (!iv || !tv) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *a = json_array_get(iters, i), *b = json_array_get(times, i);
		/* criterion writes both as floating-point numbers ("10.0"). */
		double it = json_number_value(a), t = json_number_value(b);

		if (!json_is_number(a) || !json_is_number(b) || !(it >= 1) || it > 1e18 ||
		    it != floor(it) || !(t >= 0) || !isfinite(t))
			goto out;
		iv[i] = (uint64_t)it;
		tv[i] = t;
	}
	*ret_iters = iv;
	*ret_times = tv;
	*ret_n = n;
	iv = NULL;
	tv = NULL;
	r = 0;
out:
	free(iv);
	free(tv);
	json_decref(doc);
	return r;
}

int criterion_slope(const uint64_t *iters, const double *times, size_t n, double *ret)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0, sx = 0, sy = 0;

	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		sx += (double)iters[i];
		sy += times[i];
	}
	mx = sx / (double)n;
	my = sy / (double)n;
	for (size_t i = 0; i < n; i++) {
		double dx = (double)iters[i] - mx;

		sxx += dx * dx;
		sxy += dx * (times[i] - my);
	}
	/* Flat sampling: every sample the same count, no slope to fit. */
	*ret = sxx > 0 ? sxy / sxx : sy / sx;
	return 0;
}
