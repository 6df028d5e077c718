/* SPDX-License-Identifier: MIT */
/*
 * The exact instruments' figures for the kinds that run their own main
 * (own.h): one run of an instance under callgrind with its profiles read,
 * a count per iteration made of the counts of its batches, the same way
 * for every kind; and the function an instance runs its batches in, where
 * the symbols cannot tell it, seen at run time:
 *
 *   spawn (traced) ─ main ─ breakpoints ─ ... ─ first candidate entered: kill
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf.h"
#include "measure/allocs.h"
#include "measure/driver-env.h"
#include "measure/failure.h"
#include "measure/own.h"
#include "measure/valgrind.h"
#include "trace/trace.h"
#include "util/launch.h"
#include "util/strutil.h"

int own_per_iteration(const uint64_t *counts, size_t n, const uint64_t *iters, size_t nb,
		      unsigned threads, double *ret, bool *ret_with_setup)
{
	uint64_t last = 0, prev = 0;

	if (threads == 0)
		threads = 1;
	if (nb == 0 || n != nb * threads)
		return -EINVAL;
	for (unsigned t = 0; t < threads; t++) {
		last += counts[(nb - 1) * threads + t];
		if (nb > 1)
			prev += counts[(nb - 2) * threads + t];
	}
	if (nb == 1) {
		if (iters[0] == 0)
			return -EINVAL;
		*ret = (double)last / ((double)iters[0] * threads);
		*ret_with_setup = true;
		return 0;
	}
	if (iters[nb - 1] <= iters[nb - 2])
		return -EINVAL;
	if (last < prev)
		return -ERANGE;
	*ret = (double)(last - prev) / ((double)(iters[nb - 1] - iters[nb - 2]) * threads);
	*ret_with_setup = false;
	return 0;
}

void own_result_ir(struct bench_result *res, double per, uint64_t iterations)
{
	measure_result_count(res, per);
	res->iterations = res->calls = iterations;
	res->counters[0] = (struct measure_counter){ .name = "Ir", .value = per };
	res->ncounters = 1;
	if (res->status == BENCH_OK && per < MEASURE_MIN_INSTRUCTIONS)
		res->no_time = true;
}

void own_result_memory(struct bench_result *res, const double per[3], uint64_t peak,
		       uint64_t iterations)
{
	static const char *const names[3] = { "bytes", "allocations", "frees" };

	measure_result_count(res, per[0]);
	res->iterations = res->calls = iterations;
	for (unsigned k = 0; k < 3; k++)
		res->counters[k] = (struct measure_counter){ .name = names[k], .value = per[k] };
	res->counters[3] = (struct measure_counter){ .name = "peak_bytes", .value = (double)peak };
	res->ncounters = 4;
}

int own_result_allocs(struct bench_result *res, const struct alloc_counts *calls, size_t n,
		      const uint64_t *iters, size_t nb, unsigned threads, bool *ret_with_setup)
{
	uint64_t *v = calloc(n + 1, sizeof(*v)), peak = 0;
	double per[3];
	int r = v ? 0 : -ENOMEM;

	if (threads == 0)
		threads = 1;
	for (unsigned k = 0; r == 0 && k < 3; k++) {
		alloc_counts_field(calls, n, k, v);
		r = own_per_iteration(v, n, iters, nb, threads, &per[k], ret_with_setup);
	}
	free(v);
	if (r < 0)
		return r;
	/* The most live at once in a call of the last batch (one a thread,
	 * n being nb * threads now): a batch's, not an iteration's, for no
	 * slope makes it one. */
	for (size_t i = n - threads; i < n; i++)
		peak = calls[i].peak > peak ? calls[i].peak : peak;
	own_result_memory(res, per, peak, iters[nb - 1] * threads);
	return 0;
}

int own_callgrind(const struct own_run *run, const struct own_valgrind *q, struct bench_result *res,
		  struct valgrind_dump *v, size_t max, size_t *ret_n)
{
	char **argv = NULL;
	size_t na = 0;
	int r = q->toggle
			? valgrind_callgrind_argv(&argv, &na, run->valgrind, run->dir, q->fns,
						  q->nfns, true)
			: valgrind_dumps_argv(&argv, &na, run->valgrind, run->dir, q->fns, q->nfns);

	for (size_t i = 0; r == 0 && q->more && q->more[i]; i++)
		r = measure_env_push(&argv, &na, strdup(q->more[i]));
	for (size_t i = 0; r == 0 && q->argv[i]; i++)
		r = measure_env_push(&argv, &na, strdup(q->argv[i]));
	if (r < 0)
		goto out;
	launch_temp_dir_empty(run->dir);
	r = valgrind_run(argv, q->envp, run->t->cpu, run->input, run->devnull, run->dir,
			 measure_now_ns() + run->plan->timeout_ns, run->plan->timeout_ns, q->said,
			 res);
	if (r <= 0)
		goto out;
	r = valgrind_read_dumps(run->dir, res->pid, q->kind, v, max, ret_n);
	if (r == -ENOMEM)
		goto out;
	if (r < 0) {
		bench_result_fail(res,
				  str_fmt("cannot read callgrind's profiles: %s", strerror(-r)));
		r = 0;
		goto out;
	}
	r = 1;
out:
	measure_env_free(argv);
	return r;
}

void own_fail_unrun(struct bench_result *res, const char *name, const char *how, const char *what)
{
	bench_result_fail(res, str_fmt("the binary ran no benchmark named '%s' (%s%s%s)", name, how,
				       what ? " " : "", what ? what : ""));
}

int own_candidates(const struct elf_file *ef, bool (*candidate)(const char *demangled),
		   const struct elf_symbol ***ret, size_t *ret_n)
{
	const struct elf_symbol **v = NULL;
	size_t n = 0;

	for (size_t i = 0; i < elf_symbol_count(ef); i++) {
		const struct elf_symbol *sym = elf_symbol(ef, i), **nv;
		bool seen = false;

		/* A part the compiler split off ("f.cold") is no entry. */
		if (!sym->addr || strchr(sym->name, '.') || sym->ifunc ||
		    !candidate(sym->demangled))
			continue;
		for (size_t k = 0; k < n && !seen; k++)
			seen = v[k]->addr == sym->addr;
		if (seen)
			continue;
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv) {
			free(v);
			return -ENOMEM;
		}
		v = nv;
		v[n++] = sym;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int own_first_entered(const struct own_run *run, char *const *argv,
		      const struct elf_symbol *const *cand, size_t n, ssize_t *ret_index,
		      char **ret_why)
{
	struct trace_proc *p = NULL;
	struct bench_result res = { 0 };
	struct own_watch w;
	struct trace_event ev;
	uint64_t deadline = measure_now_ns() + run->plan->timeout_ns, bias = 0;
	int r;

	*ret_index = -1;
	launch_temp_dir_empty(run->dir);
	r = own_start_traced(run, argv, NULL, run->devnull, &p, &bias, NULL, ret_why);
	for (size_t k = 0; p && r == 0 && k < n; k++)
		r = trace_bp_insert(p, bias + cand[k]->addr);
	if (!p || r < 0) {
		if (p)
			*ret_why = str_fmt("cannot stop it at the functions' entries: %s",
					   trace_strerror(r));
		r = r == -ENOMEM ? r : 0;
		goto out;
	}
	r = own_watch_init(&w, deadline, run->plan->timeout_ns, NULL, NULL);
	while (r == 0 && *ret_index < 0 && (r = own_next(p, &w, &res, &ev)) > 0) {
		r = 0;
		for (size_t k = 0; ev.kind == TRACE_EV_BREAKPOINT && k < n; k++)
			if (bias + cand[k]->addr == ev.addr)
				*ret_index = (ssize_t)k;
	}
	/* Gone before it entered one: how. */
	if (r == 0 && *ret_index < 0)
		*ret_why = res.error ? str_fmt("it ended before it entered one: %.*s",
					       (int)strcspn(res.error, "\n"), res.error)
				     : strdup("it exited (status 0) without entering one");
	own_watch_clear(&w);
	bench_result_clear(&res);
out:
	trace_proc_free(p);
	launch_sweep();
	return r < 0 ? r : 0;
}

int own_spec(const struct suite_ctx *c, const char *name, char *symbol, uint64_t link_addr,
	     struct bench_spec *ret)
{
	struct bench_spec s = { .in_main = true, .registered = true, .symbol = symbol };
	const char *id = elf_build_id(c->ef);

	s.link_addr = symbol ? link_addr : 0;
	s.name = strdup(name);
	s.object = strdup(elf_path(c->ef));
	s.build_id = id ? strdup(id) : NULL;
	if (!s.name || !s.object || (id && !s.build_id)) {
		bench_spec_clear(&s);
		return -ENOMEM;
	}
	*ret = s;
	return 0;
}
