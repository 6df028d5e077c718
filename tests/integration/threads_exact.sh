#!/usr/bin/env bash
# Threaded benchmarks under the exact instruments (callgrind, memory), on
# tests/fixtures/threads, whose bodies know what they count:
# - callgrind: counted (an assembly loop) and atomic_add count per call at
#   2 and 3 threads exactly what they count on 1, in every isolation (the
#   counted call is the same instructions whichever thread makes it); every
#   thread its own figure, under its own kernel tid; the simulated caches'
#   accesses alike (--cache-sim); a part of the profile per thread kept;
# - memory: malloc_free asks 1000 bytes per call at any count, every
#   counter per call; each thread's own bytes, summing to the round's;
#   the peak within the round;
# - crash_second (the second thread faults): failed with SIGSEGV, under
#   callgrind with valgrind's backtrace naming the body; the run goes on;
# - deadlock: failed by --timeout, under both; nothing is left behind;
# - a static binary given threads under callgrind: refused, one line.
# spin_lock's count depends on the scheduling: it is run, never compared.
# No duration is asserted (--timeout only bounds the deadlock).
. "$(dirname "$0")/lib.sh"
T=$FIXTURES/threads/threads
CG=(--instrument callgrind)
MEM=(--instrument memory)

# Every benchmark named NAME[threads=N] in $1 counts per call, counter by
# counter, what NAME[threads=1] counts (names: $2), and has N figures, one
# per thread with a distinct tid, each of them that count.
same_as_one() {
	checks=$((checks + 1))
	python3 - "$1" "$2" <<'PY' || fail "$1: a count on several threads differs from one"
import json, re, sys
d = json.load(open(sys.argv[1]))
want = set(sys.argv[2].split())
by = {b["name"]: b for b in d["benchmarks"]}
bad, seen = [], set()
for b in d["benchmarks"]:
    m = re.fullmatch(r"(\w+)\[threads=(\d+)\]", b["name"])
    if not m or m[1] not in want or m[2] == "1":
        continue
    seen.add(m[1])
    n, one = int(m[2]), by[m[1] + "[threads=1]"]
    if b["status"] != "ok" or one["status"] != "ok":
        bad.append("%s: %s" % (b["name"], b["error"] or one["error"]))
        continue
    if b["counters"] != one["counters"] or b["value"] != one["value"]:
        bad.append("%s: %s against %s" % (b["name"], b["counters"], one["counters"]))
    per = b.get("per_thread") or []
    if b.get("threads") != n or b["calls"] != n or len(per) != n:
        bad.append("%s: threads %s, calls %s, %d figures" % (b["name"], b.get("threads"), b["calls"], len(per)))
    if len({t["tid"] for t in per}) != len(per) or any(t["value"] != b["value"] for t in per):
        bad.append("%s: per thread %s" % (b["name"], per))
    if "per_thread" in one or one["calls"] != 1:
        bad.append("%s: one thread has per-thread figures" % one["name"])
    if any("thread numbers" in x for x in b["diagnostics"]):
        bad.append("%s: %s" % (b["name"], b["diagnostics"]))
if seen != want:
    bad.append("compared %s, not %s" % (sorted(seen), sorted(want)))
sys.exit("\n".join(bad) if bad else 0)
PY
}

# ---- callgrind: the same count per call on 1, 2 and 3 threads -------------------------------
if command -v valgrind >/dev/null; then
	for iso in benchmark process shared; do
		run run "$T" "${CG[@]}" --bench counted --bench atomic_add --threads 1,2,3 \
			--isolation "$iso" --format json
		expect_status 0
		cp "$TMP/out" "$TMP/cg-$iso.json"
		same_as_one "$TMP/out" "counted atomic_add"
		# counted_loop(1000) is 2002 instructions; the stub's wrapper a few.
		expect_json '2002 <= [b for b in d["benchmarks"] if b["name"] == "counted[threads=2]"][0]["value"] <= 2010'
		expect_no_orphans "$T"
	done
	same_counts "$TMP/cg-benchmark.json" "$TMP/cg-process.json"
	same_counts "$TMP/cg-benchmark.json" "$TMP/cg-shared.json"

	# The simulated caches: the same accesses per call (their misses
	# depend on what the other thread left in them).
	run run "$T" "${CG[@]}" --bench counted --bench atomic_add --cache-sim --format json
	expect_status 0
	checks=$((checks + 1))
	python3 - "$TMP/out" <<'PY' || fail "accesses differ between 1 and 2 threads"
import json, sys
d = json.load(open(sys.argv[1]))
v = {b["name"]: b["counters"] for b in d["benchmarks"]}
bad = ["%s %s" % (n, k) for n in ("counted", "atomic_add") for k in ("Ir", "Dr", "Dw")
       if v[n + "[threads=1]"][k] != v[n + "[threads=2]"][k]]
if "D1mr" not in v["counted[threads=2]"]:
    bad.append("no D1mr")
sys.exit(", ".join(bad) if bad else 0)
PY

	# Each thread's part of the profile, kept; the result names the first.
	mkdir "$TMP/profiles"
	run run "$T" "${CG[@]}" --bench 'counted[threads=2]' --keep-profiles "$TMP/profiles" --format json
	expect_status 0
	expect_json 'd["benchmarks"][0]["profile"].endswith("/000-counted[threads=2].callgrind-01")'
	checks=$((checks + 1))
	[[ $(ls "$TMP/profiles" | wc -l) -eq 2 ]] || fail "expected 2 kept parts: $(ls "$TMP/profiles")"
	grep -q '^thread: ' "$TMP"/profiles/*-02 || fail "the second part is not a thread's"

	# A contended body runs and has its figures; its count is not compared.
	run run "$T" "${CG[@]}" --bench 'spin_lock[threads=2]' --format json
	expect_status 0
	expect_json '(lambda b: len(b["per_thread"]) == 2 and b["value"] >= 20000000)(d["benchmarks"][0])'

	# A crash on the second thread: that thread's signal and backtrace;
	# a deadlock: killed after --timeout; the benchmarks after them run.
	for iso in benchmark shared; do
		run run "$T" "${CG[@]}" --bench crash_second --bench deadlock --bench 'counted[threads=2]' \
			--isolation "$iso" --timeout 3 --format json
		expect_status 1
		expect_json '[b["status"] for b in d["benchmarks"]] == ["failed", "failed", "ok"]'
		expect_json '(lambda e: "SIGSEGV" in e and "benchtrap_bench_crash_second" in e and "benchtrap_driver_call" in e)(d["benchmarks"][0]["error"])'
		expect_json '"timed out after 3000 ms" in d["benchmarks"][1]["error"]'
		expect_json 'all(b["value"] is None and b["per_thread"] == [] for b in d["benchmarks"][:2])'
		expect_no_orphans "$T"
	done

	# A static binary cannot take the driver, nor run threads under it.
	run run "$FIXTURES/callgrind/counted_static" "${CG[@]}" --threads 2
	expect_usage_error "counted_static is a static binary: .* cannot run on 2 threads under callgrind"
else
	echo "callgrind part skipped: valgrind is not installed (apt install valgrind)"
fi

# ---- memory: the same bytes per call on 1, 2 and 3 threads ----------------------------------
for iso in benchmark process shared; do
	run run "$T" "${MEM[@]}" --bench malloc_free --bench counted --threads 1,2,3 \
		--isolation "$iso" --format json
	expect_status 0
	checks=$((checks + 1))
	python3 - "$TMP/out" <<'PY' || fail "$iso: memory figures on several threads"
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
for b in d["benchmarks"]:
    n = b.get("threads") or 1
    c, per = b["counters"], b.get("per_thread") or []
    size = 1000 if b["name"].startswith("malloc_free") else 0
    # Per call, as the value; each thread its own call's bytes.
    want = {"bytes_allocated": size, "allocations": size > 0, "frees": size > 0,
            "leaked_bytes": 0}
    if b["status"] != "ok" or any(c[k] != v for k, v in want.items()) or b["value"] != size:
        bad.append("%s: %s %s %s" % (b["name"], b["value"], c, b["error"]))
    # The process's peak: one block at least, all of them at most.
    if not size <= c["peak_bytes"] <= size * n:
        bad.append("%s: peak %s" % (b["name"], c["peak_bytes"]))
    if n > 1 and (len(per) != n or len({t["tid"] for t in per}) != n or
                  sum(t["value"] for t in per) != c["bytes_allocated"] * n or
                  any(t["value"] != size for t in per)):
        bad.append("%s: per thread %s" % (b["name"], per))
    if n == 1 and per:
        bad.append("%s: one thread has per-thread figures" % b["name"])
if len(d["benchmarks"]) != 6:
    bad.append("%d benchmarks, not 6" % len(d["benchmarks"]))
sys.exit("\n".join(bad) if bad else 0)
PY
	expect_no_orphans "$T"
done

# Warm-up calls are each thread's, uncounted.
run run "$T" "${MEM[@]}" --bench 'malloc_free[threads=2]' --warmup-calls 3 --format json
expect_status 0
expect_json '(lambda b: b["value"] == 1000 and b["counters"]["allocations"] == 1 and [t["value"] for t in b["per_thread"]] == [1000, 1000])(d["benchmarks"][0])'

for iso in benchmark shared; do
	run run "$T" "${MEM[@]}" --bench crash_second --bench deadlock --bench 'malloc_free[threads=2]' \
		--isolation "$iso" --timeout 3 --format json
	expect_status 1
	expect_json '[b["status"] for b in d["benchmarks"]] == ["failed", "failed", "ok"]'
	expect_json '"SIGSEGV" in d["benchmarks"][0]["error"]'
	expect_json '"timed out after 3000 ms" in d["benchmarks"][1]["error"]'
	expect_json 'd["benchmarks"][2]["value"] == 1000'
	expect_no_orphans "$T"
done

done_ok
