#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How the results history scales (docs/history.md): writes C commits x B
benchmarks of results files (default 200 x 50, 30 raw samples each, 3 %
noise, a +10 % step in every fifth benchmark at commit 150), imports them
into a fresh history, then prints the wall time of

  benchtrap history add --db H.db --commit C FILE     (one more run)
  benchtrap history check --db H.db                   (every series)
  benchtrap history show --db H.db 'b001' --format json
  benchtrap report FILE --history H.db -o report.html (when report exists)

each the median of --repeat K runs (default 5), with the database's size.
Nothing is asserted: the figures are for reading. Also prints how many of
the planted steps `check` found, and where else it found one.

usage: history_scale.py BENCHTRAP [--commits C] [--benches B] [--repeat K]
"""
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time


def results(commit, nbench, rng, nraw, step_at):
    benches = []
    for b in range(nbench):
        centre = 1000.0 * (1 + b % 7)
        if b % 5 == 0 and commit >= step_at:
            centre *= 1.10
        raw = [centre * rng.gauss(1, 0.03) for _ in range(nraw)]
        raw.sort()
        med = statistics.median(raw)
        benches.append({
            "name": "b%03d" % b, "symbol": None, "args": [], "instrument": "walltime",
            "unit": "ns", "value": med, "status": "ok", "error": None, "no_time": False,
            "stats": {"median": med, "mean": statistics.fmean(raw),
                      "stddev": statistics.stdev(raw), "min": raw[0], "max": raw[-1],
                      "q1": raw[len(raw) // 4], "q3": raw[3 * len(raw) // 4],
                      "samples": nraw, "iterations_per_sample": 100,
                      "ci_low": med * 0.99, "ci_high": med * 1.01, "confidence": 0.95},
            "diagnostics": [], "raw_samples": raw})
    return {"schema": "benchtrap-results/1",
            "environment": {"cpu": "Bench CPU", "cores": 2, "kernel": "Linux", "libc": "glibc",
                            "binary": "bench", "build_id": "%040x" % commit,
                            "compiler": None, "aslr": False, "governor": None,
                            "hostname": "h", "benchtrap": "0.1.0",
                            "date": "2026-01-01T00:00:00Z"},
            "run": {"instrument": "walltime", "isolation": "benchmark"},
            "benchmarks": benches}


def timed(argv, repeat, ok=(0, 1)):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - t)
        if p.returncode not in ok:
            sys.exit("%s: exit %d: %s" % (" ".join(argv), p.returncode, p.stderr.decode()))
    return statistics.median(times)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    bt = args.pop(0)
    commits, nbench, repeat = 200, 50, 5
    while args:
        a = args.pop(0)
        if a == "--commits":
            commits = int(args.pop(0))
        elif a == "--benches":
            nbench = int(args.pop(0))
        elif a == "--repeat":
            repeat = int(args.pop(0))
        else:
            sys.exit("unknown option " + a)
    rng = random.Random(7)
    step_at = commits * 3 // 4
    with tempfile.TemporaryDirectory() as d:
        rdir = os.path.join(d, "results")
        os.mkdir(rdir)
        for c in range(commits + repeat):
            doc = results(c, nbench, rng, 30, step_at)
            doc["environment"]["date"] = "2026-01-01T00:00:00Z"
            name = os.path.join(rdir if c < commits else d, "%07x.json" % (0x1000000 + c))
            with open(name, "w") as f:
                json.dump(doc, f)
        db = os.path.join(d, "h.db")
        t = time.perf_counter()
        subprocess.run([bt, "history", "import", "--db", db, "--commit-from", "name", rdir],
                       check=True, stdout=subprocess.DEVNULL)
        t_import = time.perf_counter() - t
        extra = sorted(f for f in os.listdir(d) if f.endswith(".json"))
        adds = []
        for f in extra:
            t = time.perf_counter()
            subprocess.run([bt, "history", "add", "--db", db, "--commit", f[:-5],
                            os.path.join(d, f)], check=True, stdout=subprocess.DEVNULL)
            adds.append(time.perf_counter() - t)
        t_check = timed([bt, "history", "check", "--db", db], repeat)
        t_show = timed([bt, "history", "show", "--db", db, "b001", "--format", "json"], repeat)
        out = subprocess.run([bt, "history", "check", "--db", db, "--format", "json"],
                             stdout=subprocess.PIPE).stdout
        found = json.loads(out)["series"]
        planted = {"b%03d" % b for b in range(nbench) if b % 5 == 0}
        hits = {s["name"] for s in found
                if any(abs(int(c["commit"], 16) - 0x1000000 - step_at) <= 3
                       for c in s["change_points"])}
        spurious = sum(1 for s in found for c in s["change_points"]
                       if s["name"] not in planted
                       or abs(int(c["commit"], 16) - 0x1000000 - step_at) > 3)
        t_report = None
        help_ = subprocess.run([bt, "report", "--help"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
        if help_.returncode == 0 and b"--history" in help_.stdout:
            t_report = timed([bt, "report", os.path.join(d, extra[-1]), "--history", db, "-o",
                              os.path.join(d, "report.html")], repeat, ok=(0,))
            rsize = os.path.getsize(os.path.join(d, "report.html"))
        print("history of %d commits x %d benchmarks (%d points), %.1f MB on disk"
              % (commits + repeat, nbench, (commits + repeat) * nbench,
                 os.path.getsize(db) / 1e6))
        print("  import of %d files: %.2f s" % (commits, t_import))
        print("  add of one run:     %.3f s (median of %d)" % (statistics.median(adds), len(adds)))
        print("  check:              %.3f s (median of %d)" % (t_check, repeat))
        print("  show --format json: %.3f s" % t_show)
        if t_report is not None:
            print("  report --history:   %.3f s, %.1f MB" % (t_report, rsize / 1e6))
        print("  planted +10 %% steps found: %d of %d; change points elsewhere: %d"
              % (len(hits), len(planted), spurious))


main()
