#!/usr/bin/env python3
"""What run --profile records, what it costs, and that it leaves the figures alone.

usage: profile.py BENCHTRAP EXAMPLES PROFILE_FIXTURE [RUNS] [INSTRUMENT...]

For each instrument given that takes --profile (walltime by default):
  - fib[20] of the example suite: the share of its samples (or cost) whose
    stack holds fib (the target: 95% or more);
  - two_helpers of tests/fixtures/profile: the shares of heavy and light,
    which do 3 and 1 units of the same work (the target: 75/25 within 5
    points);
then, under walltime, RUNS (6) pairs of runs of fib[20] and loop_300ns,
without and with --profile in alternation, each run's medians and the
ratio of each pair's, against the spread of the runs without: the profile
is a pass of its own after the measurement, so the figures must agree
within run-to-run noise. The wall time of a run with and without --profile
is its cost. Asserts nothing: the figures move with the machine's load.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

benchtrap, examples, fixture = sys.argv[1:4]
runs = int(sys.argv[4]) if len(sys.argv) > 4 else 6
instruments = sys.argv[5:] or ["walltime"]


def run(args):
    t0 = time.monotonic()
    out = subprocess.run([benchtrap, "run"] + args + ["--format", "json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out), time.monotonic() - t0


def shares(folded, frames):
    tot, hit = 0, {f: 0 for f in frames}
    for line in open(folded):
        path, n = line.rsplit(" ", 1)
        tot += int(n)
        for f in frames:
            if f in path.split(";"):
                hit[f] += int(n)
    return tot, {f: 100.0 * hit[f] / tot if tot else float("nan") for f in frames}


with tempfile.TemporaryDirectory() as d:
    for ins in instruments:
        prof = os.path.join(d, ins)
        os.mkdir(prof)
        r, secs = run([examples, "--bench", "fib[20]", "--instrument", ins, "--profile", prof])
        b = r["benchmarks"][0]
        tot, s = shares(b["flamegraph"]["folded"], ["fib"])
        print("%-9s fib[20]      fib %5.1f%% of %d (run with --profile: %.2f s)" %
              (ins, s["fib"], tot, secs))
        r, secs = run([fixture, "--bench", "two_helpers", "--instrument", ins,
                       "--profile", prof])
        b = r["benchmarks"][0]
        tot, s = shares(b["flamegraph"]["folded"], ["heavy", "light"])
        print("%-9s two_helpers heavy %5.1f%% light %5.1f%% of %d (target 75/25)" %
              (ins, s["heavy"], s["light"], tot))

    prof = os.path.join(d, "pairs")
    os.mkdir(prof)
    names = ["fib[20]", "loop_300ns"]
    base = [examples, "--time", "0.5", "--bench", names[0], "--bench", names[1]]
    without, ratios, cost = {n: [] for n in names}, {n: [] for n in names}, [[], []]
    print("\npair  benchmark    without (ns)  with (ns)   with/without")
    for i in range(runs):
        a, ta = run(base)
        b, tb = run(base + ["--profile", prof])
        cost[0].append(ta)
        cost[1].append(tb)
        for x, y in zip(a["benchmarks"], b["benchmarks"]):
            without[x["name"]].append(x["value"])
            ratios[x["name"]].append(y["value"] / x["value"])
            print("%-5d %-12s %12.1f %10.1f   %.3f" % (i + 1, x["name"], x["value"], y["value"],
                                                      y["value"] / x["value"]))
    print()
    for n in names:
        v = without[n]
        print("%-12s with/without: median %.3f (range %.3f-%.3f); runs without: %.1f-%.1f ns "
              "(max/min %.3f)" % (n, statistics.median(ratios[n]), min(ratios[n]),
                                  max(ratios[n]), min(v), max(v), max(v) / min(v)))
    print("run of 2 benchmarks: %.2f s without --profile, %.2f s with (medians)" %
          (statistics.median(cost[0]), statistics.median(cost[1])))
