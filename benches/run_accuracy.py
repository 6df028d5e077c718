#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How accurate and how cheap `benchtrap run` is, from one run of this script.

Prints, side by side:
  1. loop_300ns measured by benchtrap (out of process, fresh child) against the
     same function timed in-process by benches/inprocess, both in the inprocess
     binary (the same code at the same addresses): their ratio (target
     0.98-1.02);
  2. the residual of the `empty` benchmark after calibration (target +-0.3 ns);
  3. the median coefficient of variation of each benchmark's value over 10
     repeated runs of the example suite (target <= 1%);
  4. the per-benchmark fixed cost, spawn -> first sample, from benchtrap's own
     markers, beside valgrind's start-up on the same binary (target >= 50x
     cheaper).
The figures are measured, never asserted: on a loaded VM they move.

usage: run_accuracy.py BENCHTRAP EXAMPLES INPROCESS [--quick]
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def benchtrap_run(benchtrap, binary, args, tmp):
    out = os.path.join(tmp, "r.json")
    markers = os.path.join(tmp, "m.jsonl")
    subprocess.run([benchtrap, "run", binary, "--output", out, "--markers", markers,
                    "--format", "json"] + args, check=False, stdout=subprocess.DEVNULL)
    with open(out) as f:
        results = json.load(f)
    with open(markers) as f:
        events = [json.loads(line) for line in f]
    return results, events


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    benchtrap, examples, inprocess = sys.argv[1:4]
    quick = "--quick" in sys.argv
    runs = 3 if quick else 10
    per_bench_time = "0.2" if quick else "1"
    tmp = tempfile.mkdtemp(prefix="benchtrap-accuracy-")
    try:
        # 1. Out of process against in process, interleaved so that both see
        #    the same machine state; the median of each side.
        outside, inside = [], []
        for _ in range(3 if quick else 7):
            r, _ = benchtrap_run(benchtrap, inprocess,
                                 ["--bench", "loop_300ns", "--time", per_bench_time], tmp)
            outside.append(r["benchmarks"][0]["value"])
            p = subprocess.run([inprocess, "loop_300ns", per_bench_time],
                               capture_output=True, text=True, check=True)
            inside.append(float(p.stdout))
        out_ns, in_ns = statistics.median(outside), statistics.median(inside)
        print("1. loop_300ns, benchtrap vs in-process (same binary, interleaved runs)")
        print(f"   benchtrap   {out_ns:9.2f} ns   (runs: {', '.join(f'{v:.1f}' for v in outside)})")
        print(f"   in-process  {in_ns:9.2f} ns   (runs: {', '.join(f'{v:.1f}' for v in inside)})")
        print(f"   ratio       {out_ns / in_ns:9.4f}      target 0.98-1.02")

        # 3 (and 2, 4). The whole suite, `runs` times.
        values, empties, fixed = {}, [], []
        for _ in range(runs):
            r, events = benchtrap_run(benchtrap, examples, ["--time", per_bench_time,
                                                            "--warmup", "0.1"], tmp)
            for b in r["benchmarks"]:
                if b["status"] != "ok":
                    continue
                no_time = any("measured no execution time" in d for d in b["diagnostics"])
                values.setdefault(b["name"], []).append((b["value"], no_time))
                if b["name"] == "empty":
                    empties.append(b["value"])
            start = None
            for e in events:
                if e["event"] == "benchmark_start":
                    start = e["t_ns"]
                elif e["event"] == "sample_start" and start is not None:
                    fixed.append((e["t_ns"] - start) / 1e6)
                    start = None

        print()
        print("2. empty benchmark after calibration (residual)")
        print(f"   median {statistics.median(empties):+.3f} ns over {len(empties)} runs "
              f"(min {min(empties):+.3f}, max {max(empties):+.3f})   target within +-0.3 ns")

        print()
        print(f"3. coefficient of variation of each benchmark's value over {runs} runs")
        cvs = []
        for name, vs in values.items():
            v = [x for x, _ in vs]
            flagged = any(t for _, t in vs)
            mean = statistics.mean(v)
            cv = statistics.stdev(v) / mean * 100 if len(v) > 1 and mean > 0 else float("nan")
            note = "  (measures no execution time: not counted)" if flagged else ""
            print(f"   {name:20s} median {statistics.median(v):11.2f} ns   CV {cv:7.2f}%{note}")
            if not flagged:
                cvs.append(cv)
        print(f"   median CV {statistics.median(cvs):.2f}% over {len(cvs)} benchmarks   "
              f"target <= 1%")

        print()
        print("4. fixed cost per benchmark: spawn -> first sample (from markers)")
        fixed.sort()
        print(f"   benchtrap  median {statistics.median(fixed):7.2f} ms  "
              f"(p10 {fixed[len(fixed) // 10]:.2f}, p90 {fixed[len(fixed) * 9 // 10]:.2f}, "
              f"n={len(fixed)})")
        if shutil.which("valgrind"):
            starts = []
            for _ in range(3):
                t0 = time.monotonic()
                subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                                examples], env=dict(os.environ, BENCHTRAP_RUN="empty"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
                starts.append((time.monotonic() - t0) * 1000)
            vg = statistics.median(starts)
            print(f"   valgrind   median {vg:7.2f} ms  (callgrind, BENCHTRAP_RUN=empty, 3 runs)")
            print(f"   valgrind / benchtrap = {vg / statistics.median(fixed):.1f}x   target >= 50x")
        else:
            print("   valgrind not installed: no comparison")
    finally:
        shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
