#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What isolation changes, counted exactly: the three identical
allocator_ripple benchmarks of the example suite (each calloc(4 MiB), touch
every page, free) under callgrind, all in one process (--isolation shared)
and each in its own (--isolation benchmark). In one process glibc raises its
mmap threshold after the first free, so the later calls get heap memory
that calloc must clear: shared counts rise after the first; isolated counts
are identical.

usage: allocator_ripple.py BENCHTRAP EXAMPLES
"""
import json
import shutil
import subprocess
import sys


def counts(benchtrap, examples, isolation):
    p = subprocess.run([benchtrap, "run", examples, "--instrument", "callgrind",
                        "--bench", "allocator_ripple_*", "--isolation", isolation,
                        "--format", "json"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"benchtrap failed ({p.returncode}): {p.stderr.strip()}")
    return {b["name"]: b["value"] for b in json.loads(p.stdout)["benchmarks"]}


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    if not shutil.which("valgrind"):
        print("skipped: valgrind is not installed")
        return 77
    benchtrap, examples = sys.argv[1:3]
    shared = counts(benchtrap, examples, "shared")
    isolated = counts(benchtrap, examples, "benchmark")
    names = list(shared)
    print("instructions per call (callgrind)")
    print(f"| {'bench':<20} | {'shared process':>14} | {'isolated':>10} |")
    print(f"|{'-' * 22}|{'-' * 16}|{'-' * 12}|")
    for n in names:
        print(f"| {n:<20} | {shared[n]:>14,.0f} | {isolated[n]:>10,.0f} |")
    rises = all(shared[n] > shared[names[0]] for n in names[1:])
    same = len(set(isolated.values())) == 1
    print(f"shared rises after the first: {'yes' if rises else 'NO'}; "
          f"isolated identical: {'yes' if same else 'NO'}")
    return 0 if rises and same else 1


if __name__ == "__main__":
    sys.exit(main())
