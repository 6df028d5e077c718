#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How much each instrument's numbers move between runs: the example suite
run N times (default 10) per instrument, walltime and callgrind. Prints each
benchmark's coefficient of variation of its value across the runs and, per
instrument, the median, p90 and max CV and how many benchmarks exceed 1% and
0%: the table a CI user needs before trusting a comparison. Also prints the
fixed cost of a benchmark under callgrind (wall time per benchmark of the
`empty` benchmark) beside valgrind's own start-up on the same binary.
Nothing is asserted: on a loaded VM walltime figures move.

usage: variance.py BENCHTRAP EXAMPLES [--runs N] [--quick]
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import time


def cv(values):
    if len(values) < 2 or statistics.mean(values) == 0:
        return 0.0
    return statistics.stdev(values) / abs(statistics.mean(values))


def quantile(sorted_values, p):
    h = (len(sorted_values) - 1) * p
    lo = int(h)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (h - lo) * (sorted_values[hi] - sorted_values[lo])


def run_suite(benchtrap, examples, instrument, extra):
    p = subprocess.run([benchtrap, "run", examples, "--instrument", instrument,
                        "--format", "json"] + extra, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"benchtrap failed ({p.returncode}): {p.stderr.strip()}")
    return {b["name"]: b["value"] for b in json.loads(p.stdout)["benchmarks"]
            if b["status"] == "ok"}


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    benchtrap, examples = args[:2]
    runs = int(args[args.index("--runs") + 1]) if "--runs" in args else 10
    quick = "--quick" in args
    instruments = [("walltime", ["--time", "0.2" if quick else "1", "--warmup", "0.1"])]
    if shutil.which("valgrind"):
        instruments.append(("callgrind", []))
    else:
        print("valgrind is not installed: callgrind skipped")
    per = {}
    for name, extra in instruments:
        values = {}
        for _ in range(runs):
            for bench, v in run_suite(benchtrap, examples, name, extra).items():
                values.setdefault(bench, []).append(v)
        per[name] = {b: cv(v) for b, v in values.items()}

    benches = list(next(iter(per.values())))
    print(f"coefficient of variation of each benchmark's value over {runs} runs")
    print("| bench | " + " | ".join(per) + " |")
    print("|---|" + "---:|" * len(per))
    for b in benches:
        print(f"| {b} | " + " | ".join(f"{per[i].get(b, float('nan')) * 100:.3f}%"
                                       for i in per) + " |")
    print()
    print("| instrument | median CV | p90 CV | max CV | > 1% | > 0% |")
    print("|---|---:|---:|---:|---:|---:|")
    for i, c in per.items():
        s = sorted(c.values())
        print(f"| {i} | {quantile(s, 0.5) * 100:.3f}% | {quantile(s, 0.9) * 100:.3f}% | "
              f"{s[-1] * 100:.3f}% | {sum(x > 0.01 for x in s)} | {sum(x > 0 for x in s)} |")

    if shutil.which("valgrind"):
        # Fixed cost: one benchmark under benchtrap's callgrind instrument,
        # against valgrind --tool=callgrind running the same benchmark of
        # the same binary through target-stub's BENCHTRAP_RUN, by hand.
        reps = 3 if quick else 10
        ours, theirs = [], []
        env = dict(os.environ, BENCHTRAP_RUN="empty")
        for _ in range(reps):
            t = time.monotonic()
            subprocess.run([benchtrap, "run", examples, "--instrument", "callgrind",
                            "--bench", "empty", "--format", "json"],
                           capture_output=True, check=True)
            ours.append(time.monotonic() - t)
            t = time.monotonic()
            subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                            examples], env=env, capture_output=True, check=True)
            theirs.append(time.monotonic() - t)
        o, v = statistics.median(ours), statistics.median(theirs)
        print()
        print(f"fixed cost per benchmark under callgrind (median of {reps}):")
        print(f"  benchtrap run --instrument callgrind --bench empty  {o * 1000:7.1f} ms")
        print(f"  valgrind --tool=callgrind (BENCHTRAP_RUN=empty)      {v * 1000:7.1f} ms")
        print(f"  ratio {o / v:.2f}  (target <= 1.2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
