/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_RESULTS_INTERNAL_H
#define BENCHTRAP_RESULTS_INTERNAL_H

/* Inside the results module only: the parsed document, kept for merging. */

#include <jansson.h>

struct results_doc {
	json_t *root;
};

#endif
