#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""benchtrap on an unmodified Google Benchmark binary against the binary's
own figures (tests/fixtures/gbench/suite.cpp, docs/gbench.md):

- walltime: for each of a few instances, benchtrap's figure (`run --bench
  NAME`: the instance alone in a fresh process, the median of its
  repetitions' real time per iteration) and Google Benchmark's own (the
  binary run directly with --benchmark_filter=^NAME$, the same repetitions
  and min time, the median of its repetitions), interleaved ROUNDS times
  (which goes first alternates); the ratio of the medians over the rounds
  (benchtrap / Google Benchmark), and the median of each round's ratio, which
  the host's changes of speed between rounds move less (docs/compare.md,
  "Why the host changes speed in whole stretches").
- callgrind: instructions per iteration of BM_counted, whose loop is
  counted_loop(1000) in assembly (2 * 1000 + 2 instructions) called from the
  State loop (mov, call, sub, jne: 4 more): 2006 by hand; benchtrap's count
  in RUNS runs, its distinct values, and its distance from 2006.

usage: gbench.py BENCHTRAP SUITE [ROUNDS [RUNS]]
"""
import json
import shutil
import statistics
import subprocess
import sys

INSTANCES = ["BM_counted", "BM_memcpy/64", "BM_sum<int>", "Queue/Drain/16"]
REPS, MIN_TIME = 10, 0.02
HAND = 2 * 1000 + 2 + 4


def escape(name):
    return "".join("\\" + c if c in "\\^$.|?*+()[]{}" else c for c in name)


def benchtrap_walltime(benchtrap, suite, name):
    p = subprocess.run([benchtrap, "run", suite, "--bench", name, "--format", "json", "--",
                        f"--benchmark_repetitions={REPS}", f"--benchmark_min_time={MIN_TIME}"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"benchtrap failed ({p.returncode}): {p.stderr.strip()}")
    return json.loads(p.stdout)["benchmarks"][0]["value"]


def gbench_walltime(suite, name):
    p = subprocess.run([suite, f"--benchmark_filter=^{escape(name)}$",
                        f"--benchmark_repetitions={REPS}", f"--benchmark_min_time={MIN_TIME}",
                        "--benchmark_format=json"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{suite} failed ({p.returncode}): {p.stderr.strip()}")
    unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
    runs = [b for b in json.loads(p.stdout)["benchmarks"]
            if b["name"] == name and b.get("run_type") == "iteration"]
    return statistics.median(b["real_time"] * unit[b["time_unit"]] for b in runs)


def callgrind(benchtrap, suite):
    p = subprocess.run([benchtrap, "run", suite, "--instrument", "callgrind", "--bench",
                        "BM_counted", "--format", "json"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"benchtrap failed ({p.returncode}): {p.stderr.strip()}")
    return json.loads(p.stdout)["benchmarks"][0]["value"]


def main():
    if len(sys.argv) not in (3, 4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    benchtrap, suite = sys.argv[1:3]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 15
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    ok = True

    print(f"walltime, ns per iteration: medians over {rounds} interleaved rounds "
          f"({REPS} repetitions of {MIN_TIME} s each)")
    print(f"| {'instance':<16} | {'benchtrap':>10} | {'Google Benchmark':>16} | "
          f"{'ratio of medians':>16} | {'median of ratios':>16} |")
    print(f"|{'-' * 18}|{'-' * 12}|{'-' * 18}|{'-' * 18}|{'-' * 18}|")
    for name in INSTANCES:
        bt, gb = [], []
        for k in range(rounds):
            if k % 2:
                gb.append(gbench_walltime(suite, name))
                bt.append(benchtrap_walltime(benchtrap, suite, name))
            else:
                bt.append(benchtrap_walltime(benchtrap, suite, name))
                gb.append(gbench_walltime(suite, name))
        ratio = statistics.median(bt) / statistics.median(gb)
        paired = statistics.median(a / b for a, b in zip(bt, gb))
        # Judged on the rounds' own ratios: between rounds the host's speed
        # changes by more than 10% (both figures of a round move together).
        ok &= 0.9 <= paired <= 1.1
        print(f"| {name:<16} | {statistics.median(bt):>10.2f} | {statistics.median(gb):>16.2f} "
              f"| {ratio:>16.3f} | {paired:>16.3f} |")

    if not shutil.which("valgrind"):
        print("callgrind: skipped, valgrind is not installed")
        return 0 if ok else 1
    counts = [callgrind(benchtrap, suite) for _ in range(runs)]
    off = (counts[0] - HAND) / HAND
    print(f"callgrind, BM_counted: {runs} runs, distinct values {sorted(set(counts))}; "
          f"by hand {HAND}: {100 * off:+.3f}%")
    ok &= len(set(counts)) == 1 and abs(off) <= 0.01
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
