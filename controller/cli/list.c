/* SPDX-License-Identifier: MIT */
/* benchtrap list: what a binary offers to run. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/table.h"
#include "util/strutil.h"
#include "util/match.h"
#include "suite/suite.h"
#include "cli/cli.h"
#include "cli/runopts.h"

static const char usage[] =
	"usage: benchtrap list BINARY [--symbols] [--filter GLOB]... [--no-libs] [--json]\n"
	"\n"
	"List what BINARY offers to benchmark, reading its ELF file without running it.\n"
	"\n"
	"Without --symbols, lists the benchmarks registered with target-stub (BENCHTRAP(),\n"
	"BENCHTRAP_ARGS(), BENCHTRAP_THREADS()), one line per parameter or thread count:\n"
	"these are what `benchtrap run --bench` selects. With --symbols, lists the\n"
	"function symbols of BINARY and of the shared libraries it loads (as its own\n"
	"dynamic loader resolves them, asked in trace mode as ldd does): any of them can\n"
	"be run with `benchtrap run --symbol`, but for those NOTE marks not callable\n"
	"(pieces gcc split off a function: .cold, .part) and C++ member functions that\n"
	"need an object.\n"
	"\n"
	"A suite of another framework lists its instances as the binary names them,\n"
	"asked of the binary itself in a fresh child, contained as run's are: nothing\n"
	"it starts outlives the list:\n";

/* After the kinds of suite. */
static const char usage_tail[] =
	"\n"
	"options:\n"
	"  --symbols        list function symbols instead of registered benchmarks\n"
	"  --filter GLOB    keep names matching GLOB (shell-style; repeatable). A name\n"
	"                   matches by its raw or demangled form, with or without its\n"
	"                   parameter list, a template's return type, a member's\n"
	"                   const/&/&& and a clone suffix; 'fib[20]' also matches\n"
	"                   itself exactly\n"
	"  --no-libs        with --symbols, leave out the shared libraries\n"
	"  --json           machine-readable output (schema: docs/list.md)\n"
	"  -h, --help       show this help\n"
	"\n"
	"examples:\n"
	"  benchtrap list ./benches                       registered benchmarks\n"
	"  benchtrap list ./benches --filter 'fib*'       just the fib ones\n"
	"  benchtrap list /usr/bin/xz --symbols --filter 'lzma_*'\n"
	"                                                 functions of xz's liblzma\n"
	"\n"
	"exit status: 0 listed, 2 bad usage or bad input (missing file, not a 64-bit\n"
	"ELF of this machine, a --filter that matches nothing)\n";

struct list_opts {
	const char *binary;
	char **filters;
	size_t *hits; /* per filter: how many names it matched */
	size_t nfilters;
	bool symbols, json, libs;
	const struct suite_kind *kind;
};

/* Every filter counts its matches: each must select something. */
static bool match_symbol(struct list_opts *o, const struct elf_symbol *s)
{
	bool hit = !o->nfilters;

	for (size_t i = 0; i < o->nfilters; i++)
		if (match_function(o->filters[i], s->name, s->demangled)) {
			o->hits[i]++;
			hit = true;
		}
	return hit;
}

static bool match_bench(struct list_opts *o, const struct elf_bench *b)
{
	bool hit = !o->nfilters;

	for (size_t i = 0; i < o->nfilters; i++)
		if (match_glob(o->filters[i], b->name) || match_glob(o->filters[i], b->base)) {
			o->hits[i]++;
			hit = true;
		}
	return hit;
}

/* The first filter that matched nothing, or NULL. */
static const char *unmatched_filter(const struct list_opts *o)
{
	for (size_t i = 0; i < o->nfilters; i++)
		if (!o->hits[i])
			return o->filters[i];
	return NULL;
}

/* One line on stderr naming the closest candidates of 'pat'. */
static int no_match(const struct list_opts *o, const char *pat, const char *what,
		    const char *const *names, size_t n)
{
	char buf[512];

	if (match_suggest(pat, names, n, 3, buf, sizeof(buf)))
		return cli_error("%s: no %s matches '%s' (did you mean %s?)", o->binary, what, pat,
				 buf);
	if (n == 0)
		return cli_error("%s: no %s matches '%s' (it has none)", o->binary, what, pat);
	if (!strpbrk(pat, "*?["))
		return cli_error("%s: no %s matches '%s' (filters are globs: '*%s*' matches "
				 "names that contain it)",
				 o->binary, what, pat, pat);
	return cli_error("%s: no %s matches '%s' (run without --filter to see them all)",
			 o->binary, what, pat);
}

/* The list as JSON on stdout; a failed write is for main's check of stdout. */
static int print_json(const struct report_list *l)
{
	return report_list_json(l, stdout) == -ENOMEM ? cli_error("out of memory") : EXIT_OK;
}

static int list_benches(struct list_opts *o, struct elf_file *ef)
{
	size_t n = elf_bench_count(ef), shown = 0;
	static const char *const headers[] = { "BENCHMARK", "ARG", "SYMBOL", "ADDRESS" };
	static const enum table_align align[] = { TABLE_LEFT, TABLE_RIGHT, TABLE_LEFT,
						  TABLE_RIGHT };
	struct table *t = table_new(4, headers, align);
	const struct elf_bench **benches = calloc(n + 1, sizeof(*benches));
	int r = EXIT_OK;

	if (!t || !benches) {
		r = cli_error("out of memory");
		goto out;
	}
	table_keep_long_cells(t); /* names to copy into --filter: whole */
	for (size_t i = 0; i < n; i++) {
		const struct elf_bench *b = elf_bench(ef, i);
		const char *sym = b->symbol ? b->symbol->name : NULL;
		char arg[24] = "", addr[24];

		if (!match_bench(o, b))
			continue;
		benches[shown++] = b;
		if (b->has_arg)
			snprintf(arg, sizeof(arg), "%" PRId64, b->arg);
		snprintf(addr, sizeof(addr), "0x%" PRIx64, b->addr);
		table_add(t, (const char *const[]){ b->name, arg, sym ? sym : "?", addr });
	}

	const char *missing = unmatched_filter(o);

	if (n && missing) {
		const char **names = calloc(n, sizeof(*names));

		for (size_t i = 0; names && i < n; i++)
			names[i] = elf_bench(ef, i)->name;
		r = no_match(o, missing, "benchmark", names, names ? n : 0);
		free(names);
	} else if (o->json) {
		r = print_json(&(struct report_list){ .binary = ef,
						      .framework = o->kind->name,
						      .benches = benches,
						      .nbenches = shown });
	} else if (!n) {
		if (o->nfilters)
			r = no_match(o, o->filters[0], "benchmark", NULL, 0);
		else
			cli_note("%s registers no benchmarks with target-stub; "
				 "`benchtrap list %s --symbols` lists the functions "
				 "`benchtrap run --symbol` can call",
				 o->binary, o->binary);
	} else {
		table_print_text(t, stdout);
	}
out:
	free(benches);
	table_free(t);
	return r;
}

/* The instances a kind that lists them names, asked of it (in a fresh
 * child, for a kind that lists by running). */
static int list_named(struct list_opts *o, struct elf_file *ef)
{
	char *no_args[1] = { NULL };
	struct cli_run_opts ro = { .cpu = -1, .target_args = no_args };
	struct cli_suite s = { .path = o->binary, .ef = ef, .kind = o->kind };
	const char **shown = NULL;
	size_t n = 0;
	int r = 0;

	if (cli_measure_target(o->binary, ef, &ro, &s.t, &s.argv, &s.exec_path) < 0)
		r = cli_error("out of memory");
	if (r == 0)
		r = cli_suite_names(&s);
	if (r)
		goto out;
	shown = calloc(s.nnames + 1, sizeof(*shown));
	if (!shown) {
		r = cli_error("out of memory");
		goto out;
	}
	for (size_t i = 0; i < s.nnames; i++) {
		bool hit = !o->nfilters;

		for (size_t f = 0; f < o->nfilters; f++)
			if (match_glob(o->filters[f], s.names[i]) ||
			    !strcmp(o->filters[f], s.names[i])) {
				o->hits[f]++;
				hit = true;
			}
		if (hit)
			shown[n++] = s.names[i];
	}

	const char *missing = unmatched_filter(o);

	if (missing)
		r = no_match(o, missing, "benchmark", (const char *const *)s.names, s.nnames);
	else if (o->json)
		r = print_json(&(struct report_list){
			.binary = ef, .framework = s.kind->name, .names = shown, .nnames = n });
	else {
		printf("BENCHMARK (%s)\n", s.kind->title);
		for (size_t i = 0; i < n; i++)
			puts(shown[i]);
		r = EXIT_OK;
	}
out:
	free(shown);
	s.ef = NULL; /* the caller's */
	cli_suite_clear(&s);
	return r;
}

/* What the NOTE column says of a piece or a copy of a function, or of a
 * member function that needs an object. */
static const char *kind_note(const struct elf_symbol *s)
{
	if (s->kind != ELF_FN_FRAGMENT && s->member == ELF_MEMBER_YES)
		return "member function: needs an object";
	switch (s->kind) {
	case ELF_FN_FRAGMENT:
		return "not callable: a piece of a function";
	case ELF_FN_CLONE:
		return "compiler's copy: arguments may differ";
	case ELF_FN_PLAIN:
		break;
	}
	return NULL;
}

static int list_symbols(struct list_opts *o, struct elf_file *ef)
{
	static const char *const headers[] = { "ADDRESS", "SIZE",	"OBJECT",
					       "FUNCTION", "RAW", "NOTE" };
	static const enum table_align align[] = { TABLE_RIGHT, TABLE_RIGHT, TABLE_LEFT,
						  TABLE_LEFT,  TABLE_LEFT,  TABLE_LEFT };
	struct elf_scope scope = { 0 };
	struct report_list_symbol *syms = NULL;
	struct table *t = NULL;
	size_t nsyms = 0, total = 0;
	int r = EXIT_OK;

	if (elf_scope_open(ef, o->libs, &scope) < 0)
		return cli_error("out of memory");
	for (size_t k = 0; k < scope.n; k++)
		total += elf_symbol_count(scope.objs[k]);
	t = table_new(6, headers, align);
	syms = calloc(total + 1, sizeof(*syms));
	if (t)
		table_keep_long_cells(t); /* names to copy into --symbol: whole */
	if (!t || !syms) {
		r = cli_error("out of memory");
		goto out;
	}

	for (size_t k = 0; k < scope.n; k++) {
		const struct elf_file *obj = scope.objs[k];

		for (size_t i = 0; i < elf_symbol_count(obj); i++) {
			const struct elf_symbol *s = elf_symbol(obj, i);
			char addr[24], size[24];

			if (!match_symbol(o, s))
				continue;
			syms[nsyms++] = (struct report_list_symbol){ .object = obj, .symbol = s };
			snprintf(addr, sizeof(addr), "0x%" PRIx64, s->addr);
			snprintf(size, sizeof(size), "%" PRIu64, s->size);
			table_add(t, (const char *const[]){ addr, size, str_basename(elf_path(obj)),
							    s->demangled,
							    s->demangled != s->name ? s->name : NULL,
							    kind_note(s) });
		}
	}

	const char *unmatched = unmatched_filter(o);

	if (unmatched) {
		/* Suggest demangled names: a C++ function once, readably. A
		 * stripped binary may hold the function without a symbol (a
		 * static library linked in): a library's look-alike would
		 * mislead, so only its own exports are suggested. */
		struct elf_scope own = { .objs = scope.objs, .n = 1 };
		bool stripped = elf_is_stripped(ef);
		size_t n = 0;
		const char **names = elf_scope_names(stripped ? &own : &scope, &n);
		char buf[512];

		if (stripped && !(names && match_suggest(unmatched, names, n, 3, buf, sizeof(buf))))
			r = cli_error("%s: no function matches '%s': the binary is stripped and "
				      "exports no such function (its code may be linked in "
				      "statically, without a symbol); list a build that is not "
				      "stripped",
				      o->binary, unmatched);
		else
			r = no_match(o, unmatched, "function", names, names ? n : 0);
		free(names);
		goto out;
	}

	if (elf_is_stripped(ef))
		cli_note("%s is stripped: its local functions are absent; %s", o->binary,
			 elf_symbol_count(ef) ? "listing the functions it exports" :
						"it exports no functions either");
	if (scope.how == ELF_LIBS_NO_INTERP)
		cli_note("%s: its interpreter %s is not on this machine: it cannot run here, and "
			 "the libraries it needs are not listed",
			 o->binary, elf_interp(ef));
	else if (scope.how == ELF_LIBS_SEARCHED)
		cli_note("%s: its interpreter %s could not be asked which libraries it loads; "
			 "they were searched for as it searches",
			 o->binary, elf_interp(ef));
	for (char **m = scope.missing; *m; m++)
		cli_note("library %s not found (is LD_LIBRARY_PATH set as the program needs?); "
			 "its functions are not listed",
			 *m);
	if (elf_registry_error(ef) < 0)
		cli_note("%s: its benchtrap_registry section is corrupt: its functions are "
			 "listed, its registered benchmarks cannot be (rebuild it with this "
			 "benchtrap's target-stub)",
			 o->binary);

	if (o->json)
		r = print_json(&(struct report_list){ .binary = ef,
						      .framework = o->kind->name,
						      .scope = &scope,
						      .symbols = syms,
						      .nsymbols = nsyms });
	else
		table_print_text(t, stdout);
out:
	free(syms);
	table_free(t);
	elf_scope_close(&scope);
	return r;
}

int cli_list(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "symbols", no_argument, NULL, 's' }, { "filter", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },    { "no-libs", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },    { 0 },
	};
	struct list_opts o = { .libs = true };
	struct elf_file *ef = NULL;
	int c, r = EXIT_USAGE;

	o.filters = calloc((size_t)argc, sizeof(*o.filters));
	o.hits = calloc((size_t)argc, sizeof(*o.hits));
	if (!o.filters || !o.hits) {
		cli_error("out of memory");
		goto out;
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o.symbols = true;
			break;
		case 'f':
			o.filters[o.nfilters++] = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 'L':
			o.libs = false;
			break;
		case 'h':
			fputs(usage, stdout);
			cli_print_kinds(stdout);
			fputs(usage_tail, stdout);
			r = EXIT_OK;
			goto out;
		default:
			r = cli_help_or_bad_option("list", usage, "h", c, EXIT_OK, argc, argv);
			goto out;
		}
	}
	/* getopt permutes, so BINARY may stand before or after the options. */
	if (optind < argc)
		o.binary = argv[optind++];
	if (!o.binary) {
		cli_error("list: which binary? usage: benchtrap list BINARY [--symbols] "
			  "[--filter GLOB]... [--no-libs] [--json]");
		goto out;
	}
	if (optind < argc) {
		cli_error("list: unexpected argument '%s' (one BINARY at a time)", argv[optind]);
		goto out;
	}
	r = o.symbols ? cli_open_binary_symbols(o.binary, &ef) : cli_open_binary(o.binary, &ef);
	if (r == 0)
		o.kind = suite_kind_of(ef);
	/* --symbols lists functions, whatever the kind. */
	if (r == 0 && !o.symbols && o.kind->list)
		r = list_named(&o, ef);
	else if (r == 0)
		r = o.symbols ? list_symbols(&o, ef) : list_benches(&o, ef);
out:
	elf_close(ef);
	free(o.filters);
	free(o.hits);
	return r;
}
