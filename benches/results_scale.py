#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How compare and merge scale with the number of benchmarks: writes two
results files of N benchmarks each (default 60,000; base and head, names in
a shuffled order, a few only in one of them, a few repeated), then prints
the wall time of

  benchtrap compare base.json head.json          (pairing N against N)
  benchtrap merge half1.json half2.json --output (the duplicate check over N)

Each benchmark carries the intervals of its median but no raw samples, so
that the time is the pairing's, not the bootstrap's. Nothing is asserted:
the figures are for reading (docs/ci.md).

usage: results_scale.py BENCHTRAP [--n N] [--repeat R]
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import time


def bench(name, value):
    return {"name": name, "symbol": None, "args": [], "instrument": "walltime",
            "unit": "ns", "value": value, "status": "ok", "error": None,
            "stats": {"median": value, "mean": value, "stddev": 1.0, "min": value - 2,
                      "max": value + 2, "q1": value - 1, "q3": value + 1, "samples": 20,
                      "iterations_per_sample": 100, "outliers": 0, "cv": 0.01,
                      "ci_low": value - 0.5, "ci_high": value + 0.5, "confidence": 0.95},
            "diagnostics": []}


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


def timed(cmd, repeat):
    best = None
    for _ in range(repeat):
        t0 = time.monotonic()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        t = time.monotonic() - t0
        if p.returncode not in (0, 1):
            sys.exit("%s failed (%d): %s" % (" ".join(cmd[1:2]), p.returncode,
                                              p.stderr.decode().strip()))
        best = t if best is None else min(best, t)
    return best


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    benchtrap, n, repeat = args[0], 60000, 1
    if "--n" in args:
        n = int(args[args.index("--n") + 1])
    if "--repeat" in args:
        repeat = int(args[args.index("--repeat") + 1])
    rng = random.Random(1)
    names = ["suite::group%d::bench_%06d" % (i % 97, i) for i in range(n)]
    base_names = names[:]
    rng.shuffle(base_names)
    head_names = names[: n - n // 100] + ["new_%06d" % i for i in range(n // 100)]
    rng.shuffle(head_names)
    with tempfile.TemporaryDirectory(prefix="benchtrap-scale.") as tmp:
        base, head = os.path.join(tmp, "base.json"), os.path.join(tmp, "head.json")
        write(base, [bench(x, 1000.0) for x in base_names])
        write(head, [bench(x, 1000.0 * rng.uniform(0.9, 1.1)) for x in head_names])
        h1, h2 = os.path.join(tmp, "half1.json"), os.path.join(tmp, "half2.json")
        write(h1, [bench(x, 1000.0) for x in base_names[: n // 2]])
        write(h2, [bench(x, 1000.0) for x in base_names[n // 2:]])
        size = os.path.getsize(base) / 1e6
        t_cmp = timed([benchtrap, "compare", base, head], repeat)
        t_cmpj = timed([benchtrap, "compare", base, head, "--format", "json"], repeat)
        t_merge = timed([benchtrap, "merge", h1, h2, "--output",
                         os.path.join(tmp, "merged.json")], repeat)
    print("%d benchmarks per file (%.1f MB each, no raw samples)" % (n, size))
    print("compare (text):  %8.2f s" % t_cmp)
    print("compare (json):  %8.2f s" % t_cmpj)
    print("merge (2 files): %8.2f s" % t_merge)


if __name__ == "__main__":
    main()
