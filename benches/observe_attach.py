#!/usr/bin/env python3
"""Attached, then gone: does the observed program finish on its own?

usage: observe_attach.py BENCHTRAP BUSY4 [TRIALS]

BUSY4 is tests/fixtures/observe/busy4.c: four threads nearly always inside
work() (600 calls of about 2 ms each), then it prints "busy4 done: 2400
calls". For each of TRIALS (10) trials of each way benchtrap can go while
calls are open inside patched entries:
  detach   observe --pid --duration 0.4: entries restored, benchtrap exits
  SIGKILL  observe --pid, killed with SIGKILL after 0.4 s: nothing restored
the program must exit 0 with its own line. Prints how many of each did
(the target: 10 of 10), and the calls benchtrap counted at each detach.
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

benchtrap, busy4 = sys.argv[1:3]
trials = int(sys.argv[3]) if len(sys.argv) > 3 else 10


def trial(how, tmp):
    started = os.path.join(tmp, "started")
    if os.path.exists(started):
        os.unlink(started)
    prog = subprocess.Popen([busy4, started], stdout=subprocess.PIPE, text=True)
    for _ in range(500):
        if os.path.exists(started):
            break
        time.sleep(0.01)
    args = [benchtrap, "observe", "--symbol", "work", "--pid", str(prog.pid), "--quiet"]
    note = ""
    if how == "detach":
        p = subprocess.run(args + ["--duration", "0.4", "--format", "json"],
                           capture_output=True, text=True)
        note = f"observe exit {p.returncode}"
        if p.returncode == 0:
            import json
            b = json.loads(p.stdout)["benchmarks"][0]
            note += f", {b['calls']} calls ({b['bounded_by']})"
    else:
        bt = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.4)
        bt.send_signal(signal.SIGKILL)
        bt.wait()
    out, _ = prog.communicate(timeout=120)
    ok = prog.returncode == 0 and out.strip() == "busy4 done: 2400 calls"
    return ok, f"exit {prog.returncode}, {out.strip()!r}; {note}"


with tempfile.TemporaryDirectory() as tmp:
    for how in ("detach", "SIGKILL"):
        good = 0
        for i in range(trials):
            ok, what = trial(how, tmp)
            good += ok
            print(f"  {how:<8} {i + 1:>2}: {'ok ' if ok else 'BAD'} {what}")
        print(f"observe_attach: after {how}, the program finished on its own {good} of "
              f"{trials} times (target: {trials} of {trials})")
