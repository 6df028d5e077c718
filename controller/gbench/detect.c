/* SPDX-License-Identifier: MIT */
/*
 * Recognizing a Google Benchmark binary by its symbols, and finding the
 * function of one of its benchmarks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf.h"
#include "gbench/gbench.h"
#include "util/strutil.h"
#include "gbench/internal.h"

/* Mangled prefixes of the library's entry points (every overload). */
static const char *const entry_points[] = {
	"_ZN9benchmark22RunSpecifiedBenchmarks",
	"_ZN9benchmark8internal25RegisterBenchmarkInternal",
	NULL,
};

static bool defines_entry_point(const struct elf_file *ef)
{
	for (size_t i = 0; i < elf_symbol_count(ef); i++) {
		const char *name = elf_symbol(ef, i)->name;

		for (size_t k = 0; entry_points[k]; k++)
			if (!strncmp(name, entry_points[k], strlen(entry_points[k])))
				return true;
	}
	return false;
}

bool gbench_detect(struct elf_file *ef)
{
	struct elf_scope scope;
	bool found = false, needs = false;

	if (defines_entry_point(ef))
		return true;
	/* Only a binary that needs a library named like Google Benchmark's
	 * has its libraries read: this runs before every `run` and `list`. */
	for (size_t i = 0; i < elf_needed_count(ef); i++)
		if (strstr(elf_needed(ef, i), "benchmark"))
			needs = true;
	if (!needs || elf_scope_open(ef, true, &scope) < 0)
		return false;
	for (size_t i = 1; i < scope.n && !found; i++)
		found = defines_entry_point(scope.objs[i]);
	elf_scope_close(&scope);
	return found;
}

/* ---- a benchmark's function, by its names ------------------------------- */

/* The parameter list every benchmark's function has, as demangled. */
static const char state_params[] = "(benchmark::State&)";

/* Whether c opens (+1) or closes (-1) a bracket of a demangled name. */
static int bracket(char c)
{
	return strchr("<({[", c) ? 1 : strchr(">)}]", c) ? -1 : 0;
}

/*
 * The qualified name of demangled function 'd' when its parameter list is
 * exactly (benchmark::State&): [*ret_q, *ret_q + *ret_len), a template
 * instance's return type ("void ") left out; a member's " const" is
 * allowed (a lambda's operator()). false for any other function.
 */
static bool state_function(const char *d, const char **ret_q, size_t *ret_len)
{
	size_t len = strlen(d), pl = strlen(state_params);

	if (len > 6 && !strcmp(d + len - 6, " const"))
		len -= 6;
	if (len <= pl || memcmp(d + len - pl, state_params, pl) != 0)
		return false;
	len -= pl;
	if (!strncmp(d, "void ", 5)) {
		d += 5;
		len -= 5;
	}
	if (!len)
		return false;
	*ret_q = d;
	*ret_len = len;
	return true;
}

/* One component of a qualified name: [s, s + len). */
struct part {
	const char *s;
	size_t len;
};

#define MAX_PARTS 32

/*
 * Split [s, s + len) at each "::" outside brackets ("ns", "BM_t<int>",
 * "(anonymous namespace)", "{lambda(benchmark::State&)#1}"): into
 * ret[0..*ret_n). false when there are more than MAX_PARTS or the brackets
 * do not balance.
 */
static bool split(const char *s, size_t len, struct part *ret, size_t *ret_n)
{
	size_t n = 0, start = 0;
	int depth = 0;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && depth == 0 && i + 1 < len && s[i] == ':' && s[i + 1] == ':') {
			if (n == MAX_PARTS)
				return false;
			ret[n++] = (struct part){ s + start, i - start };
			start = i + 2;
			i++;
			continue;
		}
		if (i == len) {
			if (n == MAX_PARTS || depth != 0)
				return false;
			ret[n++] = (struct part){ s + start, i - start };
			break;
		}
		depth += bracket(s[i]);
		if (depth < 0)
			return false;
	}
	*ret_n = n;
	return true;
}

/* a and b the same but for spaces ("BM_t<int,8>" is "BM_t<int, 8>"). */
static bool same_text(struct part a, struct part b)
{
	size_t i = 0, k = 0;

	for (;;) {
		while (i < a.len && a.s[i] == ' ')
			i++;
		while (k < b.len && b.s[k] == ' ')
			k++;
		if (i == a.len || k == b.len)
			return i == a.len && k == b.len;
		if (a.s[i++] != b.s[k++])
			return false;
	}
}

/* The length of p's name before its template arguments ("BM_t" of
 * "BM_t<int>"); p.len when it has none. */
static size_t base_len(struct part p)
{
	const char *lt = memchr(p.s, '<', p.len);

	return lt ? (size_t)(lt - p.s) : p.len;
}

/* The length of the component of a registered name that starts at s: up
 * to the first '/' outside brackets ("BM_t<int>" of "BM_t<int>/8"). */
static size_t name_component(const char *s)
{
	int depth = 0;
	size_t i = 0;

	for (; s[i]; i++) {
		if (s[i] == '/' && depth == 0)
			break;
		depth += bracket(s[i]);
	}
	return i;
}

enum gbench_match gbench_match_function(const char *demangled, const char *name)
{
	struct part fn[MAX_PARTS], reg[MAX_PARTS];
	size_t nf, nr, l0 = name_component(name), base;
	const char *q;
	size_t qlen;
	enum gbench_match m = GBENCH_MATCH_EXACT;

	if (!state_function(demangled, &q, &qlen) || !split(q, qlen, fn, &nf) || !l0 ||
	    !split(name, l0, reg, &nr))
		return GBENCH_MATCH_NONE;
	/* BENCHMARK_F(Fix, Foo), BENCHMARK_DEFINE_F and their templates
	 * register "Fix/Foo" ("Fix<int>/Foo") and define
	 * Fix_Foo_Benchmark::BenchmarkCase, in the namespace they stand in. */
	if (name[l0] == '/' && nr == 1 && nf >= 2 &&
	    same_text(fn[nf - 1], (struct part){ "BenchmarkCase", 13 })) {
		const char *method = name + l0 + 1;
		size_t ml = strcspn(method, "/"), bl = base_len(reg[0]);
		struct part cls = fn[nf - 2];

		if (ml && cls.len == bl + 1 + ml + 10 && !memcmp(cls.s, reg[0].s, bl) &&
		    cls.s[bl] == '_' && !memcmp(cls.s + bl + 1, method, ml) &&
		    !memcmp(cls.s + bl + 1 + ml, "_Benchmark", 10))
			return GBENCH_MATCH_EXACT;
	}
	/* BENCHMARK(f), BENCHMARK(ns::f), BENCHMARK_TEMPLATE(f, int): the
	 * registered name is the function's, as qualified as where it was
	 * registered, its template arguments as written in the source. */
	if (nr > nf)
		return GBENCH_MATCH_NONE;
	for (size_t i = 0; i + 1 < nr; i++)
		if (!same_text(reg[i], fn[nf - nr + i]))
			return GBENCH_MATCH_NONE;
	struct part r = reg[nr - 1], f = fn[nf - 1];

	if (same_text(r, f))
		return m;
	/* Template arguments written otherwise than the compiler spells
	 * them ("std::string" for std::__cxx11::basic_string<...>). */
	base = base_len(r);
	if (base < r.len && base_len(f) == base && base < f.len && !memcmp(r.s, f.s, base))
		return GBENCH_MATCH_TEMPLATE;
	return GBENCH_MATCH_NONE;
}

bool gbench_batch_candidate(const char *demangled)
{
	struct part fn[MAX_PARTS];
	const char *q;
	size_t qlen, nf;

	if (!state_function(demangled, &q, &qlen) || !split(q, qlen, fn, &nf))
		return false;
	/* The library's own functions (a fixture's Run, which calls SetUp
	 * first; FunctionBenchmark::Run, which calls the function), but for
	 * the instance of its template that holds a lambda: the lambda's
	 * body is inlined there as often as not. */
	if (same_text(fn[0], (struct part){ "benchmark", 9 }))
		return nf == 4 && same_text(fn[1], (struct part){ "internal", 8 }) &&
		       base_len(fn[2]) == 15 && !memcmp(fn[2].s, "LambdaBenchmark", 15) &&
		       fn[2].len > 15 && same_text(fn[3], (struct part){ "Run", 3 });
	/* A fixture's SetUp and TearDown run around its BenchmarkCase. */
	if (nf >= 2 && (same_text(fn[nf - 1], (struct part){ "SetUp", 5 }) ||
			same_text(fn[nf - 1], (struct part){ "TearDown", 8 })))
		return false;
	return true;
}

/* A function symbol worth naming: not a part the compiler split off
 * ("f.cold", "f.part.0"), which demangles alike: the function is where it
 * starts. */
static bool whole_function(const struct elf_symbol *sym)
{
	return !strchr(sym->name, '.');
}

static bool is_fixture_case(const char *demangled)
{
	static const char tail[] = "::BenchmarkCase(benchmark::State&)";
	size_t l = strlen(demangled), k = strlen(tail);

	return l > k && !strcmp(demangled + l - k, tail);
}

/* The binary's benchmark::Fixture::Run(benchmark::State&), or NULL. */
static const struct elf_symbol *fixture_run(const struct elf_file *ef)
{
	for (size_t i = 0; i < elf_symbol_count(ef); i++) {
		const struct elf_symbol *sym = elf_symbol(ef, i);

		if (whole_function(sym) &&
		    !strcmp(sym->demangled, "benchmark::Fixture::Run(benchmark::State&)"))
			return sym;
	}
	return NULL;
}

void gbench_lookup_clear(struct gbench_lookup *l)
{
	free(l->function);
	free(l->other);
	*l = (struct gbench_lookup){ 0 };
}

int gbench_lookup(const struct elf_file *ef, const char *name, struct gbench_lookup *ret)
{
	struct gbench_lookup l = { 0 };
	enum gbench_match best = GBENCH_MATCH_NONE;
	const struct elf_symbol *first = NULL, *other = NULL;

	for (size_t i = 0; i < elf_symbol_count(ef); i++) {
		const struct elf_symbol *sym = elf_symbol(ef, i);
		enum gbench_match m;

		if (!whole_function(sym))
			continue;
		m = gbench_match_function(sym->demangled, name);
		if (m == GBENCH_MATCH_NONE || (best == GBENCH_MATCH_EXACT && m != best))
			continue;
		if (m == GBENCH_MATCH_EXACT && best != GBENCH_MATCH_EXACT) {
			/* An exact match outranks those by template name. */
			best = m;
			first = sym;
			other = NULL;
			continue;
		}
		best = m;
		if (!first)
			first = sym;
		/* The same function under two symbols (.symtab and .dynsym,
		 * an alias) is one. */
		else if (!other && sym->addr != first->addr)
			other = sym;
	}
	/* A fixture's BenchmarkCase is called by the library's
	 * Fixture::Run, a function of the binary (the header defines it),
	 * into which the compiler may well have inlined it behind a check of
	 * the object's type (GCC's speculative devirtualization at -O2): then
	 * BenchmarkCase itself is never called. Fixture::Run runs one batch
	 * as well, SetUp and TearDown around it. */
	if (first && !other && is_fixture_case(first->demangled)) {
		const struct elf_symbol *run = fixture_run(ef);

		if (run)
			first = run;
	}
	if (first) {
		l.function = strdup(first->demangled);
		l.addr = first->addr;
		if (!l.function)
			return -ENOMEM;
	}
	if (other) {
		l.other = strdup(other->demangled);
		if (!l.other) {
			gbench_lookup_clear(&l);
			return -ENOMEM;
		}
	}
	*ret = l;
	return 0;
}

char *gbench_function(const struct elf_file *ef, const char *name, uint64_t *ret_addr)
{
	struct gbench_lookup l;
	char *found = NULL;

	if (gbench_lookup(ef, name, &l) < 0)
		return NULL;
	if (l.function && !l.other) {
		found = l.function;
		l.function = NULL;
		if (ret_addr)
			*ret_addr = l.addr;
	}
	gbench_lookup_clear(&l);
	return found;
}

char *gbench_lookup_reason(const struct gbench_lookup *l, const char *name)
{
	size_t l0 = name_component(name);

	if (l->function && l->other)
		return str_fmt("'%.*s' names more than one function: %s and %s", (int)l0, name,
			       l->function, l->other);
	return str_fmt("no function of the binary taking (benchmark::State&) is named '%.*s'%s",
		       (int)l0, name,
		       strchr(name, '/') ? " (nor a fixture's BenchmarkCase after it)" : "");
}

/* ---- the library's own clock -------------------------------------------- */

/* What starts, pauses and stops a batch's clock (benchmark::State), by
 * role: the loop's first iteration starts it (StartKeepRunning, which
 * calls ResumeTiming), the loop's end stops it (FinishKeepRunning, which
 * calls PauseTiming), and a benchmark may pause it in between. */
const struct gbench_clock_fn gbench_clock_fns[GBENCH_CLOCK_FNS] = {
	{ "_ZN9benchmark5State16StartKeepRunningEv", BRACKET_RESUME, true },
	{ "_ZN9benchmark5State12ResumeTimingEv", BRACKET_RESUME, false },
	{ "_ZN9benchmark5State11PauseTimingEv", BRACKET_PAUSE, false },
	{ "_ZN9benchmark5State17FinishKeepRunningEv", BRACKET_FINISH, true },
};

int gbench_count_arg(const char *ctor)
{
	const char *p = ctor ? strchr(ctor, '(') : NULL;
	int depth = 0, arg = 1;

	if (!p)
		return -1;
	for (const char *start = ++p;; p++) {
		if (*p == '<' || *p == '(') {
			depth++;
		} else if ((*p == '>' || *p == ')') && depth > 0) {
			depth--;
		} else if (!*p) {
			return -1; /* no closing parenthesis */
		} else if (depth == 0 && (*p == ',' || *p == ')')) {
			size_t n = (size_t)(p - start);

			if ((n == 4 && !strncmp(start, "long", 4)) ||
			    (n == 9 && !strncmp(start, "long long", 9)))
				return arg < 6 ? arg : -1;
			if (*p != ',')
				return -1;
			arg++;
			start = p + 1;
			while (*start == ' ')
				start++;
		}
	}
}

/* benchmark::State's constructor in obj (base or complete object: one
 * code), into c->fns[c->n]: 1 found, 0 not, -ENOMEM. */
static int find_size(const struct elf_file *obj, struct gbench_clock *c)
{
	static const char *const prefixes[] = { "_ZN9benchmark5StateC2E",
						"_ZN9benchmark5StateC1E" };

	for (size_t pi = 0; pi < 2; pi++) {
		for (size_t i = 0; i < elf_symbol_count(obj); i++) {
			const struct elf_symbol *sym = elf_symbol(obj, i);
			int arg;

			if (!sym->addr || strncmp(sym->name, prefixes[pi], strlen(prefixes[pi])))
				continue;
			arg = gbench_count_arg(sym->demangled);
			if (arg < 0)
				continue;
			c->paths[c->n] = strdup(elf_path(obj));
			if (!c->paths[c->n])
				return -ENOMEM;
			c->fns[c->n] = (struct bracket_fn){ .object = c->paths[c->n],
							    .link_addr = sym->addr,
							    .role = BRACKET_SIZE,
							    .size = sym->size,
							    .arg = (unsigned)arg };
			c->size = &c->fns[c->n];
			c->n++;
			return 1;
		}
	}
	return 0;
}

int gbench_clock_find(const char *binary, struct gbench_clock *ret)
{
	struct elf_file *ef = NULL;
	struct elf_scope scope;
	int r = elf_open(binary, &ef, NULL);

	memset(ret, 0, sizeof(*ret));
	if (r < 0)
		return r;
	r = elf_scope_open(ef, true, &scope);
	if (r < 0) {
		elf_close(ef);
		return r;
	}
	for (size_t k = 0; k < GBENCH_CLOCK_FNS && r == 0; k++) {
		const struct elf_symbol *sym = NULL;
		size_t o;

		for (o = 0; o < scope.n && !(sym && sym->addr); o++)
			sym = elf_symbol_by_name(scope.objs[o], gbench_clock_fns[k].name);
		if (!sym || !sym->addr) {
			if (gbench_clock_fns[k].needed)
				r = -ENOENT;
			continue;
		}
		ret->paths[ret->n] = strdup(elf_path(scope.objs[o - 1]));
		if (!ret->paths[ret->n]) {
			r = -ENOMEM;
			break;
		}
		ret->fns[ret->n] = (struct bracket_fn){ .object = ret->paths[ret->n],
							.link_addr = sym->addr,
							.role = gbench_clock_fns[k].role,
							.size = sym->size };
		ret->n++;
	}
	for (size_t o = 0; o < scope.n && r == 0; o++) {
		int k = find_size(scope.objs[o], ret);

		if (k != 0) {
			r = k < 0 ? k : 0;
			break;
		}
	}
	elf_scope_close(&scope);
	elf_close(ef);
	if (r < 0)
		gbench_clock_free(ret);
	return r;
}

void gbench_clock_free(struct gbench_clock *c)
{
	for (size_t k = 0; k < c->n; k++)
		free(c->paths[k]);
	memset(c, 0, sizeof(*c));
}
