/* SPDX-License-Identifier: MIT */
/*
 * Which benchmarks a run measures: registered benchmarks chosen by name
 * (--bench), functions of the binary or its libraries chosen by name with
 * optional arguments (--symbol), each selected once, each at the thread
 * counts asked for (--threads), and the part of them a shard runs. What
 * matched nothing is described, not worded: the command line says it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "elf/elf.h"
#include "results/results.h"
#include "util/match.h"
#include "measure/measure.h"

static struct bench_spec *specs_add(struct measure_selection *s)
{
	if (array_grow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v)) < 0)
		return NULL;
	s->v[s->n] = (struct bench_spec){ 0 };
	return &s->v[s->n++];
}

void measure_selection_clear(struct measure_selection *s)
{
	for (size_t i = 0; i < s->n; i++)
		bench_spec_clear(&s->v[i]);
	free(s->v);
	*s = (struct measure_selection){ 0 };
}

void measure_miss_clear(struct measure_miss *m)
{
	free(m->pattern);
	free(m->missing);
	free(m->names);
	free(m->function);
	free(m->instance);
	*m = (struct measure_miss){ 0 };
}

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* Whether 'pattern' is a glob for the functions of the scope: it has glob
 * characters and is not a whole name as it is ("f(long) [clone .cold]"). */
static bool symbol_glob(const struct elf_scope *scope, const char *pattern)
{
	if (!has_glob(pattern))
		return false;
	for (size_t j = 0; j < scope->n; j++)
		for (size_t i = 0; i < elf_symbol_count(scope->objs[j]); i++) {
			const struct elf_symbol *sym = elf_symbol(scope->objs[j], i);

			if (!strcmp(sym->name, pattern) || !strcmp(sym->demangled, pattern))
				return false;
		}
	return true;
}

/* The registered benchmarks that 'glob' selects; *ret_matched counts them,
 * those selected before included. */
static int select_bench(struct elf_file *ef, const char *glob, struct measure_selection *out,
			size_t *ret_matched)
{
	size_t n = elf_bench_count(ef), matched = 0;

	for (size_t i = 0; i < n; i++) {
		const struct elf_bench *b = elf_bench(ef, i);
		struct bench_spec *s;
		bool dup = false;

		if (!match_glob(glob, b->name) && !match_glob(glob, b->base))
			continue;
		/* Selected twice ('fib*' and 'fib[20]'): run once. */
		matched++;
		for (size_t j = 0; j < out->n && !dup; j++)
			dup = out->v[j].in_main && !strcmp(out->v[j].name, b->name);
		if (dup)
			continue;
		s = specs_add(out);
		if (!s)
			return -ENOMEM;
		s->name = strdup(b->name);
		s->symbol = b->symbol ? strdup(b->symbol->name) : NULL;
		s->object = strdup(elf_path(ef));
		s->build_id = elf_build_id(ef) ? strdup(elf_build_id(ef)) : NULL;
		s->in_main = s->registered = true;
		s->link_addr = b->addr;
		s->threads = b->threads;
		if (b->has_arg) {
			s->args[0] = b->arg;
			s->nargs = 1;
		}
		if (!s->name || !s->object || (b->symbol && !s->symbol))
			return -ENOMEM;
	}
	*ret_matched = matched;
	return 0;
}

/* The names closest to 'pattern' among the registered benchmarks, into
 * m->suggest ("" when none is close). */
static int suggest_bench(struct elf_file *ef, const char *pattern, struct measure_miss *m)
{
	size_t n = elf_bench_count(ef);
	const char **names = calloc(n ? n : 1, sizeof(*names));

	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		names[i] = elf_bench(ef, i)->name;
	if (!match_suggest(pattern, names, n, 3, m->suggest, sizeof(m->suggest)))
		m->suggest[0] = '\0';
	free(names);
	return 0;
}

static bool spec_exists(const struct measure_selection *out, const char *object, uint64_t addr,
			const int64_t *args, unsigned nargs)
{
	for (size_t i = 0; i < out->n; i++)
		if (out->v[i].link_addr == addr && out->v[i].nargs == nargs &&
		    !memcmp(out->v[i].args, args, nargs * sizeof(*args)) &&
		    !strcmp(out->v[i].object, object))
			return true;
	return false;
}

/* Add symbol 'sym' of scope object 'obj' (the binary when main) called
 * with args, named by its demangled name and the arguments ("f(1,2)",
 * "num::scale(long)(7)": a C++ name keeps its parameter types, so that
 * overloads called alike are told apart). */
static int add_symbol(struct measure_selection *out, struct elf_file *obj, bool main,
		      const struct elf_symbol *sym, const int64_t *args, unsigned nargs)
{
	struct bench_spec *s = specs_add(out);

	if (!s)
		return -ENOMEM;
	if (nargs) {
		char list[256] = "";

		for (unsigned a = 0; a < nargs; a++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%" PRId64,
				 a ? "," : "", args[a]);
		if (asprintf(&s->name, "%s(%s)", sym->demangled, list) < 0)
			s->name = NULL;
	} else {
		s->name = strdup(sym->demangled);
	}
	s->symbol = strdup(sym->name);
	s->object = strdup(elf_path(obj));
	if (elf_build_id(obj))
		s->build_id = strdup(elf_build_id(obj));
	s->in_main = main;
	s->link_addr = sym->addr;
	s->ifunc = sym->ifunc;
	s->clone = sym->kind == ELF_FN_CLONE;
	s->maybe_member = sym->member == ELF_MEMBER_MAYBE;
	memcpy(s->args, args, nargs * sizeof(*args));
	s->nargs = nargs;
	if (!s->name || !s->symbol || !s->object)
		return -ENOMEM;
	return 0;
}

/* A function a pattern selects: symbol i of scope object j. */
struct candidate {
	size_t obj;
	const struct elf_symbol *sym;
	enum match_how how;
};

/* The candidates of an exact name that are one function, not overloads:
 * those at one address, or all of one name (a static function defined in
 * two files). */
static bool one_function(const struct candidate *c, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (c[i].sym->addr != c[0].sym->addr &&
		    strcmp(c[i].sym->demangled, c[0].sym->demangled) != 0)
			return false;
	return true;
}

/* The overloads of an ambiguous name, "'a', 'b' and 'c'" (one each), and
 * the first that can take the arguments as the selector that picks it
 * ("num::scale(long)(7)"). */
static int say_overloads(const struct candidate *c, size_t n, unsigned nargs,
			 const char *selector_args, struct measure_miss *m)
{
	size_t len = 1, pick = 0;
	char *names;

	while (pick + 1 < n && match_floating_param(c[pick].sym->demangled, nargs) >= 0)
		pick++;

	for (size_t i = 0; i < n; i++)
		len += strlen(c[i].sym->demangled) + 8;
	names = malloc(len);
	if (!names)
		return -ENOMEM;
	names[0] = '\0';
	for (size_t i = 0, shown = 0; i < n; i++) {
		bool dup = false;

		for (size_t k = 0; k < i && !dup; k++)
			dup = !strcmp(c[k].sym->demangled, c[i].sym->demangled);
		if (dup)
			continue;
		/* ' and ' before the last one. */
		bool last = true;

		for (size_t k = i + 1; k < n && last; k++) {
			bool seen = false;

			for (size_t q = 0; q <= i && !seen; q++)
				seen = !strcmp(c[q].sym->demangled, c[k].sym->demangled);
			last = seen;
		}
		snprintf(names + strlen(names), len - strlen(names), "%s'%s'",
			 !shown ? "" : last ? " and " : ", ", c[i].sym->demangled);
		shown++;
	}
	m->names = names;

	/* The selector that picks one: its name and parameter list, without
	 * a template's return type ("twice<int>(int)"), and for instances
	 * of one template its name alone too ("twice<int>"). */
	const char *d = c[pick].sym->demangled;
	struct match_sig sg;
	size_t end;
	bool instances = true;

	match_split(d, &sg);
	end = sg.has_params ? sg.params_close + 1 : sg.name_end;
	for (size_t i = 0; i < n && instances; i++) {
		const char *e = c[i].sym->demangled;
		struct match_sig se;
		size_t tn = match_name_end(e, true);

		match_split(e, &se);
		size_t stem = tn - se.name_start;

		instances = tn < se.name_end && stem == match_name_end(d, true) - sg.name_start &&
			    !memcmp(e + se.name_start, d + sg.name_start, stem);
	}
	m->instances = instances;
	/* Instances of a generic Rust function: named by their hashes
	 * (legacy mangling) or their types ("crate::f::<u32>", v0), which
	 * are the whole name. */
	bool hashed = true;

	for (size_t i = 0; i < n && hashed; i++)
		hashed = match_rust_hash(c[i].sym->demangled) < strlen(c[i].sym->demangled);
	m->generic = hashed || (instances && !sg.has_params && end == sg.name_end);
	if (asprintf(&m->function, "%.*s%s", (int)(end - sg.name_start), d + sg.name_start,
		     selector_args) < 0) {
		m->function = NULL;
		return -ENOMEM;
	}
	if (instances && asprintf(&m->instance, "%.*s%s", (int)(sg.name_end - sg.name_start),
				  d + sg.name_start, selector_args) < 0) {
		m->instance = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* The functions that 'pattern' selects in the scope, called with args;
 * *ret_matched counts them, those selected before included. -EINVAL with
 * *miss saying why when the selection cannot be run. */
static int select_symbol(const struct elf_scope *scope, const char *pattern, const int64_t *args,
			 unsigned nargs, struct measure_selection *out, size_t *ret_matched,
			 struct measure_miss *miss)
{
	bool glob = symbol_glob(scope, pattern);
	const struct elf_symbol *fragment = NULL, *member = NULL;
	bool fragment_named = false; /* by its whole name */
	struct candidate *c = NULL;
	size_t n = 0, cap = 0, matched = 0;
	int r = 0;

	/* An exact name is looked up as the loader would: the first object
	 * that defines it wins. A glob selects from all. */
	for (size_t j = 0; j < scope->n && !(n && !glob); j++) {
		for (size_t i = 0; i < elf_symbol_count(scope->objs[j]); i++) {
			const struct elf_symbol *sym = elf_symbol(scope->objs[j], i);
			enum match_how how = match_function_how(pattern, sym->name, sym->demangled);

			if (how == MATCH_NONE)
				continue;
			/* A piece of a function runs only inside it: globs
			 * leave it out, an exact name that has nothing else
			 * is refused. */
			if (sym->kind == ELF_FN_FRAGMENT) {
				if (!fragment_named)
					fragment = sym;
				fragment_named |= how == MATCH_FULL;
				continue;
			}
			/* A member function needs an object, which a call
			 * with integer arguments cannot give: left out, and
			 * refused when nothing else matches. */
			if (sym->member == ELF_MEMBER_YES) {
				if (!member)
					member = sym;
				continue;
			}
			if (array_grow((void **)&c, &cap, n + 1, sizeof(*c)) < 0) {
				r = -ENOMEM;
				goto out;
			}
			c[n++] = (struct candidate){ j, sym, how };
		}
	}
	if (member && !n && (glob || !fragment_named)) {
		*miss = (struct measure_miss){ .what = MEASURE_MISS_MEMBER,
					       .function = strdup(member->demangled) };
		r = miss->function ? -EINVAL : -ENOMEM;
		goto out;
	}
	if (!glob && fragment && (!n || fragment_named)) {
		*miss = (struct measure_miss){ .what = MEASURE_MISS_FRAGMENT,
					       .function = strdup(fragment->demangled) };
		r = miss->function ? -EINVAL : -ENOMEM;
		goto out;
	}
	if (!glob) {
		/* A compiler's copy of a function is selected by the
		 * function's name only when the function itself is gone. */
		bool plain = false;
		size_t kept = 0;

		for (size_t i = 0; i < n; i++)
			plain |= c[i].sym->kind != ELF_FN_CLONE || c[i].how == MATCH_FULL;
		for (size_t i = 0; i < n; i++)
			if (!plain || c[i].sym->kind != ELF_FN_CLONE || c[i].how == MATCH_FULL)
				c[kept++] = c[i];
		n = kept;
		if (!one_function(c, n)) {
			char list[256] = "";

			/* The arguments as given, for the selector to suggest. */
			for (unsigned a = 0; a < nargs; a++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list),
					 "%s%" PRId64, a ? "," : "(", args[a]);
			if (nargs)
				strcat(list, ")");
			*miss = (struct measure_miss){ .what = MEASURE_MISS_AMBIGUOUS };
			r = say_overloads(c, n, nargs, list, miss);
			if (r == 0)
				r = -EINVAL;
			goto out;
		}
	}
	/* Arguments go in integer registers: a floating-point parameter
	 * would read whatever its register holds. */
	for (size_t i = 0; nargs && i < n; i++) {
		if (match_floating_param(c[i].sym->demangled, nargs) < 0)
			continue;
		*miss = (struct measure_miss){ .what = MEASURE_MISS_FLOATING,
					       .function = strdup(c[i].sym->demangled) };
		r = miss->function ? -EINVAL : -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct elf_file *obj = scope->objs[c[i].obj];

		matched++;
		if (spec_exists(out, elf_path(obj), c[i].sym->addr, args, nargs))
			continue;
		r = add_symbol(out, obj, c[i].obj == 0, c[i].sym, args, nargs);
		if (r < 0)
			goto out;
	}
	*ret_matched = matched;
out:
	free(c);
	return r;
}

/* Why 'pattern' matched no function: a library not found, a stripped
 * binary, or the closest names. */
static int explain_symbol(const struct elf_scope *scope, const char *pattern,
			  struct measure_miss *m)
{
	size_t n = 0;
	const char **names, **where;

	if (scope->missing[0]) {
		m->missing = strdup(scope->missing[0]);
		return m->missing ? 0 : -ENOMEM;
	}
	/* A misspelt name of a library's function is the likeliest miss,
	 * stripped binary or not: the closest names of the whole scope are
	 * suggested, a library's with its name. */
	m->stripped = elf_is_stripped(scope->objs[0]);
	names = elf_scope_names(scope, &n);
	where = calloc(n + 1, sizeof(*where));
	if (names && where) {
		/* Only what --symbol can run: no piece of a function, no
		 * member function that needs an object. */
		size_t kept = 0, k = 0;

		for (size_t j = 0; j < scope->n; j++) {
			const char *path = elf_path(scope->objs[j]);
			const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

			for (size_t i = 0; i < elf_symbol_count(scope->objs[j]); i++, k++) {
				const struct elf_symbol *sym = elf_symbol(scope->objs[j], i);

				if (sym->kind == ELF_FN_FRAGMENT || sym->member == ELF_MEMBER_YES)
					continue;
				where[kept] = j ? base : NULL;
				names[kept++] = names[k];
			}
		}
		n = kept;
	}
	/* A stripped binary may hold the function, linked in from a static
	 * library, without a symbol: a library's name that merely looks alike
	 * (LZ4_compress for zstd's ZSTD_compress) would mislead, so there
	 * only a typo's distance, two edits, is suggested. */
	if (!names || !where ||
	    !match_suggest_in(pattern, names, where, n, 3, m->stripped ? 2 : 0, m->suggest,
			      sizeof(m->suggest)))
		m->suggest[0] = '\0';
	free(names);
	free(where);
	return 0;
}

int measure_miss_symbol(const struct elf_scope *scope, const char *selector,
			struct measure_miss *ret_miss)
{
	struct measure_miss m = { .what = MEASURE_MISS_SYMBOL, .selector = selector };
	int r;

	m.pattern = strdup(selector);
	if (!m.pattern)
		return -ENOMEM;
	r = explain_symbol(scope, m.pattern, &m);
	if (r < 0) {
		measure_miss_clear(&m);
		return r;
	}
	*ret_miss = m;
	return 0;
}

static int select_symbols(struct elf_file *ef, const char *const *symbols, size_t nsymbols,
			  struct measure_selection *out, bool *found, struct measure_miss *miss)
{
	struct elf_scope scope;
	int r = 0;

	if (nsymbols == 0)
		return 0;
	if (elf_scope_open(ef, true, &scope) < 0)
		return -ENOMEM;
	for (size_t k = 0; k < nsymbols && r == 0; k++) {
		int64_t args[MEASURE_MAX_ARGS] = { 0 };
		unsigned nargs = 0;
		char *pattern = NULL;
		size_t matched = 0;

		r = match_parse_call(symbols[k], &pattern, args, MEASURE_MAX_ARGS, &nargs);
		if (r == -ENOMEM)
			break;
		if (r < 0) {
			*miss = (struct measure_miss){ .what = MEASURE_MISS_BAD_CALL,
						       .selector = symbols[k],
						       .not_integer = r == -EDOM };
			r = -EINVAL;
			break;
		}
		r = select_symbol(&scope, pattern, args, nargs, out, &matched, miss);
		if (r == -EINVAL)
			miss->selector = symbols[k];
		if (r == 0 && matched && found)
			found[k] = true;
		if (r == 0 && !matched && !found) {
			*miss = (struct measure_miss){ .what = MEASURE_MISS_SYMBOL,
						       .selector = symbols[k],
						       .pattern = pattern };
			pattern = NULL;
			r = explain_symbol(&scope, miss->pattern, miss);
			if (r == 0)
				r = -ENOENT;
		}
		free(pattern);
	}
	elf_scope_close(&scope);
	return r;
}

int measure_select(struct elf_file *ef, const char *const *benches, size_t nbenches,
		   const char *const *symbols, size_t nsymbols, bool *found,
		   struct measure_selection *ret, struct measure_miss *ret_miss)
{
	static const char *const all[] = { "*" };
	struct measure_selection sel = { 0 };
	struct measure_miss miss = { 0 };
	int r = 0;

	/* No selection: every registered benchmark. */
	if (!nbenches && !nsymbols) {
		benches = all;
		nbenches = 1;
	}
	for (size_t k = 0; k < nbenches && r == 0; k++) {
		size_t matched = 0;

		r = select_bench(ef, benches[k], &sel, &matched);
		if (r == 0 && matched && found)
			found[k] = true;
		if (r == 0 && !matched && !found) {
			miss = (struct measure_miss){ .what = MEASURE_MISS_BENCH,
						      .selector = benches == all ? NULL :
										 benches[k] };
			if (!elf_bench_count(ef))
				miss.none_registered = true;
			else
				r = suggest_bench(ef, benches[k], &miss);
			if (r == 0)
				r = -ENOENT;
		}
	}
	if (r == 0)
		r = select_symbols(ef, symbols, nsymbols, &sel, found ? found + nbenches : NULL,
				   &miss);
	if (r < 0) {
		measure_selection_clear(&sel);
		if (r == -ENOENT || r == -EINVAL)
			*ret_miss = miss;
		else
			measure_miss_clear(&miss);
		return r;
	}
	*ret = sel;
	return 0;
}

/*
 * --shard K/N: keep the benchmarks whose name hashes to part K (FNV-1a of
 * the name, modulo N; docs/run.md). The part of a benchmark depends on its
 * name alone, so N machines with the same selection run disjoint parts
 * that together are the whole selection.
 */
void measure_select_shard(struct measure_selection *s, unsigned k, unsigned n)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->n; i++) {
		if (results_shard_of(s->v[i].name, n) == k - 1)
			s->v[kept++] = s->v[i];
		else
			bench_spec_clear(&s->v[i]);
	}
	s->n = kept;
}

int measure_threads_parse(const char *text, struct measure_threads *list,
			  struct measure_threads_bad *ret_bad)
{
	struct measure_threads out = *list;
	struct measure_threads_bad bad = { 0 };
	const char *p = text;

	for (;;) {
		size_t len = strcspn(p, ",");
		unsigned long v = 0;

		size_t shown = len < sizeof(bad.item) - 1 ? len : sizeof(bad.item) - 1;

		memcpy(bad.item, p, shown);
		bad.item[shown] = '\0';
		if (len == 0) {
			bad.what = MEASURE_THREADS_EMPTY;
			goto bad;
		}
		if (strspn(p, "0123456789") < len) {
			bad.what = MEASURE_THREADS_NOT_NUMBER;
			goto bad;
		}
		/* Past the largest count, more digits cannot bring it back. */
		for (size_t i = 0; i < len && v <= MEASURE_MAX_THREADS; i++)
			v = v * 10 + (unsigned long)(p[i] - '0');
		bad.what = MEASURE_THREADS_RANGE;
		if (v < 1 || v > MEASURE_MAX_THREADS)
			goto bad;
		bad.what = MEASURE_THREADS_REPEATED;
		for (size_t i = 0; i < out.n; i++)
			if (out.v[i] == v)
				goto bad;
		/* Distinct counts of 1..MEASURE_MAX_THREADS: they fit. */
		out.v[out.n++] = (unsigned)v;
		if (!p[len])
			break;
		p += len + 1;
	}
	*list = out;
	return 0;
bad:
	*ret_bad = bad;
	return -EINVAL;
}

/* The length of s->name without the "[threads=N]" that a registration
 * with BENCHTRAP_THREADS gave it (elf/registry.c), if any. */
static size_t threads_base_len(const struct bench_spec *s)
{
	size_t len = strlen(s->name);
	char suffix[32];
	int n;

	if (!s->threads)
		return len;
	n = snprintf(suffix, sizeof(suffix), "[threads=%u]", s->threads);
	if ((size_t)n < len && !strcmp(s->name + len - (size_t)n, suffix))
		return len - (size_t)n;
	return len;
}

/* A copy of 's' named 'base' (its first base_len characters) with
 * "[threads=N]", or plain when 'plain', to run on 'threads' threads. */
static int spec_at_threads(const struct bench_spec *s, size_t base_len, unsigned threads,
			   bool plain, struct bench_spec *ret)
{
	struct bench_spec c = *s;
	int r;

	if (plain)
		r = (c.name = strndup(s->name, base_len)) ? 0 : -1;
	else
		r = asprintf(&c.name, "%.*s[threads=%u]", (int)base_len, s->name, threads);
	if (r < 0)
		c.name = NULL;
	c.symbol = s->symbol ? strdup(s->symbol) : NULL;
	c.object = s->object ? strdup(s->object) : NULL;
	c.build_id = s->build_id ? strdup(s->build_id) : NULL;
	c.threads = threads;
	if (!c.name || (s->symbol && !c.symbol) || (s->object && !c.object) ||
	    (s->build_id && !c.build_id)) {
		bench_spec_clear(&c);
		return -ENOMEM;
	}
	*ret = c;
	return 0;
}

/* Whether an earlier spec of s, before index i, is the same registration
 * with BENCHTRAP_THREADS as s->v[i]: only such specs can repeat once their
 * counts are dropped ("counter[threads=1]" and "counter[threads=2]"). */
static bool threads_seen(const struct measure_selection *s, size_t i, size_t base_len)
{
	const struct bench_spec *x = &s->v[i];

	if (!x->threads)
		return false;
	for (size_t j = 0; j < i; j++) {
		const struct bench_spec *y = &s->v[j];

		if (y->threads && threads_base_len(y) == base_len &&
		    !strncmp(y->name, x->name, base_len) && !strcmp(y->object, x->object))
			return true;
	}
	return false;
}

int measure_select_threads(struct measure_selection *s, const struct measure_threads *counts)
{
	struct measure_selection out = { 0 };
	bool plain = counts->n == 1 && counts->v[0] == 1;

	if (!counts->n)
		return 0;
	for (size_t i = 0; i < s->n; i++) {
		size_t base_len = threads_base_len(&s->v[i]);

		if (threads_seen(s, i, base_len))
			continue;
		for (size_t k = 0; k < counts->n; k++) {
			struct bench_spec *c = specs_add(&out);

			if (!c || spec_at_threads(&s->v[i], base_len, counts->v[k], plain, c) < 0) {
				if (c)
					out.n--;
				measure_selection_clear(&out);
				return -ENOMEM;
			}
		}
	}
	measure_selection_clear(s);
	*s = out;
	return 0;
}
