#!/usr/bin/env bash
# benchtrap run --instrument callgrind against real fixtures: exact counts
# that are the same in every run, a function whose count is known, the
# driver calling functions of an unmodified binary, static binaries, shared
# isolation, failures under valgrind, bad input, and no orphans.
. "$(dirname "$0")/lib.sh"
if ! command -v valgrind >/dev/null; then
	echo "skipped: valgrind is not installed (apt install valgrind)"
	exit 77
fi
EX=$BUILD_ROOT/benches/examples
FAILING=$FIXTURES/run/failing
PLAIN=$FIXTURES/run/plain
COUNTED=$FIXTURES/callgrind/counted
STATIC=$FIXTURES/callgrind/counted_static
CG=(--instrument callgrind)

# A known count: counted_loop is 2n + 2 instructions, written in assembly.
run run "$COUNTED" "${CG[@]}" --symbol 'counted_loop(1000)' --symbol 'counted_loop(10)' --format json
expect_status 0
expect_json '[b["value"] for b in d["benchmarks"]] == [2002, 22]'
expect_json 'all(b["instrument"] == "callgrind" and b["unit"] == "instructions" for b in d["benchmarks"])'
expect_json 'all(b["calls"] == 1 and b["counters"]["Ir"] == b["value"] == b["stats"]["median"] for b in d["benchmarks"])'
expect_json 'd["run"]["instrument"] == "callgrind"'
# Registered: the stub's wrapper adds at most a few instructions.
run run "$COUNTED" "${CG[@]}" --format json
expect_status 0
expect_json '[b["name"] for b in d["benchmarks"]] == ["counted[10]", "counted[1000]"]'
expect_json '22 <= d["benchmarks"][0]["value"] <= 30 and 2002 <= d["benchmarks"][1]["value"] <= 2010'
expect_json 'd["benchmarks"][1]["value"] - d["benchmarks"][0]["value"] == 1980'
# The table prints counts, not durations.
run run "$COUNTED" "${CG[@]}" --symbol 'counted_loop(1000)'
expect_status 0
expect_out '^counted_loop\(1000\) +2,002 '
expect_no_out ' ns '

# The same counts in every run: the whole example suite, twice (every
# single-threaded benchmark).
run run "$EX" "${CG[@]}" --format json
expect_status 0
cp "$TMP/out" "$TMP/first.json"
run run "$EX" "${CG[@]}" --format json
expect_status 0
checks=$((checks + 1))
python3 - "$TMP/first.json" "$TMP/out" <<'PY' || fail "counts differ between two runs"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
# threaded_pool hands work to other threads through the kernel: how often
# its thread waits depends on timing even under valgrind (docs/instruments.md).
va = {x["name"]: x["value"] for x in a["benchmarks"] if x["name"] != "threaded_pool"}
vb = {x["name"]: x["value"] for x in b["benchmarks"] if x["name"] != "threaded_pool"}
assert len(va) == 10 and va == vb, (va, vb)
PY
# Isolated: the three allocator_ripple benchmarks count the same; a fresh
# process each (the examples start a worker pool in a constructor, which a
# fork would not copy: no fork server for them, and each benchmark says
# why); an empty function measured no execution time.
expect_json 'len({b["value"] for b in d["benchmarks"] if b["name"].startswith("allocator_ripple")}) == 1'
expect_json 'len({b["pid"] for b in d["benchmarks"]}) == 11'
expect_json 'any("measured no execution time" in x for x in [b for b in d["benchmarks"] if b["name"] == "optimized_away"][0]["diagnostics"])'
expect_json 'all(any("3 threads when main starts" in x for x in b["diagnostics"]) for b in d["benchmarks"])'
expect_json '[b for b in d["benchmarks"] if b["name"] == "loop_300ns"][0]["diagnostics"] == [[x for x in d["benchmarks"][0]["diagnostics"] if "threads" in x][0]]'
expect_no_orphans "$EX"

# Shared: one valgrind process, a count per benchmark, and the ripple.
run run "$EX" "${CG[@]}" --bench 'allocator_ripple_*' --isolation shared --format json
expect_status 0
expect_json 'd["run"]["isolation"] == "shared" and len({b["pid"] for b in d["benchmarks"]}) == 1'
expect_json '(lambda v: v[0] < v[1] and v[0] < v[2])([b["value"] for b in d["benchmarks"]])'

# An unmodified binary through the driver: its functions, with arguments,
# and a library's; its main never runs.
run run "$PLAIN" "${CG[@]}" --symbol plain_work --symbol 'plain_args(3, -4)' --symbol 'fxlib_work(5)' --show-output --format json
expect_status 0
expect_json '[b["name"] for b in d["benchmarks"]] == ["plain_work", "plain_args(3,-4)", "fxlib_work(5)"]'
expect_json 'all(b["status"] == "ok" and b["value"] >= 1 for b in d["benchmarks"])'
expect_json 'd["benchmarks"][0]["value"] > 100 * d["benchmarks"][1]["value"]'
expect_no_out 'main ran'
# Wrong arguments make plain_args abort: reported, not counted.
run run "$PLAIN" "${CG[@]}" --symbol 'plain_args(1, 2)' --symbol plain_work --format json
expect_status 1
expect_json '[b["status"] for b in d["benchmarks"]] == ["failed", "ok"]'
expect_json '"SIGABRT" in d["benchmarks"][0]["error"] and "plain_args" in d["benchmarks"][0]["error"]'

# Failures under valgrind: each reported with what valgrind saw, the others
# counted, exit 1.
run run "$FAILING" "${CG[@]}" --timeout 5 --format json
expect_status 1
expect_json '[b["name"] for b in d["benchmarks"] if b["status"] == "failed"] == ["crash", "aborts", "exits", "hangs"]'
expect_json '{"ok_before", "poison", "victim", "ok_after"} <= {b["name"] for b in d["benchmarks"] if b["status"] == "ok"}'
expect_json '(lambda e: "SIGSEGV" in e and "0x10" in e and "fixture_crash_inner" in e and "fixture_crash_outer" in e)(d["benchmarks"][1]["error"])'
expect_json '"SIGABRT" in d["benchmarks"][2]["error"]'
expect_json '"exited with status 3" in d["benchmarks"][3]["error"]'
expect_json '"timed out" in d["benchmarks"][4]["error"]'
expect_json 'all(b["value"] is None and b["stats"] is None for b in d["benchmarks"] if b["status"] == "failed")'
expect_no_orphans "$FAILING"
# Shared: the benchmark after a crash gets a fresh process.
run run "$FAILING" "${CG[@]}" --bench poison --bench victim --bench ok_after --isolation shared --format json
expect_status 1
expect_json '[b["status"] for b in d["benchmarks"]] == ["ok", "failed", "ok"]'
expect_json 'd["benchmarks"][0]["pid"] == d["benchmarks"][1]["pid"] != d["benchmarks"][2]["pid"]'

# Raw profiles and cache simulation.
mkdir "$TMP/profiles"
run run "$COUNTED" "${CG[@]}" --symbol 'counted_loop(1000)' --keep-profiles "$TMP/profiles" --cache-sim --format json
expect_status 0
expect_json 'd["benchmarks"][0]["profile"].startswith(sys.argv[1] if False else "'"$TMP/profiles/"'")'
expect_json 'set(d["benchmarks"][0]["counters"]) >= {"Ir", "Dr", "Dw", "I1mr", "D1mr", "DLmr"}'
checks=$((checks + 1))
grep -q '^events: Ir' "$TMP"/profiles/*.callgrind || fail "the kept profile is not a callgrind profile"

# A static binary: stub benchmarks run through BENCHTRAP_RUN; a function
# is counted over the program's own run; arguments cannot be passed.
run run "$STATIC" "${CG[@]}" --format json
expect_status 0
expect_json '[b["value"] for b in d["benchmarks"]] == [23, 2003] or (22 <= d["benchmarks"][0]["value"] <= 30 and d["benchmarks"][1]["value"] - d["benchmarks"][0]["value"] == 1980)'
run run "$STATIC" "${CG[@]}" --symbol counted_loop --format json
expect_status 0
expect_json 'd["benchmarks"][0]["calls"] == 2 and d["benchmarks"][0]["value"] == (2002 + 22) / 2'
expect_json 'any("static binary" in x for x in d["benchmarks"][0]["diagnostics"])'
run run "$STATIC" "${CG[@]}" --symbol 'counted_loop(3)'
expect_usage_error 'static binary.*without arguments'

# Bad input: one line, exit 2.
run run "$COUNTED" "${CG[@]}" --keep-profiles "$TMP/nonexistent"
expect_usage_error 'keep-profiles wants a writable directory'
run run "$COUNTED" --cache-sim
expect_usage_error 'cache-sim applies to --instrument callgrind only'
mkdir "$TMP/empty-path"
out=$(PATH=$TMP/empty-path "$BENCHTRAP" run "$COUNTED" "${CG[@]}" 2>"$TMP/err")
status=$?
err=$(cat "$TMP/err")
expect_usage_error 'valgrind is not installed'
run run "$COUNTED" --instrument cachegrind
expect_usage_error "unknown instrument 'cachegrind'"

# A directory named valgrind earlier in PATH is not the program.
mkdir -p "$TMP/pathdir/valgrind"
PATH="$TMP/pathdir:$PATH" run run "$COUNTED" "${CG[@]}" --symbol 'counted_loop(10)' --format json
expect_status 0
expect_json 'd["benchmarks"][0]["value"] == 22'

done_ok
