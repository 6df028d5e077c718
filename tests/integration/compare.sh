#!/usr/bin/env bash
# benchtrap compare, merge and export on crafted results files: each verdict,
# the threshold, significance with noisy samples, environment warnings, the
# three formats, GITHUB_STEP_SUMMARY, malformed files (exit 2, one line),
# merge refusals, export shapes; then run --shard on the example suite:
# the shards are disjoint and merge into the names of a single run.
. "$(dirname "$0")/lib.sh"
MK="python3 $SOURCE_ROOT/tests/fixtures/ci/make_results.py"
EX=$BUILD_ROOT/benches/examples
FAST=(--time 0.02 --warmup 0 --sample-time 0.002 --min-samples 5)

# ---- verdicts ---------------------------------------------------------------
# Tight samples: 'slower' +20%, 'faster' -20%, 'steady' the same, 'noisy' 10%
# apart but buried in noise of 8 samples, 'crash' fails in head, 'gone' only
# in base, 'added' only in head, 'empty' measured no time.
$MK "$TMP/base.json" --seed 1 steady=1000~5 slower=1000~5 faster=1000~5 noisy=1000~400x8 \
	crash=500~5 gone=10~1 empty=notime exact=1000@callgrind
$MK "$TMP/head.json" --seed 2 --build-id bb steady=1000~5 slower=1200~5 faster=800~5 noisy=1100~400x8 \
	crash=failed added=10~1 empty=notime exact=1040@callgrind

run compare "$TMP/base.json" "$TMP/head.json" --format json
expect_status 1
expect_json 'd["schema"] == "benchtrap-compare/1" and d["threshold_pct"] == 5'
expect_json '{b["name"]: b["verdict"] for b in d["benchmarks"]} == {"steady": "unchanged", "slower": "regressed", "faster": "improved", "noisy": "inconclusive", "crash": "failed", "gone": "missing", "added": "new", "empty": "unchanged", "exact": "unchanged"}'
expect_json 'd["summary"]["counts"] == {"regressed": 1, "improved": 1, "unchanged": 3, "failed": 1, "new": 1, "missing": 1, "inconclusive": 1}'
# Largest change first, failures before everything.
expect_json '[b["name"] for b in d["benchmarks"]][:3] == ["crash", "faster", "slower"]'
expect_json '[b["verdict"] for b in d["benchmarks"]][-2:] == ["missing", "new"]'
expect_json 'abs(d["benchmarks"][2]["change_pct"] - 20) < 3 and d["benchmarks"][2]["ci_low_pct"] > 5'
expect_json 'not [b for b in d["benchmarks"] if b["name"] == "noisy"][0]["significant"]'
expect_json 'any("crash failed in head: killed by SIGSEGV" in w for w in d["warnings"])'
expect_json 'any("empty measured no execution time in head" in w for w in d["warnings"])'
expect_json 'd["summary"]["benchmarks_in_geomean"] == 5'
expect_json 'any("build-ids differ" in n for n in d["notes"])'
expect_json 'd["same_build"] is False and d["gate"] == "fail"'

# Text: the summary sentence, counts, the table, warnings.
run compare "$TMP/base.json" "$TMP/head.json"
expect_status 1
expect_out '^this change degrades 1 benchmark and improves 1 beyond the threshold \(geometric mean [-+][0-9.]+% of 5 benchmarks\)$'
expect_out '^1 regressed, 1 improved, 3 unchanged, 1 inconclusive, 1 failed, 1 new, 1 missing \(threshold 5%, 99% intervals\)$'
expect_out '^BENCHMARK +BASE +HEAD +CHANGE +99% CI +VERDICT'
expect_out '^slower \(walltime\) +1\.[0-9]+ µs +1\.[0-9]+ µs +\+[12][0-9]\.[0-9]% .* regressed'
expect_out '^exact \(callgrind\) +1,000 instructions +1,040 instructions +\+4\.0% +- +unchanged'
expect_out '^warnings:$'
[[ -z $err ]] || fail "compare wrote to stderr"

# Markdown for a pull-request comment, also appended to GITHUB_STEP_SUMMARY.
echo "previous step" >"$TMP/summary.md"
GITHUB_STEP_SUMMARY=$TMP/summary.md run compare "$TMP/base.json" "$TMP/head.json" --format markdown
expect_status 1
expect_out '^### benchtrap: this change degrades 1 benchmark and improves 1 beyond the threshold'
expect_out '^\*\*1 regressed\*\*, 1 improved, 3 unchanged, 1 inconclusive, \*\*1 failed\*\*'
expect_out '^\| benchmark \| base \| head \| change \| 99% interval \| verdict \| note \|$'
expect_out '^\| slower \(walltime\) \| .* \| \*\*regressed\*\* \|'
expect_out '^<details><summary>All 9 benchmarks</summary>$'
expect_out '^</details>$'
checks=$((checks + 1))
[[ $(head -1 "$TMP/summary.md") == "previous step" ]] || fail "GITHUB_STEP_SUMMARY was not appended to"
grep -q '^### benchtrap: ' "$TMP/summary.md" || fail "no report in GITHUB_STEP_SUMMARY"
# The changed-only table lists what changed, not the unchanged ones.
checks=$((checks + 1))
awk '/^\| benchmark/ { n++ } n == 1 && /^$/ { exit } n == 1' <<<"$out" | grep -q '^| steady ' &&
	fail "the table of changes lists an unchanged benchmark"

# ---- the headline agrees with the verdicts --------------------------------------
# Tight samples +3.7% apart, within the 5% threshold: nothing regressed, so
# no degradation is announced; from one binary measured twice (the same
# build-id), the headline says so.
$MK "$TMP/b37.json" --seed 5 a=1000~2 b=2000~4
$MK "$TMP/h37.json" --seed 6 --build-id bb a=1037~2 b=2074~4
$MK "$TMP/h37same.json" --seed 6 a=1037~2 b=2074~4
run compare "$TMP/b37.json" "$TMP/h37.json"
expect_status 0
expect_out '^no benchmark changed beyond the threshold \(geometric mean \+3\.7% of 2 benchmarks\)$'
expect_out '^0 regressed, 0 improved, 2 unchanged, 0 failed'
expect_no_out 'degrades|improves'
run compare "$TMP/b37.json" "$TMP/h37same.json" --format markdown
expect_status 0
expect_out '^### benchtrap: the same binary was measured twice: every change is noise \(geometric mean \+3\.7% of 2 benchmarks\)$'
expect_out 'same binary was measured twice, so every change is noise'
expect_no_out 'degrades|improves'
# An interval wider than the threshold on both sides (8 samples of ±40%,
# medians 10% apart): inconclusive, which passes the gate, and the headline
# points to the side-by-side comparison of the two builds.
$MK "$TMP/bwide.json" --seed 1 wide=1000~400x8 steady=1000~5
$MK "$TMP/hwide.json" --seed 2 --build-id bb wide=1100~400x8 steady=1000~5
run compare "$TMP/bwide.json" "$TMP/hwide.json" --format json
expect_status 0
expect_json '{b["name"]: b["verdict"] for b in d["benchmarks"]} == {"wide": "inconclusive", "steady": "unchanged"}'
expect_json '[b for b in d["benchmarks"] if b["name"] == "wide"][0]["ci_low_pct"] < -5 < 5 < [b for b in d["benchmarks"] if b["name"] == "wide"][0]["ci_high_pct"]'
expect_json 'd["summary"]["counts"]["inconclusive"] == 1 and d["gate"] == "pass"'
expect_json 'd["summary"]["sentence"].startswith("cannot tell whether this change affects performance: 1 of 2 benchmarks is too noisy")'
expect_json 'any("1 benchmark is inconclusive" in n and "benchtrap compare BASE_BINARY HEAD_BINARY" in n for n in d["notes"])'
run compare "$TMP/bwide.json" "$TMP/hwide.json"
expect_status 0
expect_out '^cannot tell whether this change affects performance: 1 of 2 benchmarks is too noisy to judge \(`benchtrap compare BASE_BINARY HEAD_BINARY` measures both builds side by side\)$'
expect_out '^0 regressed, 0 improved, 1 unchanged, 1 inconclusive, 0 failed, 0 new, 0 missing'
expect_out '^wide .* inconclusive +the interval spans both -threshold and \+threshold: too wide to tell$'
run compare "$TMP/bwide.json" "$TMP/hwide.json" --format markdown
expect_status 0
expect_out '^### benchtrap: cannot tell whether this change affects performance'
expect_out '^0 regressed, 0 improved, 1 unchanged, 1 inconclusive, 0 failed'
# In the table of what needs a look, above the collapsed table of all.
checks=$((checks + 1))
awk '/^\| benchmark/ { n++ } n == 1 && /^$/ { exit } n == 1' <<<"$out" | grep -q '^| wide .*| inconclusive |' ||
	fail "the table of changes does not list the inconclusive benchmark"
# A threshold wider than the interval: unchanged.
run compare "$TMP/bwide.json" "$TMP/hwide.json" --threshold 200 --format json
expect_status 0
expect_json '{b["name"]: b["verdict"] for b in d["benchmarks"]} == {"wide": "unchanged", "steady": "unchanged"}'

# No regression, no failure: exit 0. The threshold decides.
$MK "$TMP/b2.json" --seed 3 a=1000~5 b=2000~5
$MK "$TMP/h2.json" --seed 4 --build-id bb a=1080~5 b=2000~5
run compare "$TMP/b2.json" "$TMP/h2.json" --threshold 10
expect_status 0
expect_out '0 regressed, 0 improved, 2 unchanged'
run compare "$TMP/b2.json" "$TMP/h2.json" --threshold 5
expect_status 1
expect_out '1 regressed'
run compare "$TMP/b2.json" "$TMP/h2.json" --threshold 5% --format json
expect_status 1
# The same build-id in both: one binary measured twice, so a regression is
# noise and passes the gate, said in one line; a failure in HEAD still fails.
$MK "$TMP/h2same.json" --seed 4 a=1080~5 b=2000~5
run compare "$TMP/b2.json" "$TMP/h2same.json" --threshold 5
expect_status 0
expect_out '1 regressed'
expect_out '^base and head have the same build-id: .* no regression fails the gate \(exit 0\)$'
checks=$((checks + 1))
[[ $(grep -c 'same build-id' <<<"$out") -eq 1 ]] || fail "the same build-id is said more than once"
run compare "$TMP/b2.json" "$TMP/h2same.json" --threshold 5 --format markdown
expect_status 0
expect_out '^base and head have the same build-id: '
run compare "$TMP/b2.json" "$TMP/h2same.json" --threshold 5 --format json
expect_status 0
expect_json 'd["same_build"] is True and d["gate"] == "pass" and d["summary"]["counts"]["regressed"] == 1'
$MK "$TMP/h2fail.json" --seed 4 a=1080~5 b=failed
run compare "$TMP/b2.json" "$TMP/h2fail.json" --format json
expect_status 1
expect_json 'd["same_build"] is True and d["gate"] == "fail"'
# The same binary given other arguments, or a library function whose
# library changed: not the same code, the gate applies.
$MK "$TMP/b2args.json" --seed 3 --args "--size 10" a=1000~5 b=2000~5
$MK "$TMP/h2args.json" --seed 4 --args "--size 20" a=1080~5 b=2000~5
run compare "$TMP/b2args.json" "$TMP/h2args.json" --threshold 5 --format json
expect_status 1
expect_json 'd["same_build"] is False'
$MK "$TMP/h2args-same.json" --seed 4 --args "--size 10" a=1080~5 b=2000~5
run compare "$TMP/b2args.json" "$TMP/h2args-same.json" --threshold 5 --format json
expect_status 0
expect_json 'd["same_build"] is True'
$MK "$TMP/b2lib.json" --seed 3 --lib-build-id 11 a=1000~5 b=2000~5
$MK "$TMP/h2lib.json" --seed 4 --lib-build-id 22 a=1080~5 b=2000~5
run compare "$TMP/b2lib.json" "$TMP/h2lib.json" --threshold 5 --format json
expect_status 1
expect_json 'd["same_build"] is False'
# An empty build-id is no build-id.
$MK "$TMP/b2empty.json" --seed 3 --build-id '' a=1000~5 b=2000~5
$MK "$TMP/h2empty.json" --seed 4 --build-id '' a=1080~5 b=2000~5
run compare "$TMP/b2empty.json" "$TMP/h2empty.json" --threshold 5 --format json
expect_status 1
expect_json 'd["same_build"] is False'
# Without raw samples the intervals of the medians decide.
$MK "$TMP/b3.json" --seed 3 --no-raw a=1000~5
$MK "$TMP/h3.json" --seed 4 --build-id bb --no-raw a=1300~5
run compare "$TMP/b3.json" "$TMP/h3.json" --format json
expect_status 1
expect_json 'd["benchmarks"][0]["verdict"] == "regressed" and "intervals of the medians" in d["benchmarks"][0]["note"]'

# The same file against itself: nothing changes, and its one build-id says
# it is one binary.
run compare "$TMP/base.json" "$TMP/base.json"
expect_status 0
expect_out '^the same binary was measured twice: every change is noise \(geometric mean \+0\.0% of 7 benchmarks\)$'
expect_out '^0 regressed, 0 improved, '
# Without build-ids nothing says it is one binary: no change.
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["environment"]["build_id"]=None; [b.pop("build_id", None) for b in d["benchmarks"]]; json.dump(d, open(sys.argv[2], "w"))' "$TMP/b2.json" "$TMP/b2nobid.json"
run compare "$TMP/b2nobid.json" "$TMP/b2nobid.json"
expect_status 0
expect_out '^this change does not change performance measurably \(geometric mean of 2 benchmarks\)$'

# Environments that differ are named; build_id differing is expected.
$MK "$TMP/env.json" --seed 2 --cpu "Other CPU" --kernel "Linux 6.5" --build-id bb steady=1000~5
run compare "$TMP/base.json" "$TMP/env.json"
expect_out "different environments: cpu \('Test CPU' vs 'Other CPU'\), kernel \('Linux 6.1.0 test' vs 'Linux 6.5'\)"
expect_out 'the build-ids differ, as expected'
expect_no_out 'build_id \('

# ---- bad input: exit 2, one line naming the file and the problem ------------
printf 'not json' >"$TMP/bad.json"
run compare "$TMP/base.json" "$TMP/bad.json"
expect_usage_error "^benchtrap: $TMP/bad.json: not JSON: "
echo '{"schema": "benchtrap-results/9", "environment": {}, "benchmarks": []}' >"$TMP/v9.json"
run compare "$TMP/v9.json" "$TMP/base.json"
expect_usage_error 'v9.json: schema: unknown version "benchtrap-results/9"'
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); del d["benchmarks"][3]["stats"]["median"]; json.dump(d, open(sys.argv[2], "w"))' \
	"$TMP/base.json" "$TMP/nomedian.json"
run compare "$TMP/base.json" "$TMP/nomedian.json"
expect_usage_error 'nomedian.json: benchmarks\[3\].stats.median: missing$'
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["benchmarks"][0]["value"]="fast"; json.dump(d, open(sys.argv[2], "w"))' \
	"$TMP/base.json" "$TMP/strvalue.json"
run compare "$TMP/strvalue.json" "$TMP/base.json"
expect_usage_error 'strvalue.json: benchmarks\[0\].value: expected a number, not a string$'
run compare "$TMP/base.json" "$TMP/missing.json"
expect_usage_error 'missing.json: no such file'
run compare "$TMP/base.json" "$TMP"
expect_usage_error 'is a directory'
run compare "$TMP/base.json"
expect_usage_error 'compare: which files\?'
run compare "$TMP/base.json" "$TMP/head.json" "$TMP/head.json"
expect_usage_error "unexpected argument"
run compare "$TMP/base.json" "$TMP/head.json" --threshold -3
expect_usage_error -- '--threshold wants a percentage'
run compare "$TMP/base.json" "$TMP/head.json" --format html
expect_usage_error -- '--format is text, markdown or json'
run compare "$TMP/base.json" "$TMP/head.json" --colour
expect_usage_error "unknown option '--colour'"
run compare --help
expect_status 0
expect_out '^usage: benchtrap compare BASE.json HEAD.json'
expect_out '^exit status: 0 no regression'

# ---- export: the documented shapes of each format ---------------------------
run export "$TMP/head.json" --format bmf
expect_status 0
# BMF: {name: {measure: {value, lower_value?, upper_value?}}}, numbers only.
expect_json 'isinstance(d, dict) and all(isinstance(m, dict) and all(isinstance(v, dict) and isinstance(v["value"], (int, float)) and set(v) <= {"value", "lower_value", "upper_value"} for v in m.values()) for m in d.values())'
expect_json 'd["slower"]["latency"]["lower_value"] <= d["slower"]["latency"]["value"] <= d["slower"]["latency"]["upper_value"]'
expect_json '"crash" not in d and set(d["exact"]) == {"instructions"}'
run export "$TMP/head.json" --format gab
expect_status 0
# github-action-benchmark customSmallerIsBetter: [{name, unit, value, range?, extra?}].
expect_json 'isinstance(d, list) and all(set(x) >= {"name", "unit", "value"} and set(x) <= {"name", "unit", "value", "range", "extra"} and isinstance(x["value"], (int, float)) and isinstance(x["name"], str) for x in d)'
expect_json 'all(isinstance(x.get("range", ""), str) and isinstance(x.get("extra", ""), str) for x in d)'
expect_json '"slower (walltime)" in [x["name"] for x in d] and "crash (walltime)" not in [x["name"] for x in d]'
expect_json '[x for x in d if x["name"] == "slower (walltime)"][0]["range"].startswith("± ")'
run export "$TMP/head.json" --format gbench
expect_status 0
# Google Benchmark JSON as tools/compare.py reads it: context + benchmarks,
# each with name, real_time, cpu_time, time_unit; one iteration row per
# benchmark (its median), then the aggregates over its samples.
expect_json 'set(d) == {"context", "benchmarks"} and {"date", "num_cpus", "executable"} <= set(d["context"])'
expect_json 'all({"name", "run_name", "run_type", "repetitions", "threads", "iterations", "real_time", "cpu_time", "time_unit"} <= set(b) for b in d["benchmarks"])'
expect_json 'all(("repetition_index" in b) == (b["run_type"] == "iteration") for b in d["benchmarks"])'
expect_json 'all(b["time_unit"] == "ns" and b["run_type"] in ("iteration", "aggregate") for b in d["benchmarks"])'
# The file holds walltime and callgrind benchmarks: names carry the instrument.
# Every row says repetitions 100 (the samples), as Google Benchmark writes
# 100 repetitions; an aggregate's iterations are the 100 runs it is over.
expect_json '[(b["repetitions"], b["real_time"]) for b in d["benchmarks"] if b["name"] == "slower (walltime)" and b["run_type"] == "iteration"] == [(100, [x for x in d["benchmarks"] if x["name"] == "slower (walltime)_median"][0]["real_time"])]'
expect_json '[(b["repetitions"], b["iterations"]) for b in d["benchmarks"] if b["name"] == "slower (walltime)_median"] == [(100, 100)]'
expect_json '[b["real_time"] for b in d["benchmarks"] if b["name"] == "exact (callgrind)"] == [1040]'
# A benchmark that measured no time, and one that failed, have no rows
# (compare.py would read a failure's real_time 0 as a -100% change).
expect_json 'not [b for b in d["benchmarks"] if b["run_name"] in ("empty (walltime)", "crash (walltime)")]'
expect_json '[b["aggregate_name"] for b in d["benchmarks"] if b["run_name"] == "slower (walltime)" and b["run_type"] == "aggregate"] == ["mean", "median", "stddev", "cv"]'
expect_err 'export: 1 failed benchmark left out'
expect_err 'export: 1 benchmark that measured no time left out'
run export "$TMP/head.json"
expect_usage_error 'export: which format\?'
run export "$TMP/head.json" --format csv
expect_usage_error -- '--format is bmf, gbench or gab'
run export "$TMP/bad.json" --format bmf
expect_usage_error 'bad.json: not JSON'

# ---- merge refusals ----------------------------------------------------------
$MK "$TMP/m1.json" --seed 5 a=10~1 b=20~1
$MK "$TMP/m2.json" --seed 6 c=30~1
$MK "$TMP/m3.json" --seed 7 b=20~1
$MK "$TMP/m4.json" --seed 8 --cpu "Other CPU" d=40~1
$MK "$TMP/m5.json" --seed 8 --build-id cc d=40~1
run merge "$TMP/m1.json" "$TMP/m2.json" --output "$TMP/merged.json"
expect_status 0
expect_out 'merged 3 benchmarks from 2 files'
cp "$TMP/merged.json" "$TMP/out"
expect_json '[b["name"] for b in d["benchmarks"]] == ["a", "b", "c"] and d["run"]["merged_from"][1].endswith("m2.json")'
expect_json 'd["schema"] == "benchtrap-results/1" and d["environment"]["cpu"] == "Test CPU"'
run merge "$TMP/m1.json" "$TMP/m3.json" --output "$TMP/dup.json"
expect_usage_error 'b \(walltime\) is in both .*m1.json and .*m3.json.*--allow-duplicates'
[[ ! -e $TMP/dup.json ]] || fail "a refused merge wrote its output"
run merge "$TMP/m1.json" "$TMP/m3.json" --output "$TMP/dup.json" --allow-duplicates
expect_status 0
run merge "$TMP/m1.json" "$TMP/m4.json" --output "$TMP/env.json"
expect_usage_error "m4.json: measured in another environment than .*m1.json: cpu \('Test CPU' vs 'Other CPU'\).*--allow-mismatch"
run merge "$TMP/m1.json" "$TMP/m5.json" --output "$TMP/env.json"
expect_usage_error "m5.json: build_id differs from .*m1.json \('aa' vs 'cc'\)"
run merge "$TMP/m1.json" "$TMP/m4.json" "$TMP/m3.json" --output "$TMP/env.json" --force
expect_status 0
run merge "$TMP/m1.json" "$TMP/bad.json" --output "$TMP/x.json"
expect_usage_error 'bad.json: not JSON'
run merge "$TMP/m1.json"
expect_usage_error 'merge: where to\? add --output FILE'
run merge "$TMP/m1.json" --output /nonexistent/dir/x.json
expect_usage_error 'cannot write the merged results'
checks=$((checks + 1))
ls "$TMP" | grep -q 'merged.json\.' && fail "a temporary file was left behind"

# ---- run --shard: disjoint parts whose union is the whole suite --------------
run run "$EX" "${FAST[@]}" --format json --bench 'fib*' --bench empty --bench loop_300ns \
	--bench optimized_away --bench syscall_getppid --output "$TMP/all.json"
expect_status 0
for k in 1 2 3; do
	run run "$EX" "${FAST[@]}" --format json --bench 'fib*' --bench empty --bench loop_300ns \
		--bench optimized_away --bench syscall_getppid --shard "$k/3" --output "$TMP/shard$k.json"
	expect_status 0
done
run merge "$TMP/shard1.json" "$TMP/shard2.json" "$TMP/shard3.json" --output "$TMP/merged-shards.json"
expect_status 0
checks=$((checks + 1))
python3 - "$TMP/all.json" "$TMP"/shard{1,2,3}.json "$TMP/merged-shards.json" <<'PY' || fail "shards do not partition the suite"
import json, sys
names = lambda p: [b["name"] for b in json.load(open(p))["benchmarks"]]
whole, parts, merged = names(sys.argv[1]), [names(p) for p in sys.argv[2:5]], names(sys.argv[5])
flat = [n for p in parts for n in p]
assert len(flat) == len(set(flat)), ("overlap", parts)
assert sorted(flat) == sorted(whole) == sorted(merged), (whole, parts, merged)
assert sum(1 for p in parts if p) >= 2, parts   # 7 names do not all hash to one part
PY
# A merged file repeats its input's numbers to the digit: merge writes with
# run's number format and environment writer.
run merge "$TMP/all.json" --output "$TMP/all-merged.json"
expect_status 0
checks=$((checks + 1))
for section in environment benchmarks; do
	diff <(sed -n "/^  \"$section\"/,/^  []}]/p" "$TMP/all.json") \
		<(sed -n "/^  \"$section\"/,/^  []}]/p" "$TMP/all-merged.json") >"$TMP/merge.diff" ||
		fail "merge rewrote the $section of a run's file: $(head -c 600 "$TMP/merge.diff")"
done
grep -q '"median": [0-9]' "$TMP/all-merged.json" || fail "no median in the merged file"
# The same shard twice selects the same names (stable).
run run "$EX" "${FAST[@]}" --format json --bench 'fib*' --bench empty --bench loop_300ns \
	--bench optimized_away --bench syscall_getppid --shard 2/3
cp "$TMP/shard2.json" "$TMP/shard2.copy"
checks=$((checks + 1))
python3 -c 'import json,sys; a=[b["name"] for b in json.load(open(sys.argv[1]))["benchmarks"]]; b=[x["name"] for x in json.loads(sys.argv[2])["benchmarks"]]; sys.exit(a != b)' \
	"$TMP/shard2.copy" "$out" || fail "--shard 2/3 selected different names twice"
run run "$EX" --shard 4/3
expect_usage_error -- '--shard wants K/N'
run run "$EX" --shard 1/x
expect_usage_error -- '--shard wants K/N'
# Numbers beyond 32 bits must not wrap round to a valid shard (2^32 + 1 is
# not 1), nor may a sign or blanks slip through.
for bad in 4294967297/4294967298 1/-4294967294 18446744073709551617/3 ' 1/2' '1/ 2' 1/3x; do
	run run "$EX" --shard "$bad"
	expect_usage_error -- '--shard wants K/N'
done
# A shard may hold nothing: an empty, valid results file.
run run "$EX" "${FAST[@]}" --bench empty --shard "$(
	for k in 1 2 3 4 5; do
		python3 -c "import sys; h=0xcbf29ce484222325
for c in b'empty': h=((h^c)*0x100000001b3)&0xffffffffffffffff
sys.exit(0 if h%5 != $k-1 else 1)" && { echo "$k/5"; break; }
	done)" --output "$TMP/empty-shard.json"
expect_status 0
expect_err 'holds none of the 1 selected benchmarks'
cp "$TMP/empty-shard.json" "$TMP/out"
expect_json 'd["benchmarks"] == []'

done_ok
