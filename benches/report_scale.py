#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How `benchtrap report` scales: writes a results file of N benchmarks
(default 1,000) with R raw samples each (default 100) and a second one as
its base, checks that benchtrap reads them (`benchtrap compare BASE HEAD`),
then prints

  the size of the results file and of the page of `benchtrap report FILE`,
  and of `benchtrap report FILE --base BASE` (a comparison of N rows too);
  the wall time of each report (the best of --repeat runs);
  the wall time headless Chromium takes to load each page and dump its DOM
  (`chromium --headless --dump-dom`), beside that of an empty page, which
  is Chromium's own start and stop; and, in a copy of the page with a probe
  script added, the time from the navigation's start to the load event as
  the page itself measures it (performance.now()).

Nothing is asserted: the figures are for reading (docs/report.md). Without
chromium on PATH the load times are left out, said so.

usage: report_scale.py BENCHTRAP [--n N] [--raw R] [--repeat K]
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time


def bench(i, rng, nraw, shift):
    value = 100.0 * (1 + i % 97) * shift
    raw = sorted(round(value * rng.lognormvariate(0, 0.02), 3) for _ in range(nraw))
    q1, median, q3, lo, hi = (raw[int(f * (nraw - 1))] for f in (0.25, 0.5, 0.75, 0.45, 0.55))
    rng.shuffle(raw)
    mean = sum(raw) / nraw
    sd = (sum((x - mean) ** 2 for x in raw) / (nraw - 1)) ** 0.5
    return {"name": "suite/case_%04d[%d]" % (i, i % 7), "symbol": None, "args": [],
            "instrument": "walltime", "unit": "ns", "value": median, "status": "ok",
            "error": None, "no_time": False,
            "stats": {"median": median, "mean": mean, "stddev": sd, "min": min(raw),
                      "max": max(raw), "q1": q1, "q3": q3, "iqr": q3 - q1, "samples": nraw,
                      "iterations_per_sample": 100, "outliers": 0, "cv": sd / mean,
                      "ci_low": lo, "ci_high": hi, "confidence": 0.95},
            "diagnostics": [], "raw_samples": raw, "pid": 1}


def write(path, n, nraw, seed, shift):
    rng = random.Random(seed)
    env = {"cpu": "Test CPU", "cores": 2, "kernel": "Linux", "libc": "glibc 2.36",
           "binary": "bench", "build_id": None, "compiler": "GCC: 12", "aslr": False,
           "governor": None, "hostname": "h", "benchtrap": "0.1.0",
           "date": "2026-01-01T00:00:00Z"}
    doc = {"schema": "benchtrap-results/1", "environment": env,
           "run": {"instrument": "walltime", "isolation": "benchmark"},
           "benchmarks": [bench(i, rng, nraw, shift(i)) for i in range(n)]}
    with open(path, "w") as f:
        json.dump(doc, f)


def best_time(cmd, repeat, ok=(0,)):
    best = None
    for _ in range(repeat):
        t0 = time.monotonic()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        t = time.monotonic() - t0
        if p.returncode not in ok:
            sys.exit("%s failed (%d): %s" % (" ".join(cmd[:2]), p.returncode,
                                              p.stderr.decode().strip()))
        best = t if best is None else min(best, t)
    return best


PROBE = ('<script>addEventListener("load",function(){document.documentElement.'
         'setAttribute("data-load-ms",performance.now().toFixed(0));});</script>')


def chromium_load(chromium, page, repeat):
    """Best wall time of `chromium --headless --dump-dom file://PAGE`, the
    size of the DOM it dumped, and the page's own time to its load event
    (in a copy of it with PROBE added), the best over 'repeat' loads."""
    best, size, load = None, 0, None
    probed = page + ".probe.html"
    with open(page) as f, open(probed, "w") as g:
        g.write(f.read().replace("</body>", PROBE + "</body>"))
    for _ in range(repeat):
        p = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                            "--dump-dom", "file://" + probed],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=300)
        m = re.search(rb'data-load-ms="([0-9]+)"', p.stdout)
        if m:
            load = int(m.group(1)) if load is None else min(load, int(m.group(1)))
    for _ in range(repeat):
        t0 = time.monotonic()
        p = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                            "--dump-dom", "file://" + page],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=300)
        t = time.monotonic() - t0
        if p.returncode != 0:
            sys.exit("chromium failed on %s (%d)" % (page, p.returncode))
        best = t if best is None else min(best, t)
        size = len(p.stdout)
    return best, size, load


def mb(n):
    return "%.2f MB" % (n / 1e6)


def main():
    sys.stdout.reconfigure(line_buffering=True)
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    benchtrap, n, nraw, repeat = args[0], 1000, 100, 3
    i = 1
    while i < len(args):
        if args[i] in ("--n", "--raw", "--repeat") and i + 1 < len(args):
            v = int(args[i + 1])
            if args[i] == "--n":
                n = v
            elif args[i] == "--raw":
                nraw = v
            else:
                repeat = v
            i += 2
        else:
            sys.exit("report_scale.py: unexpected argument '%s'\n%s" % (args[i], __doc__))
    tmp = tempfile.mkdtemp(prefix="benchtrap-report-scale.")
    try:
        head, base = os.path.join(tmp, "head.json"), os.path.join(tmp, "base.json")
        write(head, n, nraw, 1, lambda k: 1.0)
        # Every tenth benchmark 10 % slower in head: regressions to draw.
        write(base, n, nraw, 2, lambda k: 1 / 1.1 if k % 10 == 0 else 1.0)
        # The files are results files benchtrap reads (exit 1: regressions).
        best_time([benchtrap, "compare", base, head], 1, ok=(0, 1))
        print("report of %d benchmarks, %d raw samples each" % (n, nraw))
        print("  results file: %s" % mb(os.path.getsize(head)))
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        empty = os.path.join(tmp, "empty.html")
        with open(empty, "w") as f:
            f.write("<!DOCTYPE html><title>empty</title>")
        if chromium:
            t0, _, _ = chromium_load(chromium, empty, repeat)
            print("  chromium, an empty page: %.2f s (its own start and stop)" % t0)
        for label, extra in (("run", []), ("run --base", ["--base", base])):
            page = os.path.join(tmp, "report%d.html" % len(extra))
            cmd = [benchtrap, "report", head] + extra + ["-o", page]
            t = best_time(cmd, repeat)
            print("  report %-10s  %s in %.3f s" % (label, mb(os.path.getsize(page)), t))
            if chromium:
                tl, dom, load = chromium_load(chromium, page, repeat)
                print("    chromium --dump-dom: %.2f s (%.2f s past an empty page; DOM "
                      "%s); its load event at %s ms" % (tl, tl - t0, mb(dom), load))
        if not chromium:
            print("  chromium is not on PATH: load times not measured")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
