#!/usr/bin/env bash
# Google Benchmark walltime timed by benchtrap (docs/gbench.md), on
# tests/fixtures/gbench: each instance's function bracketed in a fresh
# process running its own main, a sample per repetition's final batch:
# - run: many more samples than processes (one per short repetition), no
#   diagnostic that the figures are the library's own, its counters and
#   cpu time kept; an instance on two threads (two calls per batch) the
#   same; a crash inside a batch failed with SIGSEGV and a backtrace that
#   walks from the function through the library to main;
# - a stripped binary: the library's own timing, with a diagnostic;
# - compare of two builds (gbench_twin_a, gbench_twin_b): the results
#   document has, for every instance, pairs from aligned batches (many
#   more than processes), their ratios, a verdict and its interval; the
#   paired note said. No verdict is asserted: noise decides those.
# - nothing left behind.
# No duration is asserted.
. "$(dirname "$0")/lib.sh"
S=$FIXTURES/gbench/gbench_suite
A=$FIXTURES/gbench/gbench_twin_a
B=$FIXTURES/gbench/gbench_twin_b
if [[ ! -x $S || ! -x $A || ! -x $B ]]; then
	echo "skipped: the Google Benchmark fixtures were not built (libbenchmark-dev is not installed)"
	exit 77
fi
export TMPDIR=$TMP/tmp
mkdir -p "$TMPDIR"
OWN="the figures are Google Benchmark's own"

# --time 0.05 in repetitions of a few ms: tens of samples from one process,
# where Google Benchmark's own timing gave one per repetition, 3.
run run "$S" --bench BM_counted --bench BM_memcpy/64 --time 0.05 --min-samples 3 --format json
expect_status 0
expect_json 'all(b["status"] == "ok" and b["stats"]["samples"] >= 10 for b in d["benchmarks"])'
expect_json 'all(len(b["raw_samples"]) == b["stats"]["samples"] for b in d["benchmarks"])'
expect_json 'not any("'"$OWN"'" in x for b in d["benchmarks"] for x in b["diagnostics"])'
expect_json 'all(b["value"] > 0 and "cpu_time" in b["counters"] for b in d["benchmarks"])'
expect_json 'd["benchmarks"][1]["counters"]["size"] == 64'
expect_no_orphans "$S"

# Two threads: each batch is two calls, one per thread, matched to the log.
run run "$S" --bench 'BM_threads/threads:2' --time 0.05 --min-samples 3 --format json
expect_status 0
expect_json 'd["benchmarks"][0]["status"] == "ok" and d["benchmarks"][0]["stats"]["samples"] >= 10'
expect_json 'not any("did not match" in x or "'"$OWN"'" in x for x in d["benchmarks"][0]["diagnostics"])'
expect_no_orphans "$S"

# A crash inside a batch: the thread's backtrace, through the timing stub
# (its return address given back) to the library and main.
run run "$S" --bench BM_crash --bench BM_counted --time 0.05 --format json
expect_status 1
expect_json 'd["benchmarks"][1]["name"] == "BM_crash" and d["benchmarks"][1]["status"] == "failed" and d["benchmarks"][1]["error"].startswith("SIGSEGV")'
expect_json '"BM_crash(benchmark::State&)+0x" in d["benchmarks"][1]["error"]'
expect_json '"benchmark::RunSpecifiedBenchmarks" in d["benchmarks"][1]["error"]'
expect_json '" main+0x" in d["benchmarks"][1]["error"] and "timing stub" not in d["benchmarks"][1]["error"]'
expect_json 'd["benchmarks"][0]["status"] == "ok"'
expect_no_orphans "$S"

# A binary whose functions have no symbols (stripped): its instances are
# timed by the library itself, and the results say so.
cp "$S" "$TMP/stripped"
strip "$TMP/stripped"
run run "$TMP/stripped" --bench BM_counted --time 0.05 --min-samples 3 --format json
expect_status 0
expect_json 'd["benchmarks"][0]["status"] == "ok" and d["benchmarks"][0]["stats"]["samples"] == 3'
expect_json 'any("'"$OWN"'" in x for x in d["benchmarks"][0]["diagnostics"])'
expect_no_orphans "$TMP/stripped"

# Two builds, paired batch by batch.
run compare "$A" "$B" --bench BM_same --bench BM_5pct --bench 'BM_threads/threads:2' \
	--time 0.1 --min-samples 4 --output "$TMP/paired.json"
expect_status_in() {
	checks=$((checks + 1))
	[[ " $* " == *" $status "* ]] || fail "exit status $status, expected one of $*"
}
expect_status_in 0 1
expect_out 'measured side by side'
cp "$TMP/paired.json" "$TMP/out"
expect_json '[b["name"] for b in d["benchmarks"]] == ["BM_same", "BM_5pct", "BM_threads/threads:2"]'
expect_json 'all(b["status"] == "ok" for b in d["benchmarks"])'
# Pairs from batches: many more than the 4 processes a round each made.
expect_json 'all(b["paired"]["pairs"] > 4 and len(b["paired"]["ratios"]) == b["paired"]["pairs"] for b in d["benchmarks"])'
expect_json 'all(all(r > 0 for r in b["paired"]["ratios"]) for b in d["benchmarks"])'
expect_json '[b["name"] for b in d["paired"]["base"]["benchmarks"]] == ["BM_same", "BM_5pct", "BM_threads/threads:2"]'
# In several pairs of processes (100 repetitions: 4 of 25), each pair's
# ratios counted apart, so that the interval holds what varies between them.
expect_json 'all(len(b["paired"]["processes"]) == 4 and sum(b["paired"]["processes"]) == b["paired"]["pairs"] for b in d["benchmarks"])'
run compare "$TMP/paired.json" --format json
expect_status_in 0 1
expect_json 'all(b["verdict"] in ("regressed", "improved", "unchanged", "inconclusive") and b["ci_low_pct"] <= b["change_pct"] <= b["ci_high_pct"] for b in d["benchmarks"])'
# Groups that do not add up to the ratios: a damaged file, refused.
python3 - "$TMP/paired.json" "$TMP/bad-groups.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["benchmarks"][0]["paired"]["processes"][0] += 1
json.dump(d, open(sys.argv[2], "w"))
PY
run compare "$TMP/bad-groups.json"
expect_usage_error 'paired: processes: more ratios in all than the [0-9]+ in "ratios"'
# Or fewer.
python3 - "$TMP/paired.json" "$TMP/bad-groups.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["benchmarks"][0]["paired"]["processes"][0] -= 1
json.dump(d, open(sys.argv[2], "w"))
PY
run compare "$TMP/bad-groups.json"
expect_usage_error 'paired: processes: [0-9]+ ratios in all, but [0-9]+ in "ratios"'
expect_no_orphans "$A"
expect_no_orphans "$B"
checks=$((checks + 1))
[[ -z $(ls -d "$TMPDIR"/benchtrap-* 2>/dev/null) ]] || fail "temporary directories left"
done_ok
