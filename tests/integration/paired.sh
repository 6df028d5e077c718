#!/usr/bin/env bash
# benchtrap compare BASE_BINARY HEAD_BINARY: two builds measured side by side
# in one paired run (tests/fixtures/paired): head's 'work' does twice the
# work, 'same' is the same code, 'crashy' crashes in head only, 'fresh' is
# only in head. The verdicts in three formats; the --output document (head's
# results with base's inside) read again by compare FILE, compare and export;
# shards merged; the builds the other way round; the same binary twice;
# callgrind; bad input (exit 2, one line); and that no child of either build
# outlives benchtrap.
#
# No verdict here is one that noise can decide: 'work' is +100% against a
# threshold of 50% (or -50% against 30%), 'same' is asserted unchanged only
# at those thresholds or under callgrind, which counts exactly, and nothing
# asserts a duration.
. "$(dirname "$0")/lib.sh"
P=$FIXTURES/paired
BASE=$P/paired_base
HEAD=$P/paired_head
# Short samples: a sample that the scheduler preempts is a bad pair, and on a
# machine with more runnable threads than cores a 10 ms sample (run's
# default) is preempted more often than not, while most 0.5 ms ones are not.
FAST=(--time 0.2 --warmup 0.05 --sample-time 0.0005 --min-samples 50)

# compare's verdicts from its JSON report, as "name:verdict ..." sorted.
verdicts() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(sorted("%s:%s" % (b["name"], b["verdict"]) for b in d["benchmarks"])))' "$TMP/out"
}

EXPECTED="crashy:failed fresh:new same:unchanged work:regressed"

# The pair ratios of the paired document FILE against docs/results.md: for
# every pair of 'work' and 'same', null exactly when head's or base's sample
# is not above zero (or not a number), head's sample over base's otherwise.
pair_ratios_ok() {
	python3 - "$1" 2>"$TMP/why" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
base = {b["name"]: b for b in d["paired"]["base"]["benchmarks"]}
def above_zero(x):
    return isinstance(x, (int, float)) and x > 0
for b in d["benchmarks"]:
    if b["name"] not in ("work", "same"):
        continue
    h, s, r = b["raw_samples"], base[b["name"]]["raw_samples"], b["paired"]["ratios"]
    assert len(h) == len(s) == len(r), (b["name"], len(h), len(s), len(r))
    for k in range(len(r)):
        if not (above_zero(h[k]) and above_zero(s[k])):
            assert r[k] is None, (b["name"], k, r[k], h[k], s[k])
        else:
            assert r[k] is not None, (b["name"], k, r[k], h[k], s[k])
            assert abs(r[k] - h[k] / s[k]) <= 1e-6 * abs(r[k]), (b["name"], k, r[k], h[k], s[k])
PY
}
expect_pair_ratios() {
	checks=$((checks + 1))
	pair_ratios_ok "$1" || fail "the pair ratios of $1 are not head's samples over base's: $(tail -1 "$TMP/why")"
}

# ---- the check of the pair ratios, on documents made here -------------------------
# One pair of each kind: a negative head sample, a negative base sample,
# both negative, a zero, and two pairs that were measured.
paired_doc() { # HEAD_SAMPLES BASE_SAMPLES RATIOS
	printf '{"schema": "benchtrap-results/1", "benchmarks": [{"name": "work", "raw_samples": %s, "paired": {"pairs": 6, "ratios": %s}}], "paired": {"base": {"schema": "benchtrap-results/1", "benchmarks": [{"name": "work", "raw_samples": %s}]}}}\n' "$1" "$3" "$2"
}
H='[-0.25, 40.0, -3.5, 0, 20.0, 30.0]'
S='[10.0, -1.5, -2.0, 10.0, 10.0, 15.0]'
paired_doc "$H" "$S" '[null, null, null, null, 2.0, 2.0]' >"$TMP/ratios-ok.json"
expect_pair_ratios "$TMP/ratios-ok.json"
# ... and what breaks the contract: a ratio of a negative head sample, a
# ratio of two negative samples, a null for a measured pair, a wrong ratio.
paired_doc "$H" "$S" '[-0.025, null, null, null, 2.0, 2.0]' >"$TMP/ratios-bad1.json"
paired_doc "$H" "$S" '[null, null, 1.75, null, 2.0, 2.0]' >"$TMP/ratios-bad2.json"
paired_doc "$H" "$S" '[null, null, null, null, null, 2.0]' >"$TMP/ratios-bad3.json"
paired_doc "$H" "$S" '[null, null, null, null, 2.0, 0.5]' >"$TMP/ratios-bad4.json"
for k in 1 2 3 4; do
	checks=$((checks + 1))
	! pair_ratios_ok "$TMP/ratios-bad$k.json" || fail "the check of the pair ratios passed ratios-bad$k.json"
done

# ---- the verdicts, JSON -------------------------------------------------------
run compare "$BASE" "$HEAD" "${FAST[@]}" --threshold 50 --format json --output "$TMP/paired.json"
expect_status 1
expect_json 'd["schema"] == "benchtrap-compare/1" and d["threshold_pct"] == 50'
checks=$((checks + 1))
got=$(verdicts)
[[ $got == "$EXPECTED" ]] || fail "expected $EXPECTED, got $got"
expect_json 'd["summary"]["counts"] == {"regressed": 1, "improved": 0, "unchanged": 1, "failed": 1, "new": 1, "missing": 0, "inconclusive": 0}'
expect_json 'd["gate"] == "fail" and d["same_build"] is False'
expect_json '[b for b in d["benchmarks"] if b["name"] == "work"][0]["change_pct"] > 50'
expect_json '[b for b in d["benchmarks"] if b["name"] == "work"][0]["ci_low_pct"] > 0'
expect_json '[b for b in d["benchmarks"] if b["name"] == "work"][0]["significant"] is True'
expect_json 'd["benchmarks"][0]["name"] == "crashy"' # failures first
expect_json 'any("crashy" in w and "SIGSEGV" in w for w in d["warnings"])'
expect_no_orphans "$P/paired_"

# ---- the --output document: head's results, base's inside ---------------------
cp "$TMP/paired.json" "$TMP/out"
expect_json 'd["schema"] == "benchtrap-results/1"'
expect_json 'sorted(b["name"] for b in d["benchmarks"]) == ["crashy", "fresh", "same", "work"]'
expect_json 'd["paired"]["base"]["schema"] == "benchtrap-results/1"'
expect_json 'sorted(b["name"] for b in d["paired"]["base"]["benchmarks"]) == ["crashy", "same", "work"]'
expect_json 'd["paired"]["base"]["environment"]["build_id"] != d["environment"]["build_id"]'
expect_json 'all(b["status"] == "ok" for b in d["paired"]["base"]["benchmarks"])'
expect_json '[b["status"] for b in d["benchmarks"] if b["name"] == "crashy"] == ["failed"]'
# Pairs of 'work' and 'same': the k-th ratio is head's k-th sample over
# base's, or null where either side's sample is not above zero
# (docs/results.md): with the loop's own cost subtracted, a sample that the
# scheduler preempted in its empty pass is negative, on either side.
expect_json 'all(b["paired"]["pairs"] >= 50 and len(b["paired"]["ratios"]) == b["paired"]["pairs"] for b in d["benchmarks"] if b["name"] in ("work", "same"))'
expect_json 'all("paired" not in b or b["paired"] is None for b in d["benchmarks"] if b["name"] in ("crashy", "fresh"))'
expect_pair_ratios "$TMP/paired.json"
# compare FILE: the two sides of the document judged again, on its pairs.
run compare "$TMP/paired.json" --threshold 50 --format json
expect_status 1
checks=$((checks + 1))
got=$(verdicts)
[[ $got == "$EXPECTED" ]] || fail "compare paired.json: expected $EXPECTED, got $got"
run compare "$TMP/paired.json" --threshold 50
expect_status 1
expect_out '^work( \(walltime\))? .* regressed'
expect_out 'measured side by side'
# base's document on its own against the file: a results file like any
# other (head's side), judged on the two sides' samples.
python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))["paired"]["base"], open(sys.argv[2], "w"))' \
	"$TMP/paired.json" "$TMP/base-only.json"
run compare "$TMP/base-only.json" "$TMP/paired.json" --threshold 50 --format json
expect_status 1
checks=$((checks + 1))
got=$(verdicts)
[[ $got == "$EXPECTED" ]] || fail "compare base-only.json paired.json: expected $EXPECTED, got $got"
# The file against itself: head's results against themselves.
run compare "$TMP/paired.json" "$TMP/paired.json" --format json
expect_status 1 # crashy failed in head
# (Judged on its samples against themselves, whose spread the machine
# decides: no change, or too wide an interval to tell one.)
expect_json '[b["verdict"] for b in d["benchmarks"] if b["name"] == "work"][0] in ("unchanged", "inconclusive")'
run export "$TMP/paired.json" --format bmf
expect_status 0
expect_json 'set(d) == {"work", "same", "fresh"}'
run export "$TMP/paired.json" --format gbench
expect_status 0
run export "$TMP/paired.json" --format gab
expect_status 0

# ---- shards: two parts, merged, judged as one -------------------------------------
for k in 1 2; do
	run compare "$BASE" "$HEAD" "${FAST[@]}" --threshold 50 --shard "$k/2" --output "$TMP/shard$k.json"
	[[ $status -eq 0 || $status -eq 1 ]] || fail "shard $k/2: exit $status"
done
run merge "$TMP/shard1.json" "$TMP/shard2.json" --output "$TMP/merged.json"
expect_status 0
run compare "$TMP/merged.json" --threshold 50 --format json
expect_status 1
checks=$((checks + 1))
got=$(verdicts)
[[ $got == "$EXPECTED" ]] || fail "compare merged.json: expected $EXPECTED, got $got"
# A paired document does not merge with a plain results file, even of the
# same build and the other shard.
"$BENCHTRAP" run "$HEAD" "${FAST[@]}" --shard 2/2 --output "$TMP/plain2.json" >/dev/null 2>&1
run merge "$TMP/shard1.json" "$TMP/plain2.json" --output "$TMP/mixed.json"
expect_usage_error 'paired'

# ---- text and markdown ------------------------------------------------------------
run compare "$BASE" "$HEAD" "${FAST[@]}" --threshold 50 --bench work --bench crashy --bench fresh
expect_status 1
expect_out '^this change degrades performance by [0-9.]+%'
expect_out '^1 regressed, 0 improved, 0 unchanged, 1 failed, 1 new, 0 missing'
expect_out '^work( \(walltime\))? .* regressed'
expect_out '^crashy( \(walltime\))? .* failed'
expect_out '^fresh( \(walltime\))? .* new'
expect_out 'SIGSEGV'
run compare "$BASE" "$HEAD" "${FAST[@]}" --threshold 50 --bench work --format markdown
expect_status 1
expect_out '^### benchtrap: this change degrades performance by'
expect_out '^\| work( \(walltime\))? \| .*\*\*regressed\*\*'
# A benchmark chosen by its symbol.
run compare "$BASE" "$HEAD" "${FAST[@]}" --threshold 50 --symbol benchtrap_bench_work --format json
expect_status 1
expect_json '[b["verdict"] for b in d["benchmarks"]] == ["regressed"]'
# A selector that matches in one build only: new.
run compare "$BASE" "$HEAD" "${FAST[@]}" --threshold 50 --bench work --bench fresh --format json
expect_status 1
expect_json 'sorted((b["name"], b["verdict"]) for b in d["benchmarks"]) == [("fresh", "new"), ("work", "regressed")]'
# Both children on one CPU (the first this test may use).
cpu=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
run compare "$BASE" "$HEAD" "${FAST[@]}" --threshold 50 --bench work --cpu "$cpu" --format json
expect_status 1
expect_json '[b["verdict"] for b in d["benchmarks"]] == ["regressed"]'
# The builds the other way round: work improved, crashy fails in base only
# (new), fresh is in base only (missing); nothing regressed or failed in
# head, so exit 0. 'work' is -50%, the threshold 30%.
run compare "$HEAD" "$BASE" "${FAST[@]}" --threshold 30 --format json
expect_status 0
checks=$((checks + 1))
got=$(verdicts)
[[ $got == "crashy:new fresh:missing same:unchanged work:improved" ]] || fail "head against base: got $got"
# The same binary on both sides: every change is noise, the gate passes.
run compare "$BASE" "$BASE" "${FAST[@]}" --bench work --bench same --format json
expect_status 0
expect_json 'd["same_build"] is True and d["gate"] == "pass"'
# Only what is unchanged: exit 0.
run compare "$BASE" "$HEAD" "${FAST[@]}" --threshold 50 --bench same --format json
expect_status 0
expect_json '[b["verdict"] for b in d["benchmarks"]] == ["unchanged"]'
expect_no_orphans "$P/paired_"

# ---- callgrind: exact counts ---------------------------------------------------
if command -v valgrind >/dev/null; then
	export TMPDIR=$TMP/tmpdir
	mkdir -p "$TMPDIR"
	run compare "$BASE" "$HEAD" --instrument callgrind --bench work --bench same --format json
	expect_status 1
	checks=$((checks + 1))
	got=$(verdicts)
	[[ $got == "same:unchanged work:regressed" ]] || fail "callgrind: got $got"
	expect_json '[b["change_pct"] for b in d["benchmarks"] if b["name"] == "same"] == [0]'
	expect_json '90 < [b["change_pct"] for b in d["benchmarks"] if b["name"] == "work"][0] <= 100'
	expect_json 'all(b["instrument"] == "callgrind" for b in d["benchmarks"])'
	expect_json 'any("exact counts need no pairing" in n for n in d["notes"]) and not any("side by side" in n for n in d["notes"])'
	checks=$((checks + 1))
	[[ -z $(ls -A "$TMPDIR") ]] || fail "callgrind left files in TMPDIR: $(ls -A "$TMPDIR")"
	unset TMPDIR
	expect_no_orphans "$P/paired_"
else
	echo "note: callgrind skipped: no valgrind"
fi

# ---- memory: exact counts of bytes, both builds in one run --------------------------
run compare "$BASE" "$HEAD" --instrument memory --bench work --bench same --format json
expect_status 0
expect_json 'all(b["instrument"] == "memory" and b["unit"] == "bytes" for b in d["benchmarks"])'
expect_json 'any("exact counts need no pairing" in n for n in d["notes"])'
expect_no_orphans "$P/paired_"

# ---- bad input: exit 2, one line --------------------------------------------------
printf 'neither ELF nor JSON\n' >"$TMP/notes.txt"
run compare "$BASE" "$TMP/paired.json"
expect_usage_error 'paired.json'
run compare "$TMP/base-only.json" "$HEAD"
expect_usage_error 'paired_head'
run compare "$BASE" "$TMP/notes.txt"
expect_usage_error 'notes.txt'
run compare "$TMP/notes.txt" "$HEAD"
expect_usage_error 'notes.txt'
run compare "$BASE" "$TMP/missing"
expect_usage_error 'missing: No such file'
run compare "$TMP/missing" "$HEAD"
expect_usage_error 'missing: No such file'
run compare "$TMP/base-only.json" "$TMP/base-only.json" --time=2
expect_usage_error '^benchtrap: compare: --time applies when comparing two binaries'
run compare "$TMP/base-only.json" "$TMP/base-only.json" --aslr
expect_usage_error '^benchtrap: compare: --aslr applies'
# Neither build registers a benchmark, and no selector: say so, as run does.
run compare /bin/true /bin/true
expect_usage_error 'registers no benchmarks'
run compare "$BASE" "$HEAD" --symbol 'bad('
expect_usage_error "cannot read --symbol 'bad\('"
run compare "$BASE" "$HEAD" "${FAST[@]}" --bench nomatch
expect_usage_error 'nomatch'
run compare "$BASE" "$P/paired_twin_a" "${FAST[@]}"
expect_usage_error 'in common|no benchmark'
# The same file for another machine: only e_machine differs (AArch64).
python3 -c 'import sys; b = bytearray(open(sys.argv[1], "rb").read()); b[18:20] = (183).to_bytes(2, "little"); open(sys.argv[2], "wb").write(b)' \
	"$BASE" "$TMP/foreign"
chmod +x "$TMP/foreign"
run compare "$TMP/foreign" "$HEAD" "${FAST[@]}"
expect_usage_error 'AArch64|architecture'
run compare "$BASE" "$TMP/foreign" "${FAST[@]}"
expect_usage_error 'AArch64|architecture'
expect_no_orphans "$P/paired_"

done_ok
