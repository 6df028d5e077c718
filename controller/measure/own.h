/* SPDX-License-Identifier: MIT */
#ifndef BENCHTRAP_MEASURE_OWN_H
#define BENCHTRAP_MEASURE_OWN_H

/*
 * What every kind of suite that runs its own main (a Google Benchmark
 * binary, a Rust bench) shares before a benchmark is
 * measured: the suite asked for its list by running it, as a plain child
 * in a group of its own, with a deadline, its stdout kept and its failure
 * put in one line. A kind gives the command line, the environment and how
 * to find what the program said when it refused.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "measure/measure.h"

/* What a kind of suite (suite/suite.h) gets from the command line to list
 * a binary and make its specs: here, below the kinds, so that none of them
 * includes the layer above it. */
struct elf_file;
struct suite_ctx {
	const char *binary;
	struct elf_file *ef;
	const struct measure_target *t; /* argv: binary + the arguments after "--" */
	uint64_t list_timeout_ns;
};

/* The spec of instance 'name' of c's binary, its own (in_main, registered),
 * run in a batch function 'symbol' (taken, freed on failure; NULL: not
 * known) at link_addr. 0 or -ENOMEM. */
int own_spec(const struct suite_ctx *c, const char *name, char *symbol, uint64_t link_addr,
	     struct bench_spec *ret);

struct own_list {
	const struct measure_target *t; /* binary, aslr */
	char *const *argv;		/* the whole command line that lists */
	char *const *envp;		/* its environment; NULL: benchtrap's own */
	const char *dir;		/* a temporary directory for its output */
	const char *asked;		/* the option that lists, as said in errors:
					   "--benchmark_list_tests=true" */
	const char *noun;		/* what a listed line names: "benchmark name" */
	uint64_t timeout_ns;
	/* What the program said when it exited with a failure, as "\n  LINE"
	 * (str_tail_lines' form; only the first line is said), or NULL;
	 * the hook NULL: the last line of its stderr. */
	char *(*said)(const char *stderr_path, const char *stdout_path);
	/* Its stdout made into names; -EINVAL for a name with a control
	 * character. */
	int (*parse)(const char *text, size_t len, char ***ret_names, size_t *ret_n);
};

/*
 * Run q's command line and parse what it printed. Returns 0 with the names
 * (*ret_names of *ret_n, free each and the array), or -errno with
 * *ret_error (free it) saying in one line what happened: the program could
 * not be executed, died, exited with a failure (and what it said), did not
 * end within the timeout, or listed a name benchtrap cannot take.
 */
int own_list_run(const struct own_list *q, char ***ret_names, size_t *ret_n, char **ret_error);

/* The same run, what it printed handed over whole: *ret_text (free it,
 * NUL-terminated) and *ret_len; q->parse and q->noun are not used. */
int own_capture(const struct own_list *q, char **ret_text, size_t *ret_len, char **ret_error);

/*
 * How a kind lists a binary (own_list): its command line and environment
 * (argv, in temporary directory 'dir'; *envp NULL: benchtrap's own), what
 * is said of it, and, when the names are not the instances yet, then():
 * with the run's q (its argv and dir theirs to reuse) and the names it
 * printed, replaced by the instances (the old freed). Each 0 or -errno.
 */
struct own_lister {
	const char *tag, *asked, *noun;
	int (*argv)(const struct suite_ctx *c, const char *dir, char ***argv, char ***envp);
	char *(*said)(const char *stderr_path, const char *stdout_path);
	int (*parse)(const char *text, size_t len, char ***ret_names, size_t *ret_n);
	int (*then)(const struct suite_ctx *c, struct own_list *q, char ***names, size_t *n,
		    char **ret_error);
};
/* The instances c's binary has: own_list_run of l's command line in a
 * temporary directory of its own. 0, or -errno with *ret_error. */
int own_list(const struct own_lister *l, const struct suite_ctx *c, char ***ret_names,
	     size_t *ret_n, char **ret_error);

/* Whether argv[1..] holds 'flag' ("--x" or "--x=..."). */
bool own_has_arg(char *const *argv, const char *flag);

/* What a Rust program said went wrong in its stderr 'path': clap's first
 * "error: " line, or a panic's "thread '...' panicked at PLACE:" with its
 * message (on the next line since Rust 1.73), else its last three lines;
 * each after "\n  " (malloc'ed), or NULL. */
char *own_said_rust(const char *path);

/* A temporary directory "$TMPDIR/benchtrap-TAG.XXXXXX" into dir (size
 * bytes): 0 or -errno. */
int own_temp_dir(char *dir, size_t size, const char *tag);

/*
 * A cell of such a kind (a suite kind x instrument, suite/suite.h): the
 * loop over its instances is the engine's, each in fresh processes of the
 * binary; the cell measures one instance, or one of each build of a
 * compare. What one instance's measurement is given:
 */
struct own_run {
	const struct measure_target *t;
	const struct measure_plan *plan;
	const char *dir;      /* a temporary directory, emptied after each instance */
	int input;	      /* the child's stdin (measure_open_input) */
	int devnull;	      /* /dev/null, read and write */
	const char *valgrind; /* the program, in a cell that runs valgrind */
	void *data;	      /* what the cell's prepare() made, for every instance */
};

struct own_cell {
	const char *tag; /* the kind's short name, in temporary directories' names */
	bool valgrind;	 /* runs valgrind: refused at once when it is not installed */
	/* Before the first instance: what the kind finds in the binary
	 * (elf_open'ed; 'object' its path, which lives as long as the run),
	 * for all of them (run->data, to release): 0, -ENOENT when it is not
	 * there (the run refused: "OBJECT: cannot find SOUGHT"), -ENOMEM. */
	int (*find)(const struct elf_file *ef, const char *object, void **ret_data);
	const char *sought;
	void (*release)(void *data);
	/* One instance, res begun (measure_result_begin) and filled: 0 with
	 * res ok or failed, or -errno when nothing more can run (-ENOMEM). */
	int (*one)(const struct own_run *r, const struct bench_spec *s, struct bench_result *res);
	/* compare BASE HEAD: an instance of each build (0 base, 1 head),
	 * res[1]'s pair ratios set when both measured; NULL: each build's
	 * instance measured in turn by one(). */
	int (*pair)(const struct own_run *const r[2], const struct bench_spec *const s[2],
		    struct bench_result *const res[2]);
};

/*
 * One child of run->t with argv and envp (NULL: the controller's, or the
 * clean one), traced and run to main: stdin run->input, stdout 'out' (-1:
 * benchtrap's), stderr DIR/stderr (else /dev/null), in a process group of
 * its own. *ret (trace_proc_free) and *ret_bias, what to add to a link-time
 * address of the binary; *ret_pid (when not NULL) once it is spawned. When
 * it could not be: *ret untouched and *ret_why (malloc'ed), saying why. 0,
 * or -ENOMEM.
 */
struct trace_proc;
int own_start_traced(const struct own_run *run, char *const *argv, char *const *envp, int out,
		     struct trace_proc **ret, uint64_t *ret_bias, pid_t *ret_pid, char **ret_why);

/*
 * How a traced child that runs its own main is watched to its end
 * (own_next): its deadline, what its --timeout was, where its stderr went
 * and how its last words are read from it (NULL: its last three lines).
 */
struct own_watch {
	uint64_t deadline_ns, timeout_ns;
	const char *stderr_path; /* NULL: it said nothing we kept */
	char *(*said)(const char *path);
	struct trace_failure *pending; /* a fatal signal's backtrace, until it dies of
					  it (own_watch_init; own_watch_clear) */
	bool have_pending;
};
int own_watch_init(struct own_watch *w, uint64_t deadline_ns, uint64_t timeout_ns,
		   const char *stderr_path, char *(*said)(const char *path));
void own_watch_clear(struct own_watch *w);
/*
 * Resume p and wait for its next event: 1 with *ev a stop for the caller
 * (a breakpoint, a signal passed on at the next resume). 0 when it is gone
 * or out of time: *ev its exit with status 0 and res untouched, or res
 * failed saying how (timed out with where it was, lost, killed by a signal
 * with the backtrace of where it arrived, exited with a status and its
 * last words).
 */
struct trace_event;
int own_next(struct trace_proc *p, struct own_watch *w, struct bench_result *res,
	     struct trace_event *ev);

/*
 * Run specs[0..n) of t under instrument 'in', one instance after the
 * other through c->one(), each instance's start and end said to hooks,
 * results[i] filled. 0, or -errno with *ret_error (to free) when nothing
 * could be run (valgrind missing, a temporary directory) or a run could
 * not go on.
 */
int own_measure(const struct own_cell *c, enum measure_instrument_id in,
		const struct measure_target *t, const struct bench_spec *specs, size_t n,
		const struct measure_plan *plan, const struct measure_hooks *hooks,
		struct bench_result *results, char **ret_error);

/* compare BASE HEAD under c: bspecs[i] of base against hspecs[i] of head
 * through c->pair(), bres[i] and hres[i] filled as own_measure fills them. */
int own_measure_paired(const struct own_cell *c, enum measure_instrument_id in,
		       const struct measure_target *base, const struct measure_target *head,
		       const struct bench_spec *bspecs, const struct bench_spec *hspecs, size_t n,
		       const struct measure_plan *plan, const struct measure_hooks *hooks,
		       struct bench_result *bres, struct bench_result *hres, char **ret_error);

/* ---- exact figures (own-count.c) ------------------------------------------ */

/*
 * A count per iteration from counts[0..n), one per thread's call of the
 * batch function per batch (in order, 'threads' a batch), and each batch's
 * iteration count per thread iters[0..nb): the slope between the last two
 * batches, which cancels what a call costs once (its set-up, the clock's
 * reads) and leaves the first batches (cold caches, lazy binding) out;
 * with one batch, its count over its iterations, *ret_with_setup true.
 * -EINVAL when the counts are not 'threads' a batch or the last two
 * batches' iterations do not grow; -ERANGE when their counts shrink.
 */
int own_per_iteration(const uint64_t *counts, size_t n, const uint64_t *iters, size_t nb,
		      unsigned threads, double *ret, bool *ret_with_setup);

/* res's figure, instructions per iteration 'per' (counter "Ir") over
 * 'iterations' (its calls too); below MEASURE_MIN_INSTRUCTIONS, no time. */
void own_result_ir(struct bench_result *res, double per, uint64_t iterations);

/* res's memory figures: bytes, allocations and frees per iteration
 * per[0..3), and the most bytes live at once, 'peak'. */
void own_result_memory(struct bench_result *res, const double per[3], uint64_t peak,
		       uint64_t iterations);

/*
 * One run of an instance under callgrind: valgrind's options counting
 * inside the batch functions fns[0..nfns) (valgrind's names) with a
 * profile after each call (toggle), or from the start with a profile at
 * each entry and return; then more[] (NULL-terminated, or NULL), then the
 * program's argv, with environment envp (NULL: the controller's), its
 * last words said(stderr) when it fails (NULL: its last lines).
 */
struct valgrind_dump;
struct own_valgrind {
	char *const *argv;
	char *const *envp;
	const char *const *fns;
	size_t nfns;
	bool toggle;
	const char *const *more;
	int (*kind)(const char *trigger); /* which profiles are read (valgrind_read_dumps) */
	char *(*said)(const char *path);
};
/* 1 with its profiles v[0..*ret_n) (max at most; none: it ran no
 * benchmark, for the caller to say how it was selected); 0 with res
 * failed saying how the run ended or why its profiles cannot be read;
 * -ENOMEM. */
int own_callgrind(const struct own_run *run, const struct own_valgrind *q, struct bench_result *res,
		  struct valgrind_dump *v, size_t max, size_t *ret_n);

/* res failed: the binary ran nothing for instance 'name', selected by
 * 'how' and 'what' (or NULL): "--exact", "FILTER" "^fib/20$". */
void own_fail_unrun(struct bench_result *res, const char *name, const char *how, const char *what);

/* ---- the function that runs an instance, seen at run time (own-count.c) --- */

/* The functions of ef for which candidate(demangled) holds, each once (by
 * address), no split-off part or ifunc resolver: *ret (free it; pointers
 * into ef) and *ret_n. 0 or -ENOMEM. */
struct elf_file;
struct elf_symbol;
int own_candidates(const struct elf_file *ef, bool (*candidate)(const char *demangled),
		   const struct elf_symbol ***ret, size_t *ret_n);

/* The first of cand[0..n) (the binary's) that a fresh traced child of
 * argv enters, which is killed there: *ret_index, or -1 with *ret_why
 * (malloc'ed) saying how it ended without. 0 or -ENOMEM. */
int own_first_entered(const struct own_run *run, char *const *argv,
		      const struct elf_symbol *const *cand, size_t n, ssize_t *ret_index,
		      char **ret_why);

#endif
