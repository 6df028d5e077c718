#!/usr/bin/env python3
"""How close benchtrap observe's median call is to the program's own timing.

usage: observe_accuracy.py BENCHTRAP TARGET [PAIRS] [N] [K]

TARGET is benches/observe_accuracy_target.c: main calls work(K) N times
(2000, K = 36000: about 10 µs of work here) and times each call itself with
CLOCK_MONOTONIC. For each of PAIRS (7) pairs, in alternation:
  - the program alone: its median (the in-process reference);
  - the program under `benchtrap observe --symbol work` (patched entries):
    observe's median, and the program's own median of the same run (which
    includes the agent's cost inside each call);
and the ratio observe / reference of each pair (the target: within 0.95 to
1.05 in at least 6 of 7). Then the same for tiny(), an increment of a few
ns, under observe: its median must be `unresolved` or within its ± of 0,
never a figure that is the agent's noise. Asserts nothing: a ratio is a
measurement, the machine's load moves it.
"""
import json
import subprocess
import sys

benchtrap, target = sys.argv[1:3]
pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 7
n = sys.argv[4] if len(sys.argv) > 4 else "2000"
k = sys.argv[5] if len(sys.argv) > 5 else "36000"


def reference(out):
    for line in out.splitlines():
        if line.startswith("reference_median_ns "):
            return float(line.split()[1])
    raise SystemExit("observe_accuracy: the target printed no reference: " + out)


def observe(sym, args, extra=()):
    p = subprocess.run([benchtrap, "observe", "--symbol", sym, "--format", "json", *extra,
                        "--", target, *args], capture_output=True, text=True, check=True)
    # the program's line first, then the document
    lines = p.stdout.splitlines()
    ref = reference(lines[0])
    doc = json.loads("\n".join(lines[1:]))
    return ref, doc["benchmarks"][0], doc["run"]["calibration"]


ok = 0
print(f"observe_accuracy: work({k}) called {n} times, {pairs} pairs (ns)")
print(f"{'pair':>4} {'alone':>10} {'observed':>10} {'±':>7} {'ratio':>7} {'in-run ref':>10}")
for i in range(pairs):
    alone = reference(subprocess.run([target, n, k], capture_output=True, text=True,
                                     check=True).stdout)
    inrun, b, cal = observe("work", [n, k])
    ratio = b["value"] / alone
    ok += 0.95 <= ratio <= 1.05
    print(f"{i + 1:>4} {alone:>10.0f} {b['value']:>10.0f} {b['stats']['uncertainty']:>7.1f} "
          f"{ratio:>7.3f} {inrun:>10.0f}  ({b['bounded_by']}, {b['calls']} calls)")
print(f"within 0.95-1.05: {ok} of {pairs} (target: at least 6 of 7)")
false = 0
for i in range(pairs):
    _, b, cal = observe("tiny", [n, "0", "tiny"])
    shown = "unresolved" if b["no_time"] else f"{b['value']:.1f}"
    false += not b["no_time"] and b["value"] > b["stats"]["uncertainty"]
    print(f"tiny: median {shown} ± {b['stats']['uncertainty']:.1f} ns, mean {b['stats']['mean']:.1f}, "
          f"agent {cal.get('overhead_ns', float('nan')):.1f} ns removed")
print(f"tiny: a median outside its ± of 0 in {false} of {pairs} (target: 0)")
