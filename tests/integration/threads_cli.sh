#!/usr/bin/env bash
# Threaded benchmarks at the command line, not their figures: BENCHTRAP_THREADS
# in list and in the stub's own runner, --threads read and refused, perf
# refusing threads, names expanded before shards and kept by merge. What a
# threaded run measures is rounds.sh's.
. "$(dirname "$0")/lib.sh"
FX=$FIXTURES/elf
T=$FX/threads_pie_O2
FAST=(--time 0.02 --warmup 0 --sample-time 0.002 --min-samples 2)
expected="plain counter[threads=1] counter[threads=2] counter[threads=4] sized[8] sized[16] solo wide[threads=8] wide[threads=3]"

run_target() {
	"$@" >"$TMP/out" 2>"$TMP/err"
	status=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
}

# ---- list ----------------------------------------------------------------------------------

# One line per count, in source order, in every build.
for v in pie_O0 nopie_O2 lto_O3 static_O2 staticpie_O2; do
	run list "$FX/threads_$v"
	expect_status 0
	[[ $(awk 'NR>1{printf "%s ", $1}' <<<"$out") == "$expected " ]] || fail "threads_$v: wrong benchmarks"
done
run list "$T" --json
expect_status 0
expect_json '" ".join(b["name"] for b in d["benchmarks"]) == "'"$expected"'"'
expect_json '[b.get("threads") for b in d["benchmarks"]] == [None, 1, 2, 4, None, None, 1, 8, 3]'
expect_json '{b["base"] for b in d["benchmarks"][1:4]} == {"counter"}'
expect_json 'all(b["args"] == [] and b["symbol"] == "benchtrap_bench_counter" for b in d["benchmarks"][1:4])'

# A base name selects every count; a full name, bracketed, itself.
run list "$T" --filter counter
expect_status 0
[[ $(awk 'NR>1{printf "%s ", $1}' <<<"$out") == "counter[threads=1] counter[threads=2] counter[threads=4] " ]] ||
	fail "--filter counter must list its three counts"
run list "$T" --filter 'counter[threads=2]'
expect_status 0
[[ $(awk 'NR>1{printf "%s ", $1}' <<<"$out") == "counter[threads=2] " ]] || fail "an exact name selects itself"
run list "$T" --filter 'counter\[threads=[24]\]'
expect_status 0
[[ $(awk 'NR>1{printf "%s ", $1}' <<<"$out") == "counter[threads=2] counter[threads=4] " ]] ||
	fail "an escaped glob selects by the full name"

# The stub's own runner: every count once, on its own thread.
run_target "$T"
expect_status 0
[[ $(tr '\n' ' ' <<<"$out") == "$expected " ]] || fail "standalone run must print every count"
run_target env BENCHTRAP_RUN='counter[threads=2]' "$T"
expect_status 0
[[ -z $out ]] || fail "BENCHTRAP_RUN prints nothing on success"
run_target env BENCHTRAP_RUN='counter[threads=3]' "$T"
expect_status 2
expect_err "^benchtrap: no benchmark named 'counter\[threads=3\]'"

# ---- --threads read and refused --------------------------------------------------------------

for bad in 0 65 x 2x -1 '1.5' ' 2' 999999999999999999999; do
	run run "$T" --threads "$bad"
	expect_usage_error "^benchtrap: run: --threads wants thread counts from 1 to 64 separated by commas, e.g. 1,2,4, not '"
done
for bad in '' 1,,2 '1,' ',4'; do
	run run "$T" --threads "$bad"
	expect_usage_error "^benchtrap: run: --threads wants thread counts from 1 to 64 .*has an empty one$"
done
run run "$T" --threads 1,1
expect_usage_error "^benchtrap: run: --threads gives 1 twice: each count is a benchmark of its own"
run run "$T" --threads 2,4 --threads 4
expect_usage_error "^benchtrap: run: --threads gives 4 twice"
run run "$T" --threads
expect_usage_error "--threads"
# compare of two builds shares run's options.
run compare "$T" "$FX/threads_nopie_O2" --threads 0
expect_usage_error "^benchtrap: compare: --threads wants thread counts from 1 to 64"

# perf counts the calling thread alone: refused, naming what can.
run run "$T" --instrument perf --threads 2
expect_usage_error "^benchtrap: run: --threads 2 is not supported under --instrument perf; use --instrument walltime, callgrind or memory"
run run "$T" --instrument perf --threads 1,4
expect_usage_error "--threads 4 is not supported under --instrument perf"
run compare "$T" "$FX/threads_nopie_O2" --instrument perf --threads 2
expect_usage_error "^benchtrap: compare: --threads 2 is not supported under --instrument perf"
# ...and a registration's own counts under perf too.
run run "$T" --instrument perf --bench counter
expect_usage_error "^benchtrap: run: counter\[threads=2\] runs on 2 threads \(BENCHTRAP_THREADS\), which --instrument perf does not support; use --instrument walltime, callgrind or memory, or --threads 1$"

# A registration above 64 threads: listed, refused by run before anything runs.
run list "$FX/threads_toomany"
expect_status 0
expect_out '^crowd\[threads=65\] '
run run "$FX/threads_toomany"
expect_usage_error "crowd\[threads=65\] runs on 65 threads \(BENCHTRAP_THREADS\), more than the 64 benchtrap runs at once"

run run --help
expect_status 0
expect_out '^  --threads LIST '
run compare --help
expect_out '^  --threads LIST '

# ---- names, order, shards, merge (one thread a benchmark: --threads 1) --------------------------

# --threads 1 alone is the default: plain names, a registration's counts
# become one benchmark.
run run "$T" --bench plain --bench counter --bench 'sized[8]' --threads 1 "${FAST[@]}" --format json
expect_status 0
expect_json '[b["name"] for b in d["benchmarks"]] == ["plain", "counter", "sized[8]"]'
expect_json 'all("threads" not in b and "per_thread" not in b for b in d["benchmarks"])'
expect_json 'd["benchmarks"][2]["args"] == [8]'

# Each count a benchmark of its own, in the order given, expanded before
# the shard is taken: the two parts are disjoint and together the whole.
all='plain[threads=3] plain[threads=1] sized[16][threads=3] sized[16][threads=1] benchtrap_bench_sized(5)[threads=3] benchtrap_bench_sized(5)[threads=1]'
# (Three parts: each holds some of these names, and plain's two counts fall
# in different ones.)
for k in 1 2 3; do
	run run "$T" --bench plain --bench 'sized[16]' --symbol 'benchtrap_bench_sized(5)' --threads 3,1 \
		--shard "$k/3" "${FAST[@]}" --output "$TMP/shard$k.json" --format json
	[[ $status -le 1 ]] || fail "shard $k/3 did not run"
done
run merge "$TMP/shard1.json" "$TMP/shard2.json" "$TMP/shard3.json" --output "$TMP/merged.json"
expect_status 0
checks=$((checks + 1))
python3 - "$TMP"/shard{1,2,3}.json "$TMP/merged.json" "$all" <<'PY' || fail "shards of threaded names"
import json, sys
parts = [json.load(open(p))["benchmarks"] for p in sys.argv[1:4]]
merged = json.load(open(sys.argv[4]))["benchmarks"]
want = sys.argv[5].split()
names = [[b["name"] for b in part] for part in parts]
every = sum(names, [])
assert sorted(every) == sorted(want) and len(set(every)) == len(every), names
assert all(names), names
assert [i for i, part in enumerate(names) if "plain[threads=3]" in part] != \
       [i for i, part in enumerate(names) if "plain[threads=1]" in part], names
# within a part, the order of the whole
for part in names:
    assert part == [n for n in want if n in part], part
# merge keeps each benchmark's thread count as run wrote it
for b in merged:
    if b["name"].endswith("[threads=3]"):
        assert b["threads"] == 3 and "per_thread" in b, b
    else:
        assert "threads" not in b and "per_thread" not in b, b
assert sorted(b["name"] for b in merged) == sorted(want)
PY

done_ok
