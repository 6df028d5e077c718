#!/usr/bin/env python3
"""What observing a call costs, benchtrap observe beside its peers.

usage: observe_peers.py BENCHTRAP TARGET TARGET_PG [N] [PAIRS]

TARGET is benches/observe_cost_target.c (main calls observed_fn(), an
increment, N = 100,000 times); TARGET_PG the same built with -pg, for
uftrace. For each of PAIRS (7) rounds, in alternation, each run measured
in CPU time of its whole process tree (RUSAGE_CHILDREN, user + system):
  plain                       TARGET alone
  benchtrap observe           --symbol observed_fn (patched entries)
  benchtrap observe --no-patch  by breakpoints (N / 20 calls: it is slow)
  uftrace record              on TARGET_PG (when uftrace is installed)
and per call: (run - plain) / calls, medians over the rounds. Counts are
checked: benchtrap must report exactly the calls made. Asserts nothing
else: the figures move with the machine.
"""
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

# the -pg runs happen in a directory of their own: paths made absolute
benchtrap, target, target_pg = (os.path.abspath(a) if "/" in a else a for a in sys.argv[1:4])
n = int(sys.argv[4]) if len(sys.argv) > 4 else 100000
pairs = int(sys.argv[5]) if len(sys.argv) > 5 else 7
uftrace = shutil.which("uftrace")


def cpu(args, **kw):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(args, capture_output=True, text=True, **kw)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"observe_peers: {args[0]} failed ({p.returncode}): {p.stderr[-500:]}")
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1e6, p


def observe(extra, calls):
    us, p = cpu([benchtrap, "observe", "--symbol", "observed_fn", "--format", "json", *extra,
                 "--", target, str(calls)])
    doc = json.loads(p.stdout)
    b = doc["benchmarks"][0]
    if b["calls"] != calls:
        raise SystemExit(f"observe_peers: benchtrap counted {b['calls']} calls of {calls}")
    cal = doc["run"]["calibration"] or {}
    return us, calls + cal.get("patched_calls", 0) + cal.get("calls", 0)


rows = {"benchtrap observe (patched)": [], "benchtrap observe --no-patch": []}
if uftrace:
    rows["uftrace record (-pg build)"] = []
slow = max(n // 20, 1)
with tempfile.TemporaryDirectory() as tmp:
    for _ in range(pairs):
        plain, _ = cpu([target, str(n)])
        plain_slow, _ = cpu([target, str(slow)])
        us, calls = observe([], n)
        rows["benchtrap observe (patched)"].append((us - plain) / calls)
        us, calls = observe(["--no-patch"], slow)
        rows["benchtrap observe --no-patch"].append((us - plain_slow) / calls)
        if uftrace:
            # a -pg program writes gmon.out where it runs
            plain_pg, _ = cpu([target_pg, str(n)], cwd=tmp)
            us, _ = cpu([uftrace, "record", "--no-libcall", "-d", os.path.join(tmp, "u"),
                         target_pg, str(n)], cwd=tmp)
            rows["uftrace record (-pg build)"].append((us - plain_pg) / (n + 1))
print(f"observe_peers: {n} calls of a 2 ns function, {pairs} rounds "
      f"(CPU of the process tree per observed call, µs; median, min-max)")
for name, v in rows.items():
    print(f"  {name:<32} {statistics.median(v):8.3f}   {min(v):.3f}-{max(v):.3f}")
if not uftrace:
    print("  (uftrace is not installed: not compared)")
