/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_MEASURE_H
#define BENCHTRAP_MEASURE_H

/*
 * Measuring benchmarks: what to run (a bench_spec), how (a measure_plan),
 * and what came out (a bench_result). One file per instrument implements
 * measure_<instrument>(); walltime.c is the first.
 *
 * Nothing here prints. Progress and markers go through callbacks the
 * caller provides; results are plain data that report/ turns into tables
 * and JSON.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "results/instrument.h"
#include "stats/stats.h"

#define MEASURE_MAX_ARGS 6

struct suite_kind;

/* One benchmark to run: a function of the binary or of a library it loads. */
struct bench_spec {
	char *name;	  /* as reported: "fib[20]", "lzma_crc32", "f(1,2)" */
	char *symbol;	  /* function symbol name (raw), or NULL if unnamed */
	char *object;	  /* path of the ELF file that defines the function */
	char *build_id;	  /* that file's GNU build-id (hex), or NULL */
	bool in_main;	  /* object is the binary itself (not a library) */
	uint64_t link_addr; /* the function's link-time address in 'object' */
	bool ifunc;	  /* link_addr is an IFUNC resolver: time what it returns */
	bool registered;  /* registered with target-stub (not a --symbol) */
	bool clone;	  /* a compiler's specialized copy (ELF_FN_CLONE): said in
			     each result's diagnostics */
	bool maybe_member; /* in a namespace or a class of a file without DWARF
			      (ELF_MEMBER_MAYBE): said in each result's
			      diagnostics */
	int64_t args[MEASURE_MAX_ARGS];
	unsigned nargs;
	/* Bodies run at once, each on a thread of its own that benchtrap
	 * creates in the child (--threads, BENCHTRAP_THREADS); 0 or 1: the
	 * benchmark is called from the main thread alone. */
	unsigned threads;
	/* The kind of suite whose row built it (suite/suite.h): the native
	 * row for target-stub registrations and --symbol functions. */
	const struct suite_kind *kind;
};

/* --threads N: at most this many bodies at once. */
#define MEASURE_MAX_THREADS 64

void bench_spec_clear(struct bench_spec *s);

/*
 * Selecting what to measure in 'ef' (select.c): the registered benchmarks
 * whose name matches a glob of 'benches', then the functions of the binary
 * or of the libraries it loads that a pattern of 'symbols' ("NAME" or
 * "NAME(1,2)", match_parse_call) selects; each benchmark once, in that
 * order. With neither, every registered benchmark. A glob leaves out the
 * pieces of functions (ELF_FN_FRAGMENT); an exact name that selects
 * several functions of different names in one object (C++ overloads) is
 * ambiguous. Returns 0 and the selection in *ret; -ENOENT when a selector
 * matched nothing and -EINVAL when a --symbol pattern cannot be read, is
 * ambiguous, selects only a fragment, or passes integers to floating-point
 * parameters, with *ret_miss saying which (clear it with
 * measure_miss_clear); or -ENOMEM.
 *
 * With 'found' (one flag per selector: benches, then symbols; one for the
 * default selection), a selector that matches nothing is no error: it is
 * skipped, and found[i] is set for each selector i that matched (and left
 * as it was otherwise), so that the selectors of two builds can be checked
 * together. The selection may then be empty.
 */
struct measure_selection {
	struct bench_spec *v;
	size_t n, cap;
};

enum measure_miss_what {
	MEASURE_MISS_BENCH,	/* a benchmark glob matched no registered benchmark */
	MEASURE_MISS_SYMBOL,	/* a symbol pattern matched no function */
	MEASURE_MISS_BAD_CALL,	/* a symbol pattern is not NAME or NAME(args) */
	MEASURE_MISS_AMBIGUOUS,	/* an exact name selects overloads: 'names' lists them */
	MEASURE_MISS_FRAGMENT,	/* an exact name selects only a piece of a function
				   (ELF_FN_FRAGMENT), 'function' */
	MEASURE_MISS_FLOATING,	/* integer arguments for floating-point parameters of
				   'function' */
	MEASURE_MISS_MEMBER,	/* a name selects only non-static member functions
				   (ELF_MEMBER_YES), 'function' */
};

struct measure_miss {
	enum measure_miss_what what;
	const char *selector;	/* the glob or pattern as given; NULL for the default
				   selection (every registered benchmark) */
	char *pattern;		/* SYMBOL: the name part of the selector */
	bool none_registered;	/* BENCH: the binary registers no benchmarks at all */
	char *missing;		/* SYMBOL: a library the loader would find but we did not,
				   so it was not searched; NULL if none */
	bool stripped;		/* SYMBOL: the binary is stripped, so a function linked
				   into it has no symbol; suggest holds only names the
				   binary itself exports */
	char suggest[512];	/* the closest names, "'a', 'b'" (match_suggest), or "" */
	char *names;		/* AMBIGUOUS: the overloads, "'f(long)' and 'f(double)'" */
	bool not_integer;	/* BAD_CALL: an argument list holds something other
				   than integers */
	char *function;		/* FRAGMENT, FLOATING, MEMBER: its demangled name; AMBIGUOUS:
				   the first overload as a selector, arguments and all */
	bool instances;		/* AMBIGUOUS: the functions are instances of one function
				   template ("twice" names "int twice<int>(int)" and
				   "long twice<long>(long)") */
	char *instance;		/* AMBIGUOUS with instances: the first one by its name
				   alone as a selector ("twice<int>(5)") */
	bool generic;		/* AMBIGUOUS: the functions are instances of one generic
				   Rust function, which only their whole names tell
				   apart: "crate::f::h0123456789abcdef" (legacy
				   mangling) or "crate::f::<u32>" (v0) */
};

struct elf_file;
struct elf_scope;
int measure_select(struct elf_file *ef, const char *const *benches, size_t nbenches,
		   const char *const *symbols, size_t nsymbols, bool *found,
		   struct measure_selection *ret, struct measure_miss *ret_miss);
void measure_selection_clear(struct measure_selection *s);
void measure_miss_clear(struct measure_miss *m);

/* Fill *ret_miss (MEASURE_MISS_SYMBOL) with why the glob 'selector' matches
 * no function in 'scope': a library not found, a stripped binary, or the
 * closest names; for a command that selects functions without
 * measure_select() (observe). Returns 0 or -ENOMEM (*ret_miss untouched). */
int measure_miss_symbol(const struct elf_scope *scope, const char *selector,
			struct measure_miss *ret_miss);

/* Keep part k (1..n) of the selection, split by a hash of each name
 * (results_shard_of); the others are cleared. */
void measure_select_shard(struct measure_selection *s, unsigned k, unsigned n);

/*
 * Thread counts (--threads 1,2,4, docs/run.md): distinct, each from 1 to
 * MEASURE_MAX_THREADS, in the order given.
 */
struct measure_threads {
	unsigned v[MEASURE_MAX_THREADS];
	size_t n;
};

enum measure_threads_bad_what {
	MEASURE_THREADS_EMPTY,	    /* an empty item: "", "1,,2", "1," */
	MEASURE_THREADS_NOT_NUMBER, /* an item that is not decimal digits */
	MEASURE_THREADS_RANGE,	    /* a count of 0 or above MEASURE_MAX_THREADS */
	MEASURE_THREADS_REPEATED,   /* a count given twice */
};

struct measure_threads_bad {
	enum measure_threads_bad_what what;
	char item[24]; /* the item at fault as written (cut to fit), "" when empty */
};

/* Add the comma-separated counts of 'text' to *list (each must be new to
 * it). Returns 0, or -EINVAL with *ret_bad saying what is wrong; *list is
 * then as it was. */
int measure_threads_parse(const char *text, struct measure_threads *list,
			  struct measure_threads_bad *ret_bad);

/*
 * Run every benchmark of the selection at each count of 'counts', in that
 * order, one after the other: each count is a benchmark of its own, named
 * "NAME[threads=N]" ("fib[20][threads=2]", "f(1,2)[threads=2]") with
 * spec.threads N; when the list is exactly 1, the names stay plain.
 * Benchmarks registered with BENCHTRAP_THREADS are run at these counts
 * instead of their own (the selected counts of one registration become one
 * benchmark first). An empty list leaves the selection as it is. Call it
 * before measure_select_shard(), so that each count is sharded as a
 * benchmark. Returns 0 or -ENOMEM (the selection is then as it was).
 */
int measure_select_threads(struct measure_selection *s, const struct measure_threads *counts);

/* How to sample: docs/run.md explains each default. Times in ns. */
struct measure_plan {
	uint64_t warmup_ns;	    /* run the benchmark this long before sampling */
	uint64_t time_ns;	    /* sampling budget per benchmark */
	uint64_t sample_target_ns;  /* grow iterations until one sample lasts this long */
	size_t min_samples;	    /* take at least this many, even past the budget */
	size_t max_samples;	    /* and never more than this */
	uint64_t timeout_ns;	    /* a benchmark running longer is killed and failed */
};

void measure_plan_default(struct measure_plan *p);

/*
 * The default --timeout of a plan asking for 'reps' repetitions (samples,
 * or a suite's own repetitions), each at least 'rep_min_ns' long (a
 * suite's own minimum time per repetition; 0 when none is asked): 60 s,
 * or three times the warm-up and the budget plus a quarter of a second
 * and three times the minimum per repetition, when that is longer. A
 * repetition of a slow instance is at least one batch and a round trip of
 * the process; 1,000 of them under load outlast a minute.
 */
uint64_t measure_default_timeout(const struct measure_plan *p, size_t reps, uint64_t rep_min_ns);

/* The default sample of a paired comparison (docs/compare.md): the shorter
 * the alternation unit, the closer in time the two samples of a pair and
 * the less of the host's changes of speed (and of preemption) falls
 * between them. 0.5 ms found a 2% change in 10 runs of 10 where 10 ms
 * found it in 7. */
#define MEASURE_PAIRED_SAMPLE_NS 500000

/* Iterations per sample never exceed this (a benchmark that takes no time
 * would otherwise grow n forever). */
#define MEASURE_MAX_ITERATIONS (1ull << 40)

/* The next iteration count while growing samples: 'n' iterations took
 * 'elapsed_ns', a sample should take 'target_ns'. Always more than n (up to
 * MEASURE_MAX_ITERATIONS), at most 100 times n. */
uint64_t measure_grow(uint64_t n, uint64_t elapsed_ns, uint64_t target_ns);

/* true when the empty loop's cost per call (median, quartiles over the
 * samples, n iterations each) spread over more than 10% of its median in
 * the middle half: the machine's speed changed during the measurement. */
bool measure_machine_noisy(double cal_median, double cal_q1, double cal_q3, uint64_t n);

/*
 * The resolution of a walltime measurement: besides the benchmark's
 * samples, every MEASURE_FLOOR_EVERY-th sample (and at least
 * MEASURE_FLOOR_MIN of them) calls the same empty function in both passes,
 * at the benchmark's n. Their per-call differences are what measuring
 * nothing gives in that child; measure_resolution() is the 90th percentile
 * of their absolute values (NAN when n is 0): an empty function's median
 * lands within it.
 */
#define MEASURE_FLOOR_EVERY 8
#define MEASURE_FLOOR_MIN 10
#define MEASURE_FLOOR_MAX 64
double measure_resolution(const double *floor, size_t n);

/* true when a benchmark's per-call time cannot be told apart from an empty
 * function's: the lower end of the confidence interval of its median
 * per-call difference (over n samples; the median itself when ci_low is
 * NAN) is at most the resolution, or there are no samples. Without a
 * resolution (NAN), when that lower end is at or below zero. */
bool measure_no_time(double median, double ci_low, double resolution, size_t n);

/*
 * What a walltime figure hides (hidden.c; docs/run.md says why these
 * thresholds). The kernel's share of the timed calls comes from the
 * child's own CPU accounting, in clock ticks (10 ms each): 'stime_ticks'
 * of the 'cpu_ticks' its thread spent on a processor around the recorded
 * samples, against the 'timed_ns' of their benchmark passes; NAN below
 * MEASURE_KERNEL_MIN_TICKS, where a tick either way moves it too much.
 */
#define MEASURE_KERNEL_MIN 0.10	 /* share of the time in the kernel */
#define MEASURE_SYSCALLS_MIN 0.5 /* system calls per call */
#define MEASURE_KERNEL_MIN_TICKS 20
double measure_kernel_share(uint64_t stime_ticks, uint64_t cpu_ticks, long ticks_per_s,
			    double timed_ns);
/*
 * "spent 62% of its time in the kernel: 1 system call per call (getppid
 * ×1)", from the share (NAN: unknown) and the system calls counted over
 * 'calls' calls in a pass of their own (sc NULL: not counted); NULL when
 * the share is below MEASURE_KERNEL_MIN and the calls fewer than
 * MEASURE_SYSCALLS_MIN per call. The caller frees.
 */
struct trace_syscall_counts;
struct trace_call_counts;
char *measure_kernel_note(double share, const struct trace_syscall_counts *sc, uint64_t calls);
/* "created 1 thread and received 1 signal per call: each costs a ptrace
 * stop inside the timed interval ...", from the events the trace engine
 * handled in the recorded samples, over their 'calls' calls; NULL when
 * there was none. The caller frees. */
char *measure_events_note(const struct trace_call_counts *n, uint64_t calls);

/* The way out said after "measured no execution time", by instrument
 * alike: for a registered benchmark, benchtrap_black_box; for a --symbol,
 * whether the function does any work with the arguments it was given. */
const char *measure_no_time_advice(const struct bench_spec *s);

/* "measured no execution time" under a counting instrument: fewer
 * instructions per call than this do no more than return (a `ret`, an
 * `endbr64; ret`, a register move and a `ret`). */
#define MEASURE_MIN_INSTRUCTIONS 4.0

/* Where and how the child runs. */
struct measure_target {
	const char *binary;
	char *const *argv;	/* argv for the target's main (argv[0] = binary) */
	uint64_t main_link;	/* link-time address of main, 0 if unknown (stripped) */
	uint64_t entry_link;	/* ELF entry point */
	bool aslr;
	bool clean_env;
	char *const *envp;	/* the child's environment; NULL: the controller's,
				   or a clean one (clean_env) */
	int cpu;		/* pin to this CPU, -1: no */
	bool cpu_single;	/* cpu pins benchmarks on one thread only (compare's
				   default: threads pinned together would take turns) */
	bool quiet_stdio;	/* send the child's stdout/stderr to /dev/null */
	const char *input;	/* the child's standard input: a file read from its start by
				   every child, "-" for benchtrap's own, NULL for /dev/null */
};

/* A descriptor (close-on-exec) for a child's standard input, per
 * t->input; the caller closes it. Returns it or -errno. */
int measure_open_input(const struct measure_target *t);

enum bench_status { BENCH_OK, BENCH_FAILED };

/* One event counted by a counting instrument: name (a static string,
 * callgrind's "Ir", "D1mr"...) and its value per call. */
#define MEASURE_MAX_COUNTERS 16
#define MEASURE_PROFILE_PATH 512
struct measure_counter {
	const char *name;
	double value;
};

/* Where a counted call allocated (--alloc-stacks): a call stack and what
 * the allocations made from it asked for. */
struct measure_site {
	uint64_t bytes, count;
	char **frames; /* function names, innermost first */
	size_t nframes;
};

struct bench_result {
	const struct bench_spec *spec;
	enum bench_status status;
	/* Its BENCH_END was said (measure_emit_end), and whether a stop
	 * (launch_stop(): SIGINT, SIGTERM) had come by then with the
	 * benchmark not measured: it failed of the stop, not of itself. */
	bool ended, interrupted;
	char *error;		  /* FAILED: what happened, may span lines (backtrace) */
	const char *instrument;	  /* "walltime" */
	const char *unit;	  /* "ns" */
	double value;		  /* headline: median ns per iteration */
	struct stats_summary stats;
	double *samples;	  /* per-iteration values after calibration */
	size_t nsamples;
	uint64_t iterations;	  /* per sample */
	double calibration;	  /* loop cost per iteration subtracted (median) */
	double resolution;	  /* walltime: measure_resolution() of the floor, or NAN */
	bool no_time;		  /* indistinguishable from an empty function */
	char **diagnostics;	  /* NULL-terminated, may be NULL */
	size_t ndiagnostics;
	pid_t pid;		  /* the child that ran it */
	uint64_t t_start_ns;	  /* CLOCK_MONOTONIC: before spawning */
	uint64_t t_ready_ns;	  /* harness in place, about to sample */
	uint64_t t_first_sample_ns; /* end of the first recorded sample */
	uint64_t t_end_ns;
	/* Counting instruments (callgrind, perf); value is per call. */
	uint64_t calls;		  /* calls of the benchmark that were counted */
	struct measure_counter counters[MEASURE_MAX_COUNTERS]; /* per call, "Ir" first */
	size_t ncounters;
	char profile[MEASURE_PROFILE_PATH]; /* raw profile kept (--keep-profiles), or "" */
	/* --profile: its folded stacks and flamegraph, or "" (measure/profile.h) */
	char profile_folded[MEASURE_PROFILE_PATH];
	char profile_svg[MEASURE_PROFILE_PATH];
	struct measure_site *sites;	    /* memory --alloc-stacks: the most bytes first */
	size_t nsites;
	/* The first file of --profile, --keep-profiles or --alloc-stacks that
	 * could not be written (bench_result_unwritten), or ""; its negative
	 * errno (util/atomic.h) in unwritten_err. */
	char unwritten[MEASURE_PROFILE_PATH + 128];
	int unwritten_err;
	/* Paired comparison (measure_walltime_paired), head side: the per-call
	 * time of head over base's, one ratio per pair of samples taken back
	 * to back; NULL otherwise. */
	double *pair_ratios;
	size_t npairs;
	/* ... taken in several pairs of processes: pair_groups[k] consecutive
	 * ratios from the k-th (npair_groups, adding up to npairs); NULL: one
	 * pair of processes. */
	size_t *pair_groups;
	size_t npair_groups;
	/* spec->threads > 1: each thread's own figure per call, in the
	 * threads' creation order (walltime: the median over the recorded
	 * rounds of the thread's own interval over the iterations; callgrind,
	 * memory: what the thread's calls counted, per call). */
	struct measure_thread *threads;
	size_t nthreads;
	/* A Google Benchmark binary's walltime (controller/gbench/): the CPU
	 * time per iteration it reported for each repetition, in the order of
	 * samples[] (nsamples of them; NAN where it gave none), and the label
	 * it set (SetLabel), or NULL. Its counters are in counters[], each
	 * the median over the repetitions, "cpu_time" first. */
	double *reported_cpu_ns;
	char *reported_label;
};

struct measure_thread {
	pid_t tid;
	double value;
};

void bench_result_clear(struct bench_result *r);

/* The page cache's copy of file 'path' dropped where no process maps it
 * (posix_fadvise DONTNEED), so that the next process of it runs from pages
 * of its own: where a binary's code lands in physical memory moves its
 * speed for the process's whole life (docs/statistics.md, "Pairs from
 * several processes"). Nothing when it cannot be opened. */
void measure_drop_cached(const char *path);

/* How many pairs of processes a paired benchmark of n samples runs in: one
 * for each 'per' samples, 1 at least and 'most' at most. */
size_t measure_pair_processes(size_t n, size_t per, size_t most);
/* One more pair of processes for head's result h: head[j] / base[j] for
 * each j in [from, n) where both are above zero, appended to its pair
 * ratios as a group of their own (nothing when none is). 0 or -ENOMEM. */
int bench_result_add_pairs(struct bench_result *h, const double *base, const double *head,
			   size_t n, size_t from);
/* Head's pair ratios kept only when both sides measured (ok) and some
 * were taken, their groups only when there are two or more. */
void bench_result_settle_pairs(struct bench_result *h, bool ok);
int bench_result_diagnose(struct bench_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The output file 'path' (--profile, --keep-profiles, --alloc-stacks) could
 * not be written, for the negative errno 'err': kept in r->unwritten unless
 * an earlier one is, so that the command says so and exits 2. */
void bench_result_unwritten(struct bench_result *r, const char *path, int err);

/* Events for markers and progress, in the order they happen. Times are
 * CLOCK_MONOTONIC ns; for samples, the child's own clock readings. */
enum measure_event_kind {
	MEASURE_BENCH_START,
	MEASURE_SAMPLE_START,
	MEASURE_SAMPLE_END,
	MEASURE_BENCH_END,
};

/* One thread's timed interval in a round (--threads): the child's clock
 * readings around its n calls. */
struct measure_bound {
	pid_t tid;
	uint64_t start_ns, end_ns;
};

struct measure_event {
	enum measure_event_kind kind;
	const char *name;
	pid_t pid;
	uint64_t t_ns;
	size_t sample;	    /* index, for SAMPLE_* */
	uint64_t iterations; /* for SAMPLE_*: calls per thread */
	bool warmup;	    /* SAMPLE_*: part of warmup or growth, not recorded */
	/* SAMPLE_END of a round (--threads): every thread's interval; the
	 * sample is [min start, max end] of them. */
	const struct measure_bound *bounds;
	size_t nbounds;
	/* BENCH_END: the benchmark's result, final (status, value, stats),
	 * for progress to say; NULL otherwise. When the binary cannot be run
	 * at all (the instrument's error on its first benchmark, bad input),
	 * no BENCH_END is said. */
	const struct bench_result *result;
};

struct measure_hooks {
	void (*event)(const struct measure_event *ev, void *userdata);
	void *userdata;
};

/* Pass ev to the hooks' callback, if any. */
void measure_emit(const struct measure_hooks *h, const struct measure_event *ev);
/* MEASURE_BENCH_END of res (its spec's name, pid and t_ns as given). First,
 * a benchmark whose process 'pid' (or one it started) signalled benchtrap
 * and was killed for it (util/guard.h) is failed with what it did. */
void measure_emit_end(const struct measure_hooks *h, struct bench_result *res, pid_t pid,
		      uint64_t t_ns);

uint64_t measure_now_ns(void);

/* Start the result of benchmark 'spec' by 'instrument' in 'unit': *res
 * emptied, naming them, and started now. */
void measure_result_begin(struct bench_result *res, const struct bench_spec *spec,
			  const char *instrument, const char *unit);

/* A counting instrument's result: 'value', exact, as its one sample, and
 * its stats; BENCH_OK, or BENCH_FAILED with the error said. */
void measure_result_count(struct bench_result *res, double value);

/* What the command line asks of an instrument beyond the plan; each
 * instrument reads what applies to it (struct measure_instrument.options). */
struct measure_opts {
	const char *keep_profiles; /* callgrind: keep each raw profile in this directory */
	bool cache_sim;		   /* callgrind: --cache-sim=yes, cache misses per call too */
	unsigned long warmup_calls; /* memory: uncounted calls before the counted one */
	const char *alloc_stacks;   /* memory: record allocation stacks, folded files here */
	bool static_binary;	   /* no PT_INTERP: nothing can be preloaded */
	const char *profile;	   /* --profile: stacks and flamegraphs in this directory */
};

/* --isolation (docs/run.md). */
enum measure_isolation {
	/* Every benchmark starts from the state of a fresh process at main:
	 * a fresh traced child (walltime); a child forked from one process
	 * stopped at main, the fork server (callgrind, perf). */
	MEASURE_ISOLATION_BENCHMARK,
	/* A fresh process per benchmark, exec and all, under every instrument
	 * (callgrind, perf: a fork server for one). */
	MEASURE_ISOLATION_PROCESS,
	/* One process runs them all in order (a new one after one dies). */
	MEASURE_ISOLATION_SHARED,
};

/* "benchmark", "process", "shared": the results' run.isolation. */
const char *measure_isolation_name(enum measure_isolation i);

/*
 * An instrument runs benchmarks specs[0..n) and fills results[i] for
 * specs[i], failed or not, isolated as 'iso' says. Returns 0, or a
 * negative error when nothing could be measured at all, with *ret_error
 * saying why (the binary cannot be executed, a tool is missing...).
 */
typedef int measure_run_fn(const struct measure_target *t, const struct bench_spec *specs,
			   size_t n, const struct measure_plan *plan, enum measure_isolation iso,
			   const struct measure_opts *opts, const struct measure_hooks *hooks,
			   struct bench_result *results, char **ret_error);

/*
 * Two builds compared, alternating (`compare BASE HEAD`): for each i,
 * base_specs[i] of 'base' against head_specs[i] of 'head', as
 * measure_walltime_paired() below. A cell of a suite kind's row may have
 * one (suite/suite.h).
 */
typedef int measure_paired_fn(const struct measure_target *base, const struct measure_target *head,
			      const struct bench_spec *bspecs, const struct bench_spec *hspecs,
			      size_t n, const struct measure_plan *plan,
			      const struct measure_hooks *hooks, struct bench_result *bres,
			      struct bench_result *hres, char **ret_error);

/*
 * The instruments (instruments.c), one row each; adding an instrument is
 * a file with its measure_run_fn, a row there and a row of
 * results/instrument.c (its name, unit and flags, by the same id). A row
 * without 'run' is a name known to be planned but not in this version.
 */
enum {
	MEASURE_OPT_KEEP_PROFILES = 1 << 0, /* opts->keep_profiles */
	MEASURE_OPT_CACHE_SIM = 1 << 1,	    /* opts->cache_sim */
	MEASURE_OPT_WARMUP_CALLS = 1 << 2,  /* opts->warmup_calls */
	MEASURE_OPT_ALLOC_STACKS = 1 << 3,  /* opts->alloc_stacks */
	MEASURE_OPT_THREADS = 1 << 4,	    /* bench_spec.threads above 1 */
	MEASURE_OPT_PROFILE = 1 << 5,	    /* opts->profile */
	MEASURE_OPT_ISOLATION_SHARED = 1 << 6, /* --isolation shared */
};

/* The instruments `run` measures with, by id: the rows of
 * results/instrument.h that are not observe, in its order. */
enum measure_instrument_id {
	MEASURE_WALLTIME = RESULTS_WALLTIME,
	MEASURE_CALLGRIND = RESULTS_CALLGRIND,
	MEASURE_PERF = RESULTS_PERF,
	MEASURE_MEMORY = RESULTS_MEMORY,
	MEASURE_N_INSTRUMENTS,
};
_Static_assert((int)MEASURE_N_INSTRUMENTS == (int)RESULTS_OBSERVE,
	       "measure's instruments are results/instrument.h's rows before observe");

/* What callers ask of an instrument instead of its name: results/'s flags
 * (RESULTS_INSTRUMENT_TIMED, _PAIRABLE, _COUNTING, _PRELOADS). */
#define MEASURE_TIMED RESULTS_INSTRUMENT_TIMED
#define MEASURE_PAIRABLE RESULTS_INSTRUMENT_PAIRABLE
#define MEASURE_COUNTING RESULTS_INSTRUMENT_COUNTING
#define MEASURE_PRELOADS RESULTS_INSTRUMENT_PRELOADS

struct measure_instrument {
	enum measure_instrument_id id;
	const char *name;    /* --instrument NAME, and the results' "instrument"
				(results_instrument(id)->name) */
	const char *unit;    /* of the headline value, per call */
	const char *summary; /* a few words for --help */
	measure_run_fn *run; /* NULL: not in this version */
	unsigned options;    /* the MEASURE_OPT_* that apply to it */
};

/* The rows, the default (walltime) first; *ret_n of them. */
const struct measure_instrument *measure_instruments(size_t *ret_n);
/* The row named 'name' (results_instrument_find), or NULL; observe has
 * none. */
const struct measure_instrument *measure_instrument_find(const char *name);
/* The row of 'id'. */
const struct measure_instrument *measure_instrument_of(enum measure_instrument_id id);
/* Whether 'in' has every flag of 'flags' (MEASURE_TIMED...), as its row of
 * results/instrument.c says. */
bool measure_instrument_has(const struct measure_instrument *in, unsigned flags);

/*
 * walltime (walltime.c): time per call, measured by a harness injected in
 * a traced child. Only plan applies of the options.
 */
measure_run_fn measure_walltime;

/*
 * The paired comparison of two builds (paired.c, docs/compare.md): for
 * each i, base_specs[i] of 'base' and head_specs[i] of 'head', each in a
 * fresh child of its own build, both alive for the whole benchmark, at one
 * iteration count; samples alternate between the two children (base, head,
 * head, base, ...), so that whatever the machine does to one side in a
 * stretch of time it does to the other. base_results[i] and
 * head_results[i] are filled as measure_walltime fills them, and
 * head_results[i].pair_ratios with the ratio of each pair. --timeout
 * (plan->timeout_ns) applies to each side, --time to each side's samples.
 * When one side fails, the other is measured alone. Returns 0, or a
 * negative error when a build cannot run at all, with *ret_error saying
 * which and why.
 */
int measure_walltime_paired(const struct measure_target *base, const struct measure_target *head,
			    const struct bench_spec *base_specs,
			    const struct bench_spec *head_specs, size_t n,
			    const struct measure_plan *plan, const struct measure_hooks *hooks,
			    struct bench_result *base_results, struct bench_result *head_results,
			    char **ret_error);

/*
 * callgrind (callgrind.c, docs/instruments.md): exact instruction counts,
 * each benchmark in a child forked from one valgrind process stopped at
 * main (MEASURE_ISOLATION_BENCHMARK; a fresh valgrind each when the
 * program has threads at main, which a fork would not copy), in a fresh
 * valgrind process (PROCESS), or all in one (SHARED), with a profile dump
 * per benchmark. Only plan->timeout_ns of the plan applies. Fails with -ENOENT when valgrind is not installed or the driver
 * library is missing, -EINVAL when a --symbol benchmark of a static binary
 * was given arguments.
 */
measure_run_fn measure_callgrind;

/*
 * perf (perf.c): user-space instructions and cycles per call from hardware
 * counters, counted only around the measured batches. Fails with -ENODEV
 * (and suggests callgrind) where the machine has no usable PMU, -EACCES
 * where perf_event_paranoid forbids it.
 */
measure_run_fn measure_perf;

/*
 * memory (memory.c, docs/instruments.md): allocations, frees, bytes asked
 * for, peak and leaked bytes of one call, counted exactly by the memory
 * driver's allocator wrappers, natively, through the fork server. Only
 * plan->timeout_ns of the plan applies. Fails with -ENOENT when the memory
 * driver library is missing.
 */
measure_run_fn measure_memory;

#endif
