/* SPDX-License-Identifier: MIT */
/*
 * Reading results files, comparing two of them, shards: parsing and its
 * one-line errors, each verdict, significance on noisy and tight samples,
 * the threshold, the geometric mean, the interval of a ratio, environment
 * differences, and the stability of the shard partition. The samples are
 * made by a seeded generator, so every run sees the same numbers.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "report/report.h"
#include "results/json.h"
#include "results/results.h"
#include "stats/stats.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- building files in memory ------------------------------------------ */

static uint64_t lcg_state;

static double test_uniform(void)
{
	lcg_state = lcg_state * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	return (double)(lcg_state >> 11) * 0x1.0p-53;
}

/* Roughly normal (Irwin-Hall of 12 uniforms) around 'centre'. */
static double test_normalish(double centre, double sd)
{
	double s = 0.0;

	for (int i = 0; i < 12; i++)
		s += test_uniform();
	return centre + sd * (s - 6.0);
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

static struct results_file *file_new(void)
{
	struct results_file *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->path = strdup("mem.json");
	f->benches = calloc(32, sizeof(*f->benches));
	assert_non_null(f->benches);
	f->env.cores = 2;
	f->env.aslr = 0;
	return f;
}

static struct results_bench *add_bench(struct results_file *f, const char *name,
				       const char *instrument, double value)
{
	struct results_bench *b = &f->benches[f->n++];

	b->name = strdup(name);
	b->instrument = strdup(instrument);
	b->unit = strdup(strcmp(instrument, "walltime") ? "instructions" : "ns");
	b->ok = true;
	b->value = value;
	b->has_stats = true;
	b->stats.median = value;
	b->stats.ci_low = b->stats.ci_high = NAN;
	return b;
}

/* n samples around 'centre' with standard deviation 'sd'; the value is
 * their median, as benchtrap run reports it. */
static void set_samples(struct results_bench *b, size_t n, double centre, double sd, uint64_t seed)
{
	lcg_state = seed;
	b->raw = malloc(n * sizeof(*b->raw));
	assert_non_null(b->raw);
	for (size_t i = 0; i < n; i++)
		b->raw[i] = test_normalish(centre, sd);
	b->nraw = n;
	double *copy = malloc(n * sizeof(*copy));

	assert_non_null(copy);
	memcpy(copy, b->raw, n * sizeof(*copy));
	b->value = b->stats.median = stats_median(copy, n);
	free(copy);
}

static const struct results_pair *pair(const struct results_comparison *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->pairs[i].name, name))
			return &c->pairs[i];
	fail_msg("no pair named %s", name);
	return NULL;
}

static struct results_compare_opts opts_with(double threshold)
{
	struct results_compare_opts o;

	results_compare_opts_default(&o);
	o.threshold = threshold;
	return o;
}

/* ---- pairing by name and instrument ------------------------------------- */

static bool has_warning(const struct results_comparison *c, const char *w)
{
	for (size_t i = 0; i < c->nwarnings; i++)
		if (!strcmp(c->warnings[i], w))
			return true;
	return false;
}

/* The index finds the first of a name and instrument, and the first repeat
 * in file order across several files. */
static void test_index(void **state)
{
	struct results_file *f[2] = { file_new(), file_new() };
	const struct results_ref *r, *first = NULL;
	struct results_index ix;

	(void)state;
	add_bench(f[0], "m", "walltime", 1);
	add_bench(f[0], "a", "walltime", 1);
	add_bench(f[0], "a", "callgrind", 1);
	add_bench(f[0], "z", "walltime", 1);
	add_bench(f[1], "q", "walltime", 1);
	add_bench(f[1], "z", "walltime", 1); /* the first repeat in order */
	add_bench(f[1], "a", "walltime", 1);
	add_bench(f[1], "m", "walltime", 1);
	assert_int_equal(results_index_build((const struct results_file *const *)f, 2, &ix), 0);
	assert_int_equal(ix.n, 8);
	r = results_index_find(&ix, "a", "walltime");
	assert_non_null(r);
	assert_ptr_equal(r->bench, &f[0]->benches[1]);
	r = results_index_find(&ix, "a", "callgrind");
	assert_non_null(r);
	assert_int_equal(r->pos, 2);
	r = results_index_find(&ix, "q", "walltime");
	assert_non_null(r);
	assert_int_equal(r->file, 1);
	assert_null(results_index_find(&ix, "a", "perf"));
	assert_null(results_index_find(&ix, "b", "walltime"));
	assert_null(results_index_find(&ix, "", "walltime"));
	assert_null(results_index_find(&ix, "zz", "walltime"));
	r = results_index_first_duplicate(&ix, &first);
	assert_non_null(r);
	assert_string_equal(r->bench->name, "z");
	assert_int_equal(r->file, 1);
	assert_int_equal(r->pos, 1);
	assert_int_equal(first->file, 0);
	assert_int_equal(first->pos, 3);
	results_index_clear(&ix);

	/* One file, no repeats. */
	assert_int_equal(results_index_build((const struct results_file *const *)f, 1, &ix), 0);
	assert_null(results_index_first_duplicate(&ix, &first));
	results_index_clear(&ix);
	results_free(f[0]);
	results_free(f[1]);
}

/* Pairs keep the order of the files (head's, then base's own), repeated
 * benchmarks are paired by their first copy and warned about, whatever the
 * order of the names. */
static void test_pairing_order_and_duplicates(void **state)
{
	static const char *const head_names[] = { "k", "c", "x", "a", "c", "q", "b" };
	static const char *const base_names[] = { "q", "zz", "b", "a", "b", "k", "c", "m" };
	/* Measured in both by head's order, then missing by base's, then new. */
	static const char *const order[] = { "k", "c", "a", "q", "b", "zz", "m", "x" };
	struct results_file *base = file_new(), *head = file_new();
	struct results_comparison c;

	(void)state;
	free(base->path);
	free(head->path);
	base->path = strdup("base.json");
	head->path = strdup("head.json");
	/* Every value equal: every ratio 1, so the files' order decides. */
	for (size_t i = 0; i < ARRAY_SIZE(head_names); i++)
		add_bench(head, head_names[i], "callgrind", 100)->stats.samples = i;
	for (size_t i = 0; i < ARRAY_SIZE(base_names); i++)
		add_bench(base, base_names[i], "callgrind", 100)->stats.samples = i;
	assert_int_equal(results_compare(base, head, NULL, &c), 0);
	assert_int_equal(c.n, ARRAY_SIZE(order));
	for (size_t i = 0; i < c.n; i++)
		assert_string_equal(c.pairs[i].name, order[i]);
	/* The first copy of each: head's c at 1, base's b at 2. */
	assert_int_equal(pair(&c, "c")->head->stats.samples, 1);
	assert_int_equal(pair(&c, "c")->base->stats.samples, 6);
	assert_int_equal(pair(&c, "b")->base->stats.samples, 2);
	assert_int_equal(pair(&c, "x")->verdict, RESULTS_NEW);
	assert_int_equal(pair(&c, "zz")->verdict, RESULTS_MISSING);
	assert_int_equal(pair(&c, "m")->verdict, RESULTS_MISSING);
	assert_true(has_warning(&c, "c (callgrind) appears more than once in head.json: the first "
				    "is compared"));
	assert_true(has_warning(&c, "b (callgrind) appears more than once in base.json: the first "
				    "is compared"));
	results_comparison_clear(&c);
	results_free(base);
	results_free(head);
}

/* merge names the first repeat in file order, and the earliest copy of it. */
static void test_merge_duplicates(void **state)
{
	struct results_file *f[3] = { file_new(), file_new(), file_new() };
	char *msg = NULL;

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		free(f[i]->path);
		assert_int_not_equal(asprintf(&f[i]->path, "shard%zu.json", i + 1), -1);
	}
	add_bench(f[0], "x", "walltime", 1);
	add_bench(f[0], "y", "walltime", 1);
	add_bench(f[1], "w", "walltime", 1);
	add_bench(f[1], "y", "callgrind", 1); /* another instrument: no repeat */
	add_bench(f[2], "v", "walltime", 1);
	add_bench(f[2], "y", "walltime", 1);
	add_bench(f[2], "x", "walltime", 1);
	assert_int_equal(results_merge(f, 3, "/nonexistent/out.json", 0, &msg), -EEXIST);
	assert_string_equal(msg, "y (walltime) is in both shard1.json and shard3.json: were the "
				 "shards given the same --shard? pass --allow-duplicates to keep "
				 "both");
	free(msg);
	msg = NULL;

	/* Within one file, before the later files' repeats. */
	add_bench(f[1], "w", "walltime", 1);
	assert_int_equal(results_merge(f, 3, "/nonexistent/out.json", 0, &msg), -EEXIST);
	assert_string_equal(msg, "shard2.json: w (walltime) appears twice; pass "
				 "--allow-duplicates to keep both");
	free(msg);
	for (size_t i = 0; i < 3; i++)
		results_free(f[i]);
}

/* ---- parsing -------------------------------------------------------------- */

static const char good_doc[] =
	"{\"schema\": \"benchtrap-results/1\", \"future_field\": {\"x\": 1},"
	" \"environment\": {\"cpu\": \"Test CPU\", \"cores\": 2, \"kernel\": \"Linux 6\","
	"  \"libc\": \"glibc 2.36\", \"binary\": \"b\", \"build_id\": \"ab\","
	"  \"compiler\": null, \"aslr\": false},"
	" \"run\": {\"instrument\": \"walltime\", \"isolation\": \"benchmark\"},"
	" \"benchmarks\": ["
	"  {\"name\": \"fib[20]\", \"symbol\": \"f\", \"instrument\": \"walltime\", \"unit\": "
	"\"ns\","
	"   \"value\": 100.5, \"status\": \"ok\", \"error\": null, \"unknown\": [1, 2],"
	"   \"stats\": {\"median\": 100.5, \"mean\": 101, \"stddev\": 1, \"min\": 99, \"max\": 110,"
	"    \"q1\": 100, \"q3\": 101, \"samples\": 3, \"iterations_per_sample\": 1000,"
	"    \"ci_low\": 100, \"ci_high\": 101, \"confidence\": 0.95},"
	"   \"diagnostics\": [], \"raw_samples\": [99, 100.5, 110]},"
	"  {\"name\": \"gone\", \"instrument\": \"walltime\", \"unit\": \"ns\", \"value\": null,"
	"   \"status\": \"failed\", \"error\": \"killed by SIGSEGV\\n#0 ...\", \"stats\": null},"
	"  {\"name\": \"nothing\", \"instrument\": \"walltime\", \"unit\": \"ns\", \"value\": 0.1,"
	"   \"status\": \"ok\", \"stats\": {\"median\": 0.1, \"mean\": 0.1, \"stddev\": 0,"
	"    \"min\": 0, \"max\": 1, \"q1\": 0, \"q3\": 0.2, \"samples\": 1,"
	"    \"iterations_per_sample\": 1},"
	"   \"diagnostics\": [\"measured no execution time: the interval reaches zero\"]},"
	"  {\"name\": \"field\", \"instrument\": \"walltime\", \"unit\": \"ns\", \"value\": 0,"
	"   \"status\": \"ok\", \"no_time\": true, \"stats\": {\"median\": -0.1, \"mean\": 0,"
	"    \"stddev\": 0, \"min\": -1, \"max\": 1, \"q1\": -0.5, \"q3\": 0, \"samples\": 1,"
	"    \"iterations_per_sample\": 1, \"resolution\": 0.3}, \"diagnostics\": []},"
	"  {\"name\": \"field_wins\", \"instrument\": \"walltime\", \"unit\": \"ns\","
	"   \"value\": 3, \"status\": \"ok\", \"no_time\": false, \"stats\": {\"median\": 3,"
	"    \"mean\": 3, \"stddev\": 0, \"min\": 3, \"max\": 3, \"q1\": 3, \"q3\": 3,"
	"    \"samples\": 1, \"iterations_per_sample\": 1},"
	"   \"diagnostics\": [\"measured no execution time: wording of another version\"]}"
	" ]}";

/* merge writes numbers as run does (ten significant digits): 0.1 stays "0.1",
 * where a full-precision dump gives 0.10000000000000001; the environment is
 * written as run writes it, and fields this benchtrap does not know stay. */
static void test_merge_numbers(void **state)
{
	char dir[] = "/tmp/benchtrap-test-merge.XXXXXX", out[64], *text;
	struct results_file *f = NULL;
	FILE *in;
	long size;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/out.json", dir);
	assert_int_equal(results_parse(good_doc, strlen(good_doc), "x.json", &f, NULL), 0);
	assert_int_equal(results_merge(&f, 1, out, 0, NULL), 0);
	in = fopen(out, "r");
	assert_non_null(in);
	assert_int_equal(fseek(in, 0, SEEK_END), 0);
	size = ftell(in);
	rewind(in);
	text = calloc(1, (size_t)size + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)size, in), (size_t)size);
	fclose(in);
	assert_non_null(strstr(text, "\"value\": 0.1,"));
	assert_non_null(strstr(text, "\"median\": 0.1,"));
	assert_non_null(strstr(text, "\"q3\": 0.2,"));
	assert_non_null(strstr(text, "\"median\": 100.5,"));
	assert_null(strstr(text, "0000000"));
	assert_non_null(strstr(text, "\"cpu\": \"Test CPU\""));
	assert_non_null(strstr(text, "\"future_field\""));
	assert_non_null(strstr(text, "\"unknown\""));
	free(text);
	results_free(f);
	assert_int_equal(unlink(out), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* The elements of an array, in turn (results_json_next_fn). */
struct array_source {
	json_t *a;
	size_t i;
};

static int next_element(void *ctx, json_t **ret)
{
	struct array_source *s = ctx;

	if (s->i == json_array_size(s->a))
		return 0;
	*ret = json_incref(json_array_get(s->a, s->i++));
	return 1;
}

/* 'doc' written by the tree writer and by the streaming one, with its
 * "benchmarks" streamed: the same text, byte for byte. */
static void check_stream_same(const char *doc)
{
	char *tree = NULL, *stream = NULL;
	size_t ntree = 0, nstream = 0;
	json_t *whole = json_loads(doc, 0, NULL), *skel = json_loads(doc, 0, NULL);
	struct array_source src;
	FILE *f;

	assert_non_null(whole);
	assert_non_null(skel);
	f = open_memstream(&tree, &ntree);
	assert_non_null(f);
	assert_int_equal(results_json_dump(whole, f), 0);
	fclose(f);
	src.a = json_incref(json_object_get(skel, "benchmarks"));
	src.i = 0;
	assert_int_equal(json_object_set_new(skel, "benchmarks", json_array()), 0);
	f = open_memstream(&stream, &nstream);
	assert_non_null(f);
	assert_int_equal(results_json_dump_stream(skel, "benchmarks", next_element, &src, f), 0);
	fclose(f);
	assert_string_equal(stream, tree);
	json_decref(src.a);
	free(tree);
	free(stream);
}

static void test_json_stream(void **state)
{
	(void)state;
	/* Nested objects and arrays, empty ones, whole reals (written as
	 * integers), strings with newlines and quotes, the streamed member
	 * between others. */
	check_stream_same(
		"{\"schema\": \"s\", \"environment\": {\"cpu\": \"a\\nb \\\"q\\\"\", "
		"\"cores\": 2.0, \"e\": {}, \"l\": []}, \"benchmarks\": [{\"name\": \"x\", "
		"\"stats\": {\"median\": 1.5, \"n\": [1, 2.0, {\"k\": [[]]}]}, \"raw_samples\": "
		"[1.25, 3.0]}, {\"name\": \"caf\\u00e9\", \"v\": null, \"t\": true}, 4.0, "
		"\"s\"], \"run\": {\"merged_from\": [\"a.json\"]}, \"z\": 0.1}");
	/* None to stream; the member first, and last. */
	check_stream_same("{\"benchmarks\": [], \"a\": 1}");
	check_stream_same("{\"a\": {\"b\": {\"c\": [1]}}, \"benchmarks\": [[1, [2]]]}");
	check_stream_same("{\"benchmarks\": [{}]}");
}

/* The reader parses each benchmark alone: a benchmark that is not JSON
 * makes the file not JSON, with jansson's line and column in the whole
 * text, even when a field check would fail first; a member given twice is
 * the last one, as jansson reads it. */
static void test_parse_pieces(void **state)
{
	static const char bad[] = "{\"schema\": \"other\",\n\"environment\": {},\n"
				  "\"benchmarks\": [{\"name\": \"a\"},\n {\"name\": tru}]}";
	static const char twice[] =
		"{\"schema\": \"benchtrap-results/1\", \"environment\": {}, \"benchmarks\": "
		"[{\"name\": \"a\"}], \"benchmarks\": [{\"name\": \"b\", \"instrument\": "
		"\"walltime\", \"unit\": \"ns\", \"status\": \"failed\", \"error\": \"e\"}]}";
	struct results_file *f = NULL;
	json_error_t jerr;
	char *err = NULL, want[256];

	(void)state;
	assert_null(json_loads(bad, 0, &jerr));
	snprintf(want, sizeof(want), "b.json: not JSON: %s at line %d, column %d", jerr.text,
		 jerr.line, jerr.column);
	assert_int_equal(results_parse(bad, strlen(bad), "b.json", &f, &err), -EINVAL);
	assert_string_equal(err, want);
	free(err);
	err = NULL;
	assert_int_equal(results_parse(twice, strlen(twice), "t.json", &f, &err), 0);
	assert_int_equal(f->n, 1);
	assert_string_equal(f->benches[0].name, "b");
	results_free(f);
	f = NULL;
	assert_int_equal(results_parse(twice, strlen(twice) - 1, "t.json", &f, &err), -EINVAL);
	assert_non_null(strstr(err, "t.json: not JSON: "));
	free(err);
}

static void test_parse_good(void **state)
{
	struct results_file *f = NULL;
	char *err = NULL;

	(void)state;
	assert_int_equal(results_parse(good_doc, strlen(good_doc), "x.json", &f, &err), 0);
	assert_null(err);
	assert_string_equal(f->env.cpu, "Test CPU");
	assert_int_equal(f->env.cores, 2);
	assert_int_equal(f->env.aslr, 0);
	assert_null(f->env.compiler);
	assert_string_equal(f->instrument, "walltime");
	assert_int_equal(f->n, 5);
	assert_string_equal(f->benches[0].name, "fib[20]");
	assert_true(f->benches[0].ok);
	assert_true(f->benches[0].value == 100.5);
	assert_int_equal(f->benches[0].nraw, 3);
	assert_true(f->benches[0].raw[2] == 110.0);
	assert_int_equal(f->benches[0].stats.iterations_per_sample, 1000);
	assert_false(f->benches[0].no_time);
	assert_false(f->benches[1].ok);
	assert_true(isnan(f->benches[1].value));
	assert_false(f->benches[1].has_stats);
	assert_string_equal(f->benches[1].error, "killed by SIGSEGV\n#0 ...");
	assert_true(f->benches[2].no_time);
	assert_null(f->benches[2].raw);
	assert_true(isnan(f->benches[2].stats.ci_low));
	/* The no_time field, where there is one, decides alone. */
	assert_true(f->benches[3].no_time);
	assert_false(f->benches[4].no_time);
	results_free(f);
}

/* Every bad document is refused with one line naming the file and field. */
static void test_parse_errors(void **state)
{
	static const struct {
		const char *doc, *message;
	} cases[] = {
		{ "", "h.json: empty file, not a results document" },
		{ "{\"schema\": ", "h.json: not JSON: " },
		{ "[1, 2]", "h.json: expected a results document (a JSON object), not an array" },
		{ "{\"benchmarks\": []}", "h.json: schema: missing: not a benchtrap results file" },
		{ "{\"schema\": \"benchtrap-results/2\", \"environment\": {}, \"benchmarks\": []}",
		  "h.json: schema: unknown version \"benchtrap-results/2\"" },
		{ "{\"schema\": \"other/1\"}", "h.json: schema: \"other/1\" is not a benchtrap" },
		{ "{\"schema\": \"benchtrap-results/1\", \"benchmarks\": []}",
		  "h.json: environment: missing" },
		{ "{\"schema\": \"benchtrap-results/1\", \"environment\": {\"cores\": \"2\"},"
		  " \"benchmarks\": []}",
		  "h.json: environment.cores: expected a whole number, not a string" },
		{ "{\"schema\": \"benchtrap-results/1\", \"environment\": {}}",
		  "h.json: benchmarks: missing" },
		{ "{\"schema\": \"benchtrap-results/1\", \"environment\": {}, \"benchmarks\": [7]}",
		  "h.json: benchmarks[0]: expected an object, not a number" },
		{ "{\"schema\": \"benchtrap-results/1\", \"environment\": {}, \"benchmarks\": "
		  "[{\"instrument\": \"walltime\", \"unit\": \"ns\", \"status\": \"ok\"}]}",
		  "h.json: benchmarks[0].name: missing" },
		{ "{\"schema\": \"benchtrap-results/1\", \"environment\": {}, \"benchmarks\": "
		  "[{\"name\": \"a\", \"instrument\": \"walltime\", \"unit\": \"ns\","
		  " \"status\": \"fine\"}]}",
		  "h.json: benchmarks[0].status: expected \"ok\", \"failed\", \"skipped\" or "
		  "\"no_calls\", not \"fine\"" },
		{ "{\"schema\": \"benchtrap-results/1\", \"environment\": {}, \"benchmarks\": "
		  "[{\"name\": \"a\", \"instrument\": \"walltime\", \"unit\": \"ns\","
		  " \"status\": \"ok\", \"value\": 1, \"stats\": {\"median\": \"fast\"}}]}",
		  "h.json: benchmarks[0].stats.median: expected a number, not a string" },
		{ "{\"schema\": \"benchtrap-results/1\", \"environment\": {}, \"benchmarks\": "
		  "[{\"name\": \"a\", \"instrument\": \"walltime\", \"unit\": \"ns\","
		  " \"status\": \"ok\", \"value\": 1}]}",
		  "h.json: benchmarks[0].stats: missing, but status is \"ok\"" },
		{ "{\"schema\": \"benchtrap-results/1\", \"environment\": {}, \"benchmarks\": "
		  "[{\"name\": \"a\", \"instrument\": \"walltime\", \"unit\": \"ns\","
		  " \"status\": \"failed\", \"raw_samples\": [1, \"x\"]}]}",
		  "h.json: benchmarks[0].raw_samples[1]: expected a number, not a string" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct results_file *f = (struct results_file *)0x1;
		char *err = NULL;
		int r = results_parse(cases[i].doc, strlen(cases[i].doc), "h.json", &f, &err);

		if (r != -EINVAL || !err ||
		    strncmp(err, cases[i].message, strlen(cases[i].message)))
			fail_msg("case %zu: r=%d, error '%s', expected '%s'", i, r,
				 err ? err : "(none)", cases[i].message);
		assert_null(strchr(err, '\n'));
		assert_ptr_equal(f, (struct results_file *)0x1); /* untouched */
		free(err);
	}
}

/* One benchmark of 'instrument' with 'stats' and 'raw' (text inside the
 * braces and brackets), in a file whose run.instrument is 'run' and whose
 * environment has 'cores'. */
static char *value_doc(const char *run, const char *cores, const char *instrument,
		       const char *value, const char *stats, const char *raw)
{
	char *doc;

	assert_int_not_equal(
		asprintf(&doc,
			 "{\"schema\": \"benchtrap-results/1\", \"environment\": {\"cores\": %s},"
			 " \"run\": {\"instrument\": \"%s\"}, \"benchmarks\": [{\"name\": \"a\","
			 " \"instrument\": \"%s\", \"unit\": \"ns\", \"status\": \"ok\","
			 " \"value\": %s, \"stats\": {%s, \"samples\": 3,"
			 " \"iterations_per_sample\": 10}, \"raw_samples\": [%s]}]}",
			 cores, run, instrument, value, stats, raw),
		-1);
	return doc;
}

#define STATS_OK                                                                       \
	"\"median\": 5, \"mean\": 5, \"stddev\": 1, \"min\": 4, \"max\": 6, \"q1\": 4.5, " \
	"\"q3\": 5.5, \"ci_low\": 4.5, \"ci_high\": 5.5, \"confidence\": 0.95"

/* Values that no writer gives, each refused in one line naming its field:
 * an unknown instrument, a count below zero, statistics out of order. */
static void test_parse_bad_values(void **state)
{
	static const struct {
		const char *run, *cores, *instrument, *value, *stats, *raw, *message;
	} cases[] = {
		{ "walltime", "2", "walltme", "5", STATS_OK, "5",
		  "h.json: benchmarks[0].instrument: unknown instrument \"walltme\" (expected "
		  "walltime, callgrind, perf, memory or observe)" },
		{ "cachegrind", "2", "walltime", "5", STATS_OK, "5",
		  "h.json: run.instrument: unknown instrument \"cachegrind\"" },
		{ "callgrind", "2", "callgrind", "5", STATS_OK, "5, -1, 6",
		  "h.json: benchmarks[0].raw_samples[1]: -1 is below zero, which a count "
		  "(callgrind) cannot be" },
		{ "memory", "2", "memory", "-5", STATS_OK, "5",
		  "h.json: benchmarks[0].value: -5 is below zero, which a count (memory) cannot be" },
		{ "perf", "2", "perf", "5",
		  "\"median\": -1, \"mean\": -1, \"stddev\": 0, \"min\": -1, \"max\": -1, \"q1\": -1, "
		  "\"q3\": -1",
		  "5", "h.json: benchmarks[0].stats.min: -1 is below zero, which a count (perf)" },
		{ "walltime", "2", "walltime", "5",
		  "\"median\": 5, \"mean\": 5, \"stddev\": 1, \"min\": 9, \"max\": 2, \"q1\": 4.5, "
		  "\"q3\": 5.5",
		  "5", "h.json: benchmarks[0].stats.min: 9 is above q1 4.5 (statistics out of order)" },
		{ "walltime", "2", "walltime", "5",
		  "\"median\": 5, \"mean\": 5, \"stddev\": 1, \"min\": 9, \"max\": 2",
		  "5", "h.json: benchmarks[0].stats.q1: missing" },
		{ "walltime", "2", "walltime", "5",
		  "\"median\": 5, \"mean\": 5, \"stddev\": 1, \"min\": null, \"max\": 2, \"q1\": null,"
		  " \"q3\": null",
		  "5", "h.json: benchmarks[0].stats.median: 5 is above max 2" },
		{ "walltime", "2", "walltime", "5",
		  "\"median\": 5, \"mean\": 7, \"stddev\": 1, \"min\": 4, \"max\": 6, \"q1\": 4.5, "
		  "\"q3\": 5.5",
		  "5", "h.json: benchmarks[0].stats.mean: 7 is outside min 4 .. max 6" },
		{ "walltime", "2", "walltime", "5",
		  "\"median\": 5, \"mean\": 5, \"stddev\": -1, \"min\": 4, \"max\": 6, \"q1\": 4.5, "
		  "\"q3\": 5.5",
		  "5", "h.json: benchmarks[0].stats.stddev: -1 is below zero" },
		{ "walltime", "2", "walltime", "5",
		  "\"median\": 5, \"mean\": 5, \"stddev\": 1, \"min\": 4, \"max\": 6, \"q1\": 4.5, "
		  "\"q3\": 5.5, \"ci_low\": 6, \"ci_high\": 4",
		  "5", "h.json: benchmarks[0].stats.ci_low: 6 is above ci_high 4" },
		{ "walltime", "2", "walltime", "5",
		  "\"median\": 5, \"mean\": 5, \"stddev\": 1, \"min\": 4, \"max\": 6, \"q1\": 4.5, "
		  "\"q3\": 5.5, \"confidence\": 95",
		  "5", "h.json: benchmarks[0].stats.confidence: 95 is not between 0 and 1" },
		{ "walltime", "-3", "walltime", "5", STATS_OK, "5",
		  "h.json: environment.cores: -3 is not a count of CPUs (null when unknown)" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct results_file *f = (struct results_file *)0x1;
		char *err = NULL;
		char *doc = value_doc(cases[i].run, cases[i].cores, cases[i].instrument,
				      cases[i].value, cases[i].stats, cases[i].raw);
		int r = results_parse(doc, strlen(doc), "h.json", &f, &err);

		if (r != -EINVAL || !err ||
		    strncmp(err, cases[i].message, strlen(cases[i].message)))
			fail_msg("case %zu: r=%d, error '%s', expected '%s'", i, r,
				 err ? err : "(none)", cases[i].message);
		assert_null(strchr(err, '\n'));
		assert_ptr_equal(f, (struct results_file *)0x1);
		free(err);
		free(doc);
	}
}

/* What writers do give is read: a timed sample below zero (calibration
 * subtracted from a call shorter than its noise), statistics equal up to
 * the rounding of ten digits, figures that are null, every instrument. */
static void test_parse_good_values(void **state)
{
	static const struct {
		const char *run, *instrument, *value, *stats, *raw;
	} cases[] = {
		{ "walltime", "walltime", "0",
		  "\"median\": -0.5, \"mean\": -0.2, \"stddev\": 1, \"min\": -2, \"max\": 3, "
		  "\"q1\": -1, \"q3\": 1",
		  "-2, -0.5, 3" },
		{ "observe", "observe", "1", STATS_OK ", \"uncertainty\": 0", "-3, 5" },
		{ "callgrind", "callgrind", "0",
		  "\"median\": 0, \"mean\": 0, \"stddev\": 0, \"min\": 0, \"max\": 0, \"q1\": 0, "
		  "\"q3\": 0",
		  "0, 0" },
		{ "perf", "perf", "5", STATS_OK, "5" },
		{ "memory", "memory", "5", STATS_OK, "" },
		{ "walltime", "walltime", "1.000000001",
		  "\"median\": 1.000000001, \"mean\": 1.000000001, \"stddev\": 0, \"min\": 1, "
		  "\"max\": 1.000000000999, \"q1\": 1, \"q3\": 1.000000001",
		  "1" },
		{ "walltime", "walltime", "5",
		  "\"median\": 5, \"mean\": null, \"stddev\": null, \"min\": 4, \"max\": 6, "
		  "\"q1\": null, \"q3\": null, \"ci_low\": null, \"ci_high\": null",
		  "5" },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct results_file *f = NULL;
		char *err = NULL;
		char *doc = value_doc(cases[i].run, "null", cases[i].instrument, cases[i].value,
				      cases[i].stats, cases[i].raw);

		if (results_parse(doc, strlen(doc), "g.json", &f, &err) != 0)
			fail_msg("case %zu: refused: %s", i, err ? err : "(no message)");
		assert_string_equal(f->benches[0].instrument, cases[i].instrument);
		assert_int_equal(f->env.cores, -1);
		results_free(f);
		free(doc);
	}
}

static void test_load_missing_file(void **state)
{
	struct results_file *f = NULL;
	char *err = NULL;

	(void)state;
	assert_int_equal(results_load("/nonexistent/base.json", &f, &err), -ENOENT);
	assert_non_null(err);
	assert_true(!strncmp(err, "/nonexistent/base.json: no such file", 36));
	free(err);
}

/* ---- verdicts -------------------------------------------------------------- */

static void test_each_verdict(void **state)
{
	struct results_file *base = file_new(), *head = file_new();
	struct results_compare_opts o = opts_with(0.05);
	struct results_comparison c;
	struct results_bench *b;

	(void)state;
	add_bench(base, "same", "callgrind", 1000);
	add_bench(head, "same", "callgrind", 1010);
	add_bench(base, "slower", "callgrind", 1000);
	add_bench(head, "slower", "callgrind", 1200);
	add_bench(base, "faster", "callgrind", 1000);
	add_bench(head, "faster", "callgrind", 800);
	add_bench(base, "crashes", "callgrind", 1000);
	b = add_bench(head, "crashes", "callgrind", NAN);
	b->ok = false;
	b->has_stats = false;
	b->error = strdup("killed by SIGSEGV at 0x0\n#0 0x1 f");
	add_bench(head, "added", "callgrind", 5);
	add_bench(base, "removed", "callgrind", 5);
	b = add_bench(base, "fixed", "callgrind", NAN);
	b->ok = false;
	add_bench(head, "fixed", "callgrind", 7);
	/* Same name, another instrument: another pair. */
	add_bench(head, "same", "walltime", 10);

	assert_int_equal(results_compare(base, head, &o, &c), 0);
	assert_int_equal(c.n, 8);
	assert_int_equal(pair(&c, "same")->verdict, RESULTS_UNCHANGED);
	assert_true(pair(&c, "same")->significant);
	assert_int_equal(pair(&c, "slower")->verdict, RESULTS_REGRESSED);
	assert_int_equal(pair(&c, "faster")->verdict, RESULTS_IMPROVED);
	assert_int_equal(pair(&c, "crashes")->verdict, RESULTS_FAILED);
	assert_int_equal(pair(&c, "added")->verdict, RESULTS_NEW);
	assert_int_equal(pair(&c, "removed")->verdict, RESULTS_MISSING);
	assert_int_equal(pair(&c, "fixed")->verdict, RESULTS_NEW);
	assert_string_equal(pair(&c, "fixed")->note, "failed in base");
	assert_int_equal(c.counts[RESULTS_UNCHANGED], 1);
	assert_int_equal(c.counts[RESULTS_NEW], 3); /* added, fixed, same (walltime) */
	assert_int_equal(c.counts[RESULTS_REGRESSED], 1);

	/* Failures first, then the largest change (|log ratio|: 0.8 beats 1.2). */
	assert_int_equal(c.pairs[0].verdict, RESULTS_FAILED);
	assert_string_equal(c.pairs[1].name, "faster");
	assert_string_equal(c.pairs[2].name, "slower");
	assert_string_equal(c.pairs[3].name, "same");

	/* The failure is a warning with the first line of its error. */
	bool found = false;

	for (size_t i = 0; i < c.nwarnings; i++)
		found |= !strcmp(c.warnings[i], "crashes failed in head: killed by SIGSEGV at 0x0");
	assert_true(found);
	results_comparison_clear(&c);
	results_free(base);
	results_free(head);
}

/* Exact instruments: the threshold alone decides, both ways. */
static void test_threshold(void **state)
{
	static const struct {
		double head, threshold;
		enum results_verdict v;
	} cases[] = {
		{ 1030, 0.05, RESULTS_UNCHANGED }, { 1060, 0.05, RESULTS_REGRESSED },
		{ 940, 0.05, RESULTS_IMPROVED },   { 1060, 0.10, RESULTS_UNCHANGED },
		{ 1001, 0.0, RESULTS_REGRESSED },  { 1000, 0.0, RESULTS_UNCHANGED },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct results_file *base = file_new(), *head = file_new();
		struct results_compare_opts o = opts_with(cases[i].threshold);
		struct results_comparison c;

		add_bench(base, "x", "callgrind", 1000);
		add_bench(head, "x", "callgrind", cases[i].head);
		assert_int_equal(results_compare(base, head, &o, &c), 0);
		if (c.pairs[0].verdict != cases[i].v)
			fail_msg("case %zu: verdict %s, expected %s", i,
				 results_verdict_name(c.pairs[0].verdict),
				 results_verdict_name(cases[i].v));
		results_comparison_clear(&c);
		results_free(base);
		results_free(head);
	}
}

/* Walltime: noise without a change is no regression; with no threshold its
 * interval spans both sides of it, so it cannot be told from a change
 * (inconclusive), and within a threshold wider than the interval it is
 * unchanged. */
static void test_noise_is_unchanged(void **state)
{
	struct results_file *base = file_new(), *head = file_new();
	struct results_compare_opts o = opts_with(0.0);
	struct results_comparison c;

	(void)state;
	/* 20% relative noise, same distribution, different draws. */
	set_samples(add_bench(base, "noisy", "walltime", 0), 100, 1000, 200, 11);
	set_samples(add_bench(head, "noisy", "walltime", 0), 100, 1000, 200, 12);
	assert_int_equal(results_compare(base, head, &o, &c), 0);
	assert_true(c.pairs[0].has_interval);
	assert_true(c.pairs[0].ratio_low < 1.0 && c.pairs[0].ratio_high > 1.0);
	assert_false(c.pairs[0].significant);
	assert_int_equal(c.pairs[0].verdict, RESULTS_INCONCLUSIVE);
	assert_false(c.gate_failed);
	assert_true(c.pairs[0].ratio != 1.0); /* the medians do differ */
	results_comparison_clear(&c);

	o = opts_with(0.5);
	assert_int_equal(results_compare(base, head, &o, &c), 0);
	assert_true(c.pairs[0].ratio_low > 0.5 && c.pairs[0].ratio_high < 1.5);
	assert_int_equal(c.pairs[0].verdict, RESULTS_UNCHANGED);
	assert_null(c.pairs[0].note);
	/* The one note: the smallest change the run could have seen, the
	 * interval's larger half-width, here below the threshold. */
	assert_int_equal(c.nnotes, 1);
	assert_true(isfinite(c.pairs[0].resolution));
	assert_true(fabs(c.pairs[0].resolution -
			 fmax(c.pairs[0].ratio_high / c.pairs[0].ratio - 1.0,
			      1.0 - c.pairs[0].ratio_low / c.pairs[0].ratio)) < 1e-12);
	assert_true(c.pairs[0].resolution > 0.0 && c.pairs[0].resolution < 0.5);
	assert_non_null(strstr(c.notes[0], "the smallest change this run could have seen (the "
					   "half-width of the 99% interval): "));
	assert_non_null(strstr(c.notes[0], "; the threshold is 50%"));
	assert_int_equal(c.nwarnings, 0);
	results_comparison_clear(&c);
	results_free(base);
	results_free(head);
}

/* Walltime: a 10% shift with tight samples is a regression. */
static void test_tight_shift_regresses(void **state)
{
	struct results_file *base = file_new(), *head = file_new();
	struct results_compare_opts o = opts_with(0.05);
	struct results_comparison c;

	(void)state;
	set_samples(add_bench(base, "tight", "walltime", 0), 100, 1000, 5, 21);
	set_samples(add_bench(head, "tight", "walltime", 0), 100, 1100, 5, 22);
	assert_int_equal(results_compare(base, head, &o, &c), 0);
	assert_true(c.pairs[0].significant);
	assert_true(c.pairs[0].ratio_low > 1.05 && c.pairs[0].ratio_high < 1.15);
	assert_int_equal(c.pairs[0].verdict, RESULTS_REGRESSED);
	results_comparison_clear(&c);
	results_free(base);
	results_free(head);
}

/* Walltime: the same 10% shift beyond the threshold but buried in noise of
 * few samples is not significant, and its interval spans both -5% and +5%:
 * inconclusive, which does not fail the gate and says why; an exact
 * instrument with the same medians would regress. */
static void test_noisy_shift_needs_significance(void **state)
{
	struct results_file *base = file_new(), *head = file_new();
	struct results_compare_opts o = opts_with(0.05);
	struct results_comparison c;

	(void)state;
	set_samples(add_bench(base, "noisy", "walltime", 0), 8, 1000, 400, 31);
	set_samples(add_bench(head, "noisy", "walltime", 0), 8, 1000, 400, 32);
	/* Force the medians 10% apart while keeping the spread. */
	for (size_t i = 0; i < head->benches[0].nraw; i++)
		head->benches[0].raw[i] *= 1.1 * base->benches[0].value / head->benches[0].value;
	head->benches[0].value = 1.1 * base->benches[0].value;
	assert_int_equal(results_compare(base, head, &o, &c), 0);
	assert_true(fabs(c.pairs[0].ratio - 1.1) < 1e-9);
	assert_false(c.pairs[0].significant);
	assert_true(c.pairs[0].ratio_low < 0.95 && c.pairs[0].ratio_high > 1.05);
	assert_int_equal(c.pairs[0].verdict, RESULTS_INCONCLUSIVE);
	assert_string_equal(c.pairs[0].note,
			    "the interval spans both -threshold and +threshold: too wide to tell");
	assert_int_equal(c.counts[RESULTS_INCONCLUSIVE], 1);
	assert_int_equal(c.counts[RESULTS_UNCHANGED], 0);
	assert_false(c.gate_failed);
	assert_string_equal(results_verdict_name(RESULTS_INCONCLUSIVE), "inconclusive");
	assert_int_equal(c.nnotes, 3);
	assert_non_null(strstr(c.notes[0], "1 benchmark is inconclusive: its interval of the "
					   "ratio spans both -5% and +5%"));
	/* Its interval is wider than the threshold: a 5 % change could not
	 * have shown, and a note says so. */
	assert_true(c.pairs[0].resolution > 0.05);
	assert_non_null(strstr(c.notes[1], "the smallest change this run could have seen"));
	assert_non_null(strstr(c.notes[2],
			       "1 benchmark could not have shown a change of the threshold (5%)"));
	assert_non_null(strstr(c.notes[0], "`benchtrap compare BASE_BINARY HEAD_BINARY`"));

	char line[512];

	report_compare_summary(&c, line, sizeof(line));
	assert_string_equal(line, "cannot tell whether this change affects performance: 1 of 1 "
				  "benchmark is too noisy to judge (`benchtrap compare "
				  "BASE_BINARY HEAD_BINARY` measures both builds side by side)");
	results_comparison_clear(&c);
	results_free(base);
	results_free(head);
}

/* No raw samples: the intervals of the medians decide significance. */
static void test_fallback_intervals(void **state)
{
	struct results_file *base = file_new(), *head = file_new();
	struct results_compare_opts o = opts_with(0.05);
	struct results_comparison c;
	struct results_bench *b, *h;

	(void)state;
	b = add_bench(base, "x", "walltime", 100);
	h = add_bench(head, "x", "walltime", 120);
	b->stats.ci_low = 99, b->stats.ci_high = 101;
	h->stats.ci_low = 102, h->stats.ci_high = 125;
	assert_int_equal(results_compare(base, head, &o, &c), 0);
	assert_int_equal(c.pairs[0].verdict, RESULTS_REGRESSED);
	assert_false(c.pairs[0].has_interval);
	assert_non_null(c.pairs[0].note);
	results_comparison_clear(&c);

	h->stats.ci_low = 95; /* overlaps: not significant */
	assert_int_equal(results_compare(base, head, &o, &c), 0);
	assert_int_equal(c.pairs[0].verdict, RESULTS_UNCHANGED);
	results_comparison_clear(&c);
	results_free(base);
	results_free(head);
}

/* A benchmark that measured no time is not judged, and is a warning. */
static void test_no_time(void **state)
{
	struct results_file *base = file_new(), *head = file_new();
	struct results_comparison c;
	struct results_bench *h;

	(void)state;
	add_bench(base, "empty", "walltime", 0.2);
	h = add_bench(head, "empty", "walltime", 5);
	h->no_time = true;
	assert_int_equal(results_compare(base, head, NULL, &c), 0);
	assert_int_equal(c.pairs[0].verdict, RESULTS_UNCHANGED);
	assert_false(c.pairs[0].has_ratio);
	assert_false(c.has_geomean);
	assert_int_equal(c.nwarnings, 1);
	assert_non_null(strstr(c.warnings[0], "empty measured no execution time in head"));
	results_comparison_clear(&c);
	results_free(base);
	results_free(head);
}

/* ---- geometric mean --------------------------------------------------------- */

static void test_geomean(void **state)
{
	struct results_file *base = file_new(), *head = file_new();
	struct results_comparison c;
	double g;

	(void)state;
	assert_int_equal(stats_geomean((const double[]){ 2.0, 8.0 }, 2, &g), 0);
	assert_true(fabs(g - 4.0) < 1e-12);
	assert_int_equal(stats_geomean((const double[]){ 1.1, 1.0 / 1.1 }, 2, &g), 0);
	assert_true(fabs(g - 1.0) < 1e-12);
	assert_int_equal(stats_geomean((const double[]){ 1.0, 0.0 }, 2, &g), -EDOM);
	assert_int_equal(stats_geomean((const double[]){ 1.0, -1.0 }, 2, &g), -EDOM);
	assert_int_equal(stats_geomean(NULL, 0, &g), -EINVAL);

	/* +10% and +21% (1.1 squared) average to 1.1^1.5; the failed one and
	 * the new one do not count. */
	add_bench(base, "a", "callgrind", 100);
	add_bench(head, "a", "callgrind", 110);
	add_bench(base, "b", "callgrind", 100);
	add_bench(head, "b", "callgrind", 121);
	add_bench(head, "c", "callgrind", 1);
	assert_int_equal(results_compare(base, head, NULL, &c), 0);
	assert_true(c.has_geomean);
	assert_int_equal(c.ngeomean, 2);
	assert_true(fabs(c.geomean - pow(1.1, 1.5)) < 1e-12);
	results_comparison_clear(&c);
	results_free(base);
	results_free(head);
}

/* The headline without a geometric mean: benchmarks in both files whose
 * change cannot be judged are not "measured in neither". */
static void test_summary_without_ratio(void **state)
{
	struct results_file *base = file_new(), *head = file_new();
	struct results_comparison c;
	struct results_bench *h;
	char line[512];

	(void)state;
	add_bench(base, "empty", "walltime", 0.2);
	h = add_bench(head, "empty", "walltime", 5);
	h->no_time = true;
	add_bench(base, "gone", "walltime", 3);
	assert_int_equal(results_compare(base, head, NULL, &c), 0);
	assert_false(c.has_geomean);
	assert_int_equal(c.nboth, 1);
	report_compare_summary(&c, line, sizeof(line));
	assert_string_equal(line, "no change could be judged in the 1 benchmark found in both "
				  "base and head (each one's note says why)");
	results_comparison_clear(&c);
	results_free(base);
	results_free(head);

	/* Nothing in common: the headline says so. */
	base = file_new();
	head = file_new();
	add_bench(base, "a", "walltime", 3);
	add_bench(head, "b", "walltime", 3);
	assert_int_equal(results_compare(base, head, NULL, &c), 0);
	assert_int_equal(c.nboth, 0);
	report_compare_summary(&c, line, sizeof(line));
	assert_string_equal(line, "no benchmark was measured in both base and head");
	results_comparison_clear(&c);
	results_free(base);
	results_free(head);
}

/* The headline agrees with the verdicts: no direction when nothing changed
 * beyond the threshold, the same binary measured twice said so, and both
 * directions when both happened. Exact counts, so no noise decides. */
static void summary_of(const double *b, const double *h, size_t n, const char *build_id,
		       char *line, size_t size)
{
	struct results_file *base = file_new(), *head = file_new();
	struct results_comparison c;
	char name[16];

	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%zu", i);
		add_bench(base, name, "callgrind", b[i]);
		add_bench(head, name, "callgrind", h[i]);
	}
	if (build_id) {
		base->env.build_id = strdup(build_id);
		head->env.build_id = strdup(build_id);
	}
	assert_int_equal(results_compare(base, head, NULL, &c), 0);
	report_compare_summary(&c, line, size);
	results_comparison_clear(&c);
	results_free(base);
	results_free(head);
}

static void test_summary_agrees(void **state)
{
	char line[512];

	(void)state;
	/* +4% and +3%, both within 5%: no degradation announced. */
	summary_of((const double[]){ 100, 100 }, (const double[]){ 104, 103 }, 2, NULL, line,
		   sizeof(line));
	assert_string_equal(line, "no benchmark changed beyond the threshold (geometric mean "
				  "+3.5% of 2 benchmarks)");
	/* The same binary twice: a regression is noise, and said to be. */
	summary_of((const double[]){ 100, 100 }, (const double[]){ 110, 101 }, 2, "abc", line,
		   sizeof(line));
	assert_string_equal(line, "the same binary was measured twice: every change is noise "
				  "(geometric mean +5.4% of 2 benchmarks)");
	/* One up, one down. */
	summary_of((const double[]){ 100, 100 }, (const double[]){ 120, 80 }, 2, NULL, line,
		   sizeof(line));
	assert_string_equal(line, "this change degrades 1 benchmark and improves 1 beyond the "
				  "threshold (geometric mean -2.0% of 2 benchmarks)");
	/* One regressed, the mean of all down. */
	summary_of((const double[]){ 100, 100, 100, 100 }, (const double[]){ 110, 96, 96, 96 }, 4,
		   NULL, line, sizeof(line));
	assert_string_equal(line, "this change degrades 1 benchmark beyond the threshold "
				  "(geometric mean -0.7% of 4 benchmarks)");
	/* Regressed and up, improved and down: as before. */
	summary_of((const double[]){ 100, 100 }, (const double[]){ 110, 101 }, 2, NULL, line,
		   sizeof(line));
	assert_string_equal(line, "this change degrades performance by 5.4% (geometric mean of 2 "
				  "benchmarks)");
	summary_of((const double[]){ 100, 100 }, (const double[]){ 80, 100 }, 2, NULL, line,
		   sizeof(line));
	assert_string_equal(line, "this change improves performance by 10.6% (geometric mean of 2 "
				  "benchmarks)");
	summary_of((const double[]){ 100 }, (const double[]){ 100 }, 1, NULL, line, sizeof(line));
	assert_string_equal(line, "this change does not change performance measurably (geometric "
				  "mean of 1 benchmark)");
}

/* ---- the interval of a ratio --------------------------------------------------- */

static void test_bootstrap_ratio(void **state)
{
	double base[200], head[200], lo1, hi1, lo2, hi2;
	struct stats_options o = STATS_OPTIONS_DEFAULT;

	(void)state;
	lcg_state = 5;
	for (size_t i = 0; i < 200; i++) {
		base[i] = test_normalish(100, 2);
		head[i] = test_normalish(150, 3);
	}
	qsort(base, 200, sizeof(double), cmp_double);
	qsort(head, 200, sizeof(double), cmp_double);
	assert_int_equal(stats_bootstrap_ratio(base, 200, head, 200, &o, &lo1, &hi1), 0);
	assert_true(lo1 < 1.5 && hi1 > 1.5 && lo1 > 1.45 && hi1 < 1.55);
	/* The same seed, the same interval, bit for bit. */
	assert_int_equal(stats_bootstrap_ratio(base, 200, head, 200, &o, &lo2, &hi2), 0);
	assert_true(lo1 == lo2 && hi1 == hi2);
	/* A base that reaches zero has no ratio. */
	base[0] = -1.0;
	for (size_t i = 1; i < 200; i++)
		base[i] = 0.0;
	assert_int_equal(stats_bootstrap_ratio(base, 200, head, 200, &o, &lo2, &hi2), -EDOM);
	assert_int_equal(stats_bootstrap_ratio(base, 0, head, 200, &o, &lo2, &hi2), -EINVAL);
}

/* ---- environments --------------------------------------------------------------- */

static void test_env_diff(void **state)
{
	struct results_env a = { .cpu = "A",
				 .kernel = "k",
				 .libc = "glibc 2.36",
				 .cores = 2,
				 .build_id = "1",
				 .hostname = "h1" };
	struct results_env b = a;
	char *d = (char *)0x1;

	(void)state;
	b.build_id = "2";
	b.hostname = "h2";
	assert_int_equal(results_env_diff(&a, &b, &d), 0);
	assert_null(d); /* build_id and hostname are expected to differ */
	b.cpu = "B";
	b.kernel = NULL;
	b.cores = 4;
	assert_int_equal(results_env_diff(&a, &b, &d), 0);
	assert_non_null(d);
	assert_string_equal(d, "cpu ('A' vs 'B'), kernel ('k' vs 'unknown'), cores ('2' vs '4')");
	free(d);
}

/* ---- shards ----------------------------------------------------------------------- */

static void test_shard_hash(void **state)
{
	(void)state;
	/* FNV-1a 64 reference values (the offset basis, and "a", "foobar"). */
	assert_true(results_fnv1a64("") == UINT64_C(0xcbf29ce484222325));
	assert_true(results_fnv1a64("a") == UINT64_C(0xaf63dc4c8601ec8c));
	assert_true(results_fnv1a64("foobar") == UINT64_C(0x85944171f73967e8));
	/* Pinned: a name's shard never changes between versions. */
	assert_int_equal(results_shard_of("fib[20]", 3), results_fnv1a64("fib[20]") % 3);
	assert_int_equal(results_shard_of("anything", 1), 0);
}

static void test_shard_partition(void **state)
{
	char names[64][32];
	unsigned count[8];

	(void)state;
	for (size_t i = 0; i < 64; i++)
		snprintf(names[i], sizeof(names[i]), "bench_%zu[%zu]", i, i * 7);
	for (unsigned n = 1; n <= 8; n++) {
		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < 64; i++) {
			unsigned k = results_shard_of(names[i], n);

			assert_true(k < n);
			/* Stable: the same answer every time. */
			assert_int_equal(results_shard_of(names[i], n), k);
			count[k]++;
		}
		/* Every name is in exactly one part; no part is left empty
		 * with 64 names (a poor hash would pile them up). */
		unsigned total = 0;

		for (unsigned k = 0; k < n; k++) {
			total += count[k];
			assert_true(count[k] > 0);
		}
		assert_int_equal(total, 64);
	}
}

/* ---- paired comparisons (compare BASE_BINARY HEAD_BINARY) ----------------- */

/*
 * Pairs taken while the host's speed doubles halfway: both sides' medians
 * fall between the two speeds at random, and apart by as much as 10%,
 * while every pair's ratio is 1 within the sample noise. Unpaired the
 * pair would need the threshold's luck; paired it is unchanged, and a 5%
 * change under the same noise is found.
 */
static void paired_files(double shift, struct results_file **ret_base,
			 struct results_file **ret_head)
{
	struct results_file *base = file_new(), *head = file_new();
	struct results_bench *b = add_bench(base, "work", "walltime", 0);
	struct results_bench *h = add_bench(head, "work", "walltime", 0);
	size_t n = 200;

	b->raw = malloc(n * sizeof(*b->raw));
	h->raw = malloc(n * sizeof(*h->raw));
	h->pair_ratios = malloc(n * sizeof(*h->pair_ratios));
	assert_true(b->raw && h->raw && h->pair_ratios);
	lcg_state = 31;
	for (size_t i = 0; i < n; i++) {
		double host = i < n / 2 ? 1.0 : 2.0;

		b->raw[i] = 1000 * host * test_normalish(1.0, 0.03);
		h->raw[i] = 1000 * host * (1.0 + shift) * test_normalish(1.0, 0.03);
		h->pair_ratios[i] = h->raw[i] / b->raw[i];
	}
	/* The host was fast for more of base's samples than of head's. */
	for (size_t i = 0; i < 10; i++)
		b->raw[n / 2 + i] /= 2;
	b->nraw = h->nraw = h->npairs = n;
	double copy[200];

	memcpy(copy, b->raw, sizeof(copy));
	b->value = b->stats.median = stats_median(copy, n);
	memcpy(copy, h->raw, sizeof(copy));
	h->value = h->stats.median = stats_median(copy, n);
	head->paired_base = base;
	*ret_base = base;
	*ret_head = head;
}

static void test_paired_host_doubles(void **state)
{
	struct results_file *base, *head;
	struct results_compare_opts o = opts_with(0.02);
	struct results_comparison c;

	(void)state;
	paired_files(0.0, &base, &head);
	/* The medians alone disagree by far more than the threshold. */
	assert_true(fabs(head->benches[0].value / base->benches[0].value - 1.0) > 0.05);
	assert_int_equal(results_compare(base, head, &o, &c), 0);
	assert_true(c.paired);
	assert_true(c.pairs[0].paired);
	assert_true(fabs(c.pairs[0].ratio - 1.0) < 0.01);
	assert_true(c.pairs[0].ratio_low < 1.0 && c.pairs[0].ratio_high > 1.0);
	assert_int_equal(c.pairs[0].verdict, RESULTS_UNCHANGED);
	assert_false(c.gate_failed);
	results_comparison_clear(&c);

	/* The same files judged as two runs: not paired. */
	head->paired_base = NULL;
	assert_int_equal(results_compare(base, head, &o, &c), 0);
	assert_false(c.paired);
	assert_false(c.pairs[0].paired);
	results_comparison_clear(&c);
	results_free(base);
	results_free(head);
}

static void test_paired_finds_5pct(void **state)
{
	struct results_file *base, *head;
	struct results_compare_opts o = opts_with(0.02);
	struct results_comparison c;

	(void)state;
	paired_files(0.05, &base, &head);
	assert_int_equal(results_compare(base, head, &o, &c), 0);
	assert_true(c.pairs[0].paired && c.pairs[0].significant);
	assert_true(c.pairs[0].ratio > 1.03 && c.pairs[0].ratio < 1.07);
	assert_true(c.pairs[0].ratio_low > 1.0);
	assert_int_equal(c.pairs[0].verdict, RESULTS_REGRESSED);
	assert_true(c.gate_failed);
	results_comparison_clear(&c);
	head->paired_base = NULL;
	results_free(base);
	results_free(head);
}

/* Too few usable ratios: judged on the two sides' samples, said in a note. */
static void test_paired_too_few(void **state)
{
	struct results_file *base, *head;
	struct results_compare_opts o = opts_with(0.02);
	struct results_comparison c;

	(void)state;
	paired_files(0.0, &base, &head);
	for (size_t i = 0; i < head->benches[0].npairs; i++)
		head->benches[0].pair_ratios[i] = i % 3 ? NAN : 1.0;
	assert_int_equal(results_compare(base, head, &o, &c), 0);
	assert_false(c.pairs[0].paired);
	assert_non_null(c.pairs[0].note);
	assert_non_null(strstr(c.pairs[0].note, "too few usable pairs"));
	results_comparison_clear(&c);
	head->paired_base = NULL;
	results_free(base);
	results_free(head);
}

/* A paired document: head's, with base's whole in paired.base and each
 * benchmark's ratios (null for a pair whose base measured no time). */
#define PAIRED_STATS                                                                      \
	"\"stats\": {\"median\": 1, \"mean\": 1, \"stddev\": 0, \"min\": 1, \"max\": 1, " \
	"\"q1\": 1, \"q3\": 1, \"samples\": 1, \"iterations_per_sample\": 1}"
static const char paired_doc[] =
	"{\"schema\": \"benchtrap-results/1\", \"environment\": {\"binary\": \"head\"},"
	" \"benchmarks\": [{\"name\": \"w\", \"instrument\": \"walltime\", \"unit\": \"ns\","
	"  \"value\": 105, \"status\": \"ok\", " PAIRED_STATS ","
	"  \"paired\": {\"pairs\": 4, \"ratios\": [1.05, 1.04, null, 1.06]}}],"
	" \"paired\": {\"base\": {\"schema\": \"benchtrap-results/1\","
	"  \"environment\": {\"binary\": \"base\"},"
	"  \"benchmarks\": [{\"name\": \"w\", \"instrument\": \"walltime\", \"unit\": \"ns\","
	"   \"value\": 100, \"status\": \"ok\", " PAIRED_STATS "}]}}}";

static void test_parse_paired(void **state)
{
	struct results_file *f = NULL;
	struct results_comparison c;
	char *err = NULL;

	(void)state;
	int pr = results_parse(paired_doc, strlen(paired_doc), "p.json", &f, &err);

	if (pr)
		fail_msg("%s", err);
	assert_non_null(f->paired_base);
	assert_string_equal(f->paired_base->env.binary, "base");
	assert_string_equal(f->paired_base->path, "p.json (paired.base)");
	assert_int_equal(f->benches[0].npairs, 4);
	assert_true(isnan(f->benches[0].pair_ratios[2]));
	assert_true(f->benches[0].pair_ratios[3] == 1.06);
	assert_int_equal(results_compare(f->paired_base, f, NULL, &c), 0);
	assert_true(c.paired && c.pairs[0].paired);
	assert_true(c.pairs[0].ratio == 1.05); /* the median of the three */
	results_comparison_clear(&c);
	results_free(f);

	/* Errors in the base side name it. */
	static const char bad[] = "{\"schema\": \"benchtrap-results/1\", \"environment\": {},"
				  " \"benchmarks\": [], \"paired\": {\"base\": {\"schema\":"
				  " \"benchtrap-results/1\", \"environment\": {}}}}";

	assert_int_equal(results_parse(bad, strlen(bad), "p.json", &f, &err), -EINVAL);
	assert_non_null(strstr(err, "p.json (paired.base): benchmarks: missing"));
	free(err);
	static const char bad2[] =
		"{\"schema\": \"benchtrap-results/1\", \"environment\": {},"
		" \"benchmarks\": ["
		"{\"name\": \"w\", \"instrument\": \"walltime\", \"unit\": \"ns\","
		" \"value\": 1, \"status\": \"ok\", " PAIRED_STATS ","
		" \"paired\": {\"ratios\": [\"x\"]}}]}";

	err = NULL;
	assert_int_equal(results_parse(bad2, strlen(bad2), "p.json", &f, &err), -EINVAL);
	assert_non_null(strstr(err, "paired"));
	free(err);
}

/* An exact count of nothing (a call that allocates no byte): none to some
 * regresses, some to none improves, none to none is unchanged, and both
 * come right after failures. */
static void test_exact_zero(void **state)
{
	struct results_file *base = file_new(), *head = file_new();
	struct results_compare_opts o = opts_with(0.05);
	struct results_comparison c;

	(void)state;
	add_bench(base, "grew", "memory", 4096);
	add_bench(head, "grew", "memory", 4100);
	add_bench(base, "now_allocates", "memory", 0);
	add_bench(head, "now_allocates", "memory", 24);
	add_bench(base, "no_longer", "memory", 24);
	add_bench(head, "no_longer", "memory", 0);
	add_bench(base, "never", "memory", 0);
	add_bench(head, "never", "memory", 0);
	assert_int_equal(results_compare(base, head, &o, &c), 0);
	assert_int_equal(pair(&c, "now_allocates")->verdict, RESULTS_REGRESSED);
	assert_false(pair(&c, "now_allocates")->has_ratio);
	assert_int_equal(pair(&c, "no_longer")->verdict, RESULTS_IMPROVED);
	assert_int_equal(pair(&c, "never")->verdict, RESULTS_UNCHANGED);
	assert_null(pair(&c, "never")->note);
	assert_int_equal(pair(&c, "grew")->verdict, RESULTS_UNCHANGED);
	assert_string_equal(c.pairs[0].name, "now_allocates");
	assert_string_equal(c.pairs[1].name, "no_longer");
	assert_true(c.gate_failed);
	results_comparison_clear(&c);
	results_free(base);
	results_free(head);
}

/* benchmark and process isolation measure alike (every benchmark starts
 * from a fresh process's state at main); shared does not. */
static void test_isolation_alike(void **state)
{
	(void)state;
	assert_true(results_isolation_alike("benchmark", "process"));
	assert_true(results_isolation_alike("process", "benchmark"));
	assert_true(results_isolation_alike("shared", "shared"));
	assert_true(results_isolation_alike(NULL, "shared"));
	assert_false(results_isolation_alike("benchmark", "shared"));
	assert_false(results_isolation_alike("shared", "process"));
	assert_false(results_isolation_alike("benchmark", "fork"));
}

/* ---- the Markdown report for a pull-request comment ---------------------- */

/* A comparison of n pairs made by hand: pair i's verdict is verdicts[i % nv],
 * its change +i/10 percent. One warning per failed pair. */
struct made {
	struct results_comparison c;
	struct results_bench *b;
	char (*names)[40];
	char **warnings;
};

static void made_init(struct made *m, size_t n, const enum results_verdict *verdicts, size_t nv)
{
	memset(m, 0, sizeof(*m));
	m->c.pairs = calloc(n, sizeof(*m->c.pairs));
	m->b = calloc(2 * n, sizeof(*m->b));
	m->names = calloc(n, sizeof(*m->names));
	m->warnings = calloc(n, sizeof(*m->warnings));
	assert_true(m->c.pairs && m->b && m->names && m->warnings);
	m->c.n = n;
	m->c.threshold = 0.05;
	m->c.confidence = 0.99;
	m->c.warnings = m->warnings;
	for (size_t i = 0; i < n; i++) {
		struct results_pair *p = &m->c.pairs[i];

		snprintf(m->names[i], sizeof(m->names[i]), "bench_%04zu", i);
		p->name = m->names[i];
		p->instrument = "walltime";
		p->unit = "ns";
		p->verdict = verdicts[i % nv];
		m->b[2 * i].ok = true;
		m->b[2 * i].value = 1000.0;
		m->b[2 * i + 1].ok = p->verdict != RESULTS_FAILED;
		m->b[2 * i + 1].value = 1000.0 + (double)i;
		p->base = &m->b[2 * i];
		p->head = &m->b[2 * i + 1];
		p->has_ratio = p->verdict != RESULTS_FAILED;
		p->ratio = 1.0 + (double)i / 1000.0;
		m->c.counts[p->verdict]++;
		if (p->verdict == RESULTS_FAILED)
			assert_true(asprintf(&m->warnings[m->c.nwarnings++],
					     "bench_%04zu failed in head: killed by SIGSEGV",
					     i) > 0);
	}
}

static void made_clear(struct made *m)
{
	for (size_t i = 0; i < m->c.nwarnings; i++)
		free(m->warnings[i]);
	free(m->warnings);
	free(m->c.pairs);
	free(m->b);
	free(m->names);
}

static char *markdown_of(const struct results_comparison *c, size_t max_bytes, const char *url,
			 int *ret, bool *ret_capped)
{
	struct report_markdown_limit lim = { max_bytes, url };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*ret = report_compare_markdown_limited(c, &lim, f, ret_capped);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* Template instances in the report: '<' escaped in Markdown rows (GitHub
 * drops an unknown tag), and two names of 3000 bytes that differ only at
 * their end stay whole and apart in Markdown and in JSON. */
static void test_report_names(void **state)
{
	struct results_file *base = file_new(), *head = file_new();
	struct results_comparison c;
	char a[3001], b[3001], *md, *esc;
	size_t len = 0;
	bool capped;
	int r;

	(void)state;
	memset(a, 'n', 3000);
	a[3000] = '\0';
	memcpy(a, "f<", 2);
	memcpy(b, a, sizeof(b));
	a[2998] = '1';
	b[2998] = '2';
	a[2999] = b[2999] = '>';
	add_bench(base, "long twice<long>(long)(9)", "callgrind", 100);
	add_bench(head, "long twice<long>(long)(9)", "callgrind", 200);
	add_bench(base, a, "callgrind", 100);
	add_bench(head, a, "callgrind", 100);
	add_bench(base, b, "callgrind", 100);
	add_bench(head, b, "callgrind", 100);
	assert_int_equal(results_compare(base, head, NULL, &c), 0);
	md = markdown_of(&c, 0, NULL, &r, &capped);
	assert_int_equal(r, 0);
	assert_non_null(strstr(md, "| long twice\\<long>(long)(9) |"));
	assert_null(strstr(md, "twice<"));
	/* Each long name whole, as "f\<nnn…n1>". */
	for (int k = 0; k < 2; k++) {
		assert_true(asprintf(&esc, "| f\\<%s |", (k ? b : a) + 2) > 0);
		if (!strstr(md, esc))
			fail_msg("long name %d not whole in the Markdown report", k);
		free(esc);
	}
	free(md);
	{
		char *buf = NULL;
		FILE *f = open_memstream(&buf, &len);

		assert_int_equal(report_compare_json(&c, "base.json", "head.json", f), 0);
		fclose(f);
		assert_non_null(strstr(buf, a));
		assert_non_null(strstr(buf, b));
		free(buf);
	}
	results_comparison_clear(&c);
	results_free(base);
	results_free(head);
}

static void test_changed_order(void **state)
{
	static const enum results_verdict v[] = { RESULTS_UNCHANGED, RESULTS_IMPROVED,
						  RESULTS_MISSING,   RESULTS_REGRESSED,
						  RESULTS_NEW,	     RESULTS_FAILED,
						  RESULTS_REGRESSED };
	struct made m;
	size_t order[14], k;

	(void)state;
	made_init(&m, 14, v, ARRAY_SIZE(v));
	k = report_compare_changed_order(&m.c, order);
	/* 14 pairs, 2 unchanged (0 and 7): failed, regressed, improved, new,
	 * missing, each in the comparison's order. */
	assert_int_equal(k, 12);
	const size_t want[] = { 5, 12, 3, 6, 10, 13, 1, 8, 4, 11, 2, 9 };
	for (size_t i = 0; i < k; i++)
		assert_int_equal(order[i], want[i]);
	made_clear(&m);
}

static void test_rows_fitting(void **state)
{
	const size_t sizes[] = { 10, 20, 30, 0, 5 };

	(void)state;
	assert_int_equal(report_rows_fitting(sizes, 5, 0), 0);
	assert_int_equal(report_rows_fitting(sizes, 5, 9), 0);
	assert_int_equal(report_rows_fitting(sizes, 5, 10), 1);
	assert_int_equal(report_rows_fitting(sizes, 5, 59), 2);
	/* A row of no size after one that fits rides along; the rows stay a
	 * prefix: 5 does not jump over 30. */
	assert_int_equal(report_rows_fitting(sizes, 5, 60), 4);
	assert_int_equal(report_rows_fitting(sizes, 5, 64), 4);
	assert_int_equal(report_rows_fitting(sizes, 5, 65), 5);
	assert_int_equal(report_rows_fitting(sizes, 0, 100), 0);
}

/* 1000 benchmarks: 100 regressed, 100 improved, 790 unchanged, 10 failed. */
static void test_markdown_limited(void **state)
{
	enum results_verdict v[100];
	struct made m;
	char *full, *md, *line;
	bool capped = true;
	size_t cut = 0;
	int r;

	(void)state;
	for (size_t i = 0; i < 100; i++)
		v[i] = i < 10 ? RESULTS_REGRESSED : i < 20 ? RESULTS_IMPROVED : RESULTS_UNCHANGED;
	v[99] = RESULTS_FAILED;
	made_init(&m, 1000, v, 100);

	/* No limit, and a limit the whole fits in: the report as it is. */
	full = markdown_of(&m.c, 0, NULL, &r, &capped);
	assert_int_equal(r, 0);
	assert_false(capped);
	md = markdown_of(&m.c, strlen(full), NULL, &r, &capped);
	assert_int_equal(r, 0);
	assert_false(capped);
	assert_string_equal(md, full);
	free(md);
	assert_non_null(strstr(full, "<details>"));

	/* One byte less: capped, within the limit, no <details>. */
	for (size_t max = strlen(full) - 1; max >= 2048; max = max * 2 / 3) {
		size_t shown = 0, left = 0, unchanged = 0;
		const char *p, *last_regressed = NULL, *first_improved = NULL;

		md = markdown_of(&m.c, max, "https://ci.example/run/7", &r, &capped);
		assert_int_equal(r, 0);
		assert_true(capped);
		assert_true(strlen(md) <= max);
		assert_null(strstr(md, "<details>"));
		assert_non_null(strstr(md, "### benchtrap: "));
		assert_non_null(strstr(md, "**100 regressed**, 100 improved, 790 unchanged, "
					   "**10 failed**"));
		/* Failed, then regressed, then improved; rows counted. */
		for (p = md; (p = strstr(p, "\n| bench_")); p++) {
			const char *eol = strchr(p + 1, '\n');

			shown++;
			if (strstr(p, "| **failed** |") && strstr(p, "| **failed** |") < eol)
				assert_null(last_regressed);
			if (strstr(p, "| **regressed** |") &&
			    strstr(p, "| **regressed** |") < eol) {
				assert_null(first_improved);
				last_regressed = p;
			}
			if (strstr(p, "| improved |") && strstr(p, "| improved |") < eol)
				first_improved = first_improved ? first_improved : p;
			assert_false(strstr(p, "| unchanged |") &&
				     strstr(p, "| unchanged |") < eol);
		}
		line = strstr(md, "not shown here** (at most ");
		assert_non_null(line);
		assert_non_null(strstr(line, "see [the full report](https://ci.example/run/7)."));
		while (line > md && line[-1] != '\n')
			line--;
		if (sscanf(line, "**%zu more changed benchmarks and %zu unchanged", &left,
			   &unchanged) == 2) {
			assert_int_equal(shown + left, 210);
			assert_int_equal(unchanged, 790);
			cut += shown > 0;
		} else {
			assert_int_equal(shown, 210);
		}
		free(md);
	}
	assert_true(cut > 0); /* some limit showed a part of the changed rows */

	/* Rows are cut before the warnings; the warnings are cut with a count. */
	md = markdown_of(&m.c, 2048, NULL, &r, &capped);
	assert_int_equal(r, 0);
	assert_true(strlen(md) <= 2048);
	assert_non_null(strstr(md, "**Warnings**"));
	assert_null(strstr(md, "see [the full report]"));
	free(md);

	/* Too small for the heading: nothing written. */
	md = markdown_of(&m.c, 200, NULL, &r, &capped);
	assert_int_equal(r, -ENOSPC);
	assert_string_equal(md, "");
	free(md);
	free(full);
	made_clear(&m);
}

/* ---- files of benchtrap observe ---------------------------------------------- */

/* What observe writes: a timed function, one selected by --skip and one
 * whose calls never returned; readers take the two statuses without a
 * figure, and the ± of the stops. */
static const char observe_doc[] =
	"{\"schema\": \"benchtrap-results/1\","
	" \"environment\": {\"build_id\": \"ab\"},"
	" \"run\": {\"instrument\": \"observe\", \"command\": [\"benchtrap\", \"observe\","
	"  \"--symbol\", \"f\", \"--\", \"./prog\"]},"
	" \"benchmarks\": ["
	"  {\"name\": \"f\", \"instrument\": \"observe\", \"unit\": \"ns\", \"value\": 5000,"
	"   \"status\": \"ok\", \"error\": null, \"no_time\": false,"
	"   \"stats\": {\"median\": 5000, \"mean\": 5100, \"stddev\": 300, \"min\": 4000,"
	"    \"max\": 9000, \"q1\": 4800, \"q3\": 5200, \"p10\": 4500, \"p90\": 6000,"
	"    \"samples\": 3, \"iterations_per_sample\": 1, \"uncertainty\": 250.5,"
	"    \"calibration\": 30000}, \"raw_samples\": [4000, 5000, 9000], \"calls\": 3},"
	"  {\"name\": \"setup\", \"instrument\": \"observe\", \"unit\": \"ns\", \"value\": null,"
	"   \"status\": \"skipped\", \"error\": null, \"stats\": null, \"raw_samples\": [],"
	"   \"diagnostics\": [\"skipped (--skip)\"]},"
	"  {\"name\": \"jumps\", \"instrument\": \"observe\", \"unit\": \"ns\", \"value\": null,"
	"   \"status\": \"no_calls\", \"error\": null, \"stats\": null}"
	" ]}";

/* A journal (report.h) reads as the document it stands for: the benchmark
 * of each whole line, a last line cut by a kill left out, marked partial;
 * a stopped run's "partial" in words; a bad "partial" refused. */
static void test_parse_journal(void **state)
{
	static const char journal[] =
		"{\"schema\":\"benchtrap-results/1\",\"environment\":{\"cpu\":\"c\"},"
		"\"run\":{\"instrument\":\"walltime\"},\"benchmarks\":[],\"journal\":true}\n"
		"{\"name\":\"a\",\"instrument\":\"walltime\",\"unit\":\"ns\",\"value\":5,"
		"\"status\":\"failed\",\"error\":\"x\"}\n"
		"{\"name\":\"b\",\"instrument\":\"walltime\",\"unit\":\"ns\",\"value\":7,"
		"\"status\":\"failed\",\"error\":\"y\"}\n"
		"{\"name\":\"c\",\"instrument\":\"wal";
	static const char stopped[] =
		"{\"schema\":\"benchtrap-results/1\",\"environment\":{},\"benchmarks\":[],"
		"\"partial\":{\"signal\":\"SIGINT\",\"selected\":131,\"measured\":11}}";
	static const char bad[] = "{\"schema\":\"benchtrap-results/1\",\"environment\":{},"
				  "\"benchmarks\":[],\"partial\":{\"selected\":\"many\"}}";
	struct results_file *f = NULL;
	char *err = NULL;

	(void)state;
	assert_int_equal(results_parse(journal, strlen(journal), "r.json.journal", &f, &err), 0);
	assert_int_equal(f->n, 2);
	assert_string_equal(f->benches[0].name, "a");
	assert_true(f->benches[1].value == 7.0);
	assert_string_equal(f->partial, "read from the journal of a run that did not finish: 2 "
					"benchmarks measured");
	results_free(f);
	assert_int_equal(results_parse(stopped, strlen(stopped), "s.json", &f, &err), 0);
	assert_string_equal(f->partial, "stopped by SIGINT: 11 of 131 benchmarks measured");
	results_free(f);
	assert_int_equal(results_parse(good_doc, strlen(good_doc), "g.json", &f, &err), 0);
	assert_null(f->partial);
	results_free(f);
	assert_int_equal(results_parse(bad, strlen(bad), "bad.json", &f, &err), -EINVAL);
	assert_non_null(strstr(err, "partial"));
	free(err);
}

static void test_parse_observe(void **state)
{
	struct results_file *f = NULL, *run = NULL;
	char *err = NULL;

	(void)state;
	assert_int_equal(results_parse(observe_doc, strlen(observe_doc), "o.json", &f, &err), 0);
	assert_null(err);
	assert_int_equal(f->n, 3);
	assert_true(results_file_observed(f));
	assert_int_equal(f->benches[0].status, RESULTS_STATUS_OK);
	assert_true(f->benches[0].ok);
	assert_true(f->benches[0].stats.uncertainty == 250.5);
	assert_int_equal(f->benches[0].stats.iterations_per_sample, 1);
	assert_int_equal(f->benches[0].nraw, 3);
	assert_int_equal(f->benches[1].status, RESULTS_STATUS_SKIPPED);
	assert_false(f->benches[1].ok);
	assert_true(isnan(f->benches[1].value));
	assert_false(f->benches[1].has_stats);
	assert_int_equal(f->benches[2].status, RESULTS_STATUS_NO_CALLS);
	assert_false(f->benches[2].ok);
	assert_string_equal(results_status_name(RESULTS_STATUS_NO_CALLS), "no_calls");
	assert_string_equal(results_status_name(RESULTS_STATUS_FAILED), "failed");

	/* A run's file is not observed; nor is its stats' ± there. */
	assert_int_equal(results_parse(good_doc, strlen(good_doc), "r.json", &run, NULL), 0);
	assert_false(results_file_observed(run));
	assert_int_equal(run->benches[1].status, RESULTS_STATUS_FAILED);
	assert_true(isnan(run->benches[0].stats.uncertainty));
	results_free(run);

	/* Without run.instrument, the benchmarks' instrument says it. */
	free(f->instrument);
	f->instrument = NULL;
	assert_true(results_file_observed(f));
	for (size_t i = 0; i < f->n; i++) {
		free(f->benches[i].instrument);
		f->benches[i].instrument = strdup("walltime");
	}
	assert_false(results_file_observed(f));
	results_free(f);

	/* A timed row still needs its figure. */
	static const char bad[] =
		"{\"schema\": \"benchtrap-results/1\", \"environment\": {}, \"benchmarks\": "
		"[{\"name\": \"f\", \"instrument\": \"observe\", \"unit\": \"ns\", \"value\": null,"
		" \"status\": \"ok\", \"stats\": null}]}";
	assert_int_equal(results_parse(bad, strlen(bad), "o.json", &f, &err), -EINVAL);
	assert_string_equal(err, "o.json: benchmarks[0].value: null, but status is \"ok\"");
	free(err);
}

/* An observed function in base and head. */
static struct results_bench *add_observed(struct results_file *f, const char *name, double centre,
					  double uncertainty, uint64_t seed)
{
	struct results_bench *b = add_bench(f, name, "observe", centre);

	free(b->unit);
	b->unit = strdup("ns");
	b->stats.uncertainty = uncertainty;
	set_samples(b, 400, centre, centre * 0.01, seed);
	b->stats.samples = 400;
	return b;
}

static struct results_bench *add_no_figure(struct results_file *f, const char *name,
					   enum results_status status)
{
	struct results_bench *b = add_bench(f, name, "observe", NAN);

	b->status = status;
	b->ok = false;
	b->has_stats = false;
	return b;
}

/*
 * Observed calls are timed, not counted: a change needs significance over
 * the calls and to exceed the two files' ± together; a function with no
 * call to time on one side is missing or new, and says which, on both
 * sides unchanged; none of them fails the gate.
 */
static void test_compare_observed(void **state)
{
	struct results_file *base = file_new(), *head = file_new();
	struct results_compare_opts o = opts_with(0.05);
	struct results_comparison c;
	struct results_bench *b;

	(void)state;
	assert_false(results_instrument_exact("observe"));
	assert_false(results_instrument_exact("walltime"));
	assert_true(results_instrument_exact("callgrind"));

	/* 20% slower, calls within 1% of their centre: significant. */
	add_observed(base, "slower", 10000, 100, 1);
	add_observed(head, "slower", 12000, 100, 2);
	/* The same 20%, but each file's ± is 1500 ns: within 3000. */
	add_observed(base, "within", 10000, 1500, 3);
	b = add_observed(head, "within", 12000, 1500, 4);
	b->stats.samples = 380; /* the program made other calls */
	/* Called in base only, in head only, in neither. */
	add_observed(base, "gone", 10000, 100, 5);
	add_no_figure(head, "gone", RESULTS_STATUS_NO_CALLS);
	add_no_figure(base, "came", RESULTS_STATUS_SKIPPED);
	add_observed(head, "came", 10000, 100, 6);
	add_no_figure(base, "never", RESULTS_STATUS_NO_CALLS);
	add_no_figure(head, "never", RESULTS_STATUS_NO_CALLS);
	/* One call on a side: no spread, not judged, however far apart. */
	b = add_observed(base, "once", 10000, 100, 9);
	b->nraw = 1;
	b = add_observed(head, "once", 20000, 100, 10);
	b->nraw = 1;
	/* Shorter than observe resolves in head. */
	add_observed(base, "tiny", 10000, 100, 7);
	b = add_observed(head, "tiny", 10000, 100, 8);
	b->no_time = true;

	assert_int_equal(results_compare(base, head, &o, &c), 0);
	assert_int_equal(c.n, 7);
	assert_int_equal(pair(&c, "slower")->verdict, RESULTS_REGRESSED);
	assert_true(pair(&c, "slower")->has_interval);
	assert_int_equal(pair(&c, "within")->verdict, RESULTS_UNCHANGED);
	assert_true(pair(&c, "within")->has_ratio);
	assert_false(pair(&c, "within")->significant);
	assert_non_null(strstr(pair(&c, "within")->note, "±"));
	assert_int_equal(pair(&c, "gone")->verdict, RESULTS_MISSING);
	assert_string_equal(pair(&c, "gone")->note, "no call returned in head");
	assert_int_equal(pair(&c, "came")->verdict, RESULTS_NEW);
	assert_string_equal(pair(&c, "came")->note, "skipped in base");
	assert_int_equal(pair(&c, "never")->verdict, RESULTS_UNCHANGED);
	assert_string_equal(pair(&c, "never")->note, "no figure in base nor head");
	assert_int_equal(pair(&c, "once")->verdict, RESULTS_UNCHANGED);
	assert_true(pair(&c, "once")->has_ratio);
	assert_false(pair(&c, "once")->significant);
	assert_string_equal(pair(&c, "once")->note,
			    "a single call in base or head: no spread to judge a change by");
	assert_int_equal(pair(&c, "tiny")->verdict, RESULTS_UNCHANGED);
	assert_false(pair(&c, "tiny")->has_ratio);
	assert_string_equal(pair(&c, "tiny")->note, "shorter than observe resolves: not compared");
	assert_true(has_warning(&c, "tiny is shorter than observe can resolve in head: its change "
				    "is not judged (`benchtrap run --symbol` times it without "
				    "stops)"));
	assert_int_equal(c.counts[RESULTS_FAILED], 0);
	bool said = false;

	for (size_t i = 0; i < c.nnotes; i++)
		said |= !strcmp(c.notes[i],
				"1 observed function was called a different number of "
				"times in base and head (within 400 vs 380): the "
				"programs' work differed, and each median is taken over "
				"another mix of calls");
	assert_true(said);
	/* slower regressed, and the build-ids differ: the gate fails on it alone. */
	assert_true(c.gate_failed);
	results_comparison_clear(&c);

	/* Without slower, nothing fails the gate. */
	free(base->benches[0].name);
	base->benches[0].name = strdup("slower_base");
	assert_int_equal(results_compare(base, head, &o, &c), 0);
	assert_false(c.gate_failed);
	results_comparison_clear(&c);
	results_free(base);
	results_free(head);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_bad_values),
		cmocka_unit_test(test_parse_good_values),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_load_missing_file),
		cmocka_unit_test(test_each_verdict),
		cmocka_unit_test(test_threshold),
		cmocka_unit_test(test_noise_is_unchanged),
		cmocka_unit_test(test_tight_shift_regresses),
		cmocka_unit_test(test_noisy_shift_needs_significance),
		cmocka_unit_test(test_fallback_intervals),
		cmocka_unit_test(test_no_time),
		cmocka_unit_test(test_geomean),
		cmocka_unit_test(test_summary_without_ratio),
		cmocka_unit_test(test_summary_agrees),
		cmocka_unit_test(test_bootstrap_ratio),
		cmocka_unit_test(test_env_diff),
		cmocka_unit_test(test_shard_hash),
		cmocka_unit_test(test_shard_partition),
		cmocka_unit_test(test_paired_host_doubles),
		cmocka_unit_test(test_paired_finds_5pct),
		cmocka_unit_test(test_paired_too_few),
		cmocka_unit_test(test_parse_paired),
		cmocka_unit_test(test_index),
		cmocka_unit_test(test_pairing_order_and_duplicates),
		cmocka_unit_test(test_merge_duplicates),
		cmocka_unit_test(test_merge_numbers),
		cmocka_unit_test(test_json_stream),
		cmocka_unit_test(test_parse_pieces),
		cmocka_unit_test(test_isolation_alike),
		cmocka_unit_test(test_exact_zero),
		cmocka_unit_test(test_changed_order),
		cmocka_unit_test(test_rows_fitting),
		cmocka_unit_test(test_markdown_limited),
		cmocka_unit_test(test_report_names),
		cmocka_unit_test(test_parse_observe),
		cmocka_unit_test(test_parse_journal),
		cmocka_unit_test(test_compare_observed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
