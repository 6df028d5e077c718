#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How compare and merge scale with the number of benchmarks: writes two
results files of N benchmarks each (default 60,000; base and head, names in
a shuffled order, a few only in one of them, a few repeated), each with
--raw R raw samples (default 30, about 43 MB a file), then prints the wall
time and the peak resident memory (getrusage of the child: ru_maxrss) of

  benchtrap compare base.json head.json          (pairing N against N)
  benchtrap compare ... --format json
  benchtrap merge half1.json half2.json --output (the duplicate check over N)

with the peak's ratio to the size of the input files (both of them). With
GBENCH_LIST_SCALE (the gbench-list-scale program of benches/), it also
prints the time of reading a Google Benchmark list of 100,000 names.
Nothing is asserted: the figures are for reading (docs/ci.md). On the
project's 2-core VM, with the defaults: compare peaks at 132 MB (text and
json alike), 1.4 times its 92.6 MB of inputs; merge at 89 MB, 2.1
times its 43.2 MB (before the reader took one benchmark at a time and the
writers streamed: 454 MB, 4.9 times, and 636 MB, 14.7 times).

usage: results_scale.py BENCHTRAP [GBENCH_LIST_SCALE] [--n N] [--raw R]
                        [--repeat K]
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import time


def bench(name, value, rng, nraw):
    raw = [round(value * rng.uniform(0.98, 1.02), 3) for _ in range(nraw)]
    return {"name": name, "symbol": None, "args": [], "instrument": "walltime",
            "unit": "ns", "value": value, "status": "ok", "error": None,
            "stats": {"median": value, "mean": value, "stddev": 1.0, "min": value - 30,
                      "max": value + 30, "q1": value - 1, "q3": value + 1,
                      "samples": max(nraw, 1), "iterations_per_sample": 100,
                      "outliers": 0, "cv": 0.01, "ci_low": value - 0.5,
                      "ci_high": value + 0.5, "confidence": 0.95},
            "diagnostics": [], "raw_samples": raw}


def doc(benches):
    env = {"cpu": "Test CPU", "cores": 2, "kernel": "Linux", "libc": "glibc 2.36",
           "binary": "bench", "build_id": None, "compiler": "GCC: 12", "aslr": False,
           "governor": None, "hostname": "h", "benchtrap": "0.1.0",
           "date": "2026-01-01T00:00:00Z"}
    return {"schema": "benchtrap-results/1", "environment": env,
            "run": {"instrument": "walltime", "isolation": "benchmark"},
            "benchmarks": benches}


def write(path, benches):
    with open(path, "w") as f:
        json.dump(doc(benches), f)


def measured(cmd, repeat):
    """Best wall time and largest peak RSS (bytes) over 'repeat' runs."""
    best, peak = None, 0
    for _ in range(repeat):
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
        t = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode not in (0, 1):
            sys.exit("%s failed (%d): %s" % (" ".join(cmd[1:2]), p.returncode,
                                              err.decode().strip()))
        best = t if best is None else min(best, t)
        peak = max(peak, ru.ru_maxrss * 1024)
    return best, peak


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    benchtrap, n, nraw, repeat = args[0], 60000, 30, 1
    listscale = args[1] if len(args) > 1 and not args[1].startswith("--") else None
    if "--n" in args:
        n = int(args[args.index("--n") + 1])
    if "--raw" in args:
        nraw = int(args[args.index("--raw") + 1])
    if "--repeat" in args:
        repeat = int(args[args.index("--repeat") + 1])
    rng = random.Random(1)
    names = ["suite::group%d::bench_%06d" % (i % 97, i) for i in range(n)]
    base_names = names[:]
    rng.shuffle(base_names)
    head_names = names[: n - n // 100] + ["new_%06d" % i for i in range(n // 100)]
    rng.shuffle(head_names)
    rows = []
    with tempfile.TemporaryDirectory(prefix="benchtrap-scale.") as tmp:
        base, head = os.path.join(tmp, "base.json"), os.path.join(tmp, "head.json")
        write(base, [bench(x, 1000.0, rng, nraw) for x in base_names])
        write(head, [bench(x, 1000.0 * rng.uniform(0.9, 1.1), rng, nraw)
                     for x in head_names])
        h1, h2 = os.path.join(tmp, "half1.json"), os.path.join(tmp, "half2.json")
        write(h1, [bench(x, 1000.0, rng, nraw) for x in base_names[: n // 2]])
        write(h2, [bench(x, 1000.0, rng, nraw) for x in base_names[n // 2:]])
        size = os.path.getsize(base)
        pair = os.path.getsize(base) + os.path.getsize(head)
        halves = os.path.getsize(h1) + os.path.getsize(h2)
        for label, cmd, inputs in (
                ("compare (text)", [benchtrap, "compare", base, head], pair),
                ("compare (json)", [benchtrap, "compare", base, head, "--format", "json"],
                 pair),
                ("merge (2 files)", [benchtrap, "merge", h1, h2, "--output",
                                     os.path.join(tmp, "merged.json")], halves)):
            t, peak = measured(cmd, repeat)
            rows.append((label, t, peak, inputs))
    print("%d benchmarks per file, %d raw samples each (%.1f MB a file)"
          % (n, nraw, size / 1e6))
    for label, t, peak, inputs in rows:
        print("%-16s %8.2f s  peak RSS %7.1f MB  %.2f x the inputs (%.1f MB)"
              % (label + ":", t, peak / 1e6, peak / inputs, inputs / 1e6))
    if listscale:
        sys.stdout.flush()
        subprocess.run([listscale, "100000", "3"], check=True)


if __name__ == "__main__":
    main()
