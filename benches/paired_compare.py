#!/usr/bin/env python3
"""The paired comparison of two builds against two runs and a compare of their files.

usage: paired_compare.py BENCHTRAP TWIN_A TWIN_B [RUNS] [-- OPTIONS...]

TWIN_A and TWIN_B are tests/fixtures/paired's twin builds: loop_1us is the
same machine code in both (only the build-ids differ), loop_5pct does exactly
5% more steps in TWIN_B, loop_2pct 2% more. RUNS times (10), this measures
both ways of comparing them:

  paired     `benchtrap compare TWIN_A TWIN_B --threshold 2 --output P.json`:
             each benchmark of both builds sampled alternately in two live
             children and judged on the pair ratios; the threshold-1 verdicts
             are those of `benchtrap compare P.json --threshold 1` (the same
             pairs, judged again)
  two files  `benchtrap run TWIN_A --output a.json`, then the same of TWIN_B,
             then `benchtrap compare a.json b.json --threshold 2` (and 1)

and prints, per way: how often loop_1us was judged changed at threshold 2
and its largest |change|; how often loop_5pct was judged regressed at
threshold 2 and the range of its measured change; how often loop_2pct was
detected (the interval of its ratio excludes 1: ci_low_pct > 0) and judged
regressed at threshold 1. Last, the cost: the wall time of one paired compare
over that of one `benchtrap run` of one build with the same OPTIONS (default:
run's own defaults), medians over the runs.

It asserts nothing about the figures, which move with the machine's load;
it exits 1 only when benchtrap itself fails (an exit status other than 0, or
1 from compare).
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
if len(args) not in (3, 4):
    sys.exit(__doc__.split("\n\n")[1])
benchtrap, twin_a, twin_b = args[:3]
runs = int(args[3]) if len(args) > 3 else 10
names = ["loop_1us", "loop_5pct", "loop_2pct"]
ways = ["paired", "two files"]


def call(cmd, ok=(0,)):
    """Runs cmd; returns (stdout, seconds). Any other exit status is the tool's failure."""
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    t = time.monotonic() - t0
    if p.returncode not in ok:
        sys.stderr.write("paired_compare: %s exited %d\n%s" % (" ".join(cmd), p.returncode,
                                                               p.stderr))
        sys.exit(1)
    return p.stdout, t


def verdicts(report):
    """compare's JSON report as {name: (verdict, change_pct, ci_low_pct)}."""
    d = json.loads(report)
    return {b["name"]: (b["verdict"], b["change_pct"], b["ci_low_pct"]) for b in d["benchmarks"]}


def compare_files(base, head, threshold):
    """compare BASE HEAD, or compare BASE alone when it is a paired document."""
    files = [base] + ([head] if head else [])
    out, _ = call([benchtrap, "compare"] + files + ["--threshold", str(threshold),
                                                    "--format", "json"], ok=(0, 1))
    return verdicts(out)


# seen[way][run] = {"t2": {name: (...)}, "t1": {name: (...)}}
seen = {w: [] for w in ways}
cost = {"paired": [], "run": []}
nulls = [0, 0]  # pairs without a ratio (a sample not above 0), pairs
sel = [a for n in names for a in ("--bench", n)]

with tempfile.TemporaryDirectory(prefix="paired-compare.") as tmp:
    p_json = os.path.join(tmp, "paired.json")
    a_json = os.path.join(tmp, "a.json")
    b_json = os.path.join(tmp, "b.json")
    print("%-4s %-10s %-10s %9s %9s  %s" % ("run", "way", "benchmark", "change%", "ci_low%",
                                            "verdict at 2% / at 1%"))
    for i in range(runs):
        # Paired: one command; its own report is the threshold-2 judgement.
        out, t = call([benchtrap, "compare", twin_a, twin_b] + sel + options +
                      ["--threshold", "2", "--format", "json", "--output", p_json], ok=(0, 1))
        cost["paired"].append(t)
        t2 = verdicts(out)
        seen["paired"].append({"t2": t2, "t1": compare_files(p_json, None, 1)})
        with open(p_json) as f:
            for b in json.load(f)["benchmarks"]:
                r = (b.get("paired") or {}).get("ratios") or []
                nulls[0] += sum(1 for x in r if x is None)
                nulls[1] += len(r)

        # Two files, as a CI job does it today.
        _, t = call([benchtrap, "run", twin_a] + sel + options + ["--output", a_json,
                                                                   "--format", "json"])
        cost["run"].append(t)
        call([benchtrap, "run", twin_b] + sel + options + ["--output", b_json, "--format", "json"])
        seen["two files"].append({"t2": compare_files(a_json, b_json, 2),
                                  "t1": compare_files(a_json, b_json, 1)})

        for w in ways:
            r = seen[w][-1]
            for n in names:
                v2, change, low = r["t2"][n]
                v1 = r["t1"][n][0]
                print("%-4d %-10s %-10s %+9.2f %9s  %s / %s" % (
                    i + 1, w, n, change, "-" if low is None else "%+.2f" % low, v2, v1))
        sys.stdout.flush()


def count(w, n, pred, key="t2"):
    return "%d/%d" % (sum(1 for r in seen[w] if pred(*r[key][n])), len(seen[w]))


def changes(w, n):
    return [r["t2"][n][1] for r in seen[w]]


rows = [
    ("loop_1us (same code): judged changed at 2%",
     lambda w: count(w, "loop_1us", lambda v, c, lo: v in ("regressed", "improved"))),
    ("loop_1us: largest |change|",
     lambda w: "%.2f%%" % max(abs(c) for c in changes(w, "loop_1us"))),
    ("loop_5pct (+5%): judged regressed at 2%",
     lambda w: count(w, "loop_5pct", lambda v, c, lo: v == "regressed")),
    ("loop_5pct: change min..max",
     lambda w: "%+.2f..%+.2f%%" % (min(changes(w, "loop_5pct")), max(changes(w, "loop_5pct")))),
    ("loop_2pct (+2%): detected (ci_low > 0)",
     lambda w: count(w, "loop_2pct", lambda v, c, lo: lo is not None and lo > 0)),
    ("loop_2pct: judged regressed at 1%",
     lambda w: count(w, "loop_2pct", lambda v, c, lo: v == "regressed", key="t1")),
    ("loop_2pct: change min..max",
     lambda w: "%+.2f..%+.2f%%" % (min(changes(w, "loop_2pct")), max(changes(w, "loop_2pct")))),
]
print()
print("options: %s; %d runs" % (" ".join(options) or "run's defaults", runs))
print("%-44s %16s %16s" % ("figure", "paired", "two files"))
for label, fig in rows:
    print("%-44s %16s %16s" % (label, fig("paired"), fig("two files")))
print("%-44s %16s" % ("pairs without a ratio (a sample not above 0)",
                       "%d of %d" % tuple(nulls)))
pm, rm = statistics.median(cost["paired"]), statistics.median(cost["run"])
print("%-44s %16s %16s" % ("cost: wall time (median)", "%.2f s" % pm, "%.2f s per run" % rm))
print("%-44s %16s" % ("cost: one paired compare / one run", "%.2fx" % (pm / rm)))
