#!/usr/bin/env python3
"""Kill trials: does anything benchtrap started outlive it, and does a process
it attached to outlive benchtrap? (docs/processes.md)

Each trial starts benchtrap, kills it with a signal at a random moment, and
counts what is left:
  run      the escape fixture's daemon_then_hangs (a setsid daemon, then a
           hang), under walltime and callgrind, SIGINT/SIGTERM/SIGKILL
  observe  observe --pid of the forever fixture (tick() every 2-5 ms),
           SIGINT/SIGTERM/SIGKILL; the process must run on, untraced, with
           the files' code
usage: kill_trials.py BENCHTRAP ESCAPE FOREVER [TRIALS]  (per kind, default 10)
"""
import importlib.util, os, random, signal, subprocess, sys, time

_spec = importlib.util.spec_from_file_location(
    "code_is_files", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                  "..", "tests", "integration", "code_is_files.py"))
code_is_files_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(code_is_files_module)

bt, escape, forever = sys.argv[1:4]
trials = int(sys.argv[4]) if len(sys.argv) > 4 else 10
bt_exe = os.path.realpath(bt)
rng = random.Random(1)


def procs_of(path):
    """Pids whose command line names 'path', benchtrap itself excluded."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            cmd = open(f"/proc/{d}/cmdline", "rb").read().decode(errors="replace")
            exe = os.readlink(f"/proc/{d}/exe")
        except OSError:
            continue
        # Not benchtrap, nor this script and what runs it (timeout...).
        if path in cmd and exe != bt_exe and "kill_trials" not in cmd:
            out.append(int(d))
    return out


def wait_for(cond, limit=10.0):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def status_field(pid, key):
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith(key + ":"):
                return line.split()[1]
    except OSError:
        return None
    return None


def code_is_files(pid):
    try:
        return code_is_files_module.compare(pid) > 0
    except AssertionError:
        return False


sigs = [signal.SIGINT, signal.SIGTERM, signal.SIGKILL]
results = {}
instruments = ["walltime"]
if subprocess.run(["sh", "-c", "command -v valgrind"], capture_output=True).returncode == 0:
    instruments.append("callgrind")

for inst in instruments:
    for sig in sigs:
        clean = 0
        for _ in range(trials):
            p = subprocess.Popen([bt, "run", escape, "--bench", "daemon_then_hangs",
                                  "--instrument", inst, "--timeout", "120"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_for(lambda: procs_of(escape))
            time.sleep(rng.uniform(0.0, 1.5 if inst == "callgrind" else 0.5))
            p.send_signal(sig)
            p.wait()
            if wait_for(lambda: not procs_of(escape)):
                clean += 1
            for pid in procs_of(escape):
                pp = status_field(pid, "PPid")
                try:
                    pcmd = open(f"/proc/{pp}/cmdline", "rb").read().replace(b"\0", b" ")[:80]
                except OSError:
                    pcmd = b"?"
                print(f"left after {inst} SIG{sig.name[3:]}: pid {pid} (parent {pp}: "
                      f"{pcmd.decode(errors='replace')}; self {os.getpid()}), state "
                      f"{status_field(pid, 'State')}", flush=True)
                os.kill(pid, signal.SIGKILL)
        results[f"run {inst} SIG{sig.name[3:]}"] = clean

target = subprocess.Popen([forever], stdout=subprocess.DEVNULL)
time.sleep(0.2)
for sig in sigs:
    survived = 0
    for _ in range(trials):
        if target.poll() is not None:
            target = subprocess.Popen([forever], stdout=subprocess.DEVNULL)
            time.sleep(0.2)
        p = subprocess.Popen([bt, "observe", "--symbol", "tick", "--pid", str(target.pid)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: status_field(target.pid, "TracerPid") not in (None, "0"))
        time.sleep(rng.uniform(0.0, 0.8))
        p.send_signal(sig)
        p.wait()
        wait_for(lambda: status_field(target.pid, "TracerPid") == "0")
        time.sleep(0.3)  # a trap left behind would have fired by now
        alive = target.poll() is None and status_field(target.pid, "State") not in (None, "Z")
        if alive and status_field(target.pid, "TracerPid") == "0" and code_is_files(target.pid):
            survived += 1
    results[f"observe --pid SIG{sig.name[3:]}"] = survived
target.kill()
target.wait()

print(f"{'trial':32} {'clean / survived':>17}")
for k, v in results.items():
    print(f"{k:32} {v:>8} of {trials}")
total = sum(results.values())
print(f"all: {total} of {trials * len(results)}")
