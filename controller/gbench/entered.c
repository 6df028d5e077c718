/* SPDX-License-Identifier: MIT */
/*
 * The function of an instance that its symbols cannot tell (a lambda given
 * to RegisterBenchmark, a ->Name(), two functions of one name), seen at
 * run time: the instance is run alone in a fresh traced process, with a
 * breakpoint at the entry of every function of the binary that may run a
 * batch (gbench_batch_candidate); the first one entered is the function
 * Google Benchmark calls (own_first_entered, measure/own.h).
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

int gbench_start_traced(const struct own_run *run, const struct bench_spec *s, int out,
			struct trace_proc **ret, uint64_t *ret_bias, pid_t *ret_pid, char **ret_why)
{
	char **argv = NULL;
	size_t na = 0;
	int r;

	launch_temp_dir_empty(run->dir);
	r = gbench_instance_argv(run->t, s, run->plan, true, run->dir, &argv, &na);
	if (r == 0)
		r = own_start_traced(run, argv, NULL, out, ret, ret_bias, ret_pid, ret_why);
	measure_env_free(argv);
	return r;
}

int gbench_entered(const struct own_run *run, const struct bench_spec *s, char **ret_function,
		   uint64_t *ret_addr, char **ret_why)
{
	struct elf_file *ef = NULL;
	const struct elf_symbol **cand = NULL;
	char **argv = NULL, *why = NULL;
	size_t n = 0, na = 0;
	ssize_t k = -1;
	int r;

	if (!s->in_main || !s->object) {
		*ret_why = str_fmt("its functions are not the binary's own");
		return 0;
	}
	r = elf_open(s->object, &ef, NULL);
	if (r < 0) {
		*ret_why = str_fmt("cannot read %s: %s", s->object, strerror(-r));
		return r == -ENOMEM ? r : 0;
	}
	r = own_candidates(ef, gbench_batch_candidate, &cand, &n);
	if (r == 0 && !n)
		*ret_why = str_fmt("the binary has no function taking (benchmark::State&)");
	if (r == 0 && n)
		r = gbench_instance_argv(run->t, s, run->plan, true, run->dir, &argv, &na);
	if (r == 0 && n)
		r = own_first_entered(run, argv, cand, n, &k, &why);
	if (r == 0 && n && k < 0)
		*ret_why = str_fmt("a run of it to see which of the binary's %zu functions "
				   "taking (benchmark::State&) it enters found none: %s",
				   n, why ? why : "out of memory");
	if (r == 0 && k >= 0) {
		*ret_function = strdup(cand[k]->demangled);
		*ret_addr = cand[k]->addr;
		r = *ret_function ? 0 : -ENOMEM;
	}
	measure_env_free(argv);
	free(why);
	free(cand);
	elf_close(ef);
	return r;
}

int gbench_spec_resolve(const struct own_run *run, const struct bench_spec *s,
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
	r = gbench_entered(run, s, &fn, &addr, &why);
	if (r < 0)
		goto out;
	if (fn) {
		r = bench_result_diagnose(res,
					  "its function, %s, is the one a run of it entered first "
					  "(by its symbols: %s)",
					  fn, reason ? reason : "none");
		r = r < 0 ? r : 1;
	} else if (instrument) {
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
