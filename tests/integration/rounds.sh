#!/usr/bin/env bash
# --threads under walltime: the body on N threads benchtrap creates in the
# child, released together, one marker envelope per round. Checked here, on
# tests/fixtures/rounds:
# - every sample of a [threads=N] benchmark has one sample_start and one
#   sample_end, the end carrying N threads with distinct ids, none of them
#   the child's main thread; start is the least thread start and end the
#   greatest thread end; samples are ordered and never overlap; iterations
#   are per thread;
# - the results file has each thread's own figure (per_thread), by the same
#   thread ids as the markers; so has each side of a paired comparison;
# - a body that crashes on one thread: failed with SIGSEGV and that thread's
#   backtrace, the next benchmark measured, exit 1;
# - a body that ends the process on one thread: that thread's exit and
#   stack; one that ends one thread (pthread_exit): said at once;
# - a body that deadlocks: failed by the timeout, blamed on the thread
#   stuck in the body (its backtrace names the body);
# - more threads than processors: said; a static program without
#   pthread_create: said, with the way out;
# - a pool of threads made before main, with --threads 2: no hang;
# - --isolation shared: one child, each benchmark its own workers;
# - no process left behind after any of them.
# No duration is asserted (--timeout only bounds a hang).
. "$(dirname "$0")/lib.sh"
R=$FIXTURES/rounds/rounds

# The markers of every [threads=N] benchmark in $1 follow the rules above,
# with $2 threads each; prints the number of samples checked.
check_rounds() {
	checks=$((checks + 1))
	python3 - "$1" "$2" <<'PY' || fail "markers of $1 break a rule"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
want = int(sys.argv[2])
checked, last_end, starts = 0, {}, {}
for e in events:
    if not e["event"].startswith("sample") or "[threads=" not in e["name"]:
        continue
    key = (e["name"], e["sample"])
    if e["event"] == "sample_start":
        assert key not in starts, "two starts for %s" % (key,)
        assert "threads" not in e
        starts[key] = e["t_ns"]
        continue
    th = e["threads"]
    assert len(th) == want, "%d threads in %s" % (len(th), e)
    tids = {t["tid"] for t in th}
    assert len(tids) == want and e["pid"] not in tids, e
    s, t = starts.pop(key), e["t_ns"]
    assert s == min(x["start_ns"] for x in th) and t == max(x["end_ns"] for x in th), e
    assert all(x["start_ns"] <= x["end_ns"] for x in th), e
    assert s > last_end.get(e["name"], 0), "samples overlap: %s" % e
    last_end[e["name"]] = t
    checked += 1
assert not starts, "starts without an end: %s" % starts
assert checked > 0, "no sample checked"
PY
}

# ---- rounds: bounds, thread ids, per-thread figures -------------------------------------------
run run "$R" --threads 2 --bench independent --bench contended --time 0.2 \
	--markers "$TMP/m.jsonl" --output "$TMP/r.json"
expect_status 0
expect_out 'independent\[threads=2\]'
expect_out 'contended\[threads=2\]'
check_rounds "$TMP/m.jsonl" 2
checks=$((checks + 1))
python3 - "$TMP/r.json" "$TMP/m.jsonl" <<'PY' || fail "per-thread figures do not match the markers"
import json, sys
doc = json.load(open(sys.argv[1]))
events = [json.loads(l) for l in open(sys.argv[2])]
for b in doc["benchmarks"]:
    assert b["status"] == "ok" and b["threads"] == 2, b
    pt = b["per_thread"]
    marked = {t["tid"] for e in events if e.get("name") == b["name"] and "threads" in e
              for t in e["threads"]}
    assert len(pt) == 2 and {t["tid"] for t in pt} == marked, (pt, marked)
    # iterations per sample are per thread: what each sample's marker says
    its = {e["iterations"] for e in events if e.get("name") == b["name"]
           and e["event"] == "sample_end" and not e["warmup"]}
    assert its == {b["stats"]["iterations_per_sample"]}, (its, b["stats"])
PY
expect_no_orphans "$R"

# Two builds paired: each side's threads, each its own figure.
run compare "$R" "$R" --threads 2 --bench independent --time 0.2 --output "$TMP/pc.json"
expect_status 0
checks=$((checks + 1))
python3 - "$TMP/pc.json" <<'PY' || fail "a paired comparison's per-thread figures"
import json, sys
d = json.load(open(sys.argv[1]))
for b in (d["benchmarks"][0], d["paired"]["base"]["benchmarks"][0]):
    assert b["threads"] == 2 and len({t["tid"] for t in b["per_thread"]}) == 2, b
PY
expect_no_orphans "$R"

run run "$R" --threads 3 --bench independent --time 0.2 --markers "$TMP/m3.jsonl"
expect_status 0
check_rounds "$TMP/m3.jsonl" 3
expect_no_orphans "$R"

# More threads than processors: said, with the share of each round they ran.
more=$(($(nproc) + 1))
run run "$R" --threads "$more" --bench independent --time 0.1
expect_status 0
expect_out "independent\[threads=$more\]: $more threads on $(nproc) processors: they took turns, [0-9]+% of each round on a processor"
expect_no_orphans "$R"

# ---- failures: one thread crashes, the threads deadlock ---------------------------------------
run run "$R" --threads 2 --bench crash_second --bench independent --time 0.2 --timeout 60
expect_status 1
expect_out 'crash_second\[threads=2\] +.*FAILED'
expect_out 'crash_second\[threads=2\] failed: SIGSEGV .* at address 0x10'
expect_out '#0 .* benchtrap_bench_crash_second'
expect_out 'independent\[threads=2\] +[0-9.]+ [nµm]?s'
expect_no_orphans "$R"

# A thread that ends the process, one that ends alone: that thread's end,
# its stack; the latter at once, not by the timeout.
run run "$R" --threads 2 --bench exit_second --bench leave_second --bench independent \
	--time 0.2 --timeout 60
expect_status 1
expect_out 'exit_second\[threads=2\] failed: exited with status 3'
expect_out '#[0-9] .* benchtrap_bench_exit_second'
expect_out 'leave_second\[threads=2\] failed: thread [0-9]+ ended inside the call \(pthread_exit'
expect_no_out 'timed out'
expect_out 'independent\[threads=2\] +[0-9.]+ [nµm]?s'
expect_no_orphans "$R"

run run "$R" --threads 2 --bench deadlock --timeout 2
expect_status 1
expect_out 'deadlock\[threads=2\] failed: timed out after 2000 ms'
expect_out 'benchtrap_bench_deadlock'
expect_no_orphans "$R"

# A static program that never creates a thread has no pthread_create: said,
# with the way out.
run run "$FIXTURES/rounds/single_static" --threads 2 --time 0.1
expect_status 1
expect_out "work\[threads=2\] failed: --threads needs the program's pthread_create .* link it dynamically, or keep them with -Wl,-u,pthread_create,-u,pthread_join"
expect_no_orphans "$FIXTURES/rounds/single_static"

# ---- a pool made before main; a shared child -------------------------------------------------
timeout 120 "$BENCHTRAP" run "$R" --threads 2 --bench pool_post --bench independent --time 0.2 \
	-- --pool >"$TMP/out" 2>"$TMP/err"
status=$?
out=$(cat "$TMP/out")
err=$(cat "$TMP/err")
expect_status 0
expect_out 'pool_post\[threads=2\]'
expect_no_orphans "$R"

run run "$R" --threads 2 --bench independent --bench contended --bench pool_post \
	--isolation shared --time 0.2 --markers "$TMP/ms.jsonl" -- --pool
expect_status 0
check_rounds "$TMP/ms.jsonl" 2
checks=$((checks + 1))
python3 - "$TMP/ms.jsonl" <<'PY' || fail "a shared child: one process, workers of its own per benchmark"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if '"threads"' in l]
pids = {e["pid"] for e in events}
tids = {}
for e in events:
    tids.setdefault(e["name"], set()).update(t["tid"] for t in e["threads"])
assert len(pids) == 1 and len(tids) == 3, (pids, tids)
names = list(tids)
assert all(not (tids[a] & tids[b]) for a in names for b in names if a != b), tids
PY
expect_no_orphans "$R"

done_ok
