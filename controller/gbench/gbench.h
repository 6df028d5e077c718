/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_GBENCH_H
#define BENCHTRAP_GBENCH_H

/*
 * Google Benchmark binaries, unmodified (docs/gbench.md). A binary built
 * with Google Benchmark's library is recognized by its symbols; its
 * benchmarks are what the binary itself lists (--benchmark_list_tests),
 * under the names it gives them ("BM_memcpy/8", "BM_x/threads:2"); each
 * is run alone in a fresh process of the binary, selected by an anchored
 * --benchmark_filter:
 *
 *   walltime   the child traced by benchtrap's engine (a crash gets a
 *              backtrace), each call of the instance's function (a batch)
 *              timed by benchtrap's stubs (bracket.c, measure/bracket.h),
 *              each repetition's final batch a sample; without a known
 *              function, Google Benchmark's own timing from its JSON
 *   callgrind  the binary under valgrind, counted inside the benchmark's
 *              function only (--toggle-collect), one profile per batch
 *              (--dump-after): instructions per iteration are the slope
 *              between the last two batches, whose iteration counts the
 *              library logs (--v=2)
 *
 * The parsing below is pure, for the unit tests; nothing here prints.
 * jansson stays inside this module.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "measure/measure.h"
#include "measure/own.h"

struct elf_file;

/* ---- recognizing a binary (detect.c) ------------------------------------ */

/* true when 'ef', or a shared library it needs, defines Google Benchmark's
 * benchmark::RunSpecifiedBenchmarks or
 * benchmark::internal::RegisterBenchmarkInternal. */
bool gbench_detect(struct elf_file *ef);

/*
 * Finding the function that runs an instance, which callgrind and the
 * memory instrument count inside (docs/gbench.md). Each call of it runs one
 * batch. By its symbols, the instance's registered name tells it:
 *
 *   "BM_x/8"             [ns::...]BM_x(benchmark::State&)
 *   "ns::BM_x"           [outer::]ns::BM_x(benchmark::State&) (BENCHMARK(ns::BM_x))
 *   "BM_t<int>/8"        void [ns::]BM_t<int>(benchmark::State&), the template
 *                        arguments compared without spaces; failing that, any
 *                        instance of the template BM_t
 *   "Fix/Foo/16"         [ns::]Fix_Foo_Benchmark::BenchmarkCase(benchmark::State&)
 *   "Fix<int>/Foo"       the same (BENCHMARK_TEMPLATE_F)
 *
 * namespaces including "(anonymous namespace)". A lambda given to
 * RegisterBenchmark, a ->Name() or any name the symbols cannot tell, or two
 * functions one name matches, are left to a run of the instance that sees
 * which function it enters (gbench_entered).
 */

/* How demangled function 'demangled' matches registered instance 'name'. */
enum gbench_match {
	GBENCH_MATCH_NONE,
	GBENCH_MATCH_EXACT,    /* by its name, template arguments included */
	GBENCH_MATCH_TEMPLATE, /* an instance of the template the name names,
				  its arguments spelled otherwise */
};
enum gbench_match gbench_match_function(const char *demangled, const char *name);

/*
 * Whether demangled function 'demangled' may be the one Google Benchmark
 * calls to run a batch: it takes (benchmark::State&) exactly, is not the
 * library's own (namespace benchmark) but for the instance of its
 * LambdaBenchmark<...>::Run that holds a lambda, and is no fixture's SetUp
 * or TearDown.
 */
bool gbench_batch_candidate(const char *demangled);

/* The function of instance 'name' by 'ef''s symbols: 'function' (its
 * demangled name) and 'addr' (link-time) of the best match; 'other' a
 * second function that matches as well (ambiguous); both NULL: none. */
struct gbench_lookup {
	char *function, *other;
	uint64_t addr;
};
/* 0 and *ret (gbench_lookup_clear), or -ENOMEM. */
int gbench_lookup(const struct elf_file *ef, const char *name, struct gbench_lookup *ret);
void gbench_lookup_clear(struct gbench_lookup *l);
/* Why l is not one function, for instance 'name' (malloc'ed, or NULL). */
char *gbench_lookup_reason(const struct gbench_lookup *l, const char *name);

/*
 * The function of instance 'name' when 'ef''s symbols tell it alone: its
 * demangled name (malloc'ed) and link-time address in *ret_addr (when not
 * NULL); NULL when none or more than one match (gbench_entered finds it
 * at run time then).
 */
char *gbench_function(const struct elf_file *ef, const char *name, uint64_t *ret_addr);

/* ---- the binary's own words (parse.c) ----------------------------------- */

/*
 * The names --benchmark_list_tests printed in text[0..len): one a line,
 * blank lines skipped. -EINVAL for a line with a control character or not
 * valid as a name (a name with "\n" cannot be told apart); -ENOMEM. On
 * success *ret_names (NULL-terminated, str_free_n) and *ret_n.
 */
int gbench_parse_list(const char *text, size_t len, char ***ret_names, size_t *ret_n);

/* "^" + name with every regex metacharacter escaped + "$": a filter that
 * selects exactly the instance 'name' (malloc'ed; NULL: out of memory). */
char *gbench_filter_regex(const char *name);

/*
 * The iteration count of each batch of instance 'name', in order, from
 * the library's log at --v=2 ("-- LOG(2): Running NAME for N"): into
 * ret[0..max), *ret_n of them (those past max are counted, not kept).
 */
void gbench_parse_batches(const char *log, const char *name, uint64_t *ret, size_t max,
			  size_t *ret_n);

/* One run of an instance, as the JSON output reports it ("run_type":
 * "iteration"): times in ns per iteration. */
#define GBENCH_MAX_COUNTERS 12
struct gbench_run {
	uint64_t iterations; /* every thread's together */
	unsigned threads;
	double real_ns, cpu_ns;
	bool error;	     /* "error_occurred" (SkipWithError) */
	char *error_message; /* or NULL */
	char *label;	     /* "label" (SetLabel), or NULL */
	/* The user's counters (and bytes_per_second, items_per_second):
	 * names malloc'ed. */
	char *counter_names[GBENCH_MAX_COUNTERS];
	double counter_values[GBENCH_MAX_COUNTERS];
	size_t ncounters;
};

/*
 * The runs of instance 'name' in a --benchmark_out_format=json document
 * text[0..len) (the repetitions, aggregates left out): *ret (free with
 * gbench_runs_free) and *ret_n, possibly 0. -EINVAL with *ret_error (a
 * line, to free) when it is not such a document, or when a run that ran
 * has what none can (iterations 0, real_time or cpu_time below zero,
 * threads below 1: the line names the field); -ENOMEM.
 */
int gbench_parse_json(const char *text, size_t len, const char *name, struct gbench_run **ret,
		      size_t *ret_n, char **ret_error);
void gbench_runs_free(struct gbench_run *v, size_t n);

/*
 * A walltime result from runs[0..n) of one instance: one sample per
 * repetition (its real time per iteration), benchtrap's statistics of them,
 * iterations per sample, and as counters the median cpu time and each user
 * counter's median ("cpu_time", then the names Google Benchmark gives);
 * each repetition's cpu time (reported_cpu_ns) and the first run's label
 * (reported_label), carried to the results file for the gbench export.
 * Counter names are interned for the life of the process
 * (gbench_strings_clear). res must have been begun
 * (measure_result_begin). 0 or -ENOMEM; a run with an error fails res.
 */
int gbench_result_from_runs(const struct gbench_run *runs, size_t n, struct bench_result *res);

/* Frees the interned counter names: after the last result is written. */
void gbench_strings_clear(void);

/*
 * Walltime samples from bracketed batches (bracket.c): spans[0..nb) each
 * batch's interval in ns (measure/bracket.h's bracket_batch_spans), in the
 * order they ran, counts[0..ncounts) each batch's iteration count per
 * thread from the log, rep_iters[0..nreps) each repetition's per thread
 * from the JSON output. Every repetition after the first is one batch and
 * the first ends with its final one, so the repetitions' batches are the
 * last nreps: ret[j] is the per-iteration time of repetition j's. -EINVAL
 * when the counts do not line up (nothing written).
 */
int gbench_final_batches(const uint64_t *spans, size_t nb, const uint64_t *counts,
			 size_t ncounts, const uint64_t *rep_iters, size_t nreps, double *ret);
/* The thread count of instance 'name' ("BM_x/threads:2": 2), 1 without one. */
unsigned gbench_name_threads(const char *name);

/* ---- running (run.c) ---------------------------------------------------- */

/* The instances the binary lists, asking it (--benchmark_list_tests=true)
 * in a fresh child with c->t's environment and target arguments. 0, or a
 * negative errno with *ret_error saying why (to free). */
int gbench_list(const struct suite_ctx *c, char ***ret_names, size_t *ret_n, char **ret_error);
/* The spec of instance 'name': its function when the symbols tell it
 * (gbench_function). 0 or -ENOMEM. */
int gbench_spec(const struct suite_ctx *c, const char *name, struct bench_spec *ret);
/* The target arguments after "--" that would change what benchtrap selects
 * or reads (NULL-terminated). */
extern const char *const gbench_reserved[];

/* The cells of the row (measure/own.h): each instance alone in a fresh
 * process, t->argv holding the binary and the arguments passed through to
 * it, the plan giving the repetitions (min_samples) and
 * --benchmark_min_time (time_ns over them) when those arguments do not.
 * Walltime pairs two builds batch by batch where both functions are
 * known, else in rounds of a repetition of each build in a process. */
extern const struct own_cell gbench_walltime_cell;
extern const struct own_cell gbench_callgrind_cell;
extern const struct own_cell gbench_memory_cell;

#endif
