#!/usr/bin/env bash
# Google Benchmark binaries, unmodified (docs/gbench.md), on
# tests/fixtures/gbench/suite.cpp built against the system's libbenchmark:
# - list: every instance under the name the binary gives it, asked of the
#   binary itself; --filter and --json;
# - run (walltime): each instance in a process of its own (distinct pids),
#   timed by benchtrap around each repetition's final batch, the
#   library's counters kept from its JSON; the crashing benchmark failed with SIGSEGV and a
#   backtrace naming it, the others measured, exit 1;
# - --bench with '/' and ':' selects exactly the instance named; a glob
#   that matches nothing: exit 2, one line; --shard K/N: disjoint parts
#   that make the whole;
# - callgrind: instructions per iteration of the known-work benchmark
#   within 1% of its hand derivation, identical in two runs; the crash
#   reported from valgrind's account;
# - memory: bytes, allocations and frees per iteration of the benchmark
#   with known allocations, exact and the same in two runs, on one thread
#   and on two;
# - compare of two results files by those names, and of two builds (paired
#   under walltime); flags that would change the selection refused;
# - --timeout: the instance that runs past it failed, under each
#   instrument;
# - no process of the suite, and no temporary directory, left behind after
#   any of them, nor after benchtrap is killed (SIGINT, SIGTERM, SIGKILL)
#   while an instance runs, under each instrument.
# No duration is asserted.
. "$(dirname "$0")/lib.sh"
S=$FIXTURES/gbench/gbench_suite
if [[ ! -x $S ]]; then
	echo "skipped: the Google Benchmark fixture was not built (libbenchmark-dev is not installed)"
	exit 77
fi
own_tmpdir
NAMES="BM_counted BM_memcpy/8 BM_memcpy/64 BM_memcpy/512 BM_named/n:8 BM_sum<int>
BM_threads/threads:2 BM_real/real_time Queue/Drain/16 BM_alloc BM_alloc/threads:2 BM_crash"

# list: the binary's own names, in its order.
run list "$S"
expect_status 0
[[ $(tail -n +2 <<<"$out" | tr "\n" " ") == "$(tr "\n" " " <<<"$NAMES")" ]] ||
	fail "list does not give the binary's names in its order"
checks=$((checks + 1))
run list "$S" --filter 'BM_memcpy/*' --json
expect_status 0
expect_json 'd["framework"] == "gbench" and [b["name"] for b in d["benchmarks"]] == ["BM_memcpy/8", "BM_memcpy/64", "BM_memcpy/512"]'
# The document of every kind: the binary described as for any other.
expect_json 'd["schema"] == "benchtrap-list/1" and d["binary"]["path"].endswith("gbench/gbench_suite") and len(d["binary"]["build_id"]) == 40'
run list "$S" --filter 'BM_nothing*'
expect_usage_error "no benchmark matches 'BM_nothing\*'"
expect_no_orphans "$S"

# run, walltime: each in a fresh process, the crash failed, the rest measured.
run run "$S" --time 0.05 --min-samples 3 --format json
expect_status 1
expect_json 'len(d["benchmarks"]) == 12'
expect_json '[b["name"] for b in d["benchmarks"]] == '"$(python3 -c 'import sys; print(sys.argv[1].split())' "$NAMES")"
expect_json 'all(b["status"] == "ok" for b in d["benchmarks"] if b["name"] != "BM_crash")'
expect_json 'len({b["pid"] for b in d["benchmarks"]}) == 12 and all(b["pid"] > 0 for b in d["benchmarks"])'
expect_json '[b for b in d["benchmarks"] if b["name"] == "BM_crash"][0]["error"].startswith("SIGSEGV")'
expect_json '"BM_crash" in [b for b in d["benchmarks"] if b["name"] == "BM_crash"][0]["error"]'
# The backtrace names C++ functions as people write them, not mangled.
expect_json '"BM_crash(benchmark::State&)+0x" in [b for b in d["benchmarks"] if b["name"] == "BM_crash"][0]["error"]'
# Many short repetitions, each a sample (gbench_walltime.sh says more);
# the library's counters and the user's kept.
expect_json 'all(b["stats"]["samples"] >= 3 for b in d["benchmarks"] if b["status"] == "ok")'
expect_json '[b for b in d["benchmarks"] if b["name"] == "BM_memcpy/64"][0]["counters"]["size"] == 64'
expect_json '"bytes_per_second" in [b for b in d["benchmarks"] if b["name"] == "BM_memcpy/64"][0]["counters"]'
expect_json 'd["run"]["isolation"] == "process"'
expect_no_orphans "$S"

# --bench: names with '/' and ':' select exactly themselves.
run run "$S" --bench 'BM_memcpy/64' --bench 'BM_named/n:8' --bench 'BM_threads/threads:2' \
	--time 0.02 --min-samples 2 --format json
expect_status 0
expect_json '[b["name"] for b in d["benchmarks"]] == ["BM_memcpy/64", "BM_named/n:8", "BM_threads/threads:2"]'
run run "$S" --bench 'BM_memcpy/6' --time 0.02
expect_usage_error "no benchmark matches 'BM_memcpy/6' \(did you mean"
run run "$S" --bench 'nothing*' --time 0.02
expect_usage_error "no benchmark matches 'nothing\*'"
expect_no_orphans "$S"

# --shard: two disjoint parts that make the whole (the crash among them).
run run "$S" --shard 1/2 --time 0.02 --min-samples 2 --format json
python3 -c 'import json,sys; print("\n".join(b["name"] for b in json.load(open(sys.argv[1]))["benchmarks"]))' "$TMP/out" >"$TMP/s1"
run run "$S" --shard 2/2 --time 0.02 --min-samples 2 --format json
python3 -c 'import json,sys; print("\n".join(b["name"] for b in json.load(open(sys.argv[1]))["benchmarks"]))' "$TMP/out" >"$TMP/s2"
checks=$((checks + 1))
[[ -s $TMP/s1 && -s $TMP/s2 ]] || fail "a shard of 12 benchmarks is empty"
[[ -z $(comm -12 <(sort "$TMP/s1") <(sort "$TMP/s2")) ]] || fail "the shards overlap"
[[ $(sort "$TMP/s1" "$TMP/s2" | tr '\n' ' ') == "$(sort <<<"$(tr ' ' '\n' <<<"$NAMES")" | tr '\n' ' ')" ]] ||
	fail "the shards do not make the whole"
expect_no_orphans "$S"

# Flags that would change what benchtrap selects or reads.
run run "$S" -- --benchmark_filter=BM_sum
expect_usage_error "'--benchmark_filter=BM_sum' after '--'"
# ... refused before the binary runs: a file it would write is untouched,
# one that did not exist is not made.
echo precious >"$TMP/keep.json"
run run "$S" --bench BM_counted -- --benchmark_out="$TMP/keep.json"
expect_usage_error "'--benchmark_out=$TMP/keep.json' after '--'"
checks=$((checks + 1))
[[ $(cat "$TMP/keep.json") == precious ]] || fail "a refused --benchmark_out truncated its file"
run compare "$S" "$S" --bench BM_counted -- --benchmark_out="$TMP/made.json"
expect_usage_error "after '--'"
checks=$((checks + 1))
[[ ! -e $TMP/made.json ]] || fail "a refused --benchmark_out made its file"
run run "$S" --instrument perf
expect_usage_error "Google Benchmark binary: --instrument perf"

# memory: allocations per iteration inside the function, exact, the same
# every run, on one thread and on two; the crash with its backtrace.
run run "$S" --instrument memory --bench 'BM_alloc*' --bench BM_sum* --bench BM_crash \
	--output "$TMP/mem1.json"
expect_status 1
expect_out "BM_crash failed: SIGSEGV"
run run "$S" --instrument memory --bench 'BM_alloc*' --bench BM_sum* --format json
expect_status 0
cp "$TMP/out" "$TMP/mem2.json"
# malloc(100) and a vector of 10 ints: 140 bytes, 2 allocations, 2 frees.
expect_json 'all(b["counters"] == {"bytes": 140, "allocations": 2, "frees": 2, "peak_bytes": 140} for b in d["benchmarks"] if b["name"].startswith("BM_alloc"))'
expect_json '[b["name"] for b in d["benchmarks"]] == ["BM_sum<int>", "BM_alloc", "BM_alloc/threads:2"]'
# BM_sum allocates its vector once, before its loop: none per iteration.
expect_json 'd["benchmarks"][0]["value"] == 0 and d["benchmarks"][0]["unit"] == "bytes"'
same_counts "$TMP/mem1.json" "$TMP/mem2.json"
expect_no_orphans "$S"
# A flag the binary does not take: its own words, on benchtrap's one line.
run run "$S" --bench BM_counted -- --benchmark_no_such_flag=1
expect_usage_error "exited with status 1: .*unrecognized command-line flag: --benchmark_no_such_flag=1"
# Arguments passed through: a repetition count of the user's.
run run "$S" --bench BM_counted --format json -- --benchmark_repetitions=4 --benchmark_min_time=0.01
expect_status 0
expect_json 'd["benchmarks"][0]["stats"]["samples"] == 4'

expect_no_temp_dirs

# --timeout bounds an instance's whole process, under each instrument: the
# one that runs past it failed, its process gone.
instruments=(walltime memory)
command -v valgrind >/dev/null && instruments+=(callgrind)
for instrument in "${instruments[@]}"; do
	run run "$S" --bench BM_counted --instrument "$instrument" --timeout 2 \
		--format json -- --benchmark_min_time=30
	expect_status 1
	expect_json 'd["benchmarks"][0]["status"] == "failed" and "timed out after 2000 ms" in d["benchmarks"][0]["error"]'
	expect_no_orphans "$S"
done
expect_no_temp_dirs

# benchtrap killed while an instance runs: nothing of the suite survives.
instruments=(walltime memory)
command -v valgrind >/dev/null && instruments+=(callgrind)
for instrument in "${instruments[@]}"; do
	for sig in INT TERM KILL; do
		"$BENCHTRAP" run "$S" --bench BM_counted --instrument "$instrument" --timeout 120 \
			-- --benchmark_min_time=30 >/dev/null 2>&1 &
		bt=$!
		for _ in $(seq 200); do
			[[ -n $(fixture_procs "$S") ]] && break
			sleep 0.05
		done
		sleep 0.5
		kill -s "$sig" "$bt"
		wait "$bt" 2>/dev/null
		expect_no_orphans "$S"
		expect_no_temp_dirs
	done
done

# callgrind: exact, per iteration, the same every run.
if ! command -v valgrind >/dev/null; then
	echo "callgrind part skipped: valgrind is not installed"
	done_ok
	exit 0
fi
run run "$S" --instrument callgrind --bench BM_counted --bench 'BM_threads/*' --bench BM_crash \
	--output "$TMP/cg1.json"
expect_status 1
cp "$TMP/out" "$TMP/cg1.txt"
run run "$S" --instrument callgrind --bench BM_counted --bench 'BM_threads/*' --format json
expect_status 0
cp "$TMP/out" "$TMP/cg2.json"
# counted_loop(1000): 2 * 1000 + 2 instructions; the call and the loop of
# the State add a few: within 1% of 2002.
expect_json '2002 <= [b for b in d["benchmarks"] if b["name"] == "BM_counted"][0]["value"] <= 2002 * 1.01'
expect_json '202 <= [b for b in d["benchmarks"] if b["name"] == "BM_threads/threads:2"][0]["value"] <= 202 * 1.05'
same_counts "$TMP/cg1.json" "$TMP/cg2.json"
out=$(cat "$TMP/cg1.txt")
expect_out "BM_crash failed: SIGSEGV"
expect_out "BM_crash\(benchmark::State&\)"
expect_no_orphans "$S"

# compare: two results files, by the binary's names (the same build, the
# same counts: nothing changed).
run compare "$TMP/cg1.json" "$TMP/cg2.json" --format json
expect_status 0
expect_out 'BM_threads/threads:2'
# compare of two builds: walltime paired batch by batch (two live
# children), by the binaries' names; the same build twice fails no gate.
run compare "$S" "$S" --bench 'BM_memcpy/64' --bench 'BM_named/n:8' --time 0.1 --min-samples 4 \
	--output "$TMP/paired.json"
expect_status 0
expect_out 'BM_memcpy/64'
expect_out 'BM_named/n:8'
out=$(cat "$TMP/paired.json")
cp "$TMP/paired.json" "$TMP/out"
expect_json '[b["name"] for b in d["benchmarks"]] == ["BM_memcpy/64", "BM_named/n:8"] and all(b["paired"]["pairs"] >= 2 for b in d["benchmarks"])'
expect_json '[b["name"] for b in d["paired"]["base"]["benchmarks"]] == ["BM_memcpy/64", "BM_named/n:8"]'
# A crash in head fails the gate; exact instruments compare each build in turn.
run compare "$S" "$S" --bench BM_crash --time 0.1 --min-samples 2
expect_status 1
expect_out 'BM_crash .*failed'
run compare "$S" "$S" --bench BM_alloc --instrument memory --format json
expect_status 0
# Two suites with nothing in common, a suite and a program that is not one.
run compare "$S" "$FIXTURES/gbench/gbench_ripple"
expect_usage_error "no benchmark in common"
run compare "$S" "$BUILD_ROOT/benches/examples"
expect_usage_error "is a Google Benchmark binary and .* is not"
# --symbol selects functions of a Google Benchmark binary as of any binary:
# run and compare of two builds alike, paired under walltime; with --bench,
# the instances then the functions.
run run "$S" --symbol 'counted_loop(10)' --time 0.05 --format json
expect_status 0
expect_json '[b["name"] for b in d["benchmarks"]] == ["counted_loop(10)"] and d["benchmarks"][0]["status"] == "ok"'
run compare "$S" "$S" --symbol 'counted_loop(10)' --time 0.05 --min-samples 4 --format json
expect_status 0
expect_json '[p["name"] for p in d["benchmarks"]] == ["counted_loop(10)"]' 
run compare "$S" "$S" --bench BM_counted --symbol 'counted_loop(10)' --time 0.1 --min-samples 2 \
	--output "$TMP/mixed.json"
expect_status 0
out=$(cat "$TMP/mixed.json")
cp "$TMP/mixed.json" "$TMP/out"
expect_json '[b["name"] for b in d["benchmarks"]] == ["BM_counted", "counted_loop(10)"] and all(b["paired"]["pairs"] >= 2 for b in d["benchmarks"])'
# functions alone compare in any two binaries.
run compare "$S" "$S" --symbol 'nothing_here*' --time 0.05
expect_usage_error "no function matches 'nothing_here\*'"
expect_no_orphans "$S"
expect_no_temp_dirs
# The binary's own repetitions lengthen the default timeout (docs/run.md):
# 3 x 1.2 s + 400 x (0.25 + 3 x 0.0001) s.
run run "$S" --bench BM_counted --format json -- --benchmark_repetitions=400 \
	--benchmark_min_time=0.0001
expect_status 0
expect_json 'abs(d["run"]["timeout_s"] - 103.72) < 1e-6'

done_ok
