/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
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

		if (*needle && strcasestr(names[i], needle)) {
			score = 0;
		} else {
			/* Compare with the name and with its stem: "fib[10]"
			 * and "f(1,2)" are close to "fibb" and "g" by "fib"
			 * and "f". */
			size_t stem_len = strcspn(names[i], "[(");
			char *stem = strndup(names[i], stem_len);
			size_t d = str_distance(needle, names[i], cap);

			if (stem && names[i][stem_len]) {
				size_t ds = str_distance(needle, stem, cap);

				d = ds < d ? ds : d;
			}
			free(stem);
			score = d + 1;
			if (score > cap)
				continue;
		}
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

char *match_strip_params(const char *demangled)
{
	size_t len = strlen(demangled);
	int depth = 0;

	if (len && demangled[len - 1] == ')')
		for (size_t i = len; i-- > 0;) {
			if (demangled[i] == ')')
				depth++;
			else if (demangled[i] == '(' && --depth == 0 && i > 0)
				return strndup(demangled, i);
		}
	return strdup(demangled);
}

int match_parse_call(const char *text, char **ret_name, int64_t *args, unsigned max,
		     unsigned *ret_nargs)
{
	const char *open = strchr(text, '(');
	size_t len = strlen(text);
	int64_t parsed[16];
	unsigned n = 0;
	char *name;

	if (!open) {
		if (!*text)
			return -EINVAL;
		name = strdup(text);
		if (!name)
			return -ENOMEM;
		*ret_name = name;
		*ret_nargs = 0;
		return 0;
	}
	if (open == text || text[len - 1] != ')')
		return -EINVAL;
	for (const char *p = open + 1, *end = text + len - 1; p < end;) {
		char *stop;

		p += strspn(p, " \t");
		if (p == end && n == 0)
			break;
		if (n == max || n == sizeof(parsed) / sizeof(parsed[0]))
			return -EINVAL;
		/* Decimal, or hex with 0x; never octal: "010" is ten. */
		const char *digits = p + (*p == '-' || *p == '+');
		int base = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') ? 16 : 10;

		errno = 0;
		parsed[n++] = strtoll(p, &stop, base);
		if (errno == ERANGE)
			return -ERANGE;
		if (stop == p)
			return -EINVAL;
		p = stop + strspn(stop, " \t");
		if (p < end && (*p++ != ',' || p == end))
			return -EINVAL;
	}
	name = strndup(text, (size_t)(open - text));
	if (!name)
		return -ENOMEM;
	memcpy(args, parsed, n * sizeof(*args));
	*ret_name = name;
	*ret_nargs = n;
	return 0;
}

bool match_function(const char *pattern, const char *raw, const char *demangled)
{
	char *bare;
	bool hit;

	if (match_glob(pattern, raw) || match_glob(pattern, demangled))
		return true;
	bare = match_strip_params(demangled);
	hit = bare && strcmp(bare, demangled) != 0 && match_glob(pattern, bare);
	free(bare);
	return hit;
}
