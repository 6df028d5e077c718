/* SPDX-License-Identifier: MIT */
/* The results file, the summary table and marker lines (report.h). */
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "results/json.h"
#include "report/report.h"
#include "report/table.h"

static char *read_first_line(const char *path)
{
	FILE *f = fopen(path, "re");
	char buf[512];
	char *s = NULL;

	if (!f)
		return NULL;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		s = strdup(buf);
	}
	fclose(f);
	return s;
}

static char *cpu_model(void)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	char line[512];
	char *s = NULL;

	if (!f)
		return NULL;
	while (!s && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) != 0 || !colon)
			continue;
		colon += 1 + strspn(colon + 1, " \t");
		colon[strcspn(colon, "\n")] = '\0';
		s = strdup(colon);
	}
	fclose(f);
	return s;
}

int report_env_collect(const struct elf_file *binary, bool aslr, const char *version,
		       struct results_env *ret)
{
	struct results_env e = { 0 };
	struct utsname u;
	char host[256], date[32];
	time_t now = time(NULL);
	struct tm tm;

	e.cpu = cpu_model();
	e.cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (uname(&u) == 0 && asprintf(&e.kernel, "%s %s %s", u.sysname, u.release, u.version) < 0)
		e.kernel = NULL;
	if (asprintf(&e.libc, "glibc %s", gnu_get_libc_version()) < 0)
		e.libc = NULL;
	e.binary = strdup(elf_path(binary));
	e.build_id = elf_build_id(binary) ? strdup(elf_build_id(binary)) : NULL;
	e.compiler = elf_compiler(binary) ? strdup(elf_compiler(binary)) : NULL;
	e.aslr = aslr;
	e.governor = read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
	e.hostname = gethostname(host, sizeof(host)) == 0 ? strdup(host) : NULL;
	e.benchtrap = strdup(version);
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	e.date = strdup(date);
	if (!e.binary || !e.benchtrap || !e.date) {
		results_env_clear(&e);
		return -ENOMEM;
	}
	*ret = e;
	return 0;
}

static json_t *bench_json(const struct bench_result *r)
{
	const struct bench_spec *s = r->spec;
	json_t *args = json_array(), *diags = json_array(), *samples = json_array();
	json_t *stats = json_null();

	for (unsigned i = 0; i < s->nargs; i++)
		json_array_append_new(args, json_integer(s->args[i]));
	for (size_t i = 0; i < r->ndiagnostics; i++)
		json_array_append_new(diags, json_string(r->diagnostics[i]));
	if (r->status == BENCH_OK) {
		const struct stats_summary *st = &r->stats;

		for (size_t i = 0; i < r->nsamples; i++)
			json_array_append_new(samples, results_json_num(r->samples[i]));
		stats = json_pack(
			"{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I, s:I, "
			"s:o, s:o, s:o, s:o, s:o}",
			"median", results_json_num(st->median), "mean", results_json_num(st->mean),
			"stddev", results_json_num(st->stddev), "min", results_json_num(st->min),
			"max", results_json_num(st->max), "q1", results_json_num(st->q1), "q3",
			results_json_num(st->q3), "iqr", results_json_num(st->iqr), "mad",
			results_json_num(st->mad), "samples", (json_int_t)st->n,
			"iterations_per_sample", (json_int_t)r->iterations, "outliers",
			(json_int_t)st->outliers, "cv", results_json_num(st->cv), "ci_low",
			results_json_num(st->ci_low), "ci_high", results_json_num(st->ci_high),
			"confidence", results_json_num(st->confidence), "calibration",
			results_json_num(r->calibration));
		/* What measuring nothing gave in the same child (walltime). */
		if (stats)
			json_object_set_new(stats, "resolution",
					    results_instrument_has(r->instrument,
								   RESULTS_INSTRUMENT_TIMED) ?
						    results_json_num(r->resolution) :
						    json_null());
	}
	json_t *b = json_pack("{s:s, s:o, s:o, s:o, s:o, s:s, s:s, s:o, s:s, s:o, s:o, s:o, s:o, s:I}",
			      "name", s->name, "symbol", results_json_str(s->symbol), "object",
			      results_json_str(s->object), "build_id", results_json_str(s->build_id),
			      "args", args, "instrument", r->instrument,
			      "unit", r->unit, "value",
			      r->status == BENCH_OK ? results_json_num(r->value) : json_null(),
			      "status", r->status == BENCH_OK ? "ok" : "failed", "error",
			      results_json_str(r->error), "stats", stats, "diagnostics", diags,
			      "raw_samples", samples, "pid", (json_int_t)r->pid);

	/* Counting instruments: every counted event per call, the calls
	 * counted, and where the raw profile was kept. */
	if (b && r->ncounters) {
		json_t *counters = json_object();

		for (size_t i = 0; i < r->ncounters; i++)
			json_object_set_new(counters, r->counters[i].name,
					    results_json_num(r->counters[i].value));
		json_object_set_new(b, "counters", counters);
		json_object_set_new(b, "calls", json_integer((json_int_t)r->calls));
	}
	/* A Google Benchmark binary's own figures that benchtrap's figure is
	 * not: each repetition's cpu time (raw_samples holds real time) and
	 * its label; its counters' medians are in "counters". */
	if (b && r->status == BENCH_OK && (r->reported_cpu_ns || r->reported_label)) {
		json_t *cpu = json_array();

		for (size_t i = 0; r->reported_cpu_ns && i < r->nsamples; i++)
			json_array_append_new(cpu, results_json_num(r->reported_cpu_ns[i]));
		json_object_set_new(b, "gbench",
				    json_pack("{s:o, s:o}", "cpu_time", cpu, "label",
					      results_json_str(r->reported_label)));
	}
	if (b)
		json_object_set_new(b, "no_time", json_boolean(r->status == BENCH_OK && r->no_time));
	if (b && r->profile[0])
		json_object_set_new(b, "profile", json_string(r->profile));
	if (b && (r->profile_folded[0] || r->profile_svg[0]))
		json_object_set_new(b, "flamegraph",
				    json_pack("{s:s?, s:s?}", "folded",
					      r->profile_folded[0] ? r->profile_folded : NULL, "svg",
					      r->profile_svg[0] ? r->profile_svg : NULL));
	/* memory --alloc-stacks: where the call allocated. */
	if (b && r->nsites) {
		json_t *sites = json_array();

		for (size_t i = 0; i < r->nsites; i++) {
			json_t *stack = json_array();

			for (size_t k = 0; k < r->sites[i].nframes; k++)
				json_array_append_new(stack, json_string(r->sites[i].frames[k]));
			json_array_append_new(sites, json_pack("{s:I, s:I, s:o}", "bytes",
							       (json_int_t)r->sites[i].bytes, "count",
							       (json_int_t)r->sites[i].count, "stack",
							       stack));
		}
		json_object_set_new(b, "alloc_sites", sites);
	}
	/* On several threads (--threads, BENCHTRAP_THREADS): how many, and
	 * each thread's own figure per call, in their creation order (none
	 * when failed). */
	if (b && s->threads > 1) {
		json_t *per = json_array();

		for (size_t i = 0; per && i < r->nthreads; i++)
			json_array_append_new(
				per, json_pack("{s:I, s:o}", "tid", (json_int_t)r->threads[i].tid,
					       "value", results_json_num(r->threads[i].value)));
		json_object_set_new(b, "threads", json_integer((json_int_t)s->threads));
		json_object_set_new(b, "per_thread", per);
	}
	/* A paired comparison's head: head / base of each pair of samples. */
	if (b && r->status == BENCH_OK && r->npairs) {
		json_t *ratios = json_array();

		json_t *paired;

		for (size_t i = 0; i < r->npairs; i++)
			json_array_append_new(ratios, results_json_num(r->pair_ratios[i]));
		paired = json_pack("{s:I, s:o}", "pairs", (json_int_t)r->npairs, "ratios", ratios);
		if (paired && r->npair_groups > 1) {
			json_t *groups = json_array();

			for (size_t k = 0; k < r->npair_groups; k++)
				json_array_append_new(groups,
						      json_integer((json_int_t)r->pair_groups[k]));
			json_object_set_new(paired, "processes", groups);
		}
		json_object_set_new(b, "paired", paired);
	}
	return b;
}

static json_t *run_json(const struct report_run *run)
{
	json_t *benches = json_array(), *argv = json_array();

	json_array_append_new(argv, json_string("benchtrap"));

	for (size_t i = 0; i < run->n; i++)
		json_array_append_new(benches, bench_json(&run->results[i]));
	for (int i = 0; i < run->argc; i++)
		json_array_append_new(argv, json_string(run->argv[i]));
	json_t *doc = json_pack("{s:s, s:o, s:{s:s, s:s, s:o, s:f, s:f, s:f, s:I, s:I, s:f}, s:o}",
				"schema", RESULTS_SCHEMA, "environment",
				results_json_env(&run->env), "run", "instrument", run->instrument,
				"isolation", run->isolation, "command", argv, "warmup_s",
				run->plan->warmup_ns / 1e9, "time_s", run->plan->time_ns / 1e9,
				"sample_target_s", run->plan->sample_target_ns / 1e9, "min_samples",
				(json_int_t)run->plan->min_samples, "max_samples",
				(json_int_t)run->plan->max_samples, "timeout_s",
				run->plan->timeout_ns / 1e9, "benchmarks", benches);

	if (doc && run->stopped_by) {
		const char *abbrev = sigabbrev_np(run->stopped_by);
		char sig[32];

		snprintf(sig, sizeof(sig), "SIG%s", abbrev ? abbrev : "?");
		json_object_set_new(doc, "partial",
				    json_pack("{s:s, s:I, s:I}", "signal", sig, "selected",
					      (json_int_t)run->selected, "measured",
					      (json_int_t)run->n));
	}
	/* A paired comparison: head's document holds base's whole. */
	if (doc && run->paired_base)
		json_object_set_new(doc, "paired",
				    json_pack("{s:o}", "base", run_json(run->paired_base)));
	return doc;
}

int report_write_json(const struct report_run *run, FILE *f)
{
	return results_json_dump(run_json(run), f);
}

int report_write_json_mem(const struct report_run *run, char **ret)
{
	return results_json_dump_mem(run_json(run), ret);
}

int report_write_json_file(const struct report_run *run, const char *path)
{
	return results_json_dump_file(run_json(run), path);
}

/* ---- the journal ------------------------------------------------------------------ */

struct report_journal {
	int fd;
	int err;
	char *path;
	size_t n; /* results written */
};

static int journal_write(struct report_journal *j, json_t *doc)
{
	char *line;
	int r = results_json_dump_line(doc, &line);
	size_t len, off = 0;

	if (r < 0)
		return r;
	len = strlen(line);
	while (off < len) {
		ssize_t k = write(j->fd, line + off, len - off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			r = k < 0 ? -errno : -EIO;
			break;
		}
		off += (size_t)k;
	}
	free(line);
	return r;
}

int report_journal_open(const char *path, const struct report_run *run, struct report_journal **ret)
{
	struct report_run head = *run;
	struct report_journal *j = calloc(1, sizeof(*j));
	json_t *doc;
	int r;

	if (!j || !(j->path = strdup(path))) {
		free(j);
		return -ENOMEM;
	}
	j->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0666);
	if (j->fd < 0) {
		r = -errno;
		free(j->path);
		free(j);
		return r;
	}
	head.n = 0;
	head.paired_base = NULL;
	head.stopped_by = 0;
	doc = run_json(&head);
	if (doc)
		json_object_set_new(doc, "journal", json_true());
	r = journal_write(j, doc);
	if (r < 0) {
		report_journal_close(j, true);
		return r;
	}
	*ret = j;
	return 0;
}

void report_journal_add(struct report_journal *j, const struct bench_result *r)
{
	if (j && !j->err) {
		j->err = journal_write(j, bench_json(r));
		j->n += !j->err;
	}
}

size_t report_journal_count(const struct report_journal *j)
{
	return j ? j->n : 0;
}

int report_journal_close(struct report_journal *j, bool remove)
{
	int err;

	if (!j)
		return 0;
	err = j->err;
	close(j->fd);
	if (remove)
		unlink(j->path);
	free(j->path);
	free(j);
	return err;
}

bool report_is_journal(const char *path)
{
	static const char start[] = "{\"schema\":\"" RESULTS_SCHEMA "\"";
	char buf[65536];
	ssize_t k;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	bool yes = false;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		k = read(fd, buf, sizeof(buf) - 1);
		if (k > 0) {
			char *nl;

			buf[k] = 0;
			nl = strchr(buf, '\n');
			if (nl)
				*nl = 0;
			yes = !strncmp(buf, start, sizeof(start) - 1) &&
			      strstr(buf, ",\"journal\":true}");
		}
	}
	close(fd);
	return yes;
}

/* Length of 's' without trailing newlines (1 for NULL, which prints "?"). */
static size_t strcspn_end(const char *s)
{
	size_t n;

	if (!s)
		return 1;
	n = strlen(s);
	while (n > 0 && s[n - 1] == '\n')
		n--;
	return n;
}

static const char *color_on(bool color, const char *code)
{
	return color ? code : "";
}

/* A figure in the result's unit. */
static void format_value(const struct bench_result *r, double v, char *buf, size_t size)
{
	stats_format_value(r->unit, v, buf, size);
}

void report_print_table(const struct report_run *run, FILE *f, enum report_format fmt, bool color)
{
	static const char *const headers[] = { "BENCHMARK", "MEDIAN", "95% CI",	 "MIN",
					       "MAX",	    "CV",     "SAMPLES", "NOTE" };
	static const enum table_align align[] = { TABLE_LEFT,  TABLE_RIGHT, TABLE_RIGHT,
						  TABLE_RIGHT, TABLE_RIGHT, TABLE_RIGHT,
						  TABLE_RIGHT, TABLE_LEFT };
	struct table *t = table_new(8, headers, align);

	if (!t)
		return;
	for (size_t i = 0; i < run->n; i++) {
		const struct bench_result *r = &run->results[i];
		char med[32] = "", lo[32], hi[32], ci[80] = "", mn[32] = "", mx[32] = "";
		char cv[32] = "", samples[48] = "";
		const char *note = "";

		if (r->status == BENCH_OK) {
			/* The headline, as in the results file (a walltime
			 * median below zero is 0 there). */
			format_value(r, r->value, med, sizeof(med));
			format_value(r, r->stats.ci_low, lo, sizeof(lo));
			format_value(r, r->stats.ci_high, hi, sizeof(hi));
			/* Under five samples an interval or a spread would only
			 * look confident; a benchmark that measured no time has
			 * no interval worth a figure (its bounds may lie below
			 * zero, around a median of 0), as the exports leave it
			 * out. */
			if (r->stats.n >= 5 && !r->no_time)
				snprintf(ci, sizeof(ci), "%s … %s", lo, hi);
			else
				snprintf(ci, sizeof(ci), "-");
			format_value(r, r->stats.min, mn, sizeof(mn));
			format_value(r, r->stats.max, mx, sizeof(mx));
			/* Relative spread means nothing around zero. */
			if (!r->no_time && r->stats.n >= 5)
				snprintf(cv, sizeof(cv), "%.2f%%", r->stats.cv * 100);
			else
				snprintf(cv, sizeof(cv), "-");
			snprintf(samples, sizeof(samples), "%zu × %" PRIu64, r->stats.n,
				 r->iterations);
			if (r->no_time)
				note = r->ndiagnostics ? "no time, see below" : "no time";
			else if (r->ndiagnostics)
				note = "see below";
		} else {
			note = "FAILED";
		}
		table_add(t, (const char *const[]){ r->spec->name, med, ci, mn, mx, cv, samples,
						    note });
	}
	if (fmt == REPORT_MARKDOWN)
		table_print_markdown(t, f);
	else
		table_print_text(t, f);
	table_free(t);

	/* What went wrong, and what to look at, after the table. */
	bool first = true;

	for (size_t i = 0; i < run->n; i++) {
		const struct bench_result *r = &run->results[i];
		const char *item = fmt == REPORT_MARKDOWN ? "- " : "";

		if (r->status == BENCH_FAILED) {
			fprintf(f, "\n%s%s%s failed%s:", item, color_on(color, "\033[1;31m"),
				r->spec->name, color_on(color, "\033[0m"));
			if (fmt == REPORT_MARKDOWN)
				fprintf(f, "\n\n```\n%.*s\n```\n", (int)strcspn_end(r->error),
					r->error ? r->error : "?");
			else
				fprintf(f, " %.*s\n", (int)strcspn_end(r->error),
					r->error ? r->error : "?");
			first = false;
		}
		for (size_t j = 0; j < r->ndiagnostics; j++) {
			fprintf(f, "%s%s%s%s%s: %s\n", first ? "\n" : "", item,
				color_on(color, "\033[33m"), r->spec->name,
				color_on(color, "\033[0m"), r->diagnostics[j]);
			first = false;
		}
	}
}

void report_marker_line(FILE *f, const struct measure_event *ev)
{
	static const char *const kinds[] = {
		[MEASURE_BENCH_START] = "benchmark_start",
		[MEASURE_SAMPLE_START] = "sample_start",
		[MEASURE_SAMPLE_END] = "sample_end",
		[MEASURE_BENCH_END] = "benchmark_end",
	};
	json_t *o = json_pack("{s:s, s:s, s:I, s:I}", "event", kinds[ev->kind], "name", ev->name,
			      "pid", (json_int_t)ev->pid, "t_ns", (json_int_t)ev->t_ns);

	if (!o)
		return;
	if (ev->kind == MEASURE_SAMPLE_START || ev->kind == MEASURE_SAMPLE_END) {
		json_object_set_new(o, "sample", json_integer((json_int_t)ev->sample));
		json_object_set_new(o, "iterations", json_integer((json_int_t)ev->iterations));
		json_object_set_new(o, "warmup", json_boolean(ev->warmup));
	}
	if (ev->nbounds) {
		json_t *a = json_array();

		for (size_t i = 0; a && i < ev->nbounds; i++)
			json_array_append_new(a, json_pack("{s:i, s:I, s:I}", "tid",
							   (int)ev->bounds[i].tid, "start_ns",
							   (json_int_t)ev->bounds[i].start_ns,
							   "end_ns",
							   (json_int_t)ev->bounds[i].end_ns));
		json_object_set_new(o, "threads", a);
	}
	json_dumpf(o, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
	fputc('\n', f);
	json_decref(o);
}
