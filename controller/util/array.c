/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"

int array_grow(void **v, size_t *cap, size_t need, size_t elem_size)
{
	size_t c = *cap ? *cap : 16;
	void *nv;

	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			return -ENOMEM;
		c *= 2;
	}
	if (elem_size && c > SIZE_MAX / elem_size)
		return -ENOMEM;
	nv = realloc(*v, c * elem_size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = c;
	return 0;
}

size_t array_lower_bound_u64(const void *v, size_t n, size_t elem_size, size_t key_off,
			     uint64_t key)
{
	const unsigned char *base = v;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, base + mid * elem_size + key_off, sizeof(k));
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
