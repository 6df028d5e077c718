#!/usr/bin/env bash
# Rust divan suites, unmodified (docs/divan.md), on tests/fixtures/divan
# built offline against shared/vendor/rust and Debian's crates:
# - list: divan's own paths in its order, a threads = [1, 2] benchmark
#   once per thread count ("sum/threads:2"), args and a nested module's;
#   selection by those names and globs;
# - walltime: every instance in a process of its own (distinct pids), the
#   one that dies failed with SIGSEGV and its backtrace, the others ok;
#   samples of one fixed size, a 2-thread instance's rounds half its
#   1-thread one's samples (a round is one sample of each thread);
# - callgrind: sum/threads:1 per iteration equal to the count derived here
#   by hand from two valgrind runs of our own with the options benchtrap
#   uses (samples of 1 and of 2 iterations: the difference of their last
#   samples), the same in two runs;
# - memory: alloc_vec's one allocation of 800 bytes an iteration, live
#   at once; alloc_seq's three, one at a time (a peak of 800); fib's none;
#   the crash failed alone;
# - compare BASE HEAD of the two builds: paired, pairs taken (structure
#   only: no verdict that noise decides);
# - perf refused, reserved arguments after '--' refused, a flag divan does
#   not take: its own words;
# - no process of the suite nor temporary directory left behind, nor after
#   benchtrap is killed (SIGINT, SIGTERM, SIGKILL) while a benchmark runs.
# No duration is asserted.
# $1: why the fixture was not built, when it was not (meson says).
missing=${1:-}
. "$(dirname "$0")/lib.sh"
S=$FIXTURES/divan/divan_suite
SLOW=$FIXTURES/divan/divan_suite_slow
if [[ ! -x $S || ! -x $SLOW ]]; then
	echo "skipped: the divan fixture was not built: ${missing:-see tests/fixtures/divan/meson.build}"
	exit 77
fi
own_tmpdir
P=divan_suite
# The instances, in the order divan lists its paths (the linker's, which a
# rebuild may change): each thread count of sum an instance of its own.
NAMES=$(NEXTEST=1 "$S" --list --format terse | sed -n 's/: benchmark$//p' |
	sed "s|^$P::sum\$|$P::sum/threads:1 $P::sum/threads:2|" | tr "\n" " ")
NAMES=${NAMES% }
[[ $(wc -w <<<"$NAMES") == 13 ]] || fail "divan lists other paths than the fixture's: $NAMES"

# list: divan's own paths, in its order.
run list "$S"
expect_status 0
[[ $(tail -n +2 <<<"$out" | tr "\n" " ") == "$NAMES " ]] ||
	fail "list does not give the binary's paths in its order: $out"
checks=$((checks + 1))
run list "$S" --filter "$P::sum/*" --json
expect_json 'd["framework"] == "divan" and [b["name"] for b in d["benchmarks"]] == ["divan_suite::sum/threads:1", "divan_suite::sum/threads:2"]'

# walltime: each instance alone, the crash failed with its backtrace.
run run "$S" --time 0.3 --format json
expect_status 1
cp "$TMP/out" "$TMP/wall.json"
expect_json '[b["name"] for b in d["benchmarks"]] == '"$(python3 -c 'import sys; print(sys.argv[1].split())' "$NAMES")"
expect_json 'all(b["status"] == "ok" and b["value"] > 0 for b in d["benchmarks"] if not b["name"].endswith("::crash"))'
expect_json 'len({b["pid"] for b in d["benchmarks"]}) == len(d["benchmarks"])'
expect_json '[b for b in d["benchmarks"] if b["name"].endswith("::crash")][0]["status"] == "failed"'
expect_json '"SIGSEGV" in [b for b in d["benchmarks"] if b["name"].endswith("::crash")][0]["error"]'
expect_json '"divan::" in json.dumps([b for b in d["benchmarks"] if b["name"].endswith("::crash")][0])'
# A round of a 2-thread instance is one sample of each thread: as many
# rounds as half the samples divan was asked for.
expect_json '(lambda t1, t2: t2["stats"]["samples"] * 2 == t1["stats"]["samples"])(*[b for b in d["benchmarks"] if "sum/threads" in b["name"]])'
expect_no_orphans "$S"
expect_no_temp_dirs

# callgrind, by hand: valgrind with the options benchtrap uses, samples of
# 1 and of 2 iterations; the instructions of each run's last sample (from
# sync_impl's return to its next entry) and their difference.
SYNC=$(nm -C "$S" | sed -n 's/^[0-9a-f]* [tT] \(divan::benchmark::BenchContext::sample_recorder::.*::sync_impl\)$/\1/p' | head -n 1)
[[ -n $SYNC ]] || fail "no sync_impl among the fixture's symbols"
for size in 1 2; do
	mkdir -p "$TMP/cg$size"
	valgrind --tool=callgrind --callgrind-out-file="$TMP/cg$size/callgrind.out.%p" \
		--collect-atstart=yes "--dump-before=$SYNC" "--dump-after=$SYNC" \
		"$S" --bench --exact "$P::sum" --color=never --threads=1 --sample-size=$size \
		--sample-count=3 >/dev/null 2>&1 || fail "valgrind's own run of $P::sum failed"
done
hand=$(python3 - "$TMP/cg1" "$TMP/cg2" <<'PY'
import glob, re, sys
def last_sample(d):
    dumps = []
    for f in glob.glob(d + "/callgrind.out.*.*"):
        text = open(f).read()
        n = int(re.search(r"\.(\d+)$", f).group(1))
        dumps.append((n, int(re.search(r"^(?:totals|summary): (\d+)", text, re.M).group(1))))
    dumps.sort()
    return dumps[-2][1]
print(last_sample(sys.argv[2]) - last_sample(sys.argv[1]))
PY
) || fail "cannot read valgrind's own profiles"
run run "$S" --instrument callgrind --bench "$P::sum/threads:1" --bench "$P::fib" --format json
expect_status 0
expect_json 'abs(d["benchmarks"][0]["value"] - '"$hand"') <= 0.001 * '"$hand"
# 1..=1000 through black_box: a few instructions an element.
expect_json '3000 <= d["benchmarks"][0]["value"] <= 20000'
cp "$TMP/out" "$TMP/cg1.json"
run run "$S" --instrument callgrind --bench "$P::sum/threads:1" --bench "$P::fib" --format json
python3 - "$TMP/cg1.json" "$TMP/out" <<'PY' || fail "two callgrind runs of the same instances differ"
import json, sys
a, b = ([x["value"] for x in json.load(open(p))["benchmarks"]] for p in sys.argv[1:3])
sys.exit(0 if all(abs(x - y) <= 0.001 * x for x, y in zip(a, b)) else 1)
PY
checks=$((checks + 1))
expect_no_orphans "$S"

# memory: per iteration, inside divan's samples.
run run "$S" --instrument memory --bench "$P::alloc_vec" --bench "$P::alloc_seq" --bench "$P::fib" --bench "$P::crash" --format json
expect_status 1
expect_json '[b["counters"] for b in d["benchmarks"] if b["name"].endswith("alloc_vec")][0] == {"bytes": 800, "allocations": 1, "frees": 0, "peak_bytes": 800}'
expect_json '[b["counters"] for b in d["benchmarks"] if b["name"].endswith("alloc_seq")][0] == {"bytes": 2400, "allocations": 3, "frees": 3, "peak_bytes": 800}'
expect_json '[b["counters"] for b in d["benchmarks"] if b["name"].endswith("::fib")][0] == {"bytes": 0, "allocations": 0, "frees": 0, "peak_bytes": 0}'
expect_json '[b["status"] for b in d["benchmarks"] if b["name"].endswith("::crash")] == ["failed"]'
expect_no_orphans "$S"

# compare BASE HEAD: paired, pairs taken.
run compare "$S" "$SLOW" --bench "$P::twin::*" --time 0.3 --format json
expect_json 'd["paired"] is True and sorted(b["name"] for b in d["benchmarks"]) == ["divan_suite::twin::five", "divan_suite::twin::same", "divan_suite::twin::two"]'
expect_json 'all(b["base_status"] == "ok" and b["head_status"] == "ok" and b["ci_low_pct"] is not None for b in d["benchmarks"])'
expect_no_orphans "$S"
expect_no_orphans "$SLOW"

# What the row refuses, and what a binary says of its own.
run run "$S" --instrument perf
expect_usage_error "divan binary: --instrument perf does not measure one"
for flag in --exact --threads --sample-size --list; do
	run run "$S" --bench "$P::fib" -- "$flag" 1
	expect_usage_error "'$flag' after '--' would change what benchtrap selects"
done
# A positional word after '--' is divan's filter: refused too, an option's
# value not.
run run "$S" --bench "$P::fib" -- --min-time 0.1 fib
expect_usage_error "'fib' after '--' would change what benchtrap selects"
run run "$S" --bench "$P::fib" --time 0.3 -- --no-such-flag
expect_status 1
expect_out "failed: "
expect_no_orphans "$S"
expect_no_temp_dirs

# benchtrap killed while a benchmark runs: nothing of the suite survives.
for instrument in walltime memory; do
	for sig in INT TERM KILL; do
		"$BENCHTRAP" run "$S" --bench "$P::fib_args::20" --instrument "$instrument" --time 30 \
			--timeout 120 >/dev/null 2>&1 &
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

done_ok
