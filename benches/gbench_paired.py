#!/usr/bin/env python3
"""The paired comparison of two Google Benchmark builds: how often it judges right.

usage: gbench_paired.py BENCHTRAP TWIN_A TWIN_B [RUNS] [--names SAME,FIVE,TWO] [-- OPTIONS...]

TWIN_A and TWIN_B are tests/fixtures/gbench's twin builds (twin.cpp, or
setup_twin.cpp, gbench_setup_twin_a and _b, whose instances prepare before
their loops, 100 times the loop's work, as snappy's do): BM_same
is the same machine code in both (only the build-ids differ), BM_5pct does
exactly 5% more steps in TWIN_B, BM_2pct 2% more. The same battery serves
any kind of suite with such three benchmarks, named by --names: the
criterion fixture's crit_suite and crit_suite_slow with
--names twin/same,twin/5pct,twin/2pct. RUNS times (10), this runs
`benchtrap compare TWIN_A TWIN_B --threshold 2 --output P.json` (each
instance of both builds in two live children, their batches alternated, each
batch timed by benchtrap, judged on the pair ratios; docs/gbench.md) and
`benchtrap compare P.json --threshold 1` (the same pairs judged again), and
prints: how often BM_same was judged changed at threshold 2, its largest
|change|, how often its 99% interval excluded 0 (whatever the threshold) and
the interval's median half-width; how often BM_5pct was judged regressed at threshold 2 and the range
of its change; how often BM_2pct was detected (the interval of its ratio
excludes 1: ci_low_pct > 0) and judged regressed at threshold 1; and the
median wall time of one compare.

It asserts nothing about the figures, which move with the machine's load;
it exits 1 only when benchtrap itself fails (an exit status other than 0,
or 1 from compare).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

args = sys.argv[1:]
options = []
if "--" in args:
    options = args[args.index("--") + 1:]
    args = args[:args.index("--")]
names = ["BM_same", "BM_5pct", "BM_2pct"]
if "--names" in args:
    i = args.index("--names")
    names = args[i + 1].split(",")
    del args[i:i + 2]
if len(args) not in (3, 4) or len(names) != 3:
    sys.exit(__doc__.split("\n\n")[1])
benchtrap, twin_a, twin_b = args[:3]
runs = int(args[3]) if len(args) > 3 else 10
same, five, two = names


def call(cmd, ok=(0,)):
    """Runs cmd; returns (stdout, seconds). Any other exit status is the tool's failure."""
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    t = time.monotonic() - t0
    if p.returncode not in ok:
        sys.stderr.write("gbench_paired: %s exited %d\n%s" % (" ".join(cmd), p.returncode,
                                                              p.stderr))
        sys.exit(1)
    return p.stdout, t


def verdicts(report):
    """compare's JSON report as {name: (verdict, change_pct, ci_low_pct)}."""
    d = json.loads(report)
    return {b["name"]: (b["verdict"], b["change_pct"], b["ci_low_pct"]) for b in d["benchmarks"]}


def intervals(report):
    """compare's JSON report as {name: (ci_low_pct, ci_high_pct, resolution_pct)}."""
    d = json.loads(report)
    return {b["name"]: (b["ci_low_pct"], b["ci_high_pct"], b.get("resolution_pct"))
            for b in d["benchmarks"]}


seen = []
cost = []
pairs = []
sel = [a for n in names for a in ("--bench", n)]
with tempfile.TemporaryDirectory(prefix="gbench-paired.") as tmp:
    p_json = os.path.join(tmp, "paired.json")
    print("%-4s %-8s %9s %9s  %s" % ("run", "instance", "change%", "ci_low%",
                                     "verdict at 2% / at 1%"))
    for i in range(runs):
        out, t = call([benchtrap, "compare", twin_a, twin_b] + sel + options +
                      ["--threshold", "2", "--format", "json", "--output", p_json], ok=(0, 1))
        cost.append(t)
        t2 = verdicts(out)
        iv = intervals(out)
        out1, _ = call([benchtrap, "compare", p_json, "--threshold", "1", "--format", "json"],
                       ok=(0, 1))
        t1 = verdicts(out1)
        with open(p_json) as f:
            for b in json.load(f)["benchmarks"]:
                pairs.append(len((b.get("paired") or {}).get("ratios") or []))
        seen.append({"t2": t2, "t1": t1, "iv": iv})
        for n in names:
            v2, change, low = t2[n]
            print("%-4d %-8s %+9.2f %9s  %s / %s" % (
                i + 1, n, change, "-" if low is None else "%+.2f" % low, v2, t1[n][0]))
        sys.stdout.flush()


def count(n, pred, key="t2"):
    return "%d/%d" % (sum(1 for r in seen if pred(*r[key][n])), len(seen))


def changes(n):
    return [r["t2"][n][1] for r in seen]


rows = [
    ("%s (same code): judged changed at 2%%" % same,
     count(same, lambda v, c, lo: v in ("regressed", "improved"))),
    ("%s: largest |change|" % same, "%.2f%%" % max(abs(c) for c in changes(same))),
    ("%s (+5%%): judged regressed at 2%%" % five, count(five, lambda v, c, lo: v == "regressed")),
    ("%s: change min..max" % five,
     "%+.2f..%+.2f%%" % (min(changes(five)), max(changes(five)))),
    ("%s (+2%%): detected (ci_low > 0)" % two,
     count(two, lambda v, c, lo: lo is not None and lo > 0)),
    ("%s: judged regressed at 1%%" % two,
     count(two, lambda v, c, lo: v == "regressed", key="t1")),
    ("%s: change min..max" % two,
     "%+.2f..%+.2f%%" % (min(changes(two)), max(changes(two)))),
    ("%s: interval excludes 0 (99%%)" % same,
     "%d/%d" % (sum(1 for r in seen if r["iv"][same][0] is not None and
                    (r["iv"][same][0] > 0 or r["iv"][same][1] < 0)), len(seen))),
    ("%s: half-width of its interval (median)" % same,
     "%.3f%%" % statistics.median(r["iv"][same][2] for r in seen
                                  if r["iv"][same][2] is not None)),
    ("pairs per instance (median)", "%d" % statistics.median(pairs)),
    ("cost: wall time of one compare (median)", "%.2f s" % statistics.median(cost)),
]
print()
print("options: %s; %d runs" % (" ".join(options) or "compare's defaults", runs))
for label, fig in rows:
    print("%-44s %16s" % (label, fig))
