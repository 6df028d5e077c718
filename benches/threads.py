#!/usr/bin/env python3
"""Threaded benchmarks (--threads): scaling, contention, and the markers' rounds.

usage: threads.py BENCHTRAP ROUNDS_BINARY INPROCESS_BINARY [RUNS]

ROUNDS_BINARY is tests/fixtures/rounds; INPROCESS_BINARY is
benches/threads_inprocess, the same source's bodies run on threads of their
own process by a pthread barrier (the in-process way). For RUNS runs
(default 5), interleaved:

  - `benchtrap run ROUNDS --bench independent --bench contended --threads 1,2`:
    the per-call time at 2 threads over the time at 1, for each body, both
    measured in the same invocation (one right after the other);
  - threads_inprocess BODY 1 and BODY 2, the same ratio in-process.

It prints every run's ratios and their medians beside the targets:
independent work (no shared writes) at 2 threads within 0.8-1.4x of 1 thread
on a 2-core machine, contended work (atomic increments of one counter) at
least 1.3x. Then one run with --markers, checked sample by sample: exactly
one start/end pair per sample, start <= every thread's start, end >= every
thread's end, samples ordered and never overlapping; it prints the count of
samples checked and of violations.

It asserts nothing about the timings, which move with the machine's load:
it exits 1 only when benchtrap fails or a marker rule is broken (those do
not depend on the load).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

if len(sys.argv) not in (4, 5):
    sys.exit(__doc__.split("\n\n")[1])
benchtrap, rounds, inprocess = sys.argv[1:4]
RUNS = int(sys.argv[4]) if len(sys.argv) > 4 else 5
BODIES = ("independent", "contended")
TARGETS = {"independent": "0.8-1.4x", "contended": ">= 1.3x"}


def run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        sys.exit("threads.py: %s exited with %d" % (" ".join(args), p.returncode))
    return p.stdout


def benchtrap_ratios(tmp):
    out = os.path.join(tmp, "r.json")
    run([benchtrap, "run", rounds, "--threads", "1,2", "--time", "1", "--output", out]
        + [a for b in BODIES for a in ("--bench", b)])
    doc = json.load(open(out))
    value = {b["name"]: b["value"] for b in doc["benchmarks"]}
    return {b: value["%s[threads=2]" % b] / value["%s[threads=1]" % b] for b in BODIES}


def inprocess_ratios():
    r = {}
    for b in BODIES:
        one = float(run([inprocess, b, "1", "1"]))
        two = float(run([inprocess, b, "2", "1"]))
        r[b] = two / one
    return r


def check_markers(tmp):
    markers = os.path.join(tmp, "m.jsonl")
    run([benchtrap, "run", rounds, "--threads", "2", "--time", "1", "--markers", markers]
        + [a for b in BODIES for a in ("--bench", b)])
    checked = violations = 0
    for body in BODIES:
        name = "%s[threads=2]" % body
        events = [json.loads(l) for l in open(markers)]
        events = [e for e in events if e.get("name") == name and e["event"].startswith("sample")]
        starts = {}
        last_end = 0
        for e in events:
            k = e["sample"]
            if e["event"] == "sample_start":
                if k in starts:
                    violations += 1
                starts[k] = e["t_ns"]
                continue
            if k not in starts or len(e.get("threads", [])) != 2:
                violations += 1
                continue
            s, t = starts[k], e["t_ns"]
            th = e["threads"]
            ok = (s <= min(x["start_ns"] for x in th) and t >= max(x["end_ns"] for x in th)
                  and s == min(x["start_ns"] for x in th)
                  and t == max(x["end_ns"] for x in th)
                  and s > last_end and s <= t and len({x["tid"] for x in th}) == 2)
            violations += not ok
            last_end = t
            checked += 1
    return checked, violations


def main():
    bt = {b: [] for b in BODIES}
    ip = {b: [] for b in BODIES}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(RUNS):
            r = benchtrap_ratios(tmp)
            q = inprocess_ratios()
            for b in BODIES:
                bt[b].append(r[b])
                ip[b].append(q[b])
            print("run %d: %s" % (i + 1, "  ".join(
                "%s benchtrap %.2fx in-process %.2fx" % (b, r[b], q[b]) for b in BODIES)),
                flush=True)
        print()
        print("per-call time, 2 threads over 1 (median of %d runs):" % RUNS)
        for b in BODIES:
            print("  %-12s benchtrap %.2fx   in-process %.2fx   target %s" % (
                b, statistics.median(bt[b]), statistics.median(ip[b]), TARGETS[b]))
        checked, violations = check_markers(tmp)
        print("markers: %d samples checked, %d broke a rule" % (checked, violations))
    if violations or checked == 0:
        sys.exit(1)


main()
