/* SPDX-License-Identifier: MIT */
/* The pieces of benchtrap report's HTML page: escaping, scales, binning,
 * and the SVG of small inputs. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "history/history.h"
#include "report/html.h"
#include "results/results.h"
#include "stats/changepoint.h"

/* What a writer of the page wrote into memory, NUL-terminated. */
struct mem {
	char *buf;
	size_t len;
	FILE *f;
};

static void mem_open(struct mem *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	assert_non_null(m->f);
}

static char *mem_close(struct mem *m)
{
	assert_int_equal(fclose(m->f), 0);
	return m->buf;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* The value of the first attribute 'name' in s ("" when absent), static. */
static const char *attr(const char *s, const char *name)
{
	static char v[4096];
	char key[64];
	const char *p, *e;

	snprintf(key, sizeof(key), " %s=\"", name);
	p = strstr(s, key);
	if (!p)
		return "";
	p += strlen(key);
	e = strchr(p, '"');
	assert_non_null(e);
	snprintf(v, sizeof(v), "%.*s", (int)(e - p), p);
	return v;
}

static void test_escape(void **state)
{
	struct mem m;
	char *s;

	(void)state;
	mem_open(&m);
	report_html_escape(m.f, "a<b>&\"c\"'d'");
	report_html_escape(m.f, NULL);
	report_html_escape(m.f, "|x\x01y\n\tz\x7f|");
	report_html_escape(m.f, "µs → ok");
	s = mem_close(&m);
	assert_string_equal(s, "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;"
			       "|x\xef\xbf\xbdy\n\tz\xef\xbf\xbd|µs → ok");
	free(s);
}

static void test_ticks(void **state)
{
	double t[16], step;
	size_t n;

	(void)state;
	n = report_html_ticks(0, 10, 6, t, 16, &step);
	assert_int_equal(n, 6);
	assert_true(step == 2);
	for (size_t i = 0; i < n; i++)
		assert_true(fabs(t[i] - 2.0 * (double)i) < 1e-12);

	/* Ticks inside the range only, multiples of a nice step. */
	n = report_html_ticks(8081, 9584, 7, t, 16, &step);
	assert_true(step == 200);
	assert_int_equal(n, 7);
	assert_true(t[0] == 8200 && t[6] == 9400);

	/* Small and negative values, a zero that is exactly zero. */
	n = report_html_ticks(-0.0031, 0.0042, 5, t, 16, &step);
	assert_true(fabs(step - 0.002) < 1e-15);
	assert_int_equal(n, 4);
	assert_true(fabs(t[0] + 0.002) < 1e-15 && t[1] == 0 && fabs(t[3] - 0.004) < 1e-15);

	/* At most 'max'. */
	assert_int_equal(report_html_ticks(0, 100, 11, t, 3, &step), 3);
	/* No range: no ticks. */
	assert_int_equal(report_html_ticks(5, 5, 5, t, 16, &step), 0);
	assert_int_equal(report_html_ticks(5, 1, 5, t, 16, &step), 0);
	assert_int_equal(report_html_ticks(0, INFINITY, 5, t, 16, &step), 0);
	assert_int_equal(report_html_ticks(NAN, 1, 5, t, 16, &step), 0);
}

static void test_domain(void **state)
{
	double lo = 8081, hi = 9584;

	(void)state;
	report_html_domain(&lo, &hi, 6);
	assert_true(lo == 8000 && hi == 10000);
	lo = 0.2;
	hi = 0.93;
	report_html_domain(&lo, &hi, 5);
	assert_true(fabs(lo - 0.2) < 1e-12 && fabs(hi - 1.0) < 1e-12);
	/* Its ends are ticks, whatever the range. */
	for (double top = 1; top < 200; top *= 1.37) {
		double t[16], step;
		size_t n;

		lo = 0;
		hi = top;
		report_html_domain(&lo, &hi, 5);
		n = report_html_ticks(lo, hi, 5, t, 16, &step);
		assert_true(n >= 2 && t[0] == lo && fabs(t[n - 1] - hi) < 1e-9 * hi);
		assert_true(hi >= top);
	}
	/* One value: widened around it, and it stays inside. */
	lo = hi = 1000;
	report_html_domain(&lo, &hi, 5);
	assert_true(lo < 1000 && hi > 1000 && hi - lo <= 40);
	lo = hi = 0;
	report_html_domain(&lo, &hi, 5);
	assert_true(lo < 0 && hi > 0);
}

static void test_unit(void **state)
{
	char buf[48];
	double div;

	(void)state;
	report_html_unit("ns", 999, &div, buf, sizeof(buf));
	assert_true(div == 1);
	assert_string_equal(buf, "ns");
	report_html_unit("ns", 8267, &div, buf, sizeof(buf));
	assert_true(div == 1000);
	assert_string_equal(buf, "µs");
	report_html_unit(NULL, 2.5e9, &div, buf, sizeof(buf));
	assert_true(div == 1e9);
	assert_string_equal(buf, "s");
	report_html_unit("bytes", 2048, &div, buf, sizeof(buf));
	assert_true(div == 1024);
	assert_string_equal(buf, "KiB");
	/* Counts keep their digits up to 99,999. */
	report_html_unit("instructions", 50000, &div, buf, sizeof(buf));
	assert_true(div == 1);
	assert_string_equal(buf, "instructions");
	report_html_unit("instructions", 2e6, &div, buf, sizeof(buf));
	assert_true(div == 1000);
	assert_string_equal(buf, "thousand instructions");
	report_html_unit("instructions", 3e9, &div, buf, sizeof(buf));
	assert_string_equal(buf, "million instructions");
}

static void test_bins(void **state)
{
	const double x[] = { 0, 0.5, 1, 1.5, 2, NAN, -1, 5, INFINITY };
	size_t c[4];

	(void)state;
	report_html_bins(x, sizeof(x) / sizeof(x[0]), 0, 2, 2, c);
	assert_int_equal(c[0], 3); /* 0, 0.5 and -1 below */
	assert_int_equal(c[1], 4); /* 1, 1.5, 2 (the last bin is closed) and 5 above */
	report_html_bins(x, 5, 0, 2, 4, c);
	assert_int_equal(c[0], 1);
	assert_int_equal(c[1], 1);
	assert_int_equal(c[2], 1);
	assert_int_equal(c[3], 2);

	assert_int_equal(report_html_nbins(1, 1, 1), 6);
	assert_int_equal(report_html_nbins(100, 0, 10), 20);
	/* Freedman-Diaconis: 2 * 1 / 100^(1/3) = 0.431 wide, 24 bins over 10. */
	assert_int_equal(report_html_nbins(100, 1, 10), 24);
	assert_int_equal(report_html_nbins(1000, 1, 1000), 40);
	assert_int_equal(report_html_nbins(100, 10, 1), 6);

	assert_int_equal(report_html_log2_bucket(0), 0);
	assert_int_equal(report_html_log2_bucket(1.99), 0);
	assert_int_equal(report_html_log2_bucket(-5), 0);
	assert_int_equal(report_html_log2_bucket(NAN), 0);
	assert_int_equal(report_html_log2_bucket(2), 1);
	assert_int_equal(report_html_log2_bucket(3.9), 1);
	assert_int_equal(report_html_log2_bucket(4), 2);
	assert_int_equal(report_html_log2_bucket(1023), 9);
	assert_int_equal(report_html_log2_bucket(1024), 10);
	assert_int_equal(report_html_log2_bucket(1e300), 63);
}

/* A benchmark of 'n' samples 'raw' with stats over them. */
static struct results_bench bench(const char *name, double *raw, size_t n)
{
	struct results_bench b = {
		.name = (char *)name,
		.instrument = (char *)"walltime",
		.unit = (char *)"ns",
		.status = RESULTS_STATUS_OK,
		.ok = true,
		.value = 103,
		.has_stats = true,
		.raw = raw,
		.nraw = n,
	};

	b.stats = (struct results_stats){
		.median = 103,
		.mean = 103.4,
		.stddev = 2,
		.min = 100,
		.max = 108,
		.q1 = 101,
		.q3 = 105,
		.ci_low = 102,
		.ci_high = 104,
		.confidence = 0.95,
		.cv = 0.02,
		.uncertainty = NAN,
		.samples = n,
		.iterations_per_sample = 10,
	};
	return b;
}

static unsigned long sum_list(const char *v)
{
	unsigned long total = 0;
	char *end;

	for (const char *p = v; *p; p = end) {
		total += strtoul(p, &end, 10);
		if (end == p)
			break;
	}
	return total;
}

static void test_samples_svg(void **state)
{
	double raw[] = { 100, 101, 101.5, 103, 103, 103.2, 104, 108 };
	struct results_bench b = bench("f<T>(\"&'\")", raw, 8);
	struct mem m;
	char *s;

	(void)state;
	mem_open(&m);
	assert_int_equal(report_html_samples(m.f, &b), 0);
	s = mem_close(&m);
	assert_non_null(strstr(s, "<svg class=\"plot\" "));
	assert_string_equal(attr(s, "data-kind"), "samples");
	assert_string_equal(attr(s, "data-bench"), "f&lt;T&gt;(&quot;&amp;&#39;&quot;)");
	assert_null(strstr(s, "f<T>"));
	assert_string_equal(attr(s, "data-n"), "8");
	assert_string_equal(attr(s, "data-median"), "103");
	assert_string_equal(attr(s, "data-ci-low"), "102");
	assert_string_equal(attr(s, "data-ci-high"), "104");
	/* Every sample in a bin, and a bar per bin with any. */
	assert_int_equal(sum_list(attr(s, "data-bins")), 8);
	{
		size_t nonzero = 0;
		char *end;

		for (const char *p = attr(s, "data-bins"); *p; p = end) {
			nonzero += strtoul(p, &end, 10) > 0;
			if (end == p)
				break;
		}
		assert_int_equal(count(s, "<rect class=\"bar\""), nonzero);
	}
	assert_true(strtod(attr(s, "data-lo"), NULL) <= 100);
	assert_true(strtod(attr(s, "data-hi"), NULL) >= 108);
	/* The median, its interval, the axes, their names and ticks. */
	assert_int_equal(count(s, "class=\"med\""), 2); /* the line and the legend's */
	assert_non_null(strstr(s, "<rect class=\"ci\""));
	assert_non_null(strstr(s, "<title>median: 103.0 ns</title>"));
	assert_non_null(strstr(s, "<path class=\"ax\""));
	assert_non_null(strstr(s, ">time per call (ns)</text>"));
	assert_non_null(strstr(s, ">samples</text>"));
	assert_true(count(s, "<text class=\"xt\"") >= 3);
	assert_true(count(s, "<text class=\"yt\"") >= 3);
	assert_non_null(strstr(s, "<path class=\"rug\""));
	assert_non_null(strstr(s, "</svg>"));
	free(s);

	/* A failed benchmark: an element that says so, with no samples. */
	b.ok = false;
	b.status = RESULTS_STATUS_FAILED;
	b.nraw = 0;
	mem_open(&m);
	assert_int_equal(report_html_samples(m.f, &b), 0);
	s = mem_close(&m);
	assert_non_null(strstr(s, "<div class=\"noplot\" data-kind=\"samples\""));
	assert_string_equal(attr(s, "data-n"), "0");
	assert_non_null(strstr(s, "it failed"));
	assert_null(strstr(s, "<svg"));
	free(s);
}

static void test_observed_svg(void **state)
{
	/* Buckets [0,2) x2, [2,4) x1, [1024,2048) x3. */
	double raw[] = { 0, 1, 3, 1500, 1024, 2047 };
	struct results_bench b = bench("lzma_code", raw, 6);
	struct mem m;
	char *s;

	(void)state;
	b.instrument = (char *)"observe";
	b.stats.median = 1024;
	b.stats.ci_low = 3;
	b.stats.ci_high = 1500;
	mem_open(&m);
	assert_int_equal(report_html_observed(m.f, &b), 0);
	s = mem_close(&m);
	assert_string_equal(attr(s, "data-kind"), "observed");
	assert_string_equal(attr(s, "data-n"), "6");
	assert_string_equal(attr(s, "data-buckets"), "0:2 1:1 10:3");
	assert_int_equal(count(s, "<rect class=\"bar\""), 3);
	assert_non_null(strstr(s, "<title>1.024 µs – 2.048 µs: 3 calls</title>"));
	assert_non_null(strstr(s, ">1 µs</text>"));
	assert_non_null(strstr(s, ">duration of a call (logarithmic)</text>"));
	free(s);
}

/* The statistics of a count measured once. */
#define STATS(v)                                                                               \
	"\"stats\":{\"median\":" #v ",\"mean\":" #v ",\"stddev\":0,\"min\":" #v ",\"max\":" #v \
	",\"q1\":" #v ",\"q3\":" #v ",\"samples\":1,\"iterations_per_sample\":1}"

static const char base_json[] =
	"{\"schema\":\"benchtrap-results/1\",\"environment\":{\"binary\":\"b\"},"
	"\"run\":{\"instrument\":\"callgrind\"},\"benchmarks\":["
	"{\"name\":\"a<b\",\"instrument\":\"callgrind\",\"unit\":\"instructions\","
	"\"status\":\"ok\",\"value\":1000," STATS(
		1000) "},"
		      "{\"name\":\"same\",\"instrument\":\"callgrind\",\"unit\":\"instructions\","
		      "\"status\":\"ok\",\"value\":500," STATS(
			      500) "},"
				   "{\"name\":\"gone\",\"instrument\":\"callgrind\",\"unit\":"
				   "\"instructions\","
				   "\"status\":\"ok\",\"value\":10," STATS(10) "}]}";
static const char head_json[] =
	"{\"schema\":\"benchtrap-results/1\",\"environment\":{\"binary\":\"b\"},"
	"\"run\":{\"instrument\":\"callgrind\"},\"benchmarks\":["
	"{\"name\":\"a<b\",\"instrument\":\"callgrind\",\"unit\":\"instructions\","
	"\"status\":\"ok\",\"value\":1200," STATS(
		1200) "},"
		      "{\"name\":\"same\",\"instrument\":\"callgrind\",\"unit\":\"instructions\","
		      "\"status\":\"ok\",\"value\":500," STATS(500) "}]}";

static void test_comparison(void **state)
{
	struct results_file *base = NULL, *head = NULL;
	struct results_comparison c = { 0 };
	struct results_compare_opts o;
	struct mem m;
	char *s;

	(void)state;
	assert_int_equal(results_parse(base_json, strlen(base_json), "base", &base, NULL), 0);
	assert_int_equal(results_parse(head_json, strlen(head_json), "head", &head, NULL), 0);
	results_compare_opts_default(&o);
	assert_int_equal(results_compare(base, head, &o, &c), 0);
	mem_open(&m);
	assert_int_equal(report_html_comparison(m.f, &c), 0);
	s = mem_close(&m);
	assert_int_equal(count(s, "data-kind=\"change\""), c.n);
	assert_int_equal(c.n, 3);
	assert_non_null(strstr(s, "data-kind=\"comparison\" data-n=\"3\" data-threshold=\"0.05\""));
	/* The verdict in words (not colour alone), the change, the scale. */
	assert_non_null(strstr(s, "data-bench=\"a&lt;b\" data-instrument=\"callgrind\" "
				  "data-verdict=\"regressed\" data-ratio=\"1.2\""));
	assert_non_null(strstr(s, "<span class=\"badge\">regressed</span>"));
	assert_non_null(strstr(s, "<span class=\"badge\">missing</span>"));
	assert_non_null(strstr(s, "<span class=\"badge v-regressed\">1 regressed</span>"));
	assert_non_null(strstr(s, ">+20.0%</td>"));
	assert_non_null(strstr(s, ">1,200 instructions</td>"));
	assert_int_equal(count(s, "<path class=\"thr\""), 3);
	assert_null(strstr(s, "a<b"));
	free(s);
	results_comparison_clear(&c);
	results_free(base);
	results_free(head);
}

static void test_series(void **state)
{
	struct history_point p[6];
	struct history_series sr = {
		.name = (char *)"fib[20]",
		.instrument = (char *)"walltime",
		.unit = (char *)"ns",
		.machine = (char *)"vm (AMD EPYC)",
		.points = p,
		.n = 6,
	};
	struct changepoint cp = { .at = 3, .before = 1000, .after = 1200, .step = 0.2 };
	char commit[6][41];
	struct mem m;
	char *s;

	(void)state;
	for (int i = 0; i < 6; i++) {
		snprintf(commit[i], sizeof(commit[i]), "%07x%033d", 0xabc000 + i, 0);
		p[i] = (struct history_point){
			.run = i + 1,
			.commit = commit[i],
			.date = (char *)"2026-01-01T00:00:00Z",
			.ok = i != 4,
			.value = i < 3 ? 1000 : 1200,
			.ci_low = NAN,
			.ci_high = NAN,
		};
	}
	p[1].ci_low = 990;
	p[1].ci_high = 1010;
	mem_open(&m);
	assert_int_equal(report_html_series(m.f, &sr, &cp, 1), 0);
	s = mem_close(&m);
	assert_string_equal(attr(s, "data-kind"), "history");
	assert_string_equal(attr(s, "data-n"), "6");
	assert_string_equal(attr(s, "data-changepoints"), "3");
	/* Every run focusable, its commit on hover and focus. */
	assert_int_equal(count(s, "tabindex=\"0\""), 6);
	assert_int_equal(count(s, "<text class=\"tip\""), 6);
	assert_non_null(strstr(s, "data-commit=\"0abc003000"));
	assert_non_null(strstr(s, ">0abc003 · 1.200 µs</text>"));
	assert_non_null(strstr(s, "0abc0040"));
	assert_non_null(strstr(s, "0abc004 · failed"));
	assert_non_null(strstr(s, "(interval 990.0 ns – 1.010 µs)"));
	/* The change point, its step, the segments' levels. */
	assert_non_null(strstr(s, "<g class=\"cp\" data-at=\"3\">"));
	assert_non_null(strstr(s, ">+20.0%</text>"));
	assert_non_null(strstr(s, "<path class=\"seg\" d=\"M"));
	assert_non_null(strstr(s, ">commits, oldest to newest (6 runs)</text>"));
	free(s);
}

static const char run_json[] =
	"{\"schema\":\"benchtrap-results/1\",\"environment\":{\"binary\":\"./b&c\"},"
	"\"run\":{\"instrument\":\"walltime\"},\"benchmarks\":["
	"{\"name\":\"x<y>\",\"instrument\":\"walltime\",\"unit\":\"ns\",\"status\":\"ok\","
	"\"value\":2,\"stats\":{\"median\":2,\"mean\":2,\"stddev\":0.5,\"min\":1,\"max\":3,"
	"\"q1\":1.5,\"q3\":2.5,\"samples\":3,\"iterations_per_sample\":1,\"ci_low\":1,"
	"\"ci_high\":3,\"confidence\":0.95},\"raw_samples\":[1,2,3],"
	"\"diagnostics\":[\"a <note>\"]},"
	"{\"name\":\"boom\",\"instrument\":\"walltime\",\"unit\":\"ns\",\"status\":\"failed\","
	"\"value\":null,\"stats\":null,\"error\":\"killed by SIGSEGV\\n#0 <f>\"}]}";

static void test_page(void **state)
{
	const struct results_file *files[1];
	struct results_file *f = NULL;
	struct report_html h = { 0 };
	struct mem m;
	char *s;

	(void)state;
	assert_int_equal(results_parse(run_json, strlen(run_json), "r&d.json", &f, NULL), 0);
	files[0] = f;
	h.files = files;
	h.nfiles = 1;
	h.title = "<my> report";
	results_compare_opts_default(&h.compare);
	mem_open(&m);
	assert_int_equal(report_html_write(&h, m.f), 0);
	s = mem_close(&m);
	assert_int_equal(strncmp(s, "<!DOCTYPE html>\n", 16), 0);
	assert_non_null(strstr(s, "Content-Security-Policy\" content=\"default-src 'none';"));
	assert_non_null(strstr(s, "<title>&lt;my&gt; report</title>"));
	assert_non_null(strstr(s, "data-file=\"r&amp;d.json\""));
	assert_int_equal(count(s, "data-kind=\"samples\""), 2);
	assert_non_null(strstr(s, "<li>a &lt;note&gt;</li>"));
	assert_non_null(strstr(s, "<pre class=\"err\">killed by SIGSEGV\n#0 &lt;f&gt;</pre>"));
	assert_non_null(strstr(s, "<span class=\"badge v-failed\">failed</span>"));
	/* Nothing to load: no URL in it, no external resource. */
	assert_null(strstr(s, "http://"));
	assert_null(strstr(s, "https://"));
	assert_null(strstr(s, " src="));
	assert_null(strstr(s, "<link"));
	assert_non_null(strstr(s, "</html>\n"));
	free(s);
	results_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),	     cmocka_unit_test(test_ticks),
		cmocka_unit_test(test_domain),	     cmocka_unit_test(test_unit),
		cmocka_unit_test(test_bins),	     cmocka_unit_test(test_samples_svg),
		cmocka_unit_test(test_observed_svg), cmocka_unit_test(test_comparison),
		cmocka_unit_test(test_series),	     cmocka_unit_test(test_page),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
