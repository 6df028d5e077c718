#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The memory instrument: how much its counts move, what isolation changes,
what it costs, and what an independent count says.

usage: memory.py BENCHTRAP ALLOCS_BINARY EXAMPLES_BINARY

ALLOCS_BINARY is tests/fixtures/memory's allocs (benchmarks whose figures are
known), EXAMPLES_BINARY benches/examples (the example suite; a worker pool
exists before its main, so each benchmark runs in a fresh process).

(a) Determinism: 10 runs of the example suite, and of allocs (crash left
    out), under --instrument memory; the coefficient of variation across the
    runs of every counter of every benchmark ("CV 0.000 %" when identical),
    or the differences.
(b) Isolation: allocs' ripple_1..3 (calloc 4 MiB, touch, free) under
    --isolation benchmark and shared. The bytes asked for do not depend on
    the heap's state, so they do not ripple as callgrind's counts do.
(c) Cost: the wall time of `benchtrap run --instrument memory` on 1 and on 11
    benchmarks (the example suite: fresh process per benchmark; allocs: the
    fork server), interleaved, median of 3 each; the cost per extra
    benchmark, (T(11) - T(1)) / 10, beside that of `--instrument walltime
    --time 0.001 --warmup 0 --min-samples 1` on the same selections, and the
    ratio.
(d) An independent count: valgrind --tool=dhat on allocs with target-stub's
    BENCHTRAP_RUN=<name> (the program's own main runs just that benchmark),
    minus the same with BENCHTRAP_RUN=nothing (a benchmark that allocates
    nothing: what the program allocates around it). DHAT's "Total" counts a
    realloc as a new block of its new size, as the memory instrument counts
    an allocation; its "At t-gmax" and "At t-end" (the process's peak and
    what is live at its end) give peak and leaked bytes when the call's
    peak sits on top of what was live before it. Each is printed next to
    benchtrap's figure, and whether it matched.

It asserts no figure; it exits 1 only when benchtrap fails (an unexpected
exit status). Without valgrind, (d) says it is skipped.
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

if len(sys.argv) != 4:
    sys.exit(__doc__.split("\n\n")[1])
benchtrap, allocs, examples = sys.argv[1:4]
RUNS = 10
REPS = 3
KEYS = ("bytes_allocated", "allocations", "frees", "peak_bytes", "leaked_bytes")
# Every benchmark of allocs but crash (which fails on purpose).
ALLOCS_OK = ["blocks*", "realloc_*", "calloc_one", "leak", "peak_pattern", "free_old",
             "reallocarray_two", "aligned*", "strdup_one", "lazy_cache", "after_crash",
             "thread_alloc", "ripple_*", "nothing"]
# 11 cheap benchmarks of allocs, for the cost of one more under the fork server.
ALLOCS_11 = ["blocks*", "realloc_chain", "calloc_one", "leak", "peak_pattern", "free_old",
             "realloc_old", "realloc_zero", "reallocarray_two"]


def call(cmd, env=None, ok=(0,)):
    """Runs cmd: (stdout, stderr, seconds). Another exit status is benchtrap's failure."""
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    t = time.monotonic() - t0
    if p.returncode not in ok:
        sys.stderr.write("memory: %s exited %d\n%s" % (" ".join(cmd), p.returncode, p.stderr))
        sys.exit(1)
    return p.stdout, p.stderr, t


def bench_args(globs):
    return [a for g in globs for a in ("--bench", g)]


def run_memory(binary, globs=(), extra=()):
    """One run under --instrument memory: {name: counters}, seconds."""
    out, _, t = call([benchtrap, "run", binary, "--instrument", "memory", *bench_args(globs),
                      *extra, "--format", "json"])
    d = json.loads(out)
    bad = [b["name"] for b in d["benchmarks"] if b["status"] != "ok"]
    if bad:
        sys.stderr.write("memory: %s: %s failed\n" % (binary, ", ".join(bad)))
        sys.exit(1)
    return {b["name"]: b["counters"] for b in d["benchmarks"]}, t


def cv(values):
    m = statistics.mean(values)
    if len(values) < 2:
        return 0.0
    s = statistics.stdev(values)
    return 0.0 if s == 0 else 100 * s / m


def ms(s):
    return "%.1f ms" % (s * 1000)


# ---- (a) determinism ----------------------------------------------------------------------
def determinism(label, binary, globs):
    runs = [run_memory(binary, globs)[0] for _ in range(RUNS)]
    names = list(runs[0])
    print("(a) %s: %d runs of %d benchmarks, coefficient of variation of each counter "
          "across runs" % (label, RUNS, len(names)))
    print("  %-20s %s" % ("benchmark", "  ".join("%-17s" % k for k in KEYS)))
    diffs = []
    for n in names:
        cells = []
        for k in KEYS:
            vals = [r.get(n, {}).get(k) for r in runs]
            if None in vals:
                cells.append("%-17s" % "missing")
                diffs.append("%s %s: missing in a run" % (n, k))
                continue
            cells.append("%-17s" % ("CV %.3f %%" % cv(vals)))
            if len(set(vals)) > 1:
                diffs.append("%s %s: %s" % (n, k, vals))
        print("  %-20s %s" % (n, "  ".join(cells)))
    if diffs:
        print("  DIFFERENCES between runs:")
        for x in diffs:
            print("    " + x)
    else:
        print("  every counter of every benchmark identical in all %d runs" % RUNS)
    print()
    return runs[0]


ex_first = determinism("example suite (%s)" % os.path.basename(examples), examples, ())
al_first = determinism("allocs (crash left out)", allocs, ALLOCS_OK)

# ---- (b) isolation ------------------------------------------------------------------------
print("(b) ripple_1..3 of allocs (calloc 4 MiB, touch every page, free), one call each")
print("  %-10s %-10s %s" % ("isolation", "benchmark", "  ".join(KEYS)))
ripple = {}
for iso in ("benchmark", "shared"):
    ripple[iso], _ = run_memory(allocs, ["ripple_*"], ["--isolation", iso])
    for n, c in ripple[iso].items():
        print("  %-10s %-10s %s" % (iso, n, "  ".join("%*d" % (len(k), c[k]) for k in KEYS)))
same = ripple["benchmark"] == ripple["shared"] and \
    len({json.dumps(c, sort_keys=True) for c in ripple["shared"].values()}) == 1
print("  all six alike (bytes asked for do not ripple; callgrind's count does, "
      "benches/allocator_ripple.py): %s" % ("yes" if same else "NO"))
print()

# ---- (c) cost ---------------------------------------------------------------------------
WALL = ["--instrument", "walltime", "--time", "0.001", "--warmup", "0", "--min-samples", "1"]
configs = {
    ("examples", "memory", 1): [examples, "--instrument", "memory", "--bench", "empty"],
    ("examples", "memory", 11): [examples, "--instrument", "memory"],
    ("examples", "walltime", 1): [examples, *WALL, "--bench", "empty"],
    ("examples", "walltime", 11): [examples, *WALL],
    ("allocs", "memory", 1): [allocs, "--instrument", "memory", "--bench", "nothing"],
    ("allocs", "memory", 11): [allocs, "--instrument", "memory", *bench_args(ALLOCS_11)],
    ("allocs", "walltime", 1): [allocs, *WALL, "--bench", "nothing"],
    ("allocs", "walltime", 11): [allocs, *WALL, *bench_args(ALLOCS_11)],
}
times = {c: [] for c in configs}
for rep in range(REPS):
    for c, args in configs.items():
        out, _, t = call([benchtrap, "run", *args, "--format", "json"])
        n = len(json.loads(out)["benchmarks"])
        if n != c[2]:
            sys.stderr.write("memory: %s selected %d benchmarks, not %d\n" % (args, n, c[2]))
            sys.exit(1)
        times[c].append(t)
T = {c: statistics.median(v) for c, v in times.items()}
print("(c) wall time of benchtrap run, median of %d interleaved runs" % REPS)
print("  %-9s %-9s %10s %10s %18s" % ("suite", "instrument", "T(1)", "T(11)",
                                     "per extra bench"))
per = {}
for suite in ("examples", "allocs"):
    for inst in ("memory", "walltime"):
        t1, t11 = T[(suite, inst, 1)], T[(suite, inst, 11)]
        per[(suite, inst)] = (t11 - t1) / 10
        print("  %-9s %-10s %10s %10s %18s" % (suite, inst, ms(t1), ms(t11),
                                               ms(per[(suite, inst)])))
for suite, how in (("examples", "threads at main: a fresh process per benchmark"),
                   ("allocs", "the fork server: a child per benchmark")):
    m, w = per[(suite, "memory")], per[(suite, "walltime")]
    print("  %s (%s): memory costs %s per extra benchmark, walltime's fixed cost %s: "
          "%s" % (suite, how, ms(m), ms(w), ("ratio %.2f" % (m / w)) if w > 0 else
                  "ratio undefined (walltime's cost not above noise)"))
print()

# ---- (d) an independent count: DHAT -------------------------------------------------------
valgrind = shutil.which("valgrind")
if not valgrind:
    print("(d) skipped: valgrind is not installed")
    sys.exit(0)

DHAT_LINE = re.compile(r"^==\d+== (Total|At t-gmax|At t-end):\s+([\d,]+) bytes in ([\d,]+) blocks",
                       re.M)


def dhat(name):
    """DHAT's totals for allocs with BENCHTRAP_RUN=name: {field: (bytes, blocks)}."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C",
           "BENCHTRAP_RUN": name}
    if "VALGRIND_LIB" in os.environ:
        env["VALGRIND_LIB"] = os.environ["VALGRIND_LIB"]
    p = subprocess.run([valgrind, "--tool=dhat", "--dhat-out-file=/dev/null", allocs],
                       capture_output=True, text=True, env=env)
    got = {m.group(1): (int(m.group(2).replace(",", "")), int(m.group(3).replace(",", "")))
           for m in DHAT_LINE.finditer(p.stderr)}
    if p.returncode != 0 or len(got) != 3:
        print("  dhat on %s failed (exit %d): %s" % (name, p.returncode, p.stderr[-400:]))
        return None
    return got


ORACLE = ["blocks[10]", "realloc_chain", "calloc_one", "leak", "peak_pattern", "strdup_one"]
base = dhat("nothing")
print("(d) valgrind --tool=dhat, BENCHTRAP_RUN=<name> minus BENCHTRAP_RUN=nothing, against "
      "benchtrap (--isolation benchmark)")
if base:
    print("  baseline (nothing): Total %d bytes in %d blocks, t-gmax %d, t-end %d bytes"
          % (base["Total"] + (base["At t-gmax"][0], base["At t-end"][0])))
    print("  %-14s %-26s %-26s %-22s %-22s" % ("benchmark", "bytes dhat/benchtrap",
                                               "blocks dhat/allocations", "peak dhat/benchtrap",
                                               "leaked dhat/benchtrap"))
    matched, total = 0, 0
    for name in ORACLE:
        d = dhat(name)
        c = al_first.get(name)
        if not d or not c:
            continue
        pairs = [(d["Total"][0] - base["Total"][0], c["bytes_allocated"]),
                 (d["Total"][1] - base["Total"][1], c["allocations"]),
                 (d["At t-gmax"][0] - base["At t-gmax"][0], c["peak_bytes"]),
                 (d["At t-end"][0] - base["At t-end"][0], c["leaked_bytes"])]
        cells = []
        for a, b in pairs:
            total += 1
            matched += a == b
            cells.append("%d / %d %s" % (a, b, "same" if a == b else "DIFFER"))
        print("  %-14s %-26s %-26s %-22s %-22s" % (name, *cells))
    print("  %d of %d figures the same" % (matched, total))
