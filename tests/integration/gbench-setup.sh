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
# - compare: both builds' batches run the same iteration count (base's),
#   a thread's too, with no diagnostic that they differ.
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
# Two builds paired: head runs base's count in every batch (its constructor's
# argument set), on one thread or two.
cp "$S" "$TMP/setup_copy"
TA=$FIXTURES/gbench/gbench_setup_twin_a TB=$FIXTURES/gbench/gbench_setup_twin_b
for pair in "$TA $TB" "$S $TMP/setup_copy"; do
	read -r base head <<<"$pair"
	run compare "$base" "$head" --bench 'BM_*' --time 0.2 --min-samples 5 --threshold 50 \
		--output "$TMP/pair.json"
	expect_status 0
	python3 - "$TMP/pair.json" <<'PY' || fail "compare $pair: the batches differ"
import json, sys
d = json.load(open(sys.argv[1]))
its = lambda doc: {b["name"]: b["stats"]["iterations_per_sample"] for b in doc["benchmarks"] if b["status"] == "ok"}
base, head = its(d["paired"]["base"]), its(d)
assert base and base == head, (base, head)
said = [x for b in d["benchmarks"] for x in b["diagnostics"] if "iteration(s) a batch" in x]
assert not said, said
PY
	checks=$((checks + 1))
done
expect_no_orphans "$S"
done_ok
