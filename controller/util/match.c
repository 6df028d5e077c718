/* SPDX-License-Identifier: MIT */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"
#include "util/match.h"

bool match_glob(const char *pattern, const char *name)
{
	return strcmp(pattern, name) == 0 || fnmatch(pattern, name, 0) == 0;
}

static char *strip_glob(const char *pattern)
{
	char *s = malloc(strlen(pattern) + 1), *o = s;

	if (!s)
		return NULL;
	for (const char *p = pattern; *p; p++)
		if (!strchr("*?[]\\", *p))
			*o++ = *p;
	*o = '\0';
	return s;
}

bool match_suggest(const char *pattern, const char *const *names, size_t n, size_t max, char *buf,
		 size_t size)
{
	char *needle = strip_glob(pattern);
	size_t cap, found = 0;
	struct {
		const char *name;
		size_t score;
	} best[8];

	if (!needle)
		return false;
	if (max > 8)
		max = 8;
	/* Accept up to a third of the needle's length in edits, at least 2. */
	cap = strlen(needle) / 3 + 1;
	if (cap < 3)
		cap = 3;
	for (size_t i = 0; i < n; i++) {
		size_t score;

		if (*needle && strcasestr(names[i], needle))
			score = 0;
		else if ((score = str_distance(needle, names[i], cap) + 1) > cap)
			continue;
		/* Insert in order of score, then name order; skip duplicates. */
		bool dup = false;

		for (size_t j = 0; j < found; j++)
			dup |= strcmp(best[j].name, names[i]) == 0;
		if (dup)
			continue;
		size_t at = found;

		while (at > 0 && best[at - 1].score > score)
			at--;
		if (at >= max)
			continue;
		if (found < max)
			found++;
		memmove(&best[at + 1], &best[at], (found - 1 - at) * sizeof(best[0]));
		best[at].name = names[i];
		best[at].score = score;
	}
	free(needle);
	if (!found)
		return false;
	buf[0] = '\0';
	for (size_t i = 0; i < found; i++) {
		size_t len = strlen(buf);

		snprintf(buf + len, size - len, "%s'%s'", i == 0 ? "" : i + 1 == found ? " or " : ", ",
			 best[i].name);
	}
	return true;
}
