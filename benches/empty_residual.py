#!/usr/bin/env python3
"""What an empty function measures under walltime, and the resolution floor.

usage: empty_residual.py BENCHTRAP EXAMPLES [RUNS]

Runs `benchtrap run` RUNS times (10) over the example suite's bare-`ret`
benchmarks (`empty`, `optimized_away`) and `loop_300ns`, each in a fresh
child, and prints per run and benchmark: the median per call after
calibration (the residual, for the empty ones), the lower end of its
confidence interval, the resolution measured in the same child (an empty
function against itself), and whether it was found to measure no execution
time. Then, per benchmark, the range over the runs. It asserts nothing: the
figures move with the machine's load (docs/run.md, "Diagnostics").
"""
import json
import statistics
import subprocess
import sys

benchtrap, examples = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 10
names = ["empty", "optimized_away", "loop_300ns"]
seen = {n: [] for n in names}

print("%-4s %-15s %10s %10s %12s  %s" % ("run", "benchmark", "median", "ci_low", "resolution",
                                          "no_time"))
for i in range(runs):
    cmd = [benchtrap, "run", examples, "--time", "0.3", "--warmup", "0.05", "--format", "json"]
    for n in names:
        cmd += ["--bench", n]
    d = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    for b in d["benchmarks"]:
        st = b["stats"]
        res = st.get("resolution")
        no_time = b.get("no_time")
        seen[b["name"]].append((st["median"], res, no_time))
        print("%-4d %-15s %10.3f %10.3f %12s  %s" % (
            i + 1, b["name"], st["median"], st["ci_low"],
            "-" if res is None else "±%.3f" % res, no_time))

print()
print("%-15s %22s %22s %10s" % ("benchmark", "median: min..max (med)", "resolution: min..max",
                                "no_time"))
for n in names:
    meds = [m for m, _, _ in seen[n]]
    ress = [r for _, r, _ in seen[n] if r is not None]
    flagged = sum(1 for _, _, t in seen[n] if t)
    print("%-15s %7.3f..%7.3f (%6.3f) %9s %12s %7d/%d" % (
        n, min(meds), max(meds), statistics.median(meds),
        "%.3f.." % min(ress) if ress else "-", "%.3f" % max(ress) if ress else "-",
        flagged, len(meds)))
