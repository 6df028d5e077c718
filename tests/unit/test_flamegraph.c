/* SPDX-License-Identifier: MIT */
/* Folded stacks and the SVG flamegraph written from them. */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report/flamegraph.h"
#include "util/folded.h"

static char *folded_text(struct folded *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	assert_int_equal(folded_write(f, m), 0);
	fclose(m);
	return buf;
}

static char *svg_text(struct folded *f, const char *title)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	assert_int_equal(report_flamegraph_svg(f, title, "samples", m), 0);
	fclose(m);
	return buf;
}

static void test_folded(void **state)
{
	struct folded f = { 0 };
	const char *a[] = { "main", "fib", "fib" };
	const char *b[] = { "main", "odd;name with space", "" };
	/* A C++ name keeps its spaces; a newline or a tab could end or
	 * split the line: they become '_'. */
	const char *c[] = { "main", "ns::f<int, char> (x)", "new\nline\ttab" };

	assert_int_equal(folded_add(&f, a, 3, 5), 0);
	assert_int_equal(folded_add(&f, b, 3, 1), 0);
	assert_int_equal(folded_add(&f, a, 2, 2), 0);
	assert_int_equal(folded_add(&f, a, 3, 1), 0);
	assert_int_equal(folded_add_line(&f, "main;fib 4\n"), 0);
	assert_int_equal(folded_add_line(&f, "nocount"), -EINVAL);
	assert_int_equal(folded_add_line(&f, "x;y -3"), -EINVAL);
	assert_int_equal(folded_add_line(&f, " 3"), -EINVAL);
	assert_int_equal(folded_add(&f, c, 3, 2), 0);
	/* the count is after the last space */
	assert_int_equal(folded_add_line(&f, "main;ns::f<int, char> (x) 3"), 0);
	assert_int_equal(f.total, 18);

	char *t = folded_text(&f);

	assert_string_equal(t, "main;fib 6\n"
			       "main;fib;fib 6\n"
			       "main;ns::f<int, char> (x) 3\n"
			       "main;ns::f<int, char> (x);new_line_tab 2\n"
			       "main;odd:name with space;? 1\n");
	free(t);
	folded_free(&f);
	folded_free(NULL);
}

/*
 * Well-formed XML, checked the simple way: every element closed in order,
 * attribute values quoted, '&' only as one of the five entities, no '<' in
 * text, CDATA and the declaration skipped.
 */
static void assert_well_formed(const char *s)
{
	const char *stack[64];
	size_t depth = 0, nelem = 0;

	while (*s) {
		if (strncmp(s, "<?", 2) == 0) {
			s = strstr(s, "?>");
			assert_non_null(s);
			s += 2;
		} else if (strncmp(s, "<![CDATA[", 9) == 0) {
			s = strstr(s, "]]>");
			assert_non_null(s);
			s += 3;
		} else if (strncmp(s, "</", 2) == 0) {
			size_t len = strcspn(s + 2, ">");

			assert_true(depth > 0);
			depth--;
			assert_int_equal(strncmp(stack[depth], s + 2, len), 0);
			assert_true(strchr(" />", stack[depth][len]) != NULL);
			s += 2 + len + 1;
		} else if (*s == '<') {
			const char *name = s + 1;
			bool closed = false;

			s = name + strcspn(name, " />");
			while (*s != '>') {
				assert_true(*s != '\0' && *s != '<');
				if (*s == '"') {
					const char *e = strchr(s + 1, '"');

					assert_non_null(e);
					assert_null(memchr(s + 1, '<', (size_t)(e - s - 1)));
					s = e;
				} else if (*s == '/') {
					closed = true;
				} else if (*s == '=') {
					assert_true(s[1] == '"');
				}
				s++;
			}
			s++;
			nelem++;
			if (!closed) {
				assert_true(depth < 64);
				stack[depth++] = name;
			}
		} else if (*s == '&') {
			assert_true(strncmp(s, "&amp;", 5) == 0 || strncmp(s, "&lt;", 4) == 0 ||
				    strncmp(s, "&gt;", 4) == 0 || strncmp(s, "&quot;", 6) == 0 ||
				    strncmp(s, "&apos;", 6) == 0);
			s++;
		} else {
			s++;
		}
	}
	assert_int_equal(depth, 0);
	assert_true(nelem > 0);
}

/* The width of the rect of the frame whose title starts with 'title'. */
static double frame_width(const char *svg, const char *title)
{
	char key[256];
	const char *p;
	double w;

	snprintf(key, sizeof(key), "<title>%s (", title);
	p = strstr(svg, key);
	assert_non_null(p);
	assert_null(strstr(p + 1, key)); /* one such frame */
	p = strstr(p, "width=\"");
	assert_non_null(p);
	assert_int_equal(sscanf(p, "width=\"%lf\"", &w), 1);
	return w;
}

static void test_svg(void **state)
{
	struct folded f = { 0 };

	assert_int_equal(folded_add_line(&f, "main;bench;heavy 300"), 0);
	assert_int_equal(folded_add_line(&f, "main;bench;light 100"), 0);
	assert_int_equal(folded_add_line(&f, "main;bench;light;memcpy 0"), 0);
	assert_int_equal(folded_add_line(&f, "main;bench;std::vector<int>::at&x\"'y 4"), 0);

	char *svg = svg_text(&f, "fib[20] <walltime> & more");

	assert_well_formed(svg);
	assert_non_null(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	/* Every name escaped, in text and in attributes. */
	assert_non_null(strstr(svg, "fib[20] &lt;walltime&gt; &amp; more"));
	assert_non_null(strstr(svg, "std::vector&lt;int&gt;::at&amp;x&quot;&apos;y"));
	assert_null(strstr(svg, "vector<int>"));
	/* Hover titles: name, count, share. */
	assert_non_null(strstr(svg, "<title>heavy (300 samples, 74.26%)</title>"));
	assert_non_null(strstr(svg, "<title>all (404 samples, 100.00%)</title>"));
	/* Widths proportional to counts; the root spans the width less its
	 * margins; a frame of no count is not drawn. */
	double all = frame_width(svg, "all"), heavy = frame_width(svg, "heavy"),
	       light = frame_width(svg, "light"), bench = frame_width(svg, "bench");

	assert_true(all > 1179.9 && all < 1180.1);
	assert_true(heavy / light > 2.999 && heavy / light < 3.001);
	assert_true(bench / all > 0.9999 && bench / all < 1.0001);
	assert_null(strstr(svg, "<title>memcpy"));
	/* No network, no external script. */
	assert_null(strstr(svg, "href"));
	assert_null(strstr(svg, "src="));
	free(svg);

	/* A frame called from two callers is two frames. */
	assert_int_equal(folded_add_line(&f, "main;heavy 10"), 0);
	f.sorted = 0;
	svg = svg_text(&f, "t");
	assert_well_formed(svg);
	assert_non_null(strstr(svg, "<title>heavy (300 samples"));
	assert_non_null(strstr(svg, "<title>heavy (10 samples"));
	free(svg);
	folded_free(&f);

	/* Nothing recorded: still a document. */
	svg = svg_text(&f, "empty");
	assert_well_formed(svg);
	free(svg);
}

static void test_basename(void **state)
{
	char buf[16];

	report_profile_basename("fib[20]", buf, sizeof(buf));
	assert_string_equal(buf, "fib_20_");
	report_profile_basename("../etc/passwd", buf, sizeof(buf));
	assert_string_equal(buf, "_._etc_passwd");
	report_profile_basename("ns::f<int> x", buf, sizeof(buf));
	assert_string_equal(buf, "ns__f_int__x");
	report_profile_basename("a.very.long-name_here", buf, sizeof(buf));
	assert_string_equal(buf, "a.very.long-nam");
	report_profile_basename("", buf, sizeof(buf));
	assert_string_equal(buf, "_");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_basename),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
