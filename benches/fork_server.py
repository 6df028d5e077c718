#!/usr/bin/env python3
"""What one more benchmark costs under callgrind, forked or in a fresh valgrind.

usage: fork_server.py BENCHTRAP MANY_BINARY [EXAMPLES_BINARY]

MANY_BINARY is tests/fixtures/forkserver's many: 500 trivial registered
benchmarks t000..t499. This times `benchtrap run MANY --instrument callgrind`
on suites of 1, 10, 100 and 500 of them ('t000', 't00?', 't0??', 't*') under
--isolation benchmark (one valgrind per run, a fork per benchmark), and of 1
and 10 (and 100, when a pilot run says it takes under 60 s) under
--isolation process (a fresh valgrind per benchmark). It also times valgrind
alone: `valgrind --tool=callgrind --collect-atstart=no MANY` with
BENCHTRAP_RUN=t000 (the stub's own main runs t000; no driver, no benchtrap)
in the environment benchtrap's children have (PATH, LC_ALL=C, LD_BIND_NOW=1),
the start-up that process mode pays per benchmark.

It prints the wall times (the median of 3 runs of each, interleaved so that
a change of the host's speed falls on every configuration alike), the cost
per extra benchmark in each mode, (T(N) - T(1)) / (N - 1), that cost as a
percentage of the bare valgrind start-up and of T(1) under process, and the
speedup of the 500 suite against process mode, whose T(500) is extrapolated
from its per-benchmark cost (not measured). It checks, and prints, that
every counter of every benchmark is the same in both modes for each size
run in both.

With EXAMPLES_BINARY (benches/examples, whose worker pool exists before
main, so benchtrap falls back to a fresh valgrind per benchmark), it also
times that suite under benchmark, process and shared isolation and prints
whether the fallback was taken.

It asserts nothing about the figures, which move with the machine's load;
it exits 1 only when benchtrap fails (an exit status other than 0).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

if len(sys.argv) not in (3, 4):
    sys.exit(__doc__.split("\n\n")[1])
benchtrap, many = sys.argv[1:3]
examples = sys.argv[3] if len(sys.argv) > 3 else None
REPS = 3
PROCESS_LIMIT_S = 60.0
GLOBS = {1: "t000", 10: "t00?", 100: "t0??", 500: "t*"}


def call(cmd, env=None):
    """Runs cmd; returns (stdout, seconds). A non-zero exit is benchtrap's failure."""
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    t = time.monotonic() - t0
    if p.returncode != 0:
        sys.stderr.write("fork_server: %s exited %d\n%s" % (" ".join(cmd), p.returncode,
                                                            p.stderr))
        sys.exit(1)
    return p.stdout, t


def run_many(mode, n):
    """One timed run of n of many's benchmarks: (seconds, {name: counters})."""
    out, t = call([benchtrap, "run", many, "--instrument", "callgrind", "--bench", GLOBS[n],
                   "--isolation", mode, "--format", "json"])
    d = json.loads(out)
    if len(d["benchmarks"]) != n:
        sys.stderr.write("fork_server: '%s' selected %d benchmarks, not %d\n" %
                         (GLOBS[n], len(d["benchmarks"]), n))
        sys.exit(1)
    return t, {b["name"]: b["counters"] for b in d["benchmarks"]}


tmp = tempfile.mkdtemp(prefix="fork_server.")


def bare_valgrind():
    """valgrind alone on MANY (its main runs t000): seconds."""
    valgrind = shutil.which("valgrind")
    # The environment of benchtrap's children (measure_child_env), so that
    # nothing of this script's (meson's MALLOC_PERTURB_) reaches it.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "LD_BIND_NOW": "1",
           "BENCHTRAP_RUN": "t000"}
    if "VALGRIND_LIB" in os.environ:
        env["VALGRIND_LIB"] = os.environ["VALGRIND_LIB"]
    _, t = call([valgrind, "--tool=callgrind", "--collect-atstart=no",
                 "--callgrind-out-file=%s/callgrind.out.%%p" % tmp,
                 "--log-file=%s/valgrind.log.%%p" % tmp, many], env=env)
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    return t


def run_examples(mode):
    out, t = call([benchtrap, "run", examples, "--instrument", "callgrind", "--isolation", mode,
                   "--format", "json"])
    return t, json.loads(out)


def ms(s):
    return "%.1f ms" % (s * 1000)


try:
    if not shutil.which("valgrind"):
        print("fork_server: skipped: valgrind is not installed")
        sys.exit(77)

    # Pilot (not counted): is process mode's 100 under the limit?
    p1, _ = run_many("process", 1)
    p10, _ = run_many("process", 10)
    per = max((p10 - p1) / 9, 0)
    estimate = p1 + 99 * per
    configs = [("benchmark", n) for n in (1, 10, 100, 500)] + [("process", 1), ("process", 10)]
    if estimate < PROCESS_LIMIT_S:
        configs.append(("process", 100))
        note100 = ""
    else:
        note100 = "not run: the pilot estimated %.0f s, over %.0f s" % (estimate, PROCESS_LIMIT_S)

    times = {c: [] for c in configs}
    counts = {c: [] for c in configs}
    bare = []
    ex_modes = ["benchmark", "process", "shared"]
    ex_times = {m: [] for m in ex_modes}
    ex_docs = {}
    for rep in range(REPS):
        for c in configs:
            t, k = run_many(*c)
            times[c].append(t)
            counts[c].append(k)
        bare.append(bare_valgrind())
        if examples:
            for m in ex_modes:
                t, d = run_examples(m)
                ex_times[m].append(t)
                ex_docs[m] = d
        sys.stderr.write("fork_server: round %d of %d done\n" % (rep + 1, REPS))

    T = {c: statistics.median(v) for c, v in times.items()}
    B = statistics.median(bare)

    print("benchtrap run MANY --instrument callgrind: wall time, median of %d interleaved runs"
          % REPS)
    print("%-12s %-26s %-26s" % ("benchmarks", "benchmark (fork server)",
                                 "process (fresh valgrind)"))
    for n in (1, 10, 100, 500):
        b = ms(T[("benchmark", n)])
        if ("process", n) in T:
            p = ms(T[("process", n)])
        elif n == 100:
            p = note100
        else:
            p = "not run"
        print("%-12s %-26s %-26s" % (n, b, p))

    def per_extra(mode, n):
        return (T[(mode, n)] - T[(mode, 1)]) / (n - 1)

    print()
    print("cost per extra benchmark, (T(N) - T(1)) / (N - 1):")
    for n in (10, 100, 500):
        line = "  N=%-4d benchmark %s" % (n, ms(per_extra("benchmark", n)))
        if ("process", n) in T:
            line += ", process %s" % ms(per_extra("process", n))
        print(line)
    nproc = max(n for (m, n) in T if m == "process")
    cb = per_extra("benchmark", 500)
    cp = per_extra("process", nproc)
    print()
    print("bare valgrind start-up (valgrind --tool=callgrind MANY, BENCHTRAP_RUN=t000, "
          "children's environment; no driver, no benchtrap): %s, median of %d" % (ms(B), REPS))
    print("  per extra benchmark forked (N=500): %s = %.1f %% of that start-up, %.1f %% of "
          "T(1) under process (%s)" % (ms(cb), 100 * cb / B, 100 * cb / T[("process", 1)],
                                        ms(T[("process", 1)])))
    print("  per extra benchmark in a fresh valgrind (N=%d): %s = %.1f %% of that start-up"
          % (nproc, ms(cp), 100 * cp / B))
    p500 = T[("process", 1)] + 499 * cp
    print("500 benchmarks: %.2f s forked; process mode extrapolated (T(1) + 499 x its cost per "
          "extra benchmark at N=%d, not measured): %.1f s, so %.1fx as long"
          % (T[("benchmark", 500)], nproc, p500, p500 / T[("benchmark", 500)]))

    # The same counts in both modes, for every size run in both (all runs).
    print()
    diffs = []
    sizes = sorted(n for (m, n) in configs if m == "process")
    for n in sizes:
        ref = counts[("benchmark", n)][0]
        for c in (("benchmark", n), ("process", n)):
            for k in counts[c]:
                for name in sorted(set(ref) | set(k)):
                    if ref.get(name) != k.get(name):
                        diffs.append("%s N=%d %s: %s against %s" % (c[0], n, name, k.get(name),
                                                                   ref.get(name)))
    if diffs:
        print("counts DIFFER between the modes (or between runs):")
        for x in diffs[:20]:
            print("  " + x)
    else:
        print("counts identical between benchmark and process, every counter of every "
              "benchmark, sizes %s, all %d runs of each" % (", ".join(map(str, sizes)), REPS))
    ir = {tuple(sorted(v.items())) for k in counts[("benchmark", 500)] for v in k.values()}
    print("all 500 benchmarks count alike: %s" % ("yes" if len(ir) == 1 else
                                                  "no (%d different)" % len(ir)))

    if examples:
        print()
        print("examples suite (%d benchmarks; a worker pool before main): wall time, median of %d"
              % (len(ex_docs["benchmark"]["benchmarks"]), REPS))
        for m in ex_modes:
            print("  %-10s %s" % (m, ms(statistics.median(ex_times[m]))))
        fell_back = all(any("thread" in x.lower() for x in b["diagnostics"])
                        for b in ex_docs["benchmark"]["benchmarks"])
        print("  fallback to a fresh valgrind per benchmark said on every benchmark: %s"
              % ("yes" if fell_back else "no"))
        cb_, cp_ = ({b["name"]: b["counters"] for b in ex_docs[m]["benchmarks"]
                     if b["name"] != "threaded_pool"} for m in ("benchmark", "process"))
        print("  counts identical between benchmark and process (threaded_pool left out): %s"
              % ("yes" if cb_ == cp_ else "no"))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
