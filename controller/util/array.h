/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_UTIL_ARRAY_H
#define BENCHTRAP_UTIL_ARRAY_H

#include <stddef.h>
#include <stdint.h>

/*
 * Make room for at least 'need' elements of 'elem_size' bytes in the array
 * '*v' (NULL when empty) of capacity '*cap' elements: when '*cap' is short,
 * the capacity doubles (from 16) until it holds 'need' and '*v' is
 * reallocated. 0 on success; -ENOMEM when out of memory or when the size
 * overflows, with '*v' and '*cap' untouched. Callers pass the address of
 * their typed pointer cast to (void **).
 */
int array_grow(void **v, size_t *cap, size_t need, size_t elem_size);

/*
 * Index of the first of the 'n' elements of 'v' (each 'elem_size' bytes,
 * sorted by the uint64_t at byte 'key_off' of each) whose key is not less
 * than 'key'; 'n' when every key is less. Use offsetof() for 'key_off'.
 */
size_t array_lower_bound_u64(const void *v, size_t n, size_t elem_size, size_t key_off,
			     uint64_t key);

#endif
