/* SPDX-License-Identifier: MIT */
/*
 * The ELF layer against fixture binaries built in this build
 * (tests/fixtures/elf): every build of one stub program must show the same
 * registry and symbols; C++ and Rust names demangle; bad files give the
 * right error.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <elf.h>

#include "elf/elf.h"
#include "measure/measure.h"
#include "util/match.h"

static char fixture_path[4096];

static const char *fixture(const char *name)
{
	snprintf(fixture_path, sizeof(fixture_path), "%s/%s", FIXTURE_DIR, name);
	return fixture_path;
}

static struct elf_file *open_fixture(const char *name)
{
	struct elf_file *ef = NULL;
	int r = elf_open(fixture(name), &ef, NULL);

	if (r < 0)
		fail_msg("elf_open(%s): %s", fixture_path, elf_strerror(r));
	return ef;
}

/* What every build of stub_bench.c registers, in source order. */
static const struct {
	const char *name, *base, *symbol;
	bool has_arg;
	int64_t arg;
} expected_benches[] = {
	{ "alpha", "alpha", "benchtrap_bench_alpha", false, 0 },
	{ "beta[1]", "beta", "benchtrap_bench_beta", true, 1 },
	{ "beta[2]", "beta", "benchtrap_bench_beta", true, 2 },
	{ "beta[-3]", "beta", "benchtrap_bench_beta", true, -3 },
	{ "gamma_uses_lib", "gamma_uses_lib", "benchtrap_bench_gamma_uses_lib", false, 0 },
};

static void check_registry(struct elf_file *ef, bool symbols)
{
	size_t n = sizeof(expected_benches) / sizeof(expected_benches[0]);

	assert_int_equal(elf_registry_error(ef), 0);
	assert_int_equal(elf_bench_count(ef), n);
	for (size_t i = 0; i < n; i++) {
		const struct elf_bench *b = elf_bench(ef, i);

		assert_string_equal(b->name, expected_benches[i].name);
		assert_string_equal(b->base, expected_benches[i].base);
		assert_int_equal(b->has_arg, expected_benches[i].has_arg);
		assert_int_equal(b->arg, expected_benches[i].arg);
		assert_true(b->addr != 0);
		if (!symbols)
			continue;
		/* The registered address is the start of the named function
		 * (LTO may add a suffix such as ".lto_priv.0"). */
		assert_non_null(b->symbol);
		assert_int_equal(b->symbol->addr, b->addr);
		assert_true(strncmp(b->symbol->name, expected_benches[i].symbol,
				    strlen(expected_benches[i].symbol)) == 0);
	}
	/* The same function serves every parameter of beta. */
	assert_int_equal(elf_bench(ef, 1)->addr, elf_bench(ef, 3)->addr);
}

static void check_variant(const char *name, bool pic, bool dynamic)
{
	struct elf_file *ef = open_fixture(name);
	const struct elf_symbol *known, *local;

	assert_int_equal(elf_is_pic(ef), pic);
	assert_int_equal(elf_is_dynamic(ef), dynamic);
	assert_false(elf_is_stripped(ef));
	assert_non_null(elf_build_id(ef));
	assert_int_equal(strlen(elf_build_id(ef)), 40); /* sha1 by default */
	assert_non_null(elf_compiler(ef));
	assert_non_null(strstr(elf_compiler(ef), "GCC"));
	assert_true(elf_entry(ef) != 0);
	if (dynamic) {
		assert_non_null(elf_interp(ef));
		assert_non_null(strstr(elf_interp(ef), "ld-linux"));
	} else {
		assert_null(elf_interp(ef));
	}

	check_registry(ef, true);

	known = elf_symbol_by_name(ef, "fixture_known_function");
	assert_non_null(known);
	assert_int_equal(known->binding, ELF_BIND_GLOBAL);
	assert_true(known->size > 0);
	/* An address inside the function maps back to it. */
	assert_ptr_equal(elf_symbol_at(ef, known->addr + known->size - 1), known);
	local = elf_symbol_by_name(ef, "fixture_local_function");
	if (local) /* a local function may be renamed or folded by LTO */
		assert_int_equal(local->binding, ELF_BIND_LOCAL);
	assert_null(elf_symbol_by_name(ef, "no_such_function_anywhere"));

	/* Symbols come sorted by address. */
	for (size_t i = 1; i < elf_symbol_count(ef); i++)
		assert_true(elf_symbol(ef, i - 1)->addr <= elf_symbol(ef, i)->addr);
	elf_close(ef);
}

static void test_pie_O0(void **state)
{
	check_variant("stub_pie_O0", true, true);
}
static void test_pie_O1(void **state)
{
	check_variant("stub_pie_O1", true, true);
}
static void test_pie_O2(void **state)
{
	check_variant("stub_pie_O2", true, true);
}
static void test_pie_O3(void **state)
{
	check_variant("stub_pie_O3", true, true);
}
static void test_nopie_O2(void **state)
{
	check_variant("stub_nopie_O2", false, true);
}
static void test_lto_O3(void **state)
{
	check_variant("stub_lto_O3", true, true);
}
static void test_lto_nopie_O2(void **state)
{
	check_variant("stub_lto_nopie_O2", false, true);
}
static void test_static_O2(void **state)
{
	check_variant("stub_static_O2", false, false);
}
static void test_staticpie_O2(void **state)
{
	check_variant("stub_staticpie_O2", true, false);
}

static void test_stripped(void **state)
{
	struct elf_file *ef = open_fixture("stub_stripped");
	const struct elf_symbol *s;

	assert_true(elf_is_stripped(ef));
	/* The registry needs no symbols... */
	check_registry(ef, false);
	/* ...exported functions come from .dynsym, local ones are gone. */
	s = elf_symbol_by_name(ef, "fixture_known_function");
	assert_non_null(s);
	assert_true(s->dynamic);
	assert_null(elf_symbol_by_name(ef, "fixture_local_function"));
	assert_null(elf_symbol_by_name(ef, "benchtrap_bench_alpha"));
	elf_close(ef);
}

static void test_needed(void **state)
{
	struct elf_file *ef = open_fixture("stub_pie_O2");
	struct elf_file **libs = NULL;
	char **missing = NULL;
	size_t n = 0;
	bool saw_fxlib = false, saw_libc = false;

	assert_int_equal(elf_needed_count(ef) >= 2, true);
	assert_int_equal(elf_resolve_needed(ef, &libs, &n, &missing, NULL), 0);
	assert_non_null(missing);
	assert_null(missing[0]);
	for (size_t i = 0; i < n; i++) {
		const char *p = elf_path(libs[i]);

		if (strstr(p, "libfxlib.so")) {
			/* Found through DT_RUNPATH $ORIGIN, next to the binary. */
			assert_non_null(strstr(p, FIXTURE_DIR));
			assert_non_null(elf_symbol_by_name(libs[i], "fxlib_work"));
			assert_true(elf_symbol_by_name(libs[i], "fxlib_work")->dynamic);
			saw_fxlib = true;
		}
		if (strstr(p, "libc.so.6")) {
			assert_non_null(elf_symbol_by_name(libs[i], "malloc"));
			saw_libc = true;
		}
		elf_close(libs[i]);
	}
	assert_true(saw_fxlib);
	assert_true(saw_libc);
	free(libs);
	elf_strv_free(missing);
	elf_close(ef);
}

static void test_static_needs_nothing(void **state)
{
	struct elf_file *ef = open_fixture("stub_static_O2");
	struct elf_file **libs = NULL;
	char **missing = NULL;
	size_t n = 99;
	enum elf_libs_how how = ELF_LIBS_NONE;

	assert_int_equal(elf_needed_count(ef), 0);
	/* No loader is asked (glibc's crashes on a static binary). */
	assert_int_equal(elf_loader_needed(ef, &libs, &n, &missing), -EINVAL);
	assert_int_equal(elf_resolve_needed(ef, &libs, &n, &missing, &how), 0);
	assert_int_equal(how, ELF_LIBS_STATIC);
	assert_int_equal(n, 0);
	assert_null(missing[0]);
	free(libs);
	elf_strv_free(missing);
	elf_close(ef);
}

/* The level of libhwfx.so that hwprog's loader loads, as the program
 * itself prints it when run ("hwfx level 2"): the truth to compare with. */
static int hwprog_level(void)
{
	FILE *p = popen(FIXTURE_DIR "/hwcaps/hwprog", "r");
	int level = 0;

	assert_non_null(p);
	assert_int_equal(fscanf(p, "hwfx level %d", &level), 1);
	assert_int_equal(pclose(p), 0);
	return level;
}

/* The libhwfx.so among libs, or NULL. */
static struct elf_file *find_hwfx(struct elf_file **libs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(strrchr(elf_path(libs[i]), '/'), "/libhwfx.so"))
			return libs[i];
	return NULL;
}

static void close_libs(struct elf_file **libs, size_t n, char **missing)
{
	for (size_t i = 0; i < n; i++)
		elf_close(libs[i]);
	free(libs);
	elf_strv_free(missing);
}

/*
 * hwprog's DT_RUNPATH directory holds libhwfx.so and, below it,
 * glibc-hwcaps/x86-64-v2/libhwfx.so. The loader asked names the one the
 * program really loads (the hwcaps one on a CPU that supports
 * x86-64-v2); a search by DT_RUNPATH alone finds the other.
 */
static void test_loader_hwcaps(void **state)
{
	struct elf_file *ef = open_fixture("hwcaps/hwprog");
	struct elf_file **libs = NULL, *hw;
	char **missing = NULL;
	size_t n = 0;
	enum elf_libs_how how = ELF_LIBS_NONE;
	int level;

	/* meson's test environment points LD_LIBRARY_PATH at the build's
	 * libraries, these among them: the loader would take it. */
	unsetenv("LD_LIBRARY_PATH");
	level = hwprog_level();

	assert_int_equal(elf_resolve_needed(ef, &libs, &n, &missing, &how), 0);
	assert_int_equal(how, ELF_LIBS_LOADER);
	assert_null(missing[0]);
	hw = find_hwfx(libs, n);
	assert_non_null(hw);
	assert_int_equal(strstr(elf_path(hw), "/glibc-hwcaps/x86-64-v2/") != NULL, level == 2);
	assert_int_equal(elf_symbol_by_name(hw, "hwfx_v2_only") != NULL, level == 2);
	assert_int_equal(elf_symbol_by_name(hw, "hwfx_base_only") != NULL, level == 1);
	close_libs(libs, n, missing);

	/* The search by the loader's rules does not know glibc-hwcaps/. */
	assert_int_equal(elf_search_needed(ef, &libs, &n, &missing), 0);
	hw = find_hwfx(libs, n);
	assert_non_null(hw);
	assert_null(strstr(elf_path(hw), "glibc-hwcaps"));
	assert_non_null(elf_symbol_by_name(hw, "hwfx_base_only"));
	close_libs(libs, n, missing);
	elf_close(ef);
}

/* A library the loader does not find is named, the others still listed. */
static void test_loader_missing(void **state)
{
	char dir[] = "/tmp/benchtrap-test-elf.XXXXXX", path[64], cmd[256];
	struct elf_file *ef, **libs = NULL;
	char **missing = NULL;
	size_t n = 0;
	enum elf_libs_how how = ELF_LIBS_NONE;

	unsetenv("LD_LIBRARY_PATH"); /* (test_loader_hwcaps) */
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/hwprog", dir);
	snprintf(cmd, sizeof(cmd), "cp %s/hwcaps/hwprog %s", FIXTURE_DIR, path);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(elf_open(path, &ef, NULL), 0);
	assert_int_equal(elf_resolve_needed(ef, &libs, &n, &missing, &how), 0);
	assert_int_equal(how, ELF_LIBS_LOADER);
	assert_non_null(missing[0]);
	assert_string_equal(missing[0], "libhwfx.so");
	assert_null(missing[1]);
	assert_null(find_hwfx(libs, n));
	assert_true(n >= 1); /* libc */
	close_libs(libs, n, missing);
	elf_close(ef);
	unlink(path);
	rmdir(dir);
}

/* An interpreter that is not there: no loader to ask, no library. */
static void test_loader_no_interp(void **state)
{
	struct elf_file *ef = open_fixture("hwcaps/nointerp");
	struct elf_file **libs = NULL;
	char **missing = NULL;
	size_t n = 99;
	enum elf_libs_how how = ELF_LIBS_NONE;

	assert_non_null(strstr(elf_interp(ef), "/nonexistent/"));
	assert_int_equal(elf_loader_needed(ef, &libs, &n, &missing), -ENOENT);
	assert_int_equal(elf_resolve_needed(ef, &libs, &n, &missing, &how), 0);
	assert_int_equal(how, ELF_LIBS_NO_INTERP);
	assert_int_equal(n, 0);
	assert_null(missing[0]);
	close_libs(libs, n, missing);
	elf_close(ef);
}

/* A program that may load libraries it does not need is told apart by its
 * import of dlopen; the others' missing patterns are explained as run's. */
static void test_calls_dlopen(void **state)
{
	struct elf_file *dl = NULL, *plain = NULL;
	struct elf_scope scope;
	struct measure_miss miss = { 0 };

	(void)state;
	assert_int_equal(elf_open(OBSERVE_DLOPEN, &dl, NULL), 0);
	assert_int_equal(elf_open(OBSERVE_RECURSE, &plain, NULL), 0);
	assert_true(elf_calls_dlopen(dl));
	assert_false(elf_calls_dlopen(plain));

	assert_int_equal(elf_scope_open(plain, true, &scope), 0);
	for (size_t j = 0; j < scope.n; j++)
		assert_false(elf_calls_dlopen(scope.objs[j]));
	assert_int_equal(measure_miss_symbol(&scope, "fbi", &miss), 0);
	assert_int_equal(miss.what, MEASURE_MISS_SYMBOL);
	assert_string_equal(miss.selector, "fbi");
	assert_string_equal(miss.pattern, "fbi");
	assert_false(miss.stripped);
	assert_null(miss.missing);
	assert_non_null(strstr(miss.suggest, "'fib'"));
	measure_miss_clear(&miss);
	elf_scope_close(&scope);
	elf_close(plain);
	elf_close(dl);
}

static void test_cxx(void **state)
{
#ifndef HAVE_CXX_FIXTURE
	skip();
#else
	struct elf_file *ef = open_fixture("cxx_names");
	const struct elf_symbol *s;

	s = elf_symbol_by_name(ef, "fixture::Widget<int>::grow(int)");
	assert_non_null(s);
	assert_string_equal(s->name, "_ZN7fixture6WidgetIiE4growEi");
	assert_non_null(elf_symbol_by_name(ef, "fixture::Widget<long>::grow(long)"));
	s = elf_symbol_by_name(ef, "_ZN7fixture13free_functionEid");
	assert_non_null(s);
	assert_string_equal(s->demangled, "fixture::free_function(int, double)");
	/* A C name is its own demangled name. */
	s = elf_symbol_by_name(ef, "main");
	assert_non_null(s);
	assert_ptr_equal(s->demangled, s->name);
	elf_close(ef);
#endif
}

static void test_member_of(void **state)
{
	(void)state;
	assert_int_equal(elf_member_of("_ZNK4GridIiE3sumEv"), ELF_MEMBER_YES);
	assert_int_equal(elf_member_of("_ZNKSs11_M_disjunctEPKc"), ELF_MEMBER_YES);
	assert_int_equal(elf_member_of("_ZNR1A1fEv"), ELF_MEMBER_YES);
	assert_int_equal(elf_member_of("_ZNO1A1fEv"), ELF_MEMBER_YES);
	assert_int_equal(elf_member_of("_ZNVK1A1fEv"), ELF_MEMBER_YES);
	assert_int_equal(elf_member_of("_ZN4GridIiE4growEi"), ELF_MEMBER_MAYBE);
	assert_int_equal(elf_member_of("_ZNSt6vectorIiSaIiEE9push_backERKi"), ELF_MEMBER_MAYBE);
	assert_int_equal(elf_member_of("_Z5twiceIiET_S0_"), ELF_MEMBER_NO);
	assert_int_equal(elf_member_of("main"), ELF_MEMBER_NO);
	assert_int_equal(elf_member_of("_ZN"), ELF_MEMBER_MAYBE);
}

static void test_fn_kind(void **state)
{
	assert_int_equal(elf_fn_kind_of("work"), ELF_FN_PLAIN);
	assert_int_equal(elf_fn_kind_of("work.cold"), ELF_FN_FRAGMENT);
	assert_int_equal(elf_fn_kind_of("work.cold.3"), ELF_FN_FRAGMENT);
	assert_int_equal(elf_fn_kind_of("work.part.0"), ELF_FN_FRAGMENT);
	assert_int_equal(elf_fn_kind_of("_ZN3num10rare_errorEl.cold"), ELF_FN_FRAGMENT);
	assert_int_equal(elf_fn_kind_of("work.isra.0.cold"), ELF_FN_FRAGMENT);
	assert_int_equal(elf_fn_kind_of("work.constprop.0"), ELF_FN_CLONE);
	assert_int_equal(elf_fn_kind_of("_ZN3numL6with_kEll.constprop.0"), ELF_FN_CLONE);
	assert_int_equal(elf_fn_kind_of("work.constprop.0.isra.0"), ELF_FN_CLONE);
	assert_int_equal(elf_fn_kind_of("work.isra.1"), ELF_FN_CLONE);
	assert_int_equal(elf_fn_kind_of("work.lto_priv.0"), ELF_FN_PLAIN);
	assert_int_equal(elf_fn_kind_of("work.localalias"), ELF_FN_PLAIN);
	assert_int_equal(elf_fn_kind_of("coldest.partial"), ELF_FN_PLAIN);
	assert_int_equal(elf_fn_kind_of("memcpy@GLIBC_2.2.5"), ELF_FN_PLAIN);
	assert_int_equal(elf_fn_kind_of("f.cold@V_1.0"), ELF_FN_FRAGMENT);
}

#ifdef HAVE_CXX_FIXTURE
/* Select 'selector' alone in ef: the return of measure_select(). */
static int select_one(struct elf_file *ef, const char *selector, struct measure_selection *sel,
		      struct measure_miss *miss)
{
	*sel = (struct measure_selection){ 0 };
	*miss = (struct measure_miss){ 0 };
	return measure_select(ef, NULL, 0, &selector, 1, NULL, sel, miss);
}

/* The symbol of ef whose raw name ends with 'suffix', or NULL. */
static const struct elf_symbol *symbol_ending(struct elf_file *ef, const char *suffix)
{
	for (size_t i = 0; i < elf_symbol_count(ef); i++) {
		const struct elf_symbol *s = elf_symbol(ef, i);
		size_t n = strlen(s->name), k = strlen(suffix);

		if (n > k && !strcmp(s->name + n - k, suffix))
			return s;
	}
	return NULL;
}
#endif

/* Overloads, templates, const members and gcc's pieces of functions
 * (tests/fixtures/elf/cxx_select.cc). */
static void test_cxx_select(void **state)
{
#ifndef HAVE_CXX_FIXTURE
	skip();
#else
	struct elf_file *ef = open_fixture("cxx_select");
	struct measure_selection sel;
	struct measure_miss miss;
	const struct elf_symbol *s;

	/* An exact name of three overloads: refused, all three named. */
	assert_int_equal(select_one(ef, "num::scale(7)", &sel, &miss), -EINVAL);
	assert_int_equal(miss.what, MEASURE_MISS_AMBIGUOUS);
	assert_string_equal(miss.names,
			    "'num::scale(double)', 'num::scale(long)' and 'num::scale(long, long)'");
	/* the suggestion is an overload that can take the arguments */
	assert_string_equal(miss.function, "num::scale(long)(7)");
	assert_string_equal(miss.selector, "num::scale(7)");
	measure_miss_clear(&miss);

	/* One by its parameter types; names keep them. */
	static const struct {
		const char *selector, *name;
		unsigned nargs;
	} picks[] = {
		{ "num::scale(long)(7)", "num::scale(long)(7)", 1 },
		{ "num::scale(long,long)(3, 4)", "num::scale(long, long)(3,4)", 2 },
		{ "num::scale(double)", "num::scale(double)", 0 },
		{ "_ZN3num5scaleEd", "num::scale(double)", 0 },
		{ "num::unroll<8>(5)", "long num::unroll<8>(long)(5)", 1 },
		{ "long num::unroll<8>", "long num::unroll<8>(long)", 0 },
		{ "Grid<int>::zero(5)", "Grid<int>::zero(long)(5)", 1 },
		{ "Grid<int>::zero(long)", "Grid<int>::zero(long)", 0 },
		{ "num::rare_error", "num::rare_error(long)", 0 },
	};
	for (size_t i = 0; i < sizeof(picks) / sizeof(picks[0]); i++) {
		assert_int_equal(select_one(ef, picks[i].selector, &sel, &miss), 0);
		assert_int_equal(sel.n, 1);
		assert_string_equal(sel.v[0].name, picks[i].name);
		assert_int_equal(sel.v[0].nargs, picks[i].nargs);
		assert_false(sel.v[0].clone);
		measure_selection_clear(&sel);
	}

	/* A function template's name: its instances as overloads. */
	assert_int_equal(select_one(ef, "twice(5)", &sel, &miss), -EINVAL);
	assert_int_equal(miss.what, MEASURE_MISS_AMBIGUOUS);
	assert_true(miss.instances);
	assert_string_equal(miss.names, "'int twice<int>(int)' and 'long twice<long>(long)'");
	assert_string_equal(miss.instance, "twice<int>(5)");
	assert_string_equal(miss.function, "twice<int>(int)(5)");
	measure_miss_clear(&miss);
	assert_int_equal(select_one(ef, "num::scale", &sel, &miss), -EINVAL);
	assert_false(miss.instances);
	assert_null(miss.instance);
	measure_miss_clear(&miss);
	static const struct {
		const char *selector, *name;
	} instances[] = {
		{ "twice<long>(5)", "long twice<long>(long)(5)" },
		{ "twice<long>(long)(5)", "long twice<long>(long)(5)" },
		{ "twice(long)(5)", NULL },
		{ "num::unroll(5)", "long num::unroll<8>(long)(5)" },
	};
	for (size_t i = 0; i < sizeof(instances) / sizeof(instances[0]); i++) {
		int r = select_one(ef, instances[i].selector, &sel, &miss);

		if (!instances[i].name) {
			assert_int_equal(r, -ENOENT);
			measure_miss_clear(&miss);
			continue;
		}
		assert_int_equal(r, 0);
		assert_int_equal(sel.n, 1);
		assert_string_equal(sel.v[0].name, instances[i].name);
		measure_selection_clear(&sel);
	}

	/* Member functions that need an object: refused by name, const by
	 * its mangled name, grow by the DWARF; a glob leaves them out. */
	static const struct {
		const char *selector, *function;
	} members[] = {
		{ "Grid<int>::sum", "Grid<int>::sum() const" },
		{ "Grid<int>::sum() const", "Grid<int>::sum() const" },
		{ "_ZNK4GridIiE3sumEv", "Grid<int>::sum() const" },
		{ "Grid<int>::grow(3)", "Grid<int>::grow(int)" },
		{ "Grid<int>::s*", "Grid<int>::sum() const" },
	};
	for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
		assert_int_equal(select_one(ef, members[i].selector, &sel, &miss), -EINVAL);
		assert_int_equal(miss.what, MEASURE_MISS_MEMBER);
		assert_string_equal(miss.function, members[i].function);
		measure_miss_clear(&miss);
	}
	assert_int_equal(select_one(ef, "Grid<int>::*", &sel, &miss), 0);
	assert_int_equal(sel.n, 1);
	assert_string_equal(sel.v[0].name, "Grid<int>::zero(long)");
	assert_false(sel.v[0].maybe_member);
	measure_selection_clear(&sel);
	s = elf_symbol_by_name(ef, "Grid<int>::grow(int)");
	assert_non_null(s);
	assert_int_equal(s->member, ELF_MEMBER_YES);
	s = elf_symbol_by_name(ef, "Grid<int>::zero(long)");
	assert_non_null(s);
	assert_int_equal(s->member, ELF_MEMBER_NO);
	s = elf_symbol_by_name(ef, "num::scale(long)");
	assert_non_null(s);
	assert_int_equal(s->member, ELF_MEMBER_NO);
	/* A unit without DWARF in a binary with it: unknown there. */
	s = elf_symbol_by_name(ef, "Part::bump(long)");
	assert_non_null(s);
	assert_int_equal(s->member, ELF_MEMBER_MAYBE);

	/* Without DWARF, a member without qualifiers may be either. */
	struct elf_file *nodwarf = open_fixture("cxx_select_nodwarf");

	s = elf_symbol_by_name(nodwarf, "Grid<int>::grow(int)");
	assert_non_null(s);
	assert_int_equal(s->member, ELF_MEMBER_MAYBE);
	s = elf_symbol_by_name(nodwarf, "Grid<int>::sum() const");
	assert_non_null(s);
	assert_int_equal(s->member, ELF_MEMBER_YES);
	assert_int_equal(select_one(nodwarf, "Grid<int>::grow", &sel, &miss), 0);
	assert_true(sel.v[0].maybe_member);
	measure_selection_clear(&sel);
	elf_close(nodwarf);

	/* Integers for a floating-point parameter: refused. */
	assert_int_equal(select_one(ef, "num::scale(double)(2)", &sel, &miss), -EINVAL);
	assert_int_equal(miss.what, MEASURE_MISS_FLOATING);
	assert_string_equal(miss.function, "num::scale(double)");
	measure_miss_clear(&miss);

	/* A glob: every function once, no piece of one, names unique. */
	assert_int_equal(select_one(ef, "num::*", &sel, &miss), 0);
	assert_true(sel.n >= 6);
	for (size_t i = 0; i < sel.n; i++) {
		assert_int_equal(elf_fn_kind_of(sel.v[i].symbol) == ELF_FN_FRAGMENT, false);
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(sel.v[i].name, sel.v[j].name);
	}
	measure_selection_clear(&sel);

	/* What gcc made of the fixture, where it did. */
	s = symbol_ending(ef, ".cold");
	if (s) {
		assert_int_equal(s->kind, ELF_FN_FRAGMENT);
		assert_int_equal(select_one(ef, s->name, &sel, &miss), -EINVAL);
		assert_int_equal(miss.what, MEASURE_MISS_FRAGMENT);
		measure_miss_clear(&miss);
		assert_int_equal(select_one(ef, s->demangled, &sel, &miss), -EINVAL);
		assert_int_equal(miss.what, MEASURE_MISS_FRAGMENT);
		measure_miss_clear(&miss);
	}
	s = symbol_ending(ef, ".part.0");
	if (s) {
		assert_int_equal(s->kind, ELF_FN_FRAGMENT);
		/* num::guarded exists only as its piece */
		assert_int_equal(select_one(ef, "num::guarded", &sel, &miss), -EINVAL);
		assert_int_equal(miss.what, MEASURE_MISS_FRAGMENT);
		measure_miss_clear(&miss);
	}
	s = symbol_ending(ef, ".constprop.0");
	if (s) {
		assert_int_equal(s->kind, ELF_FN_CLONE);
		assert_int_equal(select_one(ef, "num::with_k", &sel, &miss), 0);
		assert_int_equal(sel.n, 1);
		assert_true(sel.v[0].clone);
		measure_selection_clear(&sel);
	}
	s = symbol_ending(ef, ".isra.0");
	if (s)
		assert_int_equal(s->kind, ELF_FN_CLONE);
	elf_close(ef);
#endif
}

#ifdef HAVE_RUST_FIXTURE
/* The instances of fixture_rust::inner::sum_to (two): their names must
 * differ and each start with 'stem'. Selecting the name alone is refused
 * with their list; selecting one by its name selects it alone. */
static void check_rust_generic(struct elf_file *ef, const char *stem, bool hashed)
{
	const struct elf_symbol *inst[2];
	size_t n = 0;

	for (size_t i = 0; i < elf_symbol_count(ef); i++) {
		const struct elf_symbol *s = elf_symbol(ef, i);

		if (strncmp(s->demangled, stem, strlen(stem)) != 0)
			continue;
		assert_true(n < 2);
		inst[n++] = s;
		/* "::h" and 16 hex digits, or v0's "::<u32>". */
		if (hashed)
			assert_int_equal(match_rust_hash(s->demangled), strlen(stem));
		else
			assert_true(!strcmp(s->demangled + strlen(stem), "::<u32>") ||
				    !strcmp(s->demangled + strlen(stem), "::<u64>"));
	}
	assert_int_equal(n, 2);
	assert_string_not_equal(inst[0]->demangled, inst[1]->demangled);

	struct measure_selection sel = { 0 };
	struct measure_miss miss = { 0 };
	const char *const by_stem[] = { stem }, *const by_name[] = { inst[1]->demangled };

	assert_int_equal(measure_select(ef, NULL, 0, by_stem, 1, NULL, &sel, &miss), -EINVAL);
	assert_int_equal(miss.what, MEASURE_MISS_AMBIGUOUS);
	assert_true(miss.generic);
	assert_string_equal(miss.function, inst[0]->demangled);
	assert_non_null(strstr(miss.names, inst[1]->demangled));
	measure_miss_clear(&miss);
	assert_int_equal(measure_select(ef, NULL, 0, by_name, 1, NULL, &sel, &miss), 0);
	assert_int_equal(sel.n, 1);
	assert_string_equal(sel.v[0].name, inst[1]->demangled);
	assert_string_equal(sel.v[0].symbol, inst[1]->name);
	measure_selection_clear(&sel);
}

static void check_rust(const char *fixture_name, const char *prefix, bool hashed)
{
	struct elf_file *ef = open_fixture(fixture_name);
	const struct elf_symbol *s = elf_symbol_by_name(ef, "fixture_rust::inner::add_numbers");

	/* Alone of its name: no hash. */
	assert_non_null(s);
	assert_true(strncmp(s->name, prefix, strlen(prefix)) == 0);
	check_rust_generic(ef, "fixture_rust::inner::sum_to", hashed);
	elf_close(ef);
}

static void test_rust_legacy(void **state)
{
	check_rust("rust_legacy", "_ZN12fixture_rust5inner11add_numbers17h", true);
}

static void test_rust_v0(void **state)
{
	check_rust("rust_v0", "_RNvNtCs", false);
}
#endif

static void test_demangle_strings(void **state)
{
	char *d;

	assert_null(elf_demangle("main"));
	assert_null(elf_demangle("_Zgarbage"));
	d = elf_demangle("_ZN2ns3fooEv");
	assert_string_equal(d, "ns::foo()");
	free(d);
	/* Rust legacy: the hash segment is dropped. */
	d = elf_demangle("_ZN4core3fmt5write17h0123456789abcdefE");
	assert_string_equal(d, "core::fmt::write");
	free(d);
	/* Rust v0. */
	d = elf_demangle("_RNvCs1234_7mycrate3foo");
	assert_non_null(d);
	assert_string_equal(d, "mycrate::foo");
	free(d);

	/* The hash kept: only for a Rust legacy name. */
	d = elf_demangle_hashed("_ZN4core3fmt5write17h0123456789abcdefE");
	assert_string_equal(d, "core::fmt::write::h0123456789abcdef");
	free(d);
	assert_null(elf_demangle_hashed("_RNvCs1234_7mycrate3foo"));
	assert_null(elf_demangle_hashed("_ZN2ns3fooEv"));
	assert_null(elf_demangle_hashed("main"));
}

/* Names of one file made unique (libiberty takes a hash for one when it has
 * 5 distinct digits or more): two instances of a generic Rust function
 * keep their hashes; the same raw name twice, a C++ name, a Rust name that
 * is alone and unmangled names stay as they are. */
static void test_demangle_disambiguate(void **state)
{
	const char *raw[] = {
		"_ZN5crate6sum_to17h1759598fe9477117E",
		"_ZN5crate3one17h0eae8502c9ef7b67E",
		"_ZN5crate6sum_to17h51073bdce6e1fd4bE",
		"static_fn",
		"static_fn",
		"_ZN2ns3fooEv",
		"_ZN5crate3two17h9a8b7c6d5e4f3a2bE",
		"_ZN5crate3two17h9a8b7c6d5e4f3a2bE",
		"_ZN5crate6sum_to17hf0e1d2c3b4a59687E",
	};
	const char *want[] = {
		"crate::sum_to::h1759598fe9477117",
		"crate::one",
		"crate::sum_to::h51073bdce6e1fd4b",
		NULL,
		NULL,
		"ns::foo()",
		"crate::two",
		"crate::two",
		"crate::sum_to::hf0e1d2c3b4a59687",
	};
	const size_t n = sizeof(raw) / sizeof(raw[0]);
	char *d[sizeof(raw) / sizeof(raw[0])];

	for (size_t i = 0; i < n; i++)
		d[i] = elf_demangle(raw[i]);
	assert_int_equal(elf_demangle_disambiguate(raw, d, n), 0);
	for (size_t i = 0; i < n; i++) {
		if (want[i])
			assert_string_equal(d[i], want[i]);
		else
			assert_null(d[i]);
		free(d[i]);
	}
	/* One name, nothing to tell apart. */
	d[0] = elf_demangle(raw[0]);
	assert_int_equal(elf_demangle_disambiguate(raw, d, 1), 0);
	assert_string_equal(d[0], "crate::sum_to");
	free(d[0]);
}

/* Bad files: each gives its own error. */
static char tmpdir[] = "/tmp/benchtrap-test-elf-XXXXXX";

static const char *write_tmp(const char *name, const void *data, size_t size)
{
	static char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, size), (ssize_t)size);
	close(fd);
	return path;
}

static int open_error(const char *path, const char **what)
{
	struct elf_file *ef = NULL;
	int r = elf_open(path, &ef, what);

	assert_null(ef);
	return r;
}

static void test_bad_files(void **state)
{
	unsigned char hdr[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	const char *what = NULL;
	char *image;
	struct stat st;
	FILE *f;

	assert_non_null(mkdtemp(tmpdir));
	assert_int_equal(open_error("/nonexistent/benchtrap", NULL), -ENOENT);
	assert_int_equal(open_error(tmpdir, NULL), -EISDIR);
	assert_int_equal(open_error(write_tmp("text", "#!/bin/sh\necho hi\n", 18), NULL),
			 -ELF_E_NOT_ELF);
	assert_int_equal(open_error(write_tmp("empty", "", 0), NULL), -ELF_E_NOT_ELF);

	/* A 32-bit i386 header. */
	hdr[4] = 1;
	hdr[18] = 3; /* e_machine EM_386 */
	assert_int_equal(open_error(write_tmp("elf32", hdr, sizeof(hdr)), &what), -ELF_E_CLASS);
	assert_non_null(strstr(what, "32-bit"));

	/* A 64-bit AArch64 executable header. */
	hdr[4] = 2;
	hdr[16] = 2;   /* ET_EXEC */
	hdr[18] = 183; /* EM_AARCH64 */
	assert_int_equal(open_error(write_tmp("aarch64", hdr, sizeof(hdr)), &what),
			 -ELF_E_MACHINE);
	assert_non_null(strstr(what, "AArch64"));

	/* A real binary cut short. */
	assert_int_equal(stat(fixture("stub_pie_O2"), &st), 0);
	image = malloc((size_t)st.st_size);
	f = fopen(fixture_path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(image, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	assert_int_equal(open_error(write_tmp("truncated", image, 3000), NULL), -ELF_E_TRUNCATED);
	assert_int_equal(open_error(write_tmp("only_ident", image, 20), NULL), -ELF_E_TRUNCATED);

	/* A registry whose records lost their magic. */
	assert_int_equal(stat(fixture("stub_nopie_O2"), &st), 0);
	image = realloc(image, (size_t)st.st_size);
	f = fopen(fixture_path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(image, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	size_t hits = 0;

	for (char *p = image; (p = memmem(p, (size_t)(image + st.st_size - p), "BTR1", 4));
	     hits++)
		memcpy(p, "XXXX", 4);
	assert_true(hits >= 4); /* one record per registration */
	/* It opens: the symbols are read, the benchmarks are not, and the
	 * registry's error is kept for those who need them. */
	struct elf_file *ef = NULL;

	assert_int_equal(elf_open(write_tmp("bad_registry", image, (size_t)st.st_size), &ef, NULL),
			 0);
	assert_int_equal(elf_registry_error(ef), -ELF_E_REGISTRY);
	assert_int_equal(elf_bench_count(ef), 0);
	assert_true(elf_symbol_count(ef) > 0);
	assert_non_null(elf_symbol_by_name(ef, "main"));
	elf_close(ef);
	free(image);

	char cmd[8400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	assert_int_equal(system(cmd), 0);
}

static unsigned char *read_fixture(const char *name, size_t *size)
{
	struct stat st;
	unsigned char *image;
	FILE *f;

	assert_int_equal(stat(fixture(name), &st), 0);
	image = malloc((size_t)st.st_size);
	assert_non_null(image);
	f = fopen(fixture_path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(image, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	*size = (size_t)st.st_size;
	return image;
}

/* A GNU build-id note with an empty descriptor is no build-id (it was read
 * as an unterminated string). */
static void test_empty_build_id(void **state)
{
	struct elf_file *ef = NULL;
	size_t size;
	unsigned char *image = read_fixture("stub_pie_O2", &size), *p;
	bool found = false;

	(void)state;
	/* Elf64_Nhdr { namesz 4, descsz, type NT_GNU_BUILD_ID (3) } "GNU\0" */
	for (p = image + 12; !found && (p = memmem(p, (size_t)(image + size - p), "GNU", 4)); p++) {
		uint32_t nh[3];

		memcpy(nh, p - 12, sizeof(nh));
		if (nh[0] == 4 && nh[2] == 3) {
			memset(p - 8, 0, 4); /* descsz */
			found = true;
		}
	}
	assert_true(found);
	assert_int_equal(elf_open_memory("empty-build-id", image, size, &ef), 0);
	assert_null(elf_build_id(ef));
	assert_true(elf_symbol_count(ef) > 0);
	elf_close(ef);
	free(image);
}

/* A .comment section of type NOBITS has a size and no bytes: no compiler
 * (its bytes were read from a NULL buffer). */
static void test_nobits_comment(void **state)
{
	struct elf_file *ef = NULL;
	size_t size;
	unsigned char *image = read_fixture("stub_pie_O2", &size);
	Elf64_Ehdr eh;
	Elf64_Shdr strtab;
	bool found = false;

	(void)state;
	memcpy(&eh, image, sizeof(eh));
	assert_true(eh.e_shoff + (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) <= size);
	memcpy(&strtab, image + eh.e_shoff + eh.e_shstrndx * sizeof(Elf64_Shdr), sizeof(strtab));
	for (size_t i = 0; i < eh.e_shnum && !found; i++) {
		unsigned char *at = image + eh.e_shoff + i * sizeof(Elf64_Shdr);
		Elf64_Shdr sh;

		memcpy(&sh, at, sizeof(sh));
		if (strcmp((const char *)image + strtab.sh_offset + sh.sh_name, ".comment") != 0)
			continue;
		sh.sh_type = SHT_NOBITS;
		memcpy(at, &sh, sizeof(sh));
		found = true;
	}
	assert_true(found);
	assert_int_equal(elf_open_memory("nobits-comment", image, size, &ef), 0);
	assert_null(elf_compiler(ef));
	assert_true(elf_symbol_count(ef) > 0);
	elf_close(ef);
	free(image);
}

/* measure_select: strict, a selector that matches nothing is the error
 * that names it; with 'found', it is skipped and the others kept, each
 * benchmark once, in selector order. */
static void test_select(void **state)
{
	struct elf_file *ef = open_fixture("stub_pie_O2");
	const char *benches[] = { "beta*", "nomatch", "alpha", "beta[2]" };
	const char *symbols[] = { "nosuchfunction", "benchtrap_bench_alpha(1)" };
	struct measure_selection sel = { 0 };
	struct measure_miss miss = { 0 };
	bool found[6] = { false, false, false, false, false, true };

	assert_int_equal(measure_select(ef, benches, 4, symbols, 2, NULL, &sel, &miss), -ENOENT);
	assert_int_equal(miss.what, MEASURE_MISS_BENCH);
	assert_string_equal(miss.selector, "nomatch");
	assert_int_equal(sel.n, 0);
	measure_miss_clear(&miss);

	assert_int_equal(measure_select(ef, benches, 4, symbols, 2, found, &sel, &miss), 0);
	assert_true(found[0] && !found[1] && found[2] && found[3] && !found[4] && found[5]);
	const char *want[] = { "beta[1]", "beta[2]", "beta[-3]", "alpha",
			       "benchtrap_bench_alpha(1)" };

	assert_int_equal(sel.n, 5);
	for (size_t i = 0; i < sel.n; i++)
		assert_string_equal(sel.v[i].name, want[i]);
	measure_selection_clear(&sel);

	/* A pattern that cannot be read is an error either way. */
	const char *bad[] = { "f(" };

	assert_int_equal(measure_select(ef, NULL, 0, bad, 1, found, &sel, &miss), -EINVAL);
	assert_int_equal(miss.what, MEASURE_MISS_BAD_CALL);
	measure_miss_clear(&miss);
	elf_close(ef);
}

/* A function of a static library linked into a stripped program has no
 * symbol: the miss says the binary is stripped and suggests no library's
 * look-alike (only a typo's distance is offered there); the same program
 * unstripped has the function. */
static void test_select_stripped_static(void **state)
{
	struct elf_file *ef = open_fixture("static_user_stripped");
	const char *symbols[] = { "fxstatic_compress" };
	struct measure_selection sel = { 0 };
	struct measure_miss miss = { 0 };

	assert_true(elf_is_stripped(ef));
	assert_int_equal(measure_select(ef, NULL, 0, symbols, 1, NULL, &sel, &miss), -ENOENT);
	assert_int_equal(miss.what, MEASURE_MISS_SYMBOL);
	assert_true(miss.stripped);
	assert_string_equal(miss.suggest, "");
	measure_miss_clear(&miss);
	elf_close(ef);

	ef = open_fixture("static_user");
	assert_int_equal(measure_select(ef, NULL, 0, symbols, 1, NULL, &sel, &miss), 0);
	assert_int_equal(sel.n, 1);
	assert_true(sel.v[0].in_main);
	measure_selection_clear(&sel);
	elf_close(ef);
}

/* What every build of threads_bench.c registers, in source order. */
static const struct {
	const char *name, *base;
	unsigned threads;
	bool has_arg;
	int64_t arg;
} expected_threads[] = {
	{ "plain", "plain", 0, false, 0 },
	{ "counter[threads=1]", "counter", 1, false, 0 },
	{ "counter[threads=2]", "counter", 2, false, 0 },
	{ "counter[threads=4]", "counter", 4, false, 0 },
	{ "sized[8]", "sized", 0, true, 8 },
	{ "sized[16]", "sized", 0, true, 16 },
	{ "solo", "solo", 1, false, 0 },
	{ "wide[threads=8]", "wide", 8, false, 0 },
	{ "wide[threads=3]", "wide", 3, false, 0 },
};

/* BENCHTRAP_THREADS records among the others, in every build: one
 * benchmark per distinct count, in the order written. */
static void test_threads_registry(void **state)
{
	static const char *const variants[] = { "pie_O0",	"pie_O1",    "pie_O2",
						"pie_O3",	"nopie_O2",  "lto_O3",
						"lto_nopie_O2", "static_O2", "staticpie_O2" };
	size_t n = sizeof(expected_threads) / sizeof(expected_threads[0]);

	for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
		char name[64];
		struct elf_file *ef;

		snprintf(name, sizeof(name), "threads_%s", variants[v]);
		ef = open_fixture(name);
		assert_int_equal(elf_registry_error(ef), 0);
		assert_int_equal(elf_bench_count(ef), n);
		for (size_t i = 0; i < n; i++) {
			const struct elf_bench *b = elf_bench(ef, i);
			char symbol[64];

			assert_string_equal(b->name, expected_threads[i].name);
			assert_string_equal(b->base, expected_threads[i].base);
			assert_int_equal(b->threads, expected_threads[i].threads);
			assert_int_equal(b->has_arg, expected_threads[i].has_arg);
			assert_int_equal(b->arg, expected_threads[i].arg);
			assert_non_null(b->symbol);
			assert_int_equal(b->symbol->addr, b->addr);
			snprintf(symbol, sizeof(symbol), "benchtrap_bench_%s", b->base);
			assert_true(strncmp(b->symbol->name, symbol, strlen(symbol)) == 0);
		}
		/* One function for every count. */
		assert_int_equal(elf_bench(ef, 1)->addr, elf_bench(ef, 3)->addr);
		assert_int_equal(elf_bench(ef, 7)->addr, elf_bench(ef, 8)->addr);
		elf_close(ef);
	}
}

/* A count below 1, or a BENCHTRAP_THREADS record without counts, is a
 * malformed registry, as a record without its magic is. */
static void test_threads_registry_bad(void **state)
{
	static const int64_t counts[3] = { 1, 2, 4 };
	size_t size;
	unsigned char *image = read_fixture("threads_nopie_O2", &size);
	unsigned char *p = memmem(image, size, counts, sizeof(counts));
	struct elf_file *ef = NULL;
	char dir[] = "/tmp/benchtrap-test-threads-XXXXXX", path[64];
	uint32_t zero = 0;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/bad", dir);
	assert_non_null(p);
	memset(p, 0, 8); /* counter's first count: 0 */
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(image, 1, size, f), size);
	fclose(f);
	assert_int_equal(elf_open(path, &ef, NULL), 0);
	assert_int_equal(elf_registry_error(ef), -ELF_E_REGISTRY);
	assert_int_equal(elf_bench_count(ef), 0);
	elf_close(ef);
	free(image);

	image = read_fixture("threads_nopie_O2", &size);
	/* counter's record: magic and nargs 3 (the stub's code compares
	 * with the magic too). */
	p = memmem(image, size, "BTT1\3\0\0\0", 8);
	assert_non_null(p);
	memcpy(p + 4, &zero, 4); /* nargs 0 */
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(image, 1, size, f), size);
	fclose(f);
	assert_int_equal(elf_open(path, &ef, NULL), 0);
	assert_int_equal(elf_registry_error(ef), -ELF_E_REGISTRY);
	elf_close(ef);
	free(image);
	unlink(path);
	rmdir(dir);
}

/* --bench selects a BENCHTRAP_THREADS registration by its base name (every
 * count), by a count's full name, or by a glob of it; --threads then runs
 * the registration at its own counts instead. */
static void test_threads_select(void **state)
{
	struct elf_file *ef = open_fixture("threads_pie_O2");
	struct measure_selection sel = { 0 };
	struct measure_miss miss = { 0 };
	const char *base[] = { "counter" }, *full[] = { "counter[threads=2]" };
	const char *glob[] = { "counter\\[threads=[24]\\]", "solo" };

	assert_int_equal(measure_select(ef, base, 1, NULL, 0, NULL, &sel, &miss), 0);
	assert_int_equal(sel.n, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_string_equal(sel.v[i].name, expected_threads[1 + i].name);
		assert_int_equal(sel.v[i].threads, expected_threads[1 + i].threads);
		assert_int_equal(sel.v[i].nargs, 0);
		assert_true(sel.v[i].registered);
	}
	/* --threads 2,8: the registration once per count given. */
	struct measure_threads counts = { .v = { 2, 8 }, .n = 2 };

	assert_int_equal(measure_select_threads(&sel, &counts), 0);
	assert_int_equal(sel.n, 2);
	assert_string_equal(sel.v[0].name, "counter[threads=2]");
	assert_string_equal(sel.v[1].name, "counter[threads=8]");
	assert_int_equal(sel.v[1].threads, 8);
	measure_selection_clear(&sel);

	assert_int_equal(measure_select(ef, full, 1, NULL, 0, NULL, &sel, &miss), 0);
	assert_int_equal(sel.n, 1);
	assert_string_equal(sel.v[0].name, "counter[threads=2]");
	assert_int_equal(sel.v[0].threads, 2);
	measure_selection_clear(&sel);

	assert_int_equal(measure_select(ef, glob, 2, NULL, 0, NULL, &sel, &miss), 0);
	assert_int_equal(sel.n, 3);
	assert_string_equal(sel.v[0].name, "counter[threads=2]");
	assert_string_equal(sel.v[1].name, "counter[threads=4]");
	assert_string_equal(sel.v[2].name, "solo");
	assert_int_equal(sel.v[2].threads, 1);
	measure_selection_clear(&sel);

	/* Everything, then --threads 1: each registration once, plain. */
	counts = (struct measure_threads){ .v = { 1 }, .n = 1 };
	assert_int_equal(measure_select(ef, NULL, 0, NULL, 0, NULL, &sel, &miss), 0);
	assert_int_equal(sel.n, sizeof(expected_threads) / sizeof(expected_threads[0]));
	assert_int_equal(measure_select_threads(&sel, &counts), 0);
	const char *want[] = { "plain", "counter", "sized[8]", "sized[16]", "solo", "wide" };

	assert_int_equal(sel.n, 6);
	for (size_t i = 0; i < sel.n; i++)
		assert_string_equal(sel.v[i].name, want[i]);
	measure_selection_clear(&sel);
	elf_close(ef);
}

int main(int argc, char **argv)
{
	/* "test_elf rust" runs the Rust fixtures alone, so that a machine
	 * without rustc reports them as skipped rather than passed. */
	if (argc > 1 && strcmp(argv[1], "rust") == 0) {
#ifndef HAVE_RUST_FIXTURE
		printf("skipped: rustc was not found when this build was configured, so the "
		       "Rust demangling fixtures were not built\n");
		return 77;
#else
		const struct CMUnitTest rust[] = {
			cmocka_unit_test(test_rust_legacy),
			cmocka_unit_test(test_rust_v0),
		};

		return cmocka_run_group_tests_name("elf-rust", rust, NULL, NULL);
#endif
	}

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie_O0),
		cmocka_unit_test(test_pie_O1),
		cmocka_unit_test(test_pie_O2),
		cmocka_unit_test(test_pie_O3),
		cmocka_unit_test(test_nopie_O2),
		cmocka_unit_test(test_lto_O3),
		cmocka_unit_test(test_lto_nopie_O2),
		cmocka_unit_test(test_static_O2),
		cmocka_unit_test(test_staticpie_O2),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_needed),
		cmocka_unit_test(test_static_needs_nothing),
		cmocka_unit_test(test_cxx),
		cmocka_unit_test(test_fn_kind),
		cmocka_unit_test(test_member_of),
		cmocka_unit_test(test_cxx_select),
		cmocka_unit_test(test_demangle_strings),
		cmocka_unit_test(test_demangle_disambiguate),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_empty_build_id),
		cmocka_unit_test(test_nobits_comment),
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_select_stripped_static),
		cmocka_unit_test(test_loader_hwcaps),
		cmocka_unit_test(test_loader_missing),
		cmocka_unit_test(test_loader_no_interp),
		cmocka_unit_test(test_calls_dlopen),
		cmocka_unit_test(test_threads_registry),
		cmocka_unit_test(test_threads_registry_bad),
		cmocka_unit_test(test_threads_select),
	};

	return cmocka_run_group_tests_name("elf", tests, NULL, NULL);
}
