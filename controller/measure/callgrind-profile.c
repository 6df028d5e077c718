/* SPDX-License-Identifier: MIT */
/* Reading callgrind profiles (callgrind.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "measure/callgrind.h"

/* Function names by compression id. */
struct names {
	char **v;
	size_t n;
};

static void names_free(struct names *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
}

/*
 * The name in a "fn=" value: "(id) name" defines id, "(id)" refers to it,
 * anything else is the name itself. Returns a pointer into the table or
 * into 'value' (valid until the next line), NULL when out of memory or
 * for an unknown id (treated as no name).
 */
static const char *resolve(struct names *t, char *value, int *ret_err)
{
	char *end;
	unsigned long id;

	if (value[0] != '(')
		return value;
	id = strtoul(value + 1, &end, 10);
	if (end == value + 1 || *end != ')' || id > 10000000)
		return value;
	end++;
	while (*end == ' ')
		end++;
	if (!*end)
		return id < t->n ? t->v[id] : NULL;
	if (id >= t->n) {
		char **v = realloc(t->v, (id + 1) * sizeof(*v));

		if (!v) {
			*ret_err = -ENOMEM;
			return NULL;
		}
		memset(v + t->n, 0, (id + 1 - t->n) * sizeof(*v));
		t->v = v;
		t->n = id + 1;
	}
	free(t->v[id]);
	t->v[id] = strdup(end);
	if (!t->v[id])
		*ret_err = -ENOMEM;
	return t->v[id];
}

/* *slot = a copy of the name in 'value' (resolve), the old one freed;
 * NULL for no name. 0 or -ENOMEM. */
static int resolve_into(struct names *t, char *value, char **slot)
{
	int r = 0;
	const char *name = resolve(t, value, &r);

	if (r < 0)
		return r;
	free(*slot);
	*slot = name ? strdup(name) : NULL;
	return name && !*slot ? -ENOMEM : 0;
}

static bool is_cost_line(const char *s)
{
	return isdigit((unsigned char)s[0]) || s[0] == '+' || s[0] == '-' || s[0] == '*';
}

/* Read up to 'max' unsigned numbers after skipping 'skip' position fields. */
static size_t read_costs(const char *s, size_t skip, uint64_t *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < skip; i++) {
		s += strspn(s, " \t");
		s += strcspn(s, " \t");
	}
	while (n < max) {
		char *end;
		uint64_t v;

		s += strspn(s, " \t");
		if (!*s)
			break;
		v = strtoull(s, &end, 10);
		if (end == s)
			break;
		out[n++] = v;
		s = end;
	}
	return n;
}

static int read_events(char *s, struct callgrind_profile *p)
{
	char *save = NULL;

	p->nevents = 0;
	for (char *tok = strtok_r(s, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (p->nevents == CALLGRIND_MAX_EVENTS || strlen(tok) >= sizeof(p->events[0]))
			return -EINVAL;
		strcpy(p->events[p->nevents++], tok);
	}
	return p->nevents ? 0 : -EINVAL;
}

static size_t count_fields(const char *s)
{
	size_t n = 0;

	while (*(s += strspn(s, " \t"))) {
		n++;
		s += strcspn(s, " \t");
	}
	return n;
}

static bool same(const char *a, const char *b)
{
	return !b || (a && strcmp(a, b) == 0);
}

int callgrind_parse(FILE *f, const char *caller, const char *callee,
		    struct callgrind_profile *ret)
{
	struct callgrind_profile p = { 0 };
	struct names names = { 0 };
	char *line = NULL, *fn = NULL, *cfn = NULL;
	size_t cap = 0, positions = 1;
	bool header = false, in_call = false, have_totals = false;
	uint64_t calls = 0;
	ssize_t len;
	int r = 0;

	while ((len = getline(&line, &cap, f)) >= 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (!header) {
			/* "# callgrind format", or straight into the header. */
			if (!strncmp(line, "# callgrind format", 18) || !strncmp(line, "version:", 8) ||
			    !strncmp(line, "creator:", 8) || !strncmp(line, "events:", 7)) {
				header = true;
			} else if (line[0]) {
				r = -EINVAL;
				goto out;
			}
		}
		if (in_call && is_cost_line(line)) {
			uint64_t cost[CALLGRIND_MAX_EVENTS] = { 0 };

			read_costs(line, positions, cost, p.nevents);
			if (same(fn, caller) && same(cfn, callee)) {
				for (size_t i = 0; i < p.nevents; i++)
					p.inclusive[i] += cost[i];
				p.calls += calls;
				p.arcs++;
			}
			in_call = false;
			continue;
		}
		if (!strncmp(line, "events:", 7)) {
			r = read_events(line + 7, &p);
			if (r < 0)
				goto out;
		} else if (!strncmp(line, "positions:", 10)) {
			positions = count_fields(line + 10);
			if (positions == 0)
				positions = 1;
		} else if (!strncmp(line, "totals:", 7) || !strncmp(line, "summary:", 8)) {
			/* totals: wins when both are present. */
			if (line[0] == 't' || !have_totals)
				read_costs(strchr(line, ':') + 1, 0, p.totals, p.nevents);
			have_totals |= line[0] == 't';
		} else if (!strncmp(line, "desc: Trigger: ", 15)) {
			snprintf(p.trigger, sizeof(p.trigger), "%s", line + 15);
		} else if (!strncmp(line, "fn=", 3)) {
			free(cfn);
			cfn = NULL;
			r = resolve_into(&names, line + 3, &fn);
			if (r < 0)
				goto out;
		} else if (!strncmp(line, "cfn=", 4)) {
			r = resolve_into(&names, line + 4, &cfn);
			if (r < 0)
				goto out;
		} else if (!strncmp(line, "calls=", 6)) {
			calls = strtoull(line + 6, NULL, 10);
			in_call = true;
		}
	}
	if (ferror(f)) {
		r = -EIO;
		goto out;
	}
	if (!header || p.nevents == 0) {
		r = -EINVAL;
		goto out;
	}
	*ret = p;
out:
	free(line);
	free(fn);
	free(cfn);
	names_free(&names);
	return r;
}

int callgrind_parse_file(const char *path, const char *caller, const char *callee,
			 struct callgrind_profile *ret)
{
	FILE *f = fopen(path, "re");
	int r;

	if (!f)
		return -errno;
	r = callgrind_parse(f, caller, callee, ret);
	fclose(f);
	return r;
}

int callgrind_event_index(const struct callgrind_profile *p, const char *name)
{
	for (size_t i = 0; i < p->nevents; i++)
		if (!strcmp(p->events[i], name))
			return (int)i;
	return -1;
}

/* A decimal number of 1 to 9 digits at *s, without a sign; *s moves past it. */
static bool number(const char **s, unsigned *ret)
{
	unsigned long v = 0;
	size_t k = 0;

	while (isdigit((unsigned char)(*s)[k]) && k < 10)
		v = v * 10 + (unsigned long)((*s)[k++] - '0');
	if (k == 0 || k > 9)
		return false;
	*s += k;
	*ret = (unsigned)v;
	return true;
}

bool callgrind_part_name(const char *name, pid_t pid, unsigned *ret_dump, unsigned *ret_thread)
{
	static const char base[] = "callgrind.out.";
	unsigned who, dump = 0, thread = 0;
	const char *s = name;

	if (strncmp(s, base, sizeof(base) - 1) != 0)
		return false;
	s += sizeof(base) - 1;
	if (!number(&s, &who) || who != (unsigned)pid)
		return false;
	if (*s == '.' && (s++, !number(&s, &dump) || dump == 0))
		return false;
	if (*s == '-' && (s++, !number(&s, &thread) || thread == 0))
		return false;
	if (*s)
		return false;
	*ret_dump = dump;
	*ret_thread = thread;
	return true;
}

/* The folded stack of context 'name' ("f'caller'caller's caller..."), cut
 * at the outermost 'root', into out with 'cost'; a chain that does not
 * reach 'root' is not the benchmark's (the driver's own instructions) and
 * is left out, but for one as long as the chain callgrind keeps, which is
 * cut. */
static int add_context(struct folded *out, const char *name, const char *root, size_t max_callers,
		       uint64_t cost)
{
	char *copy = strdup(name), *save = NULL;
	const char *chain[CALLGRIND_PROFILE_CALLERS + 2];
	const char *frames[CALLGRIND_PROFILE_CALLERS + 3];
	size_t n = 0, k = 0, top = SIZE_MAX;
	int r = 0;

	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, "'", &save); tok && n < CALLGRIND_PROFILE_CALLERS + 2;
	     tok = strtok_r(NULL, "'", &save))
		chain[n++] = tok;
	for (size_t i = 0; i < n; i++)
		if (strcmp(chain[i], root) == 0)
			top = i;
	if (top == SIZE_MAX) {
		if (n <= max_callers)
			goto out;
		frames[k++] = "[deeper]";
		top = n - 1;
	}
	for (size_t i = top + 1; i-- > 0;)
		frames[k++] = chain[i];
	if (k)
		r = folded_add(out, frames, k, cost);
out:
	free(copy);
	return r;
}

int callgrind_folded(FILE *f, const char *root, size_t max_callers, struct folded *out)
{
	struct names names = { 0 };
	struct callgrind_profile p = { 0 };
	char *line = NULL, *fn = NULL;
	size_t cap = 0, positions = 1;
	bool in_call = false;
	uint64_t self = 0;
	ssize_t len;
	int ir = -1, r = 0;

	while ((len = getline(&line, &cap, f)) >= 0) {
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (is_cost_line(line)) {
			uint64_t cost[CALLGRIND_MAX_EVENTS] = { 0 };

			/* A call's line is its inclusive cost, not fn's own. */
			if (!in_call && ir >= 0 && fn) {
				read_costs(line, positions, cost, p.nevents);
				self += cost[ir];
			}
			in_call = false;
			continue;
		}
		if (!strncmp(line, "events:", 7)) {
			r = read_events(line + 7, &p);
			if (r < 0)
				goto out;
			ir = callgrind_event_index(&p, "Ir");
		} else if (!strncmp(line, "positions:", 10)) {
			positions = count_fields(line + 10);
			if (positions == 0)
				positions = 1;
		} else if (!strncmp(line, "fn=", 3)) {
			if (fn && self) {
				r = add_context(out, fn, root, max_callers, self);
				if (r < 0)
					goto out;
			}
			self = 0;
			r = resolve_into(&names, line + 3, &fn);
			if (r < 0)
				goto out;
		} else if (!strncmp(line, "cfn=", 4)) {
			resolve(&names, line + 4, &r);
			if (r < 0)
				goto out;
		} else if (!strncmp(line, "calls=", 6)) {
			in_call = true;
		}
	}
	if (fn && self)
		r = add_context(out, fn, root, max_callers, self);
	if (r == 0 && ferror(f))
		r = -EIO;
	if (r == 0 && ir < 0)
		r = -EINVAL;
out:
	free(line);
	free(fn);
	names_free(&names);
	return r;
}
