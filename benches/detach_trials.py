#!/usr/bin/env python3
"""observe --pid on a program whose threads come and go: does it always finish?

usage: detach_trials.py BENCHTRAP ROUNDS_FIXTURE [TRIALS] [-- OBSERVE_OPTIONS...]

ROUNDS_FIXTURE is tests/fixtures/observe/rounds: rounds of 8 threads created,
making calls of obs_wrap -> obs_work, and joined. Each trial starts it, attaches
`benchtrap observe --symbol 'obs_*' --pid P` once main runs, and ends the
observing one of four ways, in turn: --duration 1, then SIGINT, SIGTERM or
SIGKILL of benchtrap after a random 0.2-1.5 s. A trial is whole when the
program then exits 0 with "rounds done: N calls" and N is all of its calls.
TRIALS (50) trials in all; prints each failure, the count per way, and exits
1 when any trial was not whole.
"""
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

args = sys.argv[1:]
options = []
if "--" in args:
    options = args[args.index("--") + 1:]
    args = args[:args.index("--")]
if len(args) not in (2, 3):
    sys.exit(__doc__.split("\n\n")[1])
benchtrap, fixture = args[:2]
trials = int(args[2]) if len(args) > 2 else 50
ways = ["duration", "SIGINT", "SIGTERM", "SIGKILL"]
rounds, threads, calls = "4000", "8", "2000"
want = "rounds done: %d calls" % (int(rounds) * int(threads) * int(calls))
rng = random.Random(1)
whole = {w: 0 for w in ways}
ran = {w: 0 for w in ways}
bad = []
with tempfile.TemporaryDirectory(prefix="detach-trials.") as tmp:
    for i in range(trials):
        way = ways[i % len(ways)]
        started = os.path.join(tmp, "started%d" % i)
        prog = subprocess.Popen([fixture, started, rounds, threads, calls],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        while not os.path.exists(started) and prog.poll() is None:
            time.sleep(0.005)
        cmd = [benchtrap, "observe", "--symbol", "obs_*", "--pid", str(prog.pid),
               "--output", os.path.join(tmp, "obs.json")] + options
        if way == "duration":
            cmd += ["--duration", "1"]
        bt = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if way != "duration":
            time.sleep(rng.uniform(0.2, 1.5))
            bt.send_signal(getattr(signal, way))
        try:
            bt_err = bt.communicate(timeout=120)[1]
        except subprocess.TimeoutExpired:
            bt.kill()
            bt_err = bt.communicate()[1] + "\n(benchtrap did not end in 120 s)"
        try:
            out, err = prog.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            prog.kill()
            out, err = prog.communicate()
            err += "\n(the program did not end in 300 s)"
        ran[way] += 1
        if prog.returncode == 0 and out.strip() == want:
            whole[way] += 1
        else:
            bad.append((i + 1, way, prog.returncode, out.strip()[-200:], err.strip()[-200:],
                        bt_err.strip()[-300:]))
            print("trial %d (%s): the program exited %s, output %r %r; benchtrap said %r" %
                  bad[-1])
        sys.stdout.flush()
print()
for w in ways:
    print("%-9s the program finished whole: %d/%d" % (w, whole[w], ran[w]))
print("%-9s %d/%d" % ("all", sum(whole.values()), trials))
sys.exit(1 if bad else 0)
