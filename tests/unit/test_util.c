/* SPDX-License-Identifier: MIT */
/* Pure helpers: edit distance, glob selection, suggestions, text tables. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "report/table.h"
#include "util/array.h"
#include "util/atomic.h"
#include "util/guard.h"
#include "util/match.h"
#include "util/procmaps.h"
#include "util/strutil.h"

static void test_distance(void **state)
{
	assert_int_equal(str_distance("", "", 10), 0);
	assert_int_equal(str_distance("fib", "fib", 10), 0);
	assert_int_equal(str_distance("fib", "fob", 10), 1);
	assert_int_equal(str_distance("fibonacci", "fib", 10), 6);
	assert_int_equal(str_distance("kitten", "sitting", 10), 3);
	/* Saturates at the cap, however far apart. */
	assert_int_equal(str_distance("a", "abcdefghijklmnop", 4), 4);
	assert_int_equal(str_distance("abcdefgh", "zyxwvuts", 3), 3);
}

static void test_control(void **state)
{
	assert_false(str_has_control("fib[20]"));
	assert_true(str_has_control("bad\nname"));
	assert_true(str_has_control("esc\x1b[31m"));
	assert_string_equal(str_basename("/usr/bin/xz"), "xz");

	char *e = str_escape("ok µs ns::f<int>(int)");

	assert_null(e); /* printable UTF-8 needs no copy */
	e = str_escape("a\x1b[31mb\nc\xff\xc3");
	assert_string_equal(e, "a\\x1b[31mb\\x0ac\\xff\\xc3");
	free(e);
	/* Surrogates, overlong forms and code points past U+10FFFF are not
	 * UTF-8 (JSON would refuse them). */
	e = str_escape("s\xed\xa0\x80o\xc0\xafv\xf4\x90\x80\x80");
	assert_string_equal(e, "s\\xed\\xa0\\x80o\\xc0\\xafv\\xf4\\x90\\x80\\x80");
	free(e);
	assert_true(str_is_printable("µs ✓ 𝄞"));
	assert_false(str_is_printable("tab\there"));
	assert_string_equal(str_basename("xz"), "xz");
}

/* The names a program listed: empty lines and CR LF, a suffix that
 * picks the lines, and names that could not be selected exactly. */
static void test_list_lines(void **state)
{
	static const char gb[] = "BM_a\r\n\nBM_b/8\nBM_c";
	static const char crit[] = "Warning: x\nfib/10: bench\n: bench\ngroup/chase: bench\r\n";
	char **v = NULL;
	size_t n = 99;

	(void)state;
	assert_int_equal(str_list_lines(gb, sizeof(gb) - 1, NULL, &v, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[0], "BM_a");
	assert_string_equal(v[1], "BM_b/8");
	assert_string_equal(v[2], "BM_c");
	assert_null(v[3]);
	str_free_n(v, n);
	assert_int_equal(str_list_lines(crit, sizeof(crit) - 1, ": bench", &v, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0], "fib/10");
	assert_string_equal(v[1], "group/chase");
	str_free_n(v, n);
	/* Nothing listed: an empty array, not NULL. */
	assert_int_equal(str_list_lines("", 0, NULL, &v, &n), 0);
	assert_int_equal(n, 0);
	assert_non_null(v);
	assert_null(v[0]);
	free(v);
	assert_int_equal(str_list_lines("a\nb\001c\n", 6, NULL, &v, &n), -EINVAL);
	assert_int_equal(str_list_lines("a\0b: bench", 10, ": bench", &v, &n), -EINVAL);
	/* Text that is not NUL-terminated is read to its length only. */
	assert_int_equal(str_list_lines("BM_x\nBM_y", 4, NULL, &v, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0], "BM_x");
	str_free_n(v, n);
}

static void test_regex_exact(void **state)
{
	char *re;

	(void)state;
	re = str_regex_exact("BM_a/8.5(x)", "\\^$.|?*+()[]{}");
	assert_string_equal(re, "^BM_a/8\\.5\\(x\\)$");
	free(re);
	re = str_regex_exact("", "x");
	assert_string_equal(re, "^$");
	free(re);
}

static void test_glob(void **state)
{
	assert_true(match_glob("fib*", "fib[20]"));
	assert_true(match_glob("fib[20]", "fib[20]")); /* exact, not a bracket expression */
	assert_false(match_glob("fib[20]", "fib[2]"));
	assert_true(match_glob("fib[12]", "fib2")); /* still a glob where it can be */
	assert_true(match_glob("ns::*", "ns::foo<int>(int)"));
	assert_false(match_glob("fib", "fibonacci"));
}

static void test_suggest(void **state)
{
	const char *names[] = { "fibonacci", "fib[10]", "empty", "loop_300ns",
				"allocator_ripple_1" };
	char buf[256];

	assert_true(match_suggest("fibonaci", names, 5, 3, buf, sizeof(buf)));
	assert_string_equal(buf, "'fibonacci'");
	/* Substring matches come first; glob characters are ignored. */
	assert_true(match_suggest("*ripple", names, 5, 3, buf, sizeof(buf)));
	assert_non_null(strstr(buf, "allocator_ripple_1"));
	assert_true(match_suggest("fib", names, 5, 3, buf, sizeof(buf)));
	assert_string_equal(buf, "'fibonacci' or 'fib[10]'");
	assert_true(match_suggest("emty", names, 5, 3, buf, sizeof(buf)));
	assert_string_equal(buf, "'empty'");
	/* A parameterized name is close by its stem. */
	assert_true(match_suggest("fibb", names, 5, 3, buf, sizeof(buf)));
	assert_string_equal(buf, "'fib[10]'");
	assert_false(match_suggest("zzzzzzzzzz", names, 5, 3, buf, sizeof(buf)));
}

/* Suggestions that say where each name is, and a tighter distance. */
static void test_suggest_in(void **state)
{
	const char *names[] = { "main", "lzma_code", "lzma_end", "LZ4_compress" };
	const char *where[] = { NULL, "liblzma.so.5", "liblzma.so.5", "liblz4.so.1" };
	char buf[256];

	(void)state;
	assert_true(match_suggest_in("lzma_coode", names, where, 4, 3, 0, buf, sizeof(buf)));
	assert_string_equal(buf, "'lzma_code' (liblzma.so.5)");
	assert_true(match_suggest_in("mian", names, where, 4, 3, 0, buf, sizeof(buf)));
	assert_string_equal(buf, "'main'");
	/* Four edits: close enough by default, not within two. */
	assert_true(match_suggest_in("ZSTD_compress", names, where, 4, 3, 0, buf, sizeof(buf)));
	assert_string_equal(buf, "'LZ4_compress' (liblz4.so.1)");
	assert_false(match_suggest_in("ZSTD_compress", names, where, 4, 3, 2, buf, sizeof(buf)));
	/* A substring counts whatever the distance, unless it is bounded. */
	assert_true(match_suggest_in("compress", names, where, 4, 3, 0, buf, sizeof(buf)));
	assert_string_equal(buf, "'LZ4_compress' (liblz4.so.1)");
	assert_false(match_suggest_in("compress", names, where, 4, 3, 2, buf, sizeof(buf)));
	assert_true(match_suggest_in("lzma_cod", names, where, 4, 3, 2, buf, sizeof(buf)));
	assert_string_equal(buf, "'lzma_code' (liblzma.so.5) or 'lzma_end' (liblzma.so.5)");
}

static void test_function_names(void **state)
{
	char *s = match_strip_params("ns::f<int>(int, char)");

	assert_string_equal(s, "ns::f<int>");
	free(s);
	s = match_strip_params("ns::Foo::operator()(int)");
	assert_string_equal(s, "ns::Foo::operator()");
	free(s);
	s = match_strip_params("plain_c_name");
	assert_string_equal(s, "plain_c_name");
	free(s);
	s = match_strip_params("(anonymous namespace)::g(void (*)(int))");
	assert_string_equal(s, "(anonymous namespace)::g");
	free(s);

	assert_true(match_function("ns::f<int>", "_ZN2ns1fIiEEvic", "ns::f<int>(int, char)"));
	assert_true(match_function("ns::f*", "_ZN2ns1fIiEEvic", "ns::f<int>(int, char)"));
	assert_true(match_function("_ZN2ns*", "_ZN2ns1fIiEEvic", "ns::f<int>(int, char)"));
	assert_false(match_function("ns::g", "_ZN2ns1fIiEEvic", "ns::f<int>(int, char)"));
}

/* Parts of a demangled name, as strings. */
static void check_split(const char *d, const char *ret, const char *name, const char *params,
			const char *quals, const char *tail)
{
	struct match_sig sg;
	char buf[256];

	match_split(d, &sg);
	snprintf(buf, sizeof(buf), "%.*s", (int)sg.ret_end, d);
	assert_string_equal(buf, ret);
	snprintf(buf, sizeof(buf), "%.*s", (int)(sg.name_end - sg.name_start), d + sg.name_start);
	assert_string_equal(buf, name);
	if (params) {
		assert_true(sg.has_params);
		snprintf(buf, sizeof(buf), "%.*s", (int)(sg.params_close - sg.params_open - 1),
			 d + sg.params_open + 1);
		assert_string_equal(buf, params);
	} else {
		assert_false(sg.has_params);
	}
	snprintf(buf, sizeof(buf), "%.*s", (int)(sg.quals_end - sg.quals_start), d + sg.quals_start);
	assert_string_equal(buf, quals);
	assert_string_equal(d + sg.tail, tail);
}

static void test_split(void **state)
{
	check_split("long num::unroll<8>(long)", "long", "num::unroll<8>", "long", "", "");
	check_split("Grid<int>::sum() const", "", "Grid<int>::sum", "", " const", "");
	check_split("A::f() const &&", "", "A::f", "", " const &&", "");
	check_split("A::g(int) volatile &", "", "A::g", "int", " volatile &", "");
	check_split("std::vector<int, std::allocator<int> > ns::make<int>(unsigned long)",
		    "std::vector<int, std::allocator<int> >", "ns::make<int>", "unsigned long",
		    "", "");
	check_split("unsigned long ns::h<3>()", "unsigned long", "ns::h<3>", "", "", "");
	check_split("num::f(long) [clone .isra.0] [clone .cold]", "", "num::f", "long", "",
		    " [clone .isra.0] [clone .cold]");
	check_split("work.part.0", "", "work", NULL, "", ".part.0");
	check_split("work.constprop.0.isra.0", "", "work", NULL, "", ".constprop.0.isra.0");
	check_split("work.lto_priv.0", "", "work.lto_priv.0", NULL, "", "");
	check_split("(anonymous namespace)::g(void (*)(int))", "", "(anonymous namespace)::g",
		    "void (*)(int)", "", "");
	check_split("ns::Foo::operator()(int)", "", "ns::Foo::operator()", "int", "", "");
	check_split("bool operator< <int>(A<int> const&, A<int> const&)", "bool",
		    "operator< <int>", "A<int> const&, A<int> const&", "", "");
	check_split("ns::Foo::operator unsigned long() const", "", "ns::Foo::operator unsigned long",
		    "", " const", "");
	check_split("void* operator new(unsigned long)", "void*", "operator new", "unsigned long",
		    "", "");
	check_split("non-virtual thunk to ns::B::f()", "", "non-virtual thunk to ns::B::f", "", "",
		    "");
	check_split("plain_c_name", "", "plain_c_name", NULL, "", "");
}

/* The instances of a generic Rust function: by the legacy way's hash, kept
 * in the name when two instances share it, or by v0's type. */
static void test_match_rust(void **state)
{
	const char *leg = "crate::m::f::h0123456789abcdef",
		   *leg_raw = "_ZN5crate1m1f17h0123456789abcdefE";
	const char *v0 = "crate::m::f::<u32>", *v0_raw = "_RINvNtCs1_5crate1m1fmEB4_";

	assert_int_equal(match_rust_hash(leg), strlen("crate::m::f"));
	assert_int_equal(match_rust_hash("crate::m::f"), strlen("crate::m::f"));
	assert_int_equal(match_rust_hash("f::h0123456789abcdeg"), strlen("f::h0123456789abcdeg"));
	assert_int_equal(match_rust_hash("f::h0123456789ABCDEF"), strlen("f::h0123456789ABCDEF"));
	assert_int_equal(match_rust_hash("::h0123456789abcdef"), strlen("::h0123456789abcdef"));
	assert_int_equal(match_rust_hash("x::h0123456789abcdef"), 1);

	assert_int_equal(match_function_how("crate::m::f", leg_raw, leg), MATCH_BASE);
	assert_int_equal(match_function_how("crate::m::f()", leg_raw, leg), MATCH_BASE);
	assert_int_equal(match_function_how(leg, leg_raw, leg), MATCH_FULL);
	assert_int_equal(match_function_how("crate::m::f::h*", leg_raw, leg), MATCH_FULL);
	assert_false(match_function("crate::m::f::h0123456789abcde0", leg_raw, leg));
	assert_false(match_function("crate::m", leg_raw, leg));
	assert_false(match_function("crate::m::", leg_raw, leg));

	assert_int_equal(match_function_how("crate::m::f", v0_raw, v0), MATCH_BASE);
	assert_int_equal(match_function_how(v0, v0_raw, v0), MATCH_FULL);
	assert_false(match_function("crate::m::f::<u64>", v0_raw, v0));
	assert_false(match_function("crate::m", v0_raw, v0));
}

static void test_match_cxx(void **state)
{
	const char *tmpl = "long num::unroll<8>(long)", *tmpl_raw = "_ZN3num6unrollILi8EEEll";
	const char *sum = "Grid<int>::sum() const", *sum_raw = "_ZNK4GridIiE3sumEv";

	/* A function template: with or without its return type. */
	assert_int_equal(match_function_how("num::unroll<8>", tmpl_raw, tmpl), MATCH_BASE);
	assert_int_equal(match_function_how("long num::unroll<8>", tmpl_raw, tmpl), MATCH_BASE);
	assert_int_equal(match_function_how("num::unroll<8>(long)", tmpl_raw, tmpl), MATCH_BASE);
	assert_int_equal(match_function_how("num::unroll<*>", tmpl_raw, tmpl), MATCH_BASE);
	assert_int_equal(match_function_how(tmpl, tmpl_raw, tmpl), MATCH_FULL);
	assert_int_equal(match_function_how(tmpl_raw, tmpl_raw, tmpl), MATCH_FULL);
	assert_true(match_function("BM_*", "_Z12BM_TemplateIiEvRN9benchmark5StateE",
				   "void BM_Template<int>(benchmark::State&)"));
	assert_false(match_function("num::unroll<9>", tmpl_raw, tmpl));
	assert_false(match_function("int num::unroll<8>", tmpl_raw, tmpl));

	/* Qualifiers of a member function may be left out. */
	assert_true(match_function("Grid<int>::sum", sum_raw, sum));
	assert_true(match_function("Grid<int>::sum()", sum_raw, sum));
	assert_true(match_function("Grid<int>::sum() const", sum_raw, sum));
	assert_true(match_function("Grid<int>::sum()const", sum_raw, sum));
	assert_true(match_function("Grid<*>::s*", sum_raw, sum));
	assert_false(match_function("Grid<int>::sum(int)", sum_raw, sum));
	assert_false(match_function("Grid<int>::sum() &&", sum_raw, sum));
	assert_true(match_function("A::f() &", "_ZNR1A1fEv", "A::f() &"));
	assert_true(match_function("A::f", "_ZNO1A1fEv", "A::f() &&"));

	/* A function template's name alone finds its instances. */
	assert_int_equal(match_function_how("twice", "_Z5twiceIiET_S0_", "int twice<int>(int)"),
			 MATCH_BASE);
	assert_int_equal(match_function_how("num::unroll", tmpl_raw, tmpl), MATCH_BASE);
	assert_false(match_function("twice(int)", "_Z5twiceIiET_S0_", "int twice<int>(int)"));
	assert_false(match_function("twic", "_Z5twiceIiET_S0_", "int twice<int>(int)"));
	assert_false(match_function("Grid", "_ZN4GridIiE4zeroEl", "Grid<int>::zero(long)"));
	assert_false(match_function("A::operator", "_ZN1AltERKS_", "A::operator<(A const&)"));
	assert_int_equal(match_name_end("int twice<int>(int)", true), strlen("int twice"));
	assert_int_equal(match_name_end("int twice<int>(int)", false), strlen("int twice<int>"));
	assert_int_equal(match_name_end("A::operator<(A const&)", true), strlen("A::operator<"));
	assert_int_equal(match_name_end("bool A::operator< <int>(int)", true),
			 strlen("bool A::operator< <int>"));

	/* Types spelled otherwise than the demangler writes them. */
	static const struct {
		const char *pattern, *demangled;
		bool hit;
	} spell[] = {
		{ "ns::f(const char*)", "ns::f(char const*)", true },
		{ "ns::f(const char *)", "ns::f(char const*)", true },
		{ "ns::f(char const *)", "ns::f(char const*)", true },
		{ "ns::f(const char* const*)", "ns::f(char const* const*)", true },
		{ "ns::f(const std::string&)",
		  "ns::f(std::__cxx11::basic_string<char> const&)", false },
		{ "ns::f(const std::vector<int>&)", "ns::f(std::vector<int> const&)", true },
		{ "ns::f(std::vector<const int*>)", "ns::f(std::vector<int const*>)", true },
		{ "ns::f(const ns::A<const char*, 3>*)", "ns::f(ns::A<char const*, 3> const*)",
		  true },
		{ "ns::f(long int)", "ns::f(long)", true },
		{ "ns::f(long int, int long)", "ns::f(long, long)", true },
		{ "ns::f(unsigned)", "ns::f(unsigned int)", true },
		{ "ns::f(unsigned long int)", "ns::f(unsigned long)", true },
		{ "ns::f(long unsigned int)", "ns::f(unsigned long)", true },
		{ "ns::f(short int)", "ns::f(short)", true },
		{ "ns::f(unsigned short int)", "ns::f(unsigned short)", true },
		{ "ns::f(long long int)", "ns::f(long long)", true },
		{ "ns::f(signed)", "ns::f(int)", true },
		{ "ns::f(signed char)", "ns::f(signed char)", true },
		{ "ns::f(char)", "ns::f(signed char)", false },
		{ "ns::f(signed char)", "ns::f(char)", false },
		{ "ns::f(long double)", "ns::f(long double)", true },
		{ "ns::f(unsigned __int128)", "ns::f(unsigned __int128)", true },
		{ "ns::f(long long int, long double)", "ns::f(long long, long double)", true },
		{ "ns::f(long)", "ns::f(long double)", false },
		{ "ns::f(int)", "ns::f(long)", false },
		{ "ns::f(long)", "ns::f(long long)", false },
		{ "ns::f(long int*, unsigned&)", "ns::f(long*, unsigned int&)", true },
		/* the const of a parameter itself is no part of the type */
		{ "ns::f(const long)", "ns::f(long)", true },
		{ "ns::f(char* const)", "ns::f(char*)", true },
		{ "A::f(long int) const", "A::f(long) const", true },
		{ "A::f(long int)", "A::f(long) const", true },
		{ "A::f(int) const", "A::f(long) const", false },
		{ "ns::f(const char*)(*)", "ns::f(char const*)", false },
		{ "ns::f(const *)", "ns::f(char const*)", false },
		{ "ns::f(*const*)", "ns::f(char const*)", true },
		{ "int ns::twice<int>(int)", "int ns::twice<int>(int)", true },
		{ "ns::g<const char*>", "void ns::g<char const*>(char const*)", true },
	};
	for (size_t i = 0; i < sizeof(spell) / sizeof(spell[0]); i++)
		if (match_function(spell[i].pattern, "_Zraw", spell[i].demangled) != spell[i].hit)
			fail_msg("'%s' against '%s': expected %s", spell[i].pattern,
				 spell[i].demangled, spell[i].hit ? "a match" : "none");

	/* Overloads by parameter types, blanks or none after commas. */
	assert_true(match_function("num::scale(long)", "_ZN3num5scaleEl", "num::scale(long)"));
	assert_false(match_function("num::scale(long)", "_ZN3num5scaleEll",
				    "num::scale(long, long)"));
	assert_true(match_function("num::scale(long,long)", "_ZN3num5scaleEll",
				   "num::scale(long, long)"));
	assert_false(match_function("num::scale(long)", "_ZN3num5scaleEd", "num::scale(double)"));
	assert_true(match_function("num::scale", "_ZN3num5scaleEd", "num::scale(double)"));
	assert_false(match_function("num::scale(unsignedlong)", "_ZN3num5scaleEm",
				    "num::scale(unsigned long)"));

	/* A name without parameters also as "f()". */
	assert_true(match_function("lzma_crc32()", "lzma_crc32", "lzma_crc32"));
	assert_false(match_function("lzma_crc32(int)", "lzma_crc32", "lzma_crc32"));

	/* Clone suffixes: by the whole name, or by the function's. */
	const char *cold = "num::rare(long) [clone .cold]", *cold_raw = "_ZN3num4rareEl.cold";

	assert_int_equal(match_function_how(cold, cold_raw, cold), MATCH_FULL);
	assert_int_equal(match_function_how(cold_raw, cold_raw, cold), MATCH_FULL);
	assert_int_equal(match_function_how("num::rare", cold_raw, cold), MATCH_BASE);
	assert_int_equal(match_function_how("num::rare(long)", cold_raw, cold), MATCH_BASE);
	assert_int_equal(match_function_how("work", "work.part.0", "work.part.0"), MATCH_BASE);
	assert_int_equal(match_function_how("work.part.0", "work.part.0", "work.part.0"),
			 MATCH_FULL);

	/* A versioned name is whole or nothing. */
	assert_true(match_function("memcpy@GLIBC_2.2.5", "memcpy@GLIBC_2.2.5",
				   "memcpy@GLIBC_2.2.5"));
	assert_false(match_function("memcpy", "memcpy@GLIBC_2.2.5", "memcpy@GLIBC_2.2.5"));
}

static void test_floating_param(void **state)
{
	assert_int_equal(match_floating_param("num::scale(double)", 1), 0);
	assert_int_equal(match_floating_param("num::scale(double)", 0), -1);
	assert_int_equal(match_floating_param("num::scale(long)", 1), -1);
	assert_int_equal(match_floating_param("f(long, float)", 1), -1);
	assert_int_equal(match_floating_param("f(long, float)", 2), 1);
	assert_int_equal(match_floating_param("f(long double)", 1), 0);
	assert_int_equal(match_floating_param("f(std::pair<double, int>, int)", 2), -1);
	assert_int_equal(match_floating_param("f(double*)", 1), -1);
	assert_int_equal(match_floating_param("c_function", 3), -1);
	assert_int_equal(match_floating_param("A::f(double) const", 1), 0);
}

static void test_parse_call(void **state)
{
	int64_t args[6];
	unsigned n = 99;
	char *name = NULL;

	assert_int_equal(match_parse_call("lzma_crc32", &name, args, 6, &n), 0);
	assert_string_equal(name, "lzma_crc32");
	assert_int_equal(n, 0);
	free(name);

	assert_int_equal(match_parse_call("f(1, -2,0x10 , 010)", &name, args, 6, &n), 0);
	assert_string_equal(name, "f");
	assert_int_equal(n, 4);
	assert_int_equal(args[0], 1);
	assert_int_equal(args[1], -2);
	assert_int_equal(args[2], 16);
	assert_int_equal(args[3], 10); /* never octal */
	free(name);

	/* An empty list is part of the name: "g()" selects g as "g" does,
	 * and "Grid<int>::sum()" the overload without parameters. */
	assert_int_equal(match_parse_call("g()", &name, args, 6, &n), 0);
	assert_string_equal(name, "g()");
	assert_int_equal(n, 0);
	free(name);

	/* A parameter-type list is part of the name, arguments follow it. */
	assert_int_equal(match_parse_call("num::scale(long)", &name, args, 6, &n), 0);
	assert_string_equal(name, "num::scale(long)");
	assert_int_equal(n, 0);
	free(name);
	assert_int_equal(match_parse_call("num::scale(long, long)( 3 , -4 )", &name, args, 6, &n),
			 0);
	assert_string_equal(name, "num::scale(long, long)");
	assert_int_equal(n, 2);
	assert_int_equal(args[0], 3);
	assert_int_equal(args[1], -4);
	free(name);
	assert_int_equal(match_parse_call("Grid<int>::sum() const", &name, args, 6, &n), 0);
	assert_string_equal(name, "Grid<int>::sum() const");
	assert_int_equal(n, 0);
	free(name);
	assert_int_equal(match_parse_call("(anonymous namespace)::f(7)", &name, args, 6, &n), 0);
	assert_string_equal(name, "(anonymous namespace)::f");
	assert_int_equal(n, 1);
	free(name);

	name = NULL;
	assert_int_equal(match_parse_call("f(1,x)", &name, args, 6, &n), -EDOM);
	assert_int_equal(match_parse_call("f(7L)", &name, args, 6, &n), -EDOM);
	assert_int_equal(match_parse_call("ns::f(long)(abc)", &name, args, 6, &n), -EDOM);
	assert_int_equal(match_parse_call("g()(x)", &name, args, 6, &n), -EDOM);
	assert_int_equal(match_parse_call("f(1,,2)", &name, args, 6, &n), -EINVAL);
	/* A function that returns a pointer to a function: a name. */
	assert_int_equal(match_parse_call("void (*ns::get())(int)", &name, args, 6, &n), 0);
	assert_string_equal(name, "void (*ns::get())(int)");
	assert_int_equal(n, 0);
	free(name);
	name = NULL;
	assert_int_equal(match_parse_call("f(1,)", &name, args, 6, &n), -EINVAL);
	assert_int_equal(match_parse_call("f(1", &name, args, 6, &n), -EINVAL);
	assert_int_equal(match_parse_call("(1)", &name, args, 6, &n), -EINVAL);
	assert_int_equal(match_parse_call("", &name, args, 6, &n), -EINVAL);
	assert_int_equal(match_parse_call("f(1,2,3,4,5,6,7)", &name, args, 6, &n), -EINVAL);
	assert_int_equal(match_parse_call("f(1, )", &name, args, 6, &n), -EINVAL);
	assert_int_equal(match_parse_call("f(long))(1)", &name, args, 6, &n), -EINVAL);
	assert_int_equal(match_parse_call("f(double)(2.5)", &name, args, 6, &n), -EDOM);
	assert_int_equal(match_parse_call("f(99999999999999999999)", &name, args, 6, &n), -ERANGE);
	assert_null(name); /* untouched on failure */
}

static int fill_hello(FILE *f, void *ctx)
{
	fputs(ctx, f);
	return 0;
}

static int fill_fails(FILE *f, void *ctx)
{
	fputs("half", f);
	return -EIO;
}

static void test_atomic_write(void **state)
{
	char dir[] = "/tmp/benchtrap-atomic-XXXXXX", path[64], buf[32] = "";
	struct stat st;
	mode_t old = umask(022);
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.json", dir);
	assert_int_equal(atomic_write(path, fill_hello, "one"), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644); /* 0666 less the umask */
	/* A failed fill leaves the old file as it was, and no temporary. */
	assert_int_equal(atomic_write(path, fill_fails, NULL), -EIO);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "one");
	/* A replaced file keeps its mode. */
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(atomic_write(path, fill_hello, "two"), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "rm -r %s", dir);
	assert_int_equal(system(cmd), 0);
	umask(old);
}

static char *print_to_string(const struct table *t, bool markdown)
{
	char *out = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&out, &size);

	assert_non_null(f);
	if (markdown)
		table_print_markdown(t, f);
	else
		table_print_text(t, f);
	fclose(f);
	return out;
}

static void test_table(void **state)
{
	static const char *const headers[] = { "NAME", "TIME", "NOTE" };
	static const enum table_align align[] = { TABLE_LEFT, TABLE_RIGHT, TABLE_LEFT };
	struct table *t = table_new(3, headers, align);
	char *out;

	assert_non_null(t);
	assert_int_equal(table_add(t, (const char *const[]){ "fib[20]", "1.5 µs", NULL }), 0);
	assert_int_equal(table_add(t, (const char *const[]){ "empty", "10 ns", "a|b" }), 0);
	assert_int_equal(table_rows(t), 2);

	out = print_to_string(t, false);
	/* "µs" is one column wide; no trailing blanks. */
	assert_string_equal(out, "NAME       TIME  NOTE\n"
				 "fib[20]  1.5 µs\n"
				 "empty     10 ns  a|b\n");
	free(out);

	/* An overlong cell is cut to 60 characters, its start, "…" and its
	 * end; the column is 60 wide and every row stays aligned. */
	char longname[80];

	memset(longname, 'x', 70);
	memcpy(longname, "ab", 2);
	memcpy(longname + 67, "yz", 2);
	longname[70] = '\0';
	assert_int_equal(table_add(t, (const char *const[]){ longname, "1 ns", "z" }), 0);
	out = print_to_string(t, false);
	assert_non_null(strstr(out, "\nfib[20]"
				    "                                                     "
				    "  1.5 µs\n"));
	assert_non_null(strstr(out, "\nabxxxxxxxxxxxxxxxxxxxxxxxxxxx…xxxxxxxxxxxxxxxxxxxxxxxxxxxyzx"
				    "    1 ns  z\n"));
	free(out);
	table_free(t);
	t = table_new(3, headers, align);
	table_add(t, (const char *const[]){ "fib[20]", "1.5 µs", NULL });
	table_add(t, (const char *const[]){ "empty", "10 ns", "a|b" });

	out = print_to_string(t, true);
	assert_string_equal(out, "| NAME | TIME | NOTE |\n"
				 "| --- | ---: | --- |\n"
				 "| fib[20] | 1.5 µs |  |\n"
				 "| empty | 10 ns | a\\|b |\n");
	free(out);
	table_free(t);
}

/* Template instances keep their <...> in Markdown cells; a name of
 * thousands of characters is cut in the text table, which stays aligned. */
static void test_table_long_and_markup(void **state)
{
	static const char *const h[] = { "BENCHMARK", "VALUE", "NOTE" };
	static const enum table_align al[] = { TABLE_LEFT, TABLE_RIGHT, TABLE_LEFT };
	struct table *t = table_new(3, h, al);
	size_t len = 20000;
	char *longname = malloc(len + 1), *out, *line, *save, *lines[4];
	size_t n = 0, col = 0;

	(void)state;
	assert_non_null(t);
	assert_non_null(longname);
	memset(longname, 'x', len);
	memcpy(longname, "twice<", 6);
	memcpy(longname + len - 5, "<9>()", 5);
	longname[len] = '\0';
	assert_int_equal(
		table_add(t, (const char *const[]){ "long twice<long>(long)(9)", "1.0 ns", "a|b" }),
		0);
	assert_int_equal(table_add(t, (const char *const[]){ longname, "2.0 ns", "ok" }), 0);

	out = print_to_string(t, true);
	assert_non_null(strstr(out, "| long twice\\<long>(long)(9) | 1.0 ns | a\\|b |"));
	assert_null(strstr(out, " twice<"));
	/* Markdown keeps the whole name. */
	assert_true(strlen(out) > len);
	free(out);

	out = print_to_string(t, false);
	assert_true(strlen(out) < 400);
	for (line = strtok_r(out, "\n", &save); line && n < 4; line = strtok_r(NULL, "\n", &save))
		lines[n++] = line;
	assert_int_equal(n, 3);
	/* Every row has its value column ending at the same place. */
	for (size_t i = 0; i < n; i++) {
		const char *v = strstr(lines[i], i == 0 ? "VALUE" : i == 1 ? "1.0 ns" : "2.0 ns");
		size_t chars = 0;

		assert_non_null(v);
		for (const char *p = lines[i]; p < v; p++)
			chars += ((unsigned char)*p & 0xc0) != 0x80;
		chars += strlen(i == 0 ? "VALUE" : "1.0 ns");
		if (i == 0)
			col = chars;
		assert_int_equal(chars, col);
	}
	/* Cut in the middle: the start, "…", the end. */
	assert_non_null(strstr(lines[2], "twice<xxx"));
	assert_non_null(strstr(lines[2], "x…x"));
	assert_non_null(strstr(lines[2], "xx<9>()"));
	free(out);

	/* Kept whole when asked (benchtrap list). */
	table_keep_long_cells(t);
	out = print_to_string(t, false);
	assert_true(strlen(out) > len);
	free(out);
	table_free(t);
	free(longname);
}

/* PATH search: a directory of the program's name is skipped, an empty
 * entry is the current directory, a name with a slash is taken as it is. */
static void test_find_in_path(void **state)
{
	char dir[] = "/tmp/benchtrap-path-XXXXXX", a[128], b[128], prog[160], buf[256], *old;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	assert_int_equal(mkdir(a, 0700), 0);
	assert_int_equal(mkdir(b, 0700), 0);
	snprintf(prog, sizeof(prog), "%s/prog", a);
	assert_int_equal(mkdir(prog, 0700), 0); /* a/prog: a directory */
	snprintf(prog, sizeof(prog), "%s/prog", b);
	f = fopen(prog, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(chmod(prog, 0700), 0);

	old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	snprintf(buf, sizeof(buf), "%s:%s", a, b);
	setenv("PATH", buf, 1);
	assert_int_equal(str_find_in_path("prog", buf, sizeof(buf)), 0);
	assert_string_equal(buf, prog);
	assert_int_equal(str_find_in_path("no-such-prog", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(str_find_in_path("./x/y", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "./x/y");
	setenv("PATH", "", 1);
	assert_int_equal(str_find_in_path("sh", buf, sizeof(buf)), 0);
	assert_true(str_is_executable_file(buf));
	if (old)
		setenv("PATH", old, 1);
	free(old);
	unlink(prog);
	rmdir(b);
	snprintf(prog, sizeof(prog), "%s/prog", a);
	rmdir(prog);
	rmdir(a);
	rmdir(dir);
}

/* The maps of this process: its own executable is mapped at offset 0, and
 * that mapping's size is known by its start. */
static void test_procmaps(void **state)
{
	uint64_t base = 0;
	struct procmaps_iter it;
	struct procmaps_entry e;
	char *text;
	bool anon = false;

	(void)state;
	assert_int_equal(procmaps_file_base(getpid(), "/proc/self/exe", &base), 0);
	assert_true(base != 0);
	assert_true(procmaps_size_at(getpid(), base) > 0);
	assert_int_equal(procmaps_size_at(getpid(), 1), 0);
	assert_int_equal(procmaps_file_base(getpid(), "/", &base), -ENOENT);
	assert_int_equal(procmaps_read(getpid(), &text), 0);
	procmaps_iter_init(&it, text);
	while (procmaps_next(&it, &e)) {
		assert_true(e.lo < e.hi);
		anon |= e.path[0] == '\0';
	}
	free(text);
	procmaps_iter_init(&it, "garbage\n1000-2000 r-xp 00000000 08:01 12 /bin/x\n");
	assert_true(procmaps_next(&it, &e));
	assert_int_equal(e.lo, 0x1000);
	assert_int_equal(e.hi, 0x2000);
	assert_string_equal(e.perms, "r-xp");
	assert_string_equal(e.path, "/bin/x");
	assert_false(procmaps_next(&it, &e));
	(void)anon;
}

static void test_array_grow(void **state)
{
	int *v = NULL;
	size_t cap = 0;

	/* Room already there: nothing moves. */
	assert_int_equal(array_grow((void **)&v, &cap, 0, sizeof(*v)), 0);
	assert_null(v);
	assert_int_equal(cap, 0);
	/* From empty, at least the first size. */
	assert_int_equal(array_grow((void **)&v, &cap, 1, sizeof(*v)), 0);
	assert_non_null(v);
	assert_int_equal(cap, 16);
	for (int i = 0; i < 16; i++)
		v[i] = i;
	assert_int_equal(array_grow((void **)&v, &cap, 16, sizeof(*v)), 0);
	assert_int_equal(cap, 16);
	/* One past the capacity doubles it and keeps the elements. */
	assert_int_equal(array_grow((void **)&v, &cap, 17, sizeof(*v)), 0);
	assert_int_equal(cap, 32);
	for (int i = 0; i < 16; i++)
		assert_int_equal(v[i], i);
	/* Far past it doubles until it fits. */
	assert_int_equal(array_grow((void **)&v, &cap, 100, sizeof(*v)), 0);
	assert_int_equal(cap, 128);
	v[99] = 99;
	/* A size that overflows fails and leaves the array as it was. */
	int *old = v;

	assert_int_equal(array_grow((void **)&v, &cap, SIZE_MAX / 2 + 2, sizeof(*v)), -ENOMEM);
	assert_int_equal(array_grow((void **)&v, &cap, SIZE_MAX / 4, sizeof(*v)), -ENOMEM);
	assert_ptr_equal(v, old);
	assert_int_equal(cap, 128);
	assert_int_equal(v[15], 15);
	free(v);
}

static void test_array_lower_bound(void **state)
{
	struct item {
		uint32_t tag;
		uint64_t key;
	} v[] = { { 1, 10 }, { 2, 20 }, { 3, 20 }, { 4, 40 } };
	size_t n = sizeof(v) / sizeof(v[0]), off = offsetof(struct item, key);

	assert_int_equal(array_lower_bound_u64(v, 0, sizeof(v[0]), off, 10), 0);
	assert_int_equal(array_lower_bound_u64(v, n, sizeof(v[0]), off, 0), 0);
	assert_int_equal(array_lower_bound_u64(v, n, sizeof(v[0]), off, 10), 0);
	assert_int_equal(array_lower_bound_u64(v, n, sizeof(v[0]), off, 11), 1);
	/* The first of equal keys. */
	assert_int_equal(array_lower_bound_u64(v, n, sizeof(v[0]), off, 20), 1);
	assert_int_equal(array_lower_bound_u64(v, n, sizeof(v[0]), off, 40), 3);
	assert_int_equal(array_lower_bound_u64(v, n, sizeof(v[0]), off, UINT64_MAX), n);
}

/* What a benchmark did to benchtrap, in words, and what may go on. */
static void test_guard_judge(void **state)
{
	struct guard_who w = { .front = 100, .worker = 101, .thread = 102, .group = 100 };
	char buf[192];
	struct guard_call c = { .nr = SYS_kill, .args = { 101, SIGTERM }, .caller = 200,
				.caller_parent = 101 };

	(void)state;
	assert_true(guard_judge(&w, &c, buf, sizeof(buf)));
	assert_string_equal(buf, "sent SIGTERM to its parent (benchtrap, pid 101)");
	c.args[0] = 100;
	assert_true(guard_judge(&w, &c, buf, sizeof(buf)));
	assert_string_equal(buf, "sent SIGTERM to benchtrap (pid 100)");
	/* The answering thread is the worker, to the reader. */
	c = (struct guard_call){ .nr = SYS_tgkill, .args = { 102, 102, SIGKILL }, .caller = 200,
				 .caller_parent = 101 };
	assert_true(guard_judge(&w, &c, buf, sizeof(buf)));
	assert_string_equal(buf, "sent SIGKILL to its parent (benchtrap, pid 101)");
	/* Everything, and benchtrap's group. */
	c = (struct guard_call){ .nr = SYS_kill, .args = { (uint64_t)-1, SIGTERM }, .caller = 200 };
	assert_true(guard_judge(&w, &c, buf, sizeof(buf)));
	assert_string_equal(buf, "sent SIGTERM to every process it may signal (kill -1)");
	c.args[0] = (uint32_t)-100;
	assert_true(guard_judge(&w, &c, buf, sizeof(buf)));
	assert_string_equal(buf, "sent SIGTERM to benchtrap's process group (100)");
	/* The fork server, by a child of it. */
	c = (struct guard_call){ .nr = SYS_kill, .args = { 300, SIGKILL }, .caller = 301,
				 .caller_parent = 300, .server = 300 };
	assert_true(guard_judge(&w, &c, buf, sizeof(buf)));
	assert_string_equal(buf, "sent SIGKILL to its parent (the fork server, pid 300)");
	c.args[0] = (uint32_t)-300;
	assert_true(guard_judge(&w, &c, buf, sizeof(buf)));
	assert_string_equal(buf, "sent SIGKILL to its fork server's process group (300)");
	c = (struct guard_call){ .nr = SYS_pidfd_open, .args = { 101 }, .caller = 200,
				 .caller_parent = 101 };
	assert_true(guard_judge(&w, &c, buf, sizeof(buf)));
	assert_string_equal(buf, "asked for a pidfd of its parent (benchtrap, pid 101)");
	/* What may go on: signal 0, another process, a group not benchtrap's,
	 * the server's own pid without a server. */
	c = (struct guard_call){ .nr = SYS_kill, .args = { 101, 0 }, .caller = 200 };
	assert_false(guard_judge(&w, &c, buf, sizeof(buf)));
	c.args[0] = 555;
	c.args[1] = SIGTERM;
	assert_false(guard_judge(&w, &c, buf, sizeof(buf)));
	c.args[0] = (uint32_t)-555;
	assert_false(guard_judge(&w, &c, buf, sizeof(buf)));
	c.args[0] = 0;
	assert_false(guard_judge(&w, &c, buf, sizeof(buf)));
	c = (struct guard_call){ .nr = SYS_tkill, .args = { 300, SIGTERM }, .caller = 200 };
	assert_false(guard_judge(&w, &c, buf, sizeof(buf)));
}

/* The ways at benchtrap that are not kill(2): each in words, and the
 * forms of them that harm nobody. */
static void test_guard_judge_tampering(void **state)
{
	struct guard_who w = { .front = 100, .worker = 101, .thread = 102, .group = 100 };
	struct guard_call c = { .caller = 200, .caller_parent = 101 };
	char buf[192];

	(void)state;
	/* pidfd_send_signal: args[0] is the descriptor's process, resolved. */
	c.nr = SYS_pidfd_send_signal;
	c.args[0] = 101;
	c.args[1] = SIGKILL;
	assert_true(guard_judge(&w, &c, buf, sizeof(buf)));
	assert_string_equal(buf, "sent SIGKILL to its parent (benchtrap, pid 101)");
	c.args[1] = 0;
	assert_false(guard_judge(&w, &c, buf, sizeof(buf)));
	c.args[0] = 0; /* not a process's descriptor */
	c.args[1] = SIGKILL;
	assert_false(guard_judge(&w, &c, buf, sizeof(buf)));
	/* prlimit: setting is refused, reading goes on. */
	c = (struct guard_call){ .nr = SYS_prlimit64,
				 .args = { 100, RLIMIT_NOFILE, 0x1000 },
				 .caller = 200,
				 .caller_parent = 101 };
	assert_true(guard_judge(&w, &c, buf, sizeof(buf)));
	assert_string_equal(buf, "changed the resource limits of benchtrap (pid 100)");
	c.args[2] = 0;
	assert_false(guard_judge(&w, &c, buf, sizeof(buf)));
	c.args[0] = 555;
	c.args[2] = 0x1000;
	assert_false(guard_judge(&w, &c, buf, sizeof(buf)));
	/* ptrace: the pid is its second argument. */
	c = (struct guard_call){ .nr = SYS_ptrace,
				 .args = { PTRACE_ATTACH, 101 },
				 .caller = 200,
				 .caller_parent = 101 };
	assert_true(guard_judge(&w, &c, buf, sizeof(buf)));
	assert_string_equal(buf, "tried to ptrace its parent (benchtrap, pid 101)");
	c.args[0] = 101; /* a request whose value is benchtrap's pid: not the target */
	c.args[1] = 555;
	assert_false(guard_judge(&w, &c, buf, sizeof(buf)));
	c = (struct guard_call){ .nr = SYS_process_vm_writev, .args = { 102 }, .caller = 200 };
	assert_true(guard_judge(&w, &c, buf, sizeof(buf)));
	assert_string_equal(buf, "wrote into the memory of benchtrap (pid 101)");
	/* F_SETOWN to a pid or a group; F_SETOWN_EX resolved the same way;
	 * other commands, and owner 0, harm nobody. */
	c = (struct guard_call){ .nr = SYS_fcntl, .args = { 3, F_SETOWN, 101 }, .caller = 200 };
	assert_true(guard_judge(&w, &c, buf, sizeof(buf)));
	assert_string_equal(buf, "gave a descriptor's signals (F_SETOWN) to benchtrap (pid 101)");
	c.args[2] = (uint32_t)-100;
	assert_true(guard_judge(&w, &c, buf, sizeof(buf)));
	assert_string_equal(
		buf, "gave a descriptor's signals (F_SETOWN) to benchtrap's process group (100)");
	c.args[1] = F_SETOWN_EX;
	c.args[2] = 102;
	assert_true(guard_judge(&w, &c, buf, sizeof(buf)));
	assert_string_equal(buf,
			    "gave a descriptor's signals (F_SETOWN_EX) to benchtrap (pid 101)");
	c.args[2] = (uint32_t)-1; /* group 1, not "every process" */
	assert_false(guard_judge(&w, &c, buf, sizeof(buf)));
	c.args[2] = 0;
	assert_false(guard_judge(&w, &c, buf, sizeof(buf)));
	c.args[1] = F_SETFL;
	c.args[2] = 101;
	assert_false(guard_judge(&w, &c, buf, sizeof(buf)));
	/* F_SETOWN_EX whose struct could not be read: refused. */
	c.args[1] = F_SETOWN_EX;
	c.args[2] = 0;
	c.unread = true;
	assert_true(guard_judge(&w, &c, buf, sizeof(buf)));
	assert_string_equal(buf, "gave a descriptor's signals (F_SETOWN_EX) to a process whose id "
				 "benchtrap could not read");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distance),
		cmocka_unit_test(test_array_grow),
		cmocka_unit_test(test_array_lower_bound),
		cmocka_unit_test(test_control),
		cmocka_unit_test(test_glob),
		cmocka_unit_test(test_list_lines),
		cmocka_unit_test(test_regex_exact),
		cmocka_unit_test(test_suggest),
		cmocka_unit_test(test_suggest_in),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_table_long_and_markup),
		cmocka_unit_test(test_function_names),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_match_cxx),
		cmocka_unit_test(test_match_rust),
		cmocka_unit_test(test_floating_param),
		cmocka_unit_test(test_parse_call),
		cmocka_unit_test(test_find_in_path),
		cmocka_unit_test(test_procmaps),
		cmocka_unit_test(test_atomic_write),
		cmocka_unit_test(test_guard_judge),
		cmocka_unit_test(test_guard_judge_tampering),
	};

	return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
