/* SPDX-License-Identifier: MIT */
/* The results history (controller/history): adding runs, reading series
 * back in order, forgetting, refusing what is not a history, and check. */
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

#include "history/history.h"

static char dir[] = "/tmp/benchtrap-test-history.XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[sizeof(dir) + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static char *path_in(const char *name)
{
	char *p;

	assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
	unlink(p);
	return p;
}

/* A results document of benchmarks "a" (value va) and "b" (vb; NAN:
 * failed), dated day d, under 'instrument'. */
static struct results_file *doc(const char *instrument, double va, double vb, int d)
{
	char text[4096], b[512];
	struct results_file *f = NULL;
	char *err = NULL;

	if (isnan(vb))
		snprintf(b, sizeof(b),
			 "{\"name\": \"b\", \"instrument\": \"%s\", \"unit\": \"ns\", \"value\": "
			 "null,"
			 " \"status\": \"failed\", \"error\": \"exited with status 3\", \"stats\": "
			 "null}",
			 instrument);
	else
		snprintf(
			b, sizeof(b),
			"{\"name\": \"b\", \"instrument\": \"%s\", \"unit\": \"ns\", \"value\": %g,"
			" \"status\": \"ok\", \"error\": null, \"stats\": {\"median\": %g, "
			"\"mean\": %g,"
			" \"stddev\": 0, \"min\": %g, \"max\": %g, \"q1\": %g, \"q3\": %g,"
			" \"samples\": 1, \"iterations_per_sample\": 1}}",
			instrument, vb, vb, vb, vb, vb, vb, vb);
	snprintf(text, sizeof(text),
		 "{\"schema\": \"benchtrap-results/1\", \"environment\": {\"cpu\": \"Test CPU\","
		 " \"cores\": 4, \"hostname\": \"h\", \"date\": \"2026-01-%02dT00:00:00Z\"},"
		 " \"run\": {\"instrument\": \"%s\"}, \"benchmarks\": ["
		 "{\"name\": \"a\", \"instrument\": \"%s\", \"unit\": \"ns\", \"value\": %g,"
		 " \"status\": \"ok\", \"error\": null, \"stats\": {\"median\": %g, \"mean\": %g,"
		 " \"stddev\": 1, \"min\": %g, \"max\": %g, \"q1\": %g, \"q3\": %g, \"samples\": 3,"
		 " \"iterations_per_sample\": 1, \"ci_low\": %g, \"ci_high\": %g}, "
		 "\"raw_samples\": [%g, %g, %g]}, %s]}",
		 d, instrument, instrument, va, va, va, va, va, va, va, va, va, va, va, va, b);
	if (results_parse(text, strlen(text), "t.json", &f, &err) != 0)
		fail_msg("%s", err);
	return f;
}

static void test_add_and_series(void **state)
{
	char *p = path_in("h.db"), *err = NULL;
	struct history *h = NULL;
	struct history_series *v = NULL;
	struct history_run *runs = NULL;
	size_t n = 0;
	bool added;
	/* Added out of order: day 3 first, then 1 and 2; commit dates order
	 * them where given. */
	const int days[] = { 3, 1, 2 };

	(void)state;
	assert_int_equal(history_open(p, false, &h, &err), -ENOENT);
	free(err);
	err = NULL;
	assert_int_equal(history_open(p, true, &h, &err), 0);
	for (int i = 0; i < 3; i++) {
		struct results_file *f = doc("walltime", 100 + days[i], i == 1 ? NAN : 50, days[i]);
		char commit[8];
		struct history_context c = { .commit = commit, .branch = "main" };

		snprintf(commit, sizeof(commit), "c%d", days[i]);
		assert_int_equal(history_add(h, f, &c, &added, &err), 0);
		assert_true(added);
		/* The same bytes again add nothing. */
		assert_int_equal(history_add(h, f, &c, &added, &err), 0);
		assert_false(added);
		results_free(f);
	}
	assert_int_equal(history_series(h, NULL, &v, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].name, "a");
	assert_string_equal(v[0].machine, "Test CPU, 4 cores");
	assert_int_equal(v[0].n, 3);
	/* In the runs' dates' order. */
	assert_string_equal(v[0].points[0].commit, "c1");
	assert_string_equal(v[0].points[1].commit, "c2");
	assert_string_equal(v[0].points[2].commit, "c3");
	assert_true(v[0].points[0].value == 101);
	assert_true(v[0].points[0].ci_low == 101);
	assert_int_equal(v[0].points[0].samples, 3);
	/* b failed on day 1: a point without a figure. */
	assert_string_equal(v[1].name, "b");
	assert_false(v[1].points[0].ok);
	assert_true(isnan(v[1].points[0].value));
	assert_true(v[1].points[1].ok);
	history_series_free(v, n);

	assert_int_equal(history_series(h, "[a]", &v, &n, &err), 0);
	assert_int_equal(n, 1);
	history_series_free(v, n);

	assert_int_equal(history_runs(h, &runs, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_int_equal(runs[0].benchmarks, 2);
	assert_string_equal(runs[0].branch, "main");
	history_runs_free(runs, n);

	/* Forget by a prefix of the commit, then by date. */
	assert_int_equal(history_forget(h, &(struct history_forget){ .commit = "c2" }, &n, &err),
			 0);
	assert_int_equal(n, 1);
	assert_int_equal(
		history_forget(h, &(struct history_forget){ .before = "2026-01-03" }, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(history_series(h, NULL, &v, &n, &err), 0);
	assert_int_equal(v[0].n, 1);
	assert_string_equal(v[0].points[0].commit, "c3");
	history_series_free(v, n);
	history_close(h);
	free(p);
}

/* A commit date orders the runs before the run's own date. */
static void test_commit_order(void **state)
{
	char *p = path_in("o.db"), *err = NULL;
	struct history *h = NULL;
	struct history_series *v = NULL;
	size_t n = 0;
	bool added;

	(void)state;
	assert_int_equal(history_open(p, true, &h, &err), 0);
	for (int d = 1; d <= 2; d++) {
		struct results_file *f = doc("callgrind", 10 * d, 5, d);
		struct history_context c = { .commit = d == 1 ? "late" : "early",
					     .commit_date = d == 1 ? "2025-06-01T00:00:00Z"
								   : "2025-01-01T00:00:00Z" };

		assert_int_equal(history_add(h, f, &c, &added, &err), 0);
		results_free(f);
	}
	assert_int_equal(history_series(h, "a", &v, &n, &err), 0);
	assert_string_equal(v[0].points[0].commit, "early");
	assert_string_equal(v[0].points[1].commit, "late");
	history_series_free(v, n);
	history_close(h);
	free(p);
}

static void write_file(const char *p, const void *buf, size_t len)
{
	FILE *f = fopen(p, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
}

static void test_refused(void **state)
{
	char *p = path_in("text.db"), *q = path_in("foreign.db"), *err = NULL, cmd[256];
	struct history *h = NULL;

	(void)state;
	write_file(p, "not a database\n", 15);
	assert_int_equal(history_open(p, true, &h, &err), -EINVAL);
	assert_non_null(strstr(err, "not an SQLite database"));
	free(err);
	err = NULL;
	snprintf(cmd, sizeof(cmd), "sqlite3 %s 'create table t(x)' 2>/dev/null", q);
	if (system(cmd) == 0) {
		assert_int_equal(history_open(q, true, &h, &err), -EINVAL);
		assert_non_null(strstr(err, "not a benchtrap history"));
		free(err);
		err = NULL;
	}
	/* An empty file is a database with nothing in it yet. */
	write_file(p, "", 0);
	assert_int_equal(history_open(p, true, &h, &err), 0);
	history_close(h);
	/* A directory is not one. */
	assert_int_equal(history_open(dir, true, &h, &err), -EISDIR);
	free(err);
	free(p);
	free(q);
}

static void test_check(void **state)
{
	struct history_point pts[8];
	struct history_series s = { .name = "a",
				    .instrument = "callgrind",
				    .unit = "instructions",
				    .machine = "m",
				    .points = pts,
				    .n = 8 };
	struct history_finding *f = NULL;

	(void)state;
	for (int i = 0; i < 8; i++)
		pts[i] = (struct history_point){ .ok = true, .value = i < 5 ? 1000 : 1100 };
	assert_int_equal(history_check(&s, 1, 0.05, &f), 0);
	assert_int_equal(f[0].nchanges, 1);
	assert_int_equal(f[0].changes[0].at, 5);
	assert_true(f[0].regressed);
	history_findings_free(f, 1);
	/* Beyond the step's 10 %: a change, not a regression. */
	assert_int_equal(history_check(&s, 1, 0.2, &f), 0);
	assert_int_equal(f[0].nchanges, 1);
	assert_false(f[0].regressed);
	history_findings_free(f, 1);
	/* A step down is never a regression; a failed run is no step. */
	for (int i = 0; i < 8; i++)
		pts[i].value = i < 5 ? 1100 : 1000;
	pts[2] = (struct history_point){ .ok = false, .value = NAN };
	assert_int_equal(history_check(&s, 1, 0.05, &f), 0);
	assert_int_equal(f[0].nchanges, 1);
	assert_false(f[0].regressed);
	history_findings_free(f, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_and_series),
		cmocka_unit_test(test_commit_order),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_check),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
