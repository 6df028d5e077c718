/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for reading results files back: the input is split at
 * its first NUL byte into BASE and HEAD (without a NUL, both are the whole
 * input; JSON text never holds a raw NUL). Each is parsed; every file that
 * parses is exported in every format, and two that parse are compared (the
 * comparison reported as text, Markdown and JSON) and merged. A merged
 * document must parse again.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report.h"
#include "results/results.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *sink;   /* /dev/null: formatting is exercised, not kept */
static char dir[64]; /* private directory for merged output */
static char merged[96];

static void cleanup(void)
{
	unlink(merged);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* Memory-backed when the machine has it: merging fsyncs its output. */
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	sink = fopen("/dev/null", "we");
	snprintf(dir, sizeof(dir), "%s/benchtrap-fuzz-XXXXXX", base);
	if (!sink || !mkdtemp(dir)) {
		perror("fuzz_results: setup");
		abort();
	}
	snprintf(merged, sizeof(merged), "%s/merged.json", dir);
	atexit(cleanup);
	return 0;
}

static struct results_file *parse(const uint8_t *text, size_t len, const char *label)
{
	struct results_file *f = NULL;
	char *error = NULL;

	if (results_parse((const char *)text, len, label, &f, &error) < 0) {
		/* a failure always explains itself */
		if (!error || !*error)
			abort();
		free(error);
		return NULL;
	}
	for (size_t i = 0; report_export_name(i); i++)
		(void)report_export(f, report_export_name(i), sink, NULL);
	return f;
}

static void compare(const struct results_file *base, const struct results_file *head)
{
	struct results_compare_opts o;
	struct results_comparison c;
	char summary[256];

	results_compare_opts_default(&o);
	o.resamples = 64; /* the bootstrap's cost, not its accuracy, is what matters here */
	if (results_compare(base, head, &o, &c) < 0)
		return;
	report_compare_summary(&c, summary, sizeof(summary));
	report_compare_text(&c, sink, false);
	report_compare_markdown(&c, sink);
	(void)report_compare_json(&c, base->path, head->path, sink);
	results_comparison_clear(&c);

	char *diff = NULL;

	if (results_env_diff(&base->env, &head->env, &diff) == 0)
		free(diff);
}

static void merge(struct results_file *base, struct results_file *head)
{
	struct results_file *files[] = { base, head }, *back = NULL;
	char *error = NULL;

	if (results_merge(files, 2, merged, 0, &error) < 0)
		free(error);
	error = NULL;
	if (results_merge(files, 2, merged,
			  RESULTS_MERGE_ALLOW_DUPLICATES | RESULTS_MERGE_ALLOW_MISMATCH,
			  &error) < 0) {
		free(error);
		return;
	}
	/* what merge writes, merge and compare must read */
	if (results_load(merged, &back, &error) < 0) {
		fprintf(stderr, "fuzz_results: the merged document does not parse: %s\n", error);
		abort();
	}
	results_free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t nbase = nul ? (size_t)(nul - data) : size;
	const uint8_t *head_text = nul ? nul + 1 : data;
	size_t nhead = nul ? size - nbase - 1 : size;
	struct results_file *base, *head;

	base = parse(data, nbase, "BASE.json");
	head = parse(head_text, nhead, "HEAD.json");
	if (base && head) {
		compare(base, head);
		merge(base, head);
	}
	results_free(base);
	results_free(head);
	return 0;
}
