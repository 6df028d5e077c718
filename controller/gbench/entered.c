/* SPDX-License-Identifier: MIT */
/*
 * The function of an instance that its symbols cannot tell (a lambda given
 * to RegisterBenchmark, a ->Name(), two functions of one name), seen at
 * run time: the instance is run alone in a fresh traced process, with a
 * breakpoint at the entry of every function of the binary that may run a
 * batch (gbench_batch_candidate); the first one entered is the function
 * Google Benchmark calls, and the process is killed there.
 *
 *   spawn (traced) ─ main ─ breakpoints ─ ... ─ first candidate entered: kill
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/elf.h"
#include "measure/driver-env.h"
#include "measure/failure.h"
#include "trace/trace.h"
#include "util/launch.h"
#include "gbench/gbench.h"
#include "util/strutil.h"
#include "gbench/internal.h"

/* The candidates of 'ef', each function once (by address). */
static int candidates(const struct elf_file *ef, const struct elf_symbol ***ret, size_t *ret_n)
{
	const struct elf_symbol **v = NULL;
	size_t n = 0;

	for (size_t i = 0; i < elf_symbol_count(ef); i++) {
		const struct elf_symbol *sym = elf_symbol(ef, i), **nv;
		bool seen = false;

		if (strchr(sym->name, '.') || sym->ifunc || !gbench_batch_candidate(sym->demangled))
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

int gbench_start_traced(const struct measure_target *t, const struct bench_spec *s,
			const struct measure_plan *plan, const char *dir, int input, int out,
			int devnull, struct trace_proc **ret, uint64_t *ret_bias, pid_t *ret_pid,
			char **ret_why)
{
	const struct own_run run = {
		.t = t, .plan = plan, .dir = dir, .input = input, .devnull = devnull
	};
	char **argv = NULL;
	size_t na = 0;
	int r;

	launch_temp_dir_empty(dir);
	r = gbench_instance_argv(t, s, plan, true, dir, &argv, &na);
	if (r == 0)
		r = own_start_traced(&run, argv, NULL, out, ret, ret_bias, ret_pid, ret_why);
	measure_env_free(argv);
	return r;
}

/* Run instance s until it enters one of cand[0..n) (relocated by 'bias'):
 * *ret_index, or -1 with *ret_why when it did not. */
static int first_entered(const struct measure_target *t, const struct bench_spec *s,
			 const struct measure_plan *plan, const char *dir, int input, int devnull,
			 const struct elf_symbol *const *cand, size_t n, ssize_t *ret_index,
			 char **ret_why)
{
	struct trace_proc *p = NULL;
	struct bench_result res = { 0 };
	struct own_watch w;
	struct trace_event ev;
	uint64_t deadline = measure_now_ns() + plan->timeout_ns, bias = 0;
	int r;

	*ret_index = -1;
	r = gbench_start_traced(t, s, plan, dir, input, devnull, devnull, &p, &bias, NULL, ret_why);
	for (size_t k = 0; p && r == 0 && k < n; k++)
		r = trace_bp_insert(p, bias + cand[k]->addr);
	if (!p || r < 0) {
		if (p)
			*ret_why = str_fmt("cannot stop it at the functions' entries: %s",
					   trace_strerror(r));
		r = r == -ENOMEM ? r : 0;
		goto out;
	}
	r = own_watch_init(&w, deadline, plan->timeout_ns, NULL, NULL);
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

int gbench_entered(const struct measure_target *t, const struct bench_spec *s,
		   const struct measure_plan *plan, const char *dir, int input, int devnull,
		   char **ret_function, uint64_t *ret_addr, char **ret_why)
{
	struct elf_file *ef = NULL;
	const struct elf_symbol **cand = NULL;
	const char *what;
	size_t n = 0;
	ssize_t k = -1;
	char *why = NULL;
	int r;

	if (!s->in_main || !s->object) {
		*ret_why = str_fmt("its functions are not the binary's own");
		return 0;
	}
	r = elf_open(s->object, &ef, &what);
	if (r < 0) {
		*ret_why = str_fmt("cannot read %s: %s", s->object, strerror(-r));
		return r == -ENOMEM ? r : 0;
	}
	r = candidates(ef, &cand, &n);
	if (r < 0)
		goto out;
	if (!n) {
		*ret_why = str_fmt("the binary has no function taking (benchmark::State&)");
		goto out;
	}
	r = first_entered(t, s, plan, dir, input, devnull, cand, n, &k, &why);
	if (r < 0)
		goto out;
	if (k < 0) {
		*ret_why = str_fmt("a run of it to see which of the binary's %zu functions "
				   "taking (benchmark::State&) it enters found none: %s",
				   n, why ? why : "out of memory");
		goto out;
	}
	*ret_function = strdup(cand[k]->demangled);
	if (!*ret_function) {
		r = -ENOMEM;
		goto out;
	}
	*ret_addr = cand[k]->addr;
out:
	free(why);
	free(cand);
	elf_close(ef);
	return r;
}

int gbench_spec_resolve(const struct measure_target *t, const struct bench_spec *s,
			const struct measure_plan *plan, const char *dir, int input, int devnull,
			const char *instrument, struct bench_result *res, struct bench_spec *found)
{
	struct gbench_lookup l = { 0 };
	struct elf_file *ef = NULL;
	const char *what;
	char *fn = NULL, *why = NULL, *reason = NULL;
	uint64_t addr = 0;
	int r;

	if (s->symbol && s->link_addr) {
		fn = strdup(s->symbol);
		addr = s->link_addr;
		r = fn ? 1 : -ENOMEM;
		goto out;
	}
	r = s->object ? elf_open(s->object, &ef, &what) : -ENOENT;
	if (r == 0)
		r = gbench_lookup(ef, s->name, &l);
	elf_close(ef);
	if (r == -ENOMEM)
		goto out;
	if (r == 0 && l.function && !l.other) {
		fn = l.function;
		addr = l.addr;
		l.function = NULL;
		r = 1;
		goto out;
	}
	reason = gbench_lookup_reason(&l, s->name);
	r = gbench_entered(t, s, plan, dir, input, devnull, &fn, &addr, &why);
	if (r < 0)
		goto out;
	if (fn) {
		r = bench_result_diagnose(res,
					  "its function, %s, is the one a run of it entered first "
					  "(by its symbols: %s)",
					  fn, reason ? reason : "none");
		r = r < 0 ? r : 1;
	} else {
		bench_result_fail(res, str_fmt("cannot tell which function runs '%s': %s; %s; %s "
					       "counts inside that function only",
					       s->name, reason ? reason : "by its symbols, none",
					       why ? why : "out of memory", instrument));
	}
out:
	if (r == 1) {
		*found = *s;
		found->symbol = fn;
		found->link_addr = addr;
		fn = NULL;
	}
	gbench_lookup_clear(&l);
	free(reason);
	free(why);
	free(fn);
	return r;
}
