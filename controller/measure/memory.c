/* SPDX-License-Identifier: MIT */
/*
 * The memory instrument: what one call allocates, exactly. The target runs
 * natively with the memory driver preloaded (libbenchtrap-driver-memory.so:
 * the driver with the C allocator's entry points wrapped, driver/alloc.c),
 * through the same fork server as callgrind and perf (driven.h), so that
 * every benchmark starts from the heap of a fresh process at main. The
 * driver counts from the call's first instruction to its return (after
 * --warmup-calls uncounted calls) and reports allocations, frees, bytes
 * asked for, the peak of live bytes and the bytes still live at the
 * return; value is the bytes allocated per call. A benchmark on n threads
 * (--threads) is a round of n calls at once: the counters are per call
 * like the value (the round's sums over n), but for peak_bytes, the most
 * bytes live in the process at once during the round; each thread's own
 * bytes are in its figure.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf.h"
#include "measure/driven.h"
#include "measure/driver-env.h"
#include "measure/measure.h"
#include "unwind/unwind.h"
#include "util/atomic.h"
#include "util/strutil.h"

struct ctx {
	struct bench_result *results;
	uint64_t timeout_ns;
	unsigned long warmup_calls;
	const char *stacks_dir; /* --alloc-stacks */
};

/* Allocation sites kept in the results, the most bytes first; the folded
 * file has every site the driver reported (DRIVER_SITES_MAX). */
#define SITES_IN_RESULTS 10

static bool in_driver(const struct unwind_frame *f)
{
	const char *slash = strrchr(f->module, '/');

	return !strcmp(slash ? slash + 1 : f->module, MEASURE_DRIVER_MEMORY);
}

/* Site s's frames named, the driver's own left out: those inside the
 * allocator's wrappers (innermost) and those from the driver's call of
 * the benchmark outwards. */
static int name_frames(const struct unwind_frame *f, size_t n, struct measure_site *site)
{
	size_t k = 0;

	while (k < n && in_driver(&f[k]))
		k++;
	site->frames = calloc(n + 1, sizeof(*site->frames));
	if (!site->frames)
		return -ENOMEM;
	for (; k < n && !in_driver(&f[k]); k++) {
		char *demangled = f[k].func[0] ? elf_demangle(f[k].func) : NULL;
		int r;

		if (demangled)
			r = (site->frames[site->nframes] = demangled) ? 0 : -1;
		else if (f[k].func[0])
			r = asprintf(&site->frames[site->nframes], "%s", f[k].func);
		else
			r = asprintf(&site->frames[site->nframes], "0x%" PRIx64 " [%s]", f[k].pc,
				     f[k].module[0] ? f[k].module : "?");
		if (r < 0)
			return -ENOMEM;
		site->nframes++;
	}
	return 0;
}

struct sites_doc {
	const struct measure_site *v;
	size_t n;
};

/* Folded: outermost first, one line per site, its bytes. */
static int fill_sites(FILE *out, void *ctx)
{
	const struct sites_doc *d = ctx;

	for (size_t s = 0; s < d->n; s++) {
		for (size_t k = d->v[s].nframes; k-- > 0;)
			fprintf(out, "%s%s", d->v[s].frames[k], k ? ";" : "");
		fprintf(out, "%s %" PRIu64 "\n", d->v[s].nframes ? "" : "?", d->v[s].bytes);
	}
	return ferror(out) ? -ENOMEM : 0;
}

/* The call's sites, named from the mappings of the process that called
 * (a fork server's, which its children share), into the result and the
 * folded file. */
static void take_sites(const struct ctx *c, struct bench_result *res, size_t index,
		       const struct driven_call *call)
{
	struct unwind_frame *f = calloc(DRIVER_STACK_MAX, sizeof(*f));
	struct measure_site *v = calloc(call->nsites, sizeof(*v));
	char path[MEASURE_PROFILE_PATH + 128];
	size_t n = 0;

	if (!f || !v)
		goto out;
	for (; n < call->nsites; n++) {
		const struct driven_site *s = &call->sites[n];

		if (!call->maps || unwind_symbolize_maps(call->maps, s->pc, s->n, f) < 0) {
			bench_result_diagnose(res, "cannot name the allocation sites: the calling "
						   "process's mappings could not be read");
			break;
		}
		v[n].bytes = s->bytes;
		v[n].count = s->count;
		if (name_frames(f, s->n, &v[n]) < 0)
			break;
	}
	if (c->stacks_dir) {
		struct sites_doc d = { v, n };
		char name[104];
		size_t k = (size_t)snprintf(name, sizeof(name), "%03zu-", index), end = k + 64;
		int r;

		for (const char *q = res->spec->name; *q && k < end; q++)
			name[k++] =
				(strchr("/\\ \t\n'\"*?", *q) || (unsigned char)*q < 32) ? '_' : *q;
		snprintf(name + k, sizeof(name) - k, ".folded");
		r = atomic_write_in(c->stacks_dir, name, fill_sites, &d);
		if (r < 0) {
			snprintf(path, sizeof(path), "%s/%s", c->stacks_dir, name);
			bench_result_diagnose(res, "cannot write %s: %s", path, atomic_strerror(r));
			bench_result_unwritten(res, path, r);
		}
	}
	for (size_t s = SITES_IN_RESULTS; s < n; s++)
		str_free_n(v[s].frames, v[s].nframes);
	res->sites = v;
	res->nsites = n < SITES_IN_RESULTS ? n : SITES_IN_RESULTS;
	v = NULL;
out:
	free(f);
	free(v);
}

static void settled(void *ctx, size_t i, const struct driven_call *call)
{
	struct ctx *c = ctx;
	struct bench_result *res = &c->results[i];
	static const char *const names[] = { "allocations", "frees", "bytes_allocated",
					     "peak_bytes", "leaked_bytes" };
	unsigned n = res->spec->threads > 1 ? res->spec->threads : 1;

	if (!call->returned || !call->have_mem) {
		res->status = BENCH_FAILED;
		res->error = driven_failure(call, c->timeout_ns);
		return;
	}
	if (call->mem[6]) {
		/* Never a silent 0. */
		res->status = BENCH_FAILED;
		res->error = strdup("not counted: the program defines its own malloc (another "
				    "allocator linked in?), which comes before benchtrap's wrappers "
				    "of the C allocator");
		return;
	}
	/* Per call, as every instrument's counters are; the peak is the
	 * round's, which no division makes a call's. */
	res->ncounters = 0;
	res->counters[res->ncounters++] =
		(struct measure_counter){ "bytes_allocated", (double)call->mem[2] / (double)n };
	for (size_t k = 0; k < 5; k++)
		if (k != 2)
			res->counters[res->ncounters++] = (struct measure_counter){
				names[k], (double)call->mem[k] / (double)(k == 3 ? 1 : n)
			};
	res->calls = res->iterations = n;
	measure_result_count(res, (double)call->mem[2] / (double)n);
	if (res->status != BENCH_OK)
		return;
	if (res->spec->threads > 1 && call->nthreads) {
		res->threads = calloc(call->nthreads, sizeof(*res->threads));
		if (res->threads) {
			res->nthreads = call->nthreads;
			for (size_t k = 0; k < call->nthreads; k++)
				res->threads[k] = (struct measure_thread){
					call->threads[k].tid, (double)call->threads[k].bytes
				};
		}
	}
	if (call->mem[5])
		bench_result_diagnose(res,
				      "more blocks were live at once than the driver's table holds "
				      "(3 million): peak_bytes and leaked_bytes are lower bounds");
	if (call->nsites)
		take_sites(c, res, i, call);
	if (call->sites_lost)
		bench_result_diagnose(res, "more distinct allocation stacks than the driver holds "
					   "(3072): the sites are incomplete, the counts are not");
	if (c->warmup_calls)
		bench_result_diagnose(res, "counted the call after %lu uncounted one(s) "
					   "(--warmup-calls)",
				      c->warmup_calls);
}

int measure_memory(const struct measure_target *t, const struct bench_spec *specs, size_t n,
		   const struct measure_plan *plan, enum measure_isolation iso,
		   const struct measure_opts *opts, const struct measure_hooks *hooks,
		   struct bench_result *results, char **ret_error)
{
	struct ctx c = { .results = results,
			 .timeout_ns = plan->timeout_ns,
			 .warmup_calls = opts->warmup_calls,
			 .stacks_dir = opts->alloc_stacks };
	struct driven_native nat = { .instrument = "memory",
				     .unit = "bytes",
				     .warmup_calls = opts->warmup_calls,
				     .alloc_frames = opts->alloc_stacks ? DRIVER_STACK_MAX : 0,
				     .settled = settled,
				     .ctx = &c };
	char *driver = measure_find_driver(MEASURE_DRIVER_MEMORY);
	int r;

	if (!driver) {
		*ret_error = strdup("cannot find benchtrap's memory driver library "
				    "(" MEASURE_DRIVER_MEMORY "; set BENCHTRAP_DRIVER_LIB to a driver "
				    "library beside it)");
		return -ENOENT;
	}
	nat.driver = driver;
	r = driven_native(t, specs, n, plan, iso, hooks, &nat, results, ret_error);
	free(driver);
	return r;
}
