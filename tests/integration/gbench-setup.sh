#!/usr/bin/env bash
# A Google Benchmark suite whose functions work outside their timed loop
# (tests/fixtures/gbench/setup.cpp: set-up 200 times the loop's work before
# and after it, PauseTiming, a fixture's SetUp/TearDown, two threads, one
# fixed batch, a buffer allocated before the loop), timed as the library
# times it (docs/gbench.md, "What is timed"):
# - walltime: every instance timed by its loop (no diagnostic that it was
#   not), and benchtrap's figure within 3x of the binary's own cpu time
#   for the same batches, where holding the set-up would be ~200x;
# - callgrind: the loop's count alone, equal between an instance with
#   set-up and a fixed single batch of the same loop, the same in two runs;
# - memory: 64 bytes in one allocation an iteration, the buffer out, in a
#   fixed single batch too.
# No duration is asserted: the bounds are ratios from one run.
. "$(dirname "$0")/lib.sh"
S=$FIXTURES/gbench/gbench_setup
if [[ ! -x $S ]]; then
	echo "skipped: the Google Benchmark fixtures were not built (libbenchmark-dev is not installed)"
	exit 77
fi
export TMPDIR=$TMP/tmp
mkdir -p "$TMPDIR"
NOT_LOOP="could not be timed as Google Benchmark times it"

run run "$S" --bench BM_setup --bench Prepared/loop --bench 'BM_threads/*' --time 0.2 \
	--min-samples 5 --format json
expect_status 0
expect_json 'len(d["benchmarks"]) == 3 and all(b["status"] == "ok" for b in d["benchmarks"])'
expect_json 'not any("'"$NOT_LOOP"'" in x for b in d["benchmarks"] for x in b["diagnostics"])'
# On two threads the library's cpu time is both threads' (twice the real).
expect_json 'all(1 / 3 < b["value"] * (2 if "threads:2" in b["name"] else 1) / b["counters"]["cpu_time"] < 3 for b in d["benchmarks"])'
expect_no_orphans "$S"

run run "$S" --instrument callgrind --bench BM_setup --bench 'BM_once/*' --bench Prepared/loop \
	--format json
expect_status 0
cp "$TMP/out" "$TMP/cg1.json"
# add_chain(2000): 4 instructions a step, and the loop's own few.
expect_json 'all(8000 <= b["value"] <= 8000 * 1.01 for b in d["benchmarks"])'
expect_json 'not any("includes what the function does once" in x for b in d["benchmarks"] for x in b["diagnostics"])'
run run "$S" --instrument callgrind --bench BM_setup --bench 'BM_once/*' --bench Prepared/loop \
	--format json
expect_status 0
same_counts "$TMP/cg1.json" "$TMP/out"

run run "$S" --instrument memory --bench BM_alloc --bench 'BM_alloc_once/*' --bench BM_setup \
	--format json
expect_status 0
expect_json '{b["name"]: b["counters"]["bytes"] for b in d["benchmarks"]} == {"BM_setup": 0, "BM_alloc": 64, "BM_alloc_once/iterations:20": 64}'
expect_json '{b["name"]: b["counters"]["allocations"] for b in d["benchmarks"]} == {"BM_setup": 0, "BM_alloc": 1, "BM_alloc_once/iterations:20": 1}'
expect_no_orphans "$S"
done_ok
