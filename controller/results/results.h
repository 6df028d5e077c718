/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_RESULTS_H
#define BENCHTRAP_RESULTS_H

/*
 * Reading results files (docs/results.md, schema "benchtrap-results/1") back
 * into plain C structs, comparing two of them (docs/ci.md), merging shards,
 * and the stable shard of a benchmark name. jansson stays inside this module.
 *
 * Readers ignore fields they do not know; a missing or mistyped field that
 * is needed, or another schema version, is bad input, described in one line
 * that names the file and the field:
 *
 *	HEAD.json: benchmarks[3].stats.median: expected a number, not a string
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The results document's schema: the one name every writer puts in
 * "schema" and every reader accepts. */
#define RESULTS_SCHEMA "benchtrap-results/1"

/*
 * Where the numbers were taken, enough to tell two runs' machines apart:
 * filled by report_env_collect() for a run, or read back from a file. Each
 * string may be NULL (unknown, or absent from the file).
 */
struct results_env {
	char *cpu;	/* "Intel(R) Xeon(R) ..." from /proc/cpuinfo */
	int cores;	/* online CPUs; -1 when unknown */
	char *kernel;	/* "Linux 6.1.0-18-amd64 #1 SMP ..." */
	char *libc;	/* "glibc 2.36" */
	char *binary;	/* path as given */
	char *build_id; /* of the binary */
	char *compiler; /* from the binary's .comment */
	int aslr;	/* randomization kept in the children: 0, 1, or -1 when unknown */
	char *governor; /* cpufreq governor of cpu0 */
	char *hostname;
	char *benchtrap; /* benchtrap version */
	char *date;	 /* UTC, ISO 8601 */
};

/* Free the strings of 'e' and zero it. */
void results_env_clear(struct results_env *e);

struct results_stats {
	double median, mean, stddev, min, max, q1, q3;
	double ci_low, ci_high, confidence; /* NAN when absent */
	double cv;			    /* NAN when absent */
	/* observe: the ± in ns every call's figure carries from removing the
	 * stops (docs/observe.md); NAN when absent */
	double uncertainty;
	size_t samples;
	uint64_t iterations_per_sample;
};

/* One thread of a benchmark run on several (--threads): its id and its own
 * figure per call (NAN when not finite). */
struct results_thread {
	int64_t tid;
	double value;
};

/*
 * A benchmark's "status". Only OK has a figure. SKIPPED and NO_CALLS are
 * written by observe for a function with no call to time: selected by
 * --skip, or no call of it returned while it was observed.
 */
enum results_status {
	RESULTS_STATUS_OK,
	RESULTS_STATUS_FAILED,
	RESULTS_STATUS_SKIPPED,
	RESULTS_STATUS_NO_CALLS,
};

/* "ok", "failed", "skipped", "no_calls". */
const char *results_status_name(enum results_status s);

struct results_bench {
	char *name;
	char *symbol;	  /* or NULL */
	char *build_id;	  /* of the file defining the function, or NULL */
	char *instrument; /* "walltime", "callgrind", ... */
	char *unit;	  /* "ns", "instructions", ... */
	enum results_status status;
	bool ok;	  /* status "ok": it has a figure */
	double value;	  /* the headline; NAN unless ok */
	char *error;	  /* for failed: what happened, possibly several lines */
	bool has_stats;
	struct results_stats stats;
	double *raw; /* raw_samples, in the order taken; NULL when absent */
	size_t nraw;
	char **diagnostics; /* ndiagnostics sentences */
	size_t ndiagnostics;
	bool no_time; /* "no_time"; in older files, a diagnostic says "measured no
		       * execution time" */
	/* "paired.ratios": head / base of each pair of samples taken back to
	 * back (a paired comparison's head side); NULL otherwise. */
	double *pair_ratios;
	size_t npairs;
	/* "paired.processes": how many consecutive ratios each pair of
	 * processes gave (adding up to npairs); NULL: one pair, or an older
	 * file. */
	size_t *pair_groups;
	size_t npair_groups;
	/* "threads": the benchmark ran on this many threads at once (2 or
	 * more); 0 when absent (one thread). "per_thread": each thread's own
	 * figure, at most 'threads' of them (none when failed); NULL when
	 * absent. */
	unsigned threads;
	struct results_thread *per_thread;
	size_t nper_thread;
	/* "counters": what a counting instrument counted per call, or a
	 * Google Benchmark binary's counters (the median over its
	 * repetitions, "cpu_time" among them); counter_values[i] is NAN when
	 * not finite. NULL when absent. */
	char **counter_names;
	double *counter_values;
	size_t ncounters;
	/* "gbench": a Google Benchmark binary's walltime run; its cpu time per
	 * iteration of each repetition (NAN where it gave none; NULL when
	 * absent) and the label it set (or NULL). */
	bool gbench;
	double *gbench_cpu;
	size_t ngbench_cpu;
	char *gbench_label;
};

struct results_doc; /* the parsed document itself, for merging */

struct results_file {
	char *path; /* as given, for messages */
	struct results_env env;
	char *instrument; /* run.instrument, or NULL */
	char *isolation;  /* run.isolation, or NULL */
	/* What the program was given: run.command's arguments after "--" and
	 * its --input, one string (fields separated by '\n'); NULL when the
	 * file has no command. */
	char *target;
	struct results_bench *benches;
	size_t n;
	/* A paired comparison's document is head's, with base's whole document
	 * in "paired.base" (docs/results.md): that one, or NULL. */
	struct results_file *paired_base;
	struct results_doc *doc;
	/* Not every benchmark selected was measured (docs/results.md,
	 * "partial"): what happened, in words ("stopped by SIGINT: 11 of 131
	 * benchmarks measured"), or NULL for a whole run. */
	char *partial;
};

/* The largest results file read: 1 GiB (docs/results.md). */
#define RESULTS_MAX_SIZE (1024L * 1024 * 1024)

/*
 * Read and validate the results file at 'path' ("-" is stdin). Returns 0,
 * -errno when it cannot be read, -EINVAL when it is not a valid results
 * document, -ENOMEM. Never waits on a FIFO without a writer nor reads a
 * device other than stdin: -EPIPE, -ENODEV, -ESOCKTNOSUPPORT; -EFBIG past
 * RESULTS_MAX_SIZE. On failure *ret_error (when not NULL) is a one-line
 * message starting with the path, to free.
 */
int results_load(const char *path, struct results_file **ret, char **ret_error);

/* The same from a buffer; 'label' names it in messages. */
int results_parse(const char *text, size_t len, const char *label, struct results_file **ret,
		  char **ret_error);

void results_free(struct results_file *f);

/*
 * A digest of the document's text as it was read, 32 hex digits and a NUL
 * in 'ret': two files with the same bytes have the same digest (the
 * history adds a file once). Not cryptographic. -EINVAL once the document
 * was released (results_release_doc).
 */
int results_digest(const struct results_file *f, char ret[33]);

/*
 * Free the parsed JSON document that 'f' keeps for results_merge() (which
 * needs it, to keep the fields this benchtrap does not know): the structs
 * stay. A document takes several times its file's size in memory, so a
 * reader that does not merge (compare, export) releases it at once, before
 * it reads the next file.
 */
void results_release_doc(struct results_file *f);

/* Whether an instrument counts exactly (callgrind, perf, memory), so that a
 * comparison needs no significance test: every instrument but the timed
 * ones, walltime and observe. */
bool results_instrument_exact(const char *instrument);

/* Whether 'f' holds observed calls (`benchtrap observe`: run.instrument,
 * or without one its benchmarks' instrument, is "observe") rather than
 * benchmarks run by benchtrap. */
bool results_file_observed(const struct results_file *f);

/* Whether two run.isolation values measure alike: equal, or "benchmark"
 * and "process" (both start every benchmark from a fresh process's state
 * at main, docs/run.md); NULL (unknown) matches anything. */
bool results_isolation_alike(const char *a, const char *b);

/* ---- finding benchmarks by name and instrument (index.c) --------------- */

/* A benchmark and where it is: the file's position in the list given to
 * results_index_build(), and its own in that file. */
struct results_ref {
	const struct results_bench *bench;
	size_t file, pos;
};

/* Every benchmark of some files, sorted by name and instrument, then by
 * (file, pos): lookups are O(log n) and the first of a kind comes first. */
struct results_index {
	struct results_ref *refs;
	size_t n;
};

/* Index the benchmarks of files[0..nfiles). Returns 0 or -ENOMEM; *ret is
 * written only on success and released with results_index_clear(). */
int results_index_build(const struct results_file *const *files, size_t nfiles,
			struct results_index *ret);
void results_index_clear(struct results_index *ix);

/* The first benchmark (in file order) named 'name' with 'instrument', or
 * NULL. */
const struct results_ref *results_index_find(const struct results_index *ix, const char *name,
					     const char *instrument);

/* The first benchmark, in file order, that repeats an earlier one's name
 * and instrument, and that earlier one (the first of its kind) in
 * *ret_first; NULL when every benchmark is unique. */
const struct results_ref *results_index_first_duplicate(const struct results_index *ix,
							const struct results_ref **ret_first);

/* ---- comparing two files (compare.c) ---------------------------------- */

enum results_verdict {
	RESULTS_REGRESSED,
	RESULTS_IMPROVED,
	RESULTS_UNCHANGED,
	RESULTS_FAILED,	 /* failed in HEAD */
	RESULTS_NEW,	 /* only in HEAD, or failed in BASE and ok in HEAD */
	RESULTS_MISSING, /* only in BASE */
	/* measured in both, and the interval of the ratio spans both
	 * -threshold and +threshold: too wide to tell whether it changed;
	 * never fails the gate */
	RESULTS_INCONCLUSIVE,
	RESULTS_NVERDICTS,
};

const char *results_verdict_name(enum results_verdict v);

struct results_compare_opts {
	double threshold;  /* a fraction: 0.05 is 5% */
	double confidence; /* of the interval of the ratio (walltime) */
	unsigned resamples;
	uint64_t seed;
};

#define RESULTS_DEFAULT_THRESHOLD 0.05
#define RESULTS_DEFAULT_CONFIDENCE 0.99

void results_compare_opts_default(struct results_compare_opts *o);

struct results_pair {
	const struct results_bench *base, *head; /* either may be NULL */
	const char *name, *instrument, *unit;
	enum results_verdict verdict;
	bool has_ratio; /* both measured: ratio = head / base */
	double ratio;
	bool has_interval; /* ratio_low..ratio_high: interval of the ratio */
	double ratio_low, ratio_high;
	bool significant; /* the interval excludes 1 (exact instruments: any change) */
	bool paired;	  /* ratio and interval from head's pair ratios */
	/* has_interval and has_ratio: the smallest change the interval could
	 * have shown, relative: the larger of its two half-widths,
	 * ratio_high / ratio - 1 and 1 - ratio_low / ratio (0.004: a change
	 * of 0.4 % would have moved the interval off 1); else NAN. */
	double resolution;
	const char *note; /* why a verdict is what it is, or NULL */
};

struct results_comparison {
	struct results_pair *pairs; /* largest changes first (see compare.c) */
	size_t n;
	size_t counts[RESULTS_NVERDICTS];
	bool has_geomean;
	double geomean;	 /* of the ratios of the pairs measured in both */
	size_t ngeomean; /* how many ratios */
	size_t nboth;	 /* pairs with a benchmark in both base and head, a ratio
			    or not (a failed, skipped or unresolved one has none) */
	char **warnings; /* sentences a reviewer needs */
	size_t nwarnings;
	char **notes; /* sentences for information */
	size_t nnotes;
	double threshold, confidence;
	/* The same code measured twice, so a regression is noise and does not
	 * fail the gate: both files carry the same non-empty build_id, the
	 * program was given the same arguments and input, and no benchmark's
	 * own file (a library's function) has a build_id that differs. */
	bool same_build;
	/* base and head are the two sides of one paired comparison: walltime
	 * pairs are judged on their pair ratios. */
	bool paired;
	/* What `compare` exits with: a benchmark failed in HEAD, or (unless
	 * same_build) one regressed beyond the threshold. */
	bool gate_failed;
};

/*
 * Pair the benchmarks of 'base' and 'head' by name and instrument and give
 * each pair a verdict (docs/ci.md, "How compare decides"). When base is
 * head->paired_base, a walltime pair is judged on head's pair ratios
 * (stats_paired_ratio) instead of the two sides' samples. Returns 0,
 * -EINVAL or -ENOMEM; *ret is written only on success and cleared with
 * results_comparison_clear(). Both files must outlive *ret.
 */
int results_compare(const struct results_file *base, const struct results_file *head,
		    const struct results_compare_opts *o, struct results_comparison *ret);
void results_comparison_clear(struct results_comparison *c);

/*
 * The environment fields in which 'a' and 'b' differ, as one sentence
 * ("cpu ('A' vs 'B'), kernel ('x' vs 'y')"), or NULL in *ret when they agree
 * (build_id, hostname and date are expected to differ and are not looked
 * at). Returns 0 or -ENOMEM.
 */
int results_env_diff(const struct results_env *a, const struct results_env *b, char **ret);

/* ---- shards and merging (merge.c) ------------------------------------- */

/*
 * The shard (0 .. nshards - 1) a benchmark belongs to: the 64-bit FNV-1a hash
 * of its name, modulo nshards. Stable across machines, builds and versions,
 * and independent of which other benchmarks are selected.
 */
unsigned results_shard_of(const char *name, unsigned nshards);
uint64_t results_fnv1a64(const char *s);

enum {
	RESULTS_MERGE_ALLOW_DUPLICATES = 1 << 0,
	RESULTS_MERGE_ALLOW_MISMATCH = 1 << 1,
};

/*
 * Join the benchmarks of files[0..n) into one results document written
 * atomically to 'output': the first file's environment and run, every
 * file's benchmarks in order, and run.merged_from listing the inputs.
 * Refuses (-EEXIST) a benchmark name and instrument found twice unless
 * RESULTS_MERGE_ALLOW_DUPLICATES, and (-EXDEV) environments or run settings
 * that differ unless RESULTS_MERGE_ALLOW_MISMATCH; *ret_error then says
 * which. Returns 0 or a negative errno.
 */
int results_merge(struct results_file *const *files, size_t n, const char *output, unsigned flags,
		  char **ret_error);

#endif
