#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What isolation changes on a Google Benchmark suite, counted exactly:
the three identical benchmarks of tests/fixtures/gbench/ripple.cpp (each one
iteration of calloc(4 MiB), touch every page, free) under callgrind.

- shared: Google Benchmark alone, every benchmark in its one process, as it
  runs them: valgrind on the whole binary, counting inside the three
  functions (--toggle-collect=BM_ripple_*), a profile after each
  (--dump-after), with the fixed environment benchtrap gives its children
  (LD_BIND_NOW=1, so that lazy binding is not counted in the first).
- isolated: `benchtrap run SUITE --instrument callgrind`: each in a process
  of its own.

In one process glibc raises its mmap threshold after the first free, so the
later calls get heap memory that calloc must clear.

usage: gbench_ripple.py BENCHTRAP RIPPLE_SUITE
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

NAMES = ["BM_ripple_1", "BM_ripple_2", "BM_ripple_3"]


def shared(suite):
    with tempfile.TemporaryDirectory() as d:
        cmd = ["valgrind", "--tool=callgrind", f"--log-file={d}/log",
               f"--callgrind-out-file={d}/cg.%p", "--collect-atstart=no",
               "--toggle-collect=BM_ripple_*"]
        cmd += [f"--dump-after={n}(benchmark::State&)" for n in NAMES]
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C", "LD_BIND_NOW": "1"}
        p = subprocess.run(cmd + [suite], capture_output=True, text=True, env=env)
        if p.returncode != 0:
            sys.exit(f"valgrind failed ({p.returncode}): {p.stderr.strip()}")
        dumps = sorted((int(f.rsplit(".", 1)[1]), f) for f in glob.glob(f"{d}/cg.*.*"))
        counts = []
        for _, f in dumps:
            for line in open(f):
                if line.startswith("totals:"):
                    counts.append(int(line.split()[1]))
        return dict(zip(NAMES, counts))


def isolated(benchtrap, suite):
    p = subprocess.run([benchtrap, "run", suite, "--instrument", "callgrind", "--format",
                        "json"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"benchtrap failed ({p.returncode}): {p.stderr.strip()}")
    return {b["name"].split("/")[0]: b["value"] for b in json.loads(p.stdout)["benchmarks"]}


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    if not shutil.which("valgrind"):
        print("skipped: valgrind is not installed")
        return 77
    benchtrap, suite = sys.argv[1:3]
    sh, iso = shared(os.path.abspath(suite)), isolated(benchtrap, suite)
    print("instructions of the one iteration (callgrind)")
    print(f"| {'benchmark':<12} | {'one process (Google Benchmark)':>30} | "
          f"{'own process (benchtrap)':>23} |")
    print(f"|{'-' * 14}|{'-' * 32}|{'-' * 25}|")
    for n in NAMES:
        print(f"| {n:<12} | {sh.get(n, float('nan')):>30,.0f} | {iso[n]:>23,.0f} |")
    rises = all(sh[n] > sh[NAMES[0]] for n in NAMES[1:])
    same = len(set(iso.values())) == 1
    print(f"one process rises after the first: {'yes' if rises else 'NO'}; "
          f"own processes identical: {'yes' if same else 'NO'}")
    return 0 if rises and same else 1


if __name__ == "__main__":
    sys.exit(main())
