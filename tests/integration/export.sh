#!/usr/bin/env bash
# benchtrap export on results files of real runs (tests/fixtures/ci, base
# and head builds) under callgrind (exact counts) and walltime, and on a
# merged file of both; then on crafted files for what runs do not make:
# 2000-byte names, counts of 10^10 and more, a median at or below zero,
# a benchmark that measured no time, one that failed in head.
#  - gbench: Google Benchmark's own tools/compare.py (libbenchmark-tools)
#    gives the same OVERALL_GEOMEAN as benchtrap compare on the same files;
#  - bmf: the shape of Bencher's schema (checked below), names within its
#    1024 and still distinct, one line on stderr saying so;
#  - a merged walltime+callgrind file: distinct names and measures;
#  - no time and failures left out of every format, counted on stderr;
#  - whole numbers keep every digit in every export and in merge's output.
# No verdict here depends on the machine: the geometric means compared are
# computed from the same files by both tools.
. "$(dirname "$0")/lib.sh"
BASE=$FIXTURES/ci/ci_base
HEAD=$FIXTURES/ci/ci_head
MK="python3 $SOURCE_ROOT/tests/fixtures/ci/make_results.py"
FAST=(--time 0.1 --warmup 0.05 --sample-time 0.002 --min-samples 10)

# A Python with numpy and scipy for compare.py (a virtual environment on
# PATH may lack them; Debian's python3-numpy and python3-scipy are in the
# system's).
COMPARE_PY=/usr/share/benchmark/compare.py
GPY=
for py in /usr/bin/python3 python3; do
	if "$py" -c 'import numpy, scipy' 2>/dev/null; then
		GPY=$py
		break
	fi
done
if [[ ! -f $COMPARE_PY || -z $GPY ]]; then
	echo "skip: Google Benchmark's compare.py with numpy and scipy is not installed (scripts/setup installs libbenchmark-tools python3-numpy python3-scipy)"
	exit 77
fi

# OVERALL_GEOMEAN's change in percent by compare.py on two results files'
# gbench exports, then benchtrap compare's on the files: they must agree to
# rounding (the exports carry ten significant digits).
same_geomean() {
	local base=$1 head=$2 n=$3 ours theirs
	"$BENCHTRAP" export "$base" --format gbench >"$TMP/gb-base.json" || fail "export $base"
	"$BENCHTRAP" export "$head" --format gbench >"$TMP/gb-head.json" || fail "export $head"
	"$GPY" "$COMPARE_PY" --no-color -d "$TMP/cmp.json" benchmarks "$TMP/gb-base.json" \
		"$TMP/gb-head.json" >"$TMP/cmp.txt" 2>"$TMP/cmp.err" ||
		fail "compare.py: $(tail -3 "$TMP/cmp.err")"
	theirs=$("$GPY" -c 'import json,sys
d = [x for x in json.load(open(sys.argv[1])) if x["name"] == "OVERALL_GEOMEAN"]
print("%.9f" % (d[0]["measurements"][0]["time"] * 100) if d else "none")' "$TMP/cmp.json")
	run compare "$base" "$head" --format json --threshold 1000
	ours=$(python3 -c 'import json,sys; s = json.load(sys.stdin)["summary"]
print("%d %.9f" % (s["benchmarks_in_geomean"], s["geomean_change_pct"]))' <<<"$out")
	checks=$((checks + 1))
	[[ ${ours%% *} == "$n" ]] || fail "benchtrap compare's geomean has ${ours%% *} benchmarks, expected $n"
	python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(abs(a - b) > 1e-4 * max(1, abs(b)))' \
		"$theirs" "${ours#* }" 2>/dev/null ||
		fail "compare.py OVERALL_GEOMEAN $theirs% against benchtrap compare's ${ours#* }% ($base, $head): $(grep OVERALL "$TMP/cmp.txt")"
	echo "geomean: compare.py $theirs%, benchtrap compare ${ours#* }% ($(basename "$base") -> $(basename "$head"))"
}

# Bencher Metric Format as Bencher's schema and reference give it: an object
# of benchmark names (non-empty, at most 1024) to objects of measures
# (non-empty, at most 64) to {value, lower_value?, upper_value?}, numbers.
BMF_OK='isinstance(d, dict) and all(
	isinstance(k, str) and 0 < len(k.encode()) <= 1024 and isinstance(m, dict) and m and all(
		isinstance(mk, str) and 0 < len(mk) <= 64 and isinstance(v, dict) and "value" in v
		and set(v) <= {"value", "lower_value", "upper_value"}
		and all(type(x) in (int, float) and x == x and abs(x) != float("inf") for x in v.values())
		and v.get("lower_value", v["value"]) <= v["value"] <= v.get("upper_value", v["value"])
		for mk, v in m.items())
	for k, m in d.items())'

# Bencher's Metric Format has no units: Bencher gives a measure it creates
# from a key the units of its built-in measure of that slug, and "Measure
# (units)" otherwise. Its built-in measures of the slugs export uses, with
# their units (Bencher's lib/bencher_json/src/project/measure/built_in.rs,
# matched in lib/bencher_schema/src/model/project/measure.rs).
BENCHER_UNITS='{"latency": "nanoseconds (ns)", "instructions": "instructions", "total-bytes": "bytes (B)", "file-size": "bytes (B)"}'

# ---- real runs: callgrind, walltime, and both merged ---------------------------
for s in base head; do
	bin=$BASE
	[[ $s == head ]] && bin=$HEAD
	"$BENCHTRAP" run "$bin" --instrument callgrind --output "$TMP/cg-$s.json" >/dev/null \
		2>"$TMP/err" || fail "callgrind run of $bin: $(cat "$TMP/err")"
	"$BENCHTRAP" run "$bin" "${FAST[@]}" --output "$TMP/wt-$s.json" >/dev/null 2>"$TMP/err" ||
		fail "walltime run of $bin: $(cat "$TMP/err")"
	run merge "$TMP/wt-$s.json" "$TMP/cg-$s.json" --allow-mismatch --output "$TMP/both-$s.json"
	expect_status 0
done

# Exact counts: the same figures in every format as in the results file.
run export "$TMP/cg-head.json" --format bmf
expect_status 0
expect_json "$BMF_OK"
expect_json 'set(d) == {"chain_1000", "chain_3000", "slow_one", "fib[12]", "fib[16]", "hash_1k"} and all(set(m) == {"instructions"} for m in d.values())'
counts=$(python3 -c 'import json,sys; print(json.dumps({b["name"]: b["value"] for b in json.load(open(sys.argv[1]))["benchmarks"]}))' "$TMP/cg-head.json")
expect_json "all(type(m[\"instructions\"][\"value\"]) is int for m in d.values()) and {k: m[\"instructions\"][\"value\"] for k, m in d.items()} == $counts"
run export "$TMP/cg-head.json" --format gbench
expect_status 0
expect_json "{b[\"name\"]: b[\"real_time\"] for b in d[\"benchmarks\"] if b[\"run_type\"] == \"iteration\"} == $counts"
[[ -z $err ]] || fail "export wrote to stderr: $err"

same_geomean "$TMP/cg-base.json" "$TMP/cg-head.json" 6
# Each instrument's measure has the units Bencher shows for it: nanoseconds,
# instructions, and bytes for the memory instrument's bytes allocated.
"$BENCHTRAP" run "$HEAD" --instrument memory --output "$TMP/mem-head.json" >/dev/null 2>"$TMP/err" ||
	fail "memory run of $HEAD: $(cat "$TMP/err")"
run export "$TMP/mem-head.json" --format bmf
expect_status 0
expect_json "$BMF_OK"
expect_json "d and all(len(m) == 1 and ($BENCHER_UNITS).get(k) == \"bytes (B)\" for m in d.values() for k in m)"
for f in cg-head wt-head; do
	run export "$TMP/$f.json" --format bmf
	expect_json "all(($BENCHER_UNITS).get(k) == {\"latency\": \"nanoseconds (ns)\"}.get(k, \"instructions\") for m in d.values() for k in m)"
done
# Walltime: benchmarks have different numbers of samples; compare.py must
# still weigh each once. A median at or below zero is left out by both
# (checked on crafted files below); here every fixture takes time.
python3 -c 'import json,sys
for f in sys.argv[1:]:
    for b in json.load(open(f))["benchmarks"]:
        if b["status"] != "ok" or not b["value"] > 0: sys.exit(1)' "$TMP/wt-base.json" "$TMP/wt-head.json" ||
	fail "a walltime benchmark of the ci fixtures failed or measured no time"
checks=$((checks + 1))
python3 -c 'import json,sys; sys.exit(len({b["stats"]["samples"] for b in json.load(open(sys.argv[1]))["benchmarks"]}) < 2)' "$TMP/wt-base.json" ||
	echo "note: every walltime benchmark took the same number of samples this time"
same_geomean "$TMP/wt-base.json" "$TMP/wt-head.json" 6
# As Google Benchmark writes N repetitions: every row's repetitions N (the
# samples), and an aggregate's iterations N too (the runs it is over).
run export "$TMP/wt-head.json" --format gbench
expect_status 0
samples=$(python3 -c 'import json,sys; print(json.dumps({b["name"]: b["stats"]["samples"] for b in json.load(open(sys.argv[1]))["benchmarks"]}))' "$TMP/wt-head.json")
expect_json "all(b[\"repetitions\"] == $samples[b[\"run_name\"]] for b in d[\"benchmarks\"])"
expect_json "all(b[\"iterations\"] == $samples[b[\"run_name\"]] for b in d[\"benchmarks\"] if b[\"run_type\"] == \"aggregate\")"
expect_json 'all(b["iterations"] >= 1 and b["repetition_index"] == 0 for b in d["benchmarks"] if b["run_type"] == "iteration")'

# The merged file: one benchmark name under two instruments.
run export "$TMP/both-head.json" --format bmf
expect_status 0
expect_json "$BMF_OK"
expect_json 'len(d) == 6 and all(set(m) == {"latency", "instructions"} for m in d.values())'
run export "$TMP/both-head.json" --format gbench
expect_status 0
expect_json 'sorted(b["name"] for b in d["benchmarks"] if b["run_type"] == "iteration") == sorted("%s (%s)" % (n, i) for n in ["chain_1000", "chain_3000", "slow_one", "fib[12]", "fib[16]", "hash_1k"] for i in ["walltime", "callgrind"])'
expect_json 'all(b["label"].startswith("instructions per call") and b["instructions"] == b["real_time"] for b in d["benchmarks"] if "(callgrind)" in b["run_name"] and b["run_type"] == "iteration")'
expect_json 'not any("label" in b for b in d["benchmarks"] if "(walltime)" in b["run_name"])'
run export "$TMP/both-head.json" --format gab
expect_status 0
expect_json 'len(d) == 12 and len({x["name"] for x in d}) == 12'
expect_json '{x["unit"] for x in d if x["name"].endswith(" (callgrind)")} == {"instructions"} and {x["unit"] for x in d if x["name"].endswith(" (walltime)")} == {"ns"}'
same_geomean "$TMP/both-base.json" "$TMP/both-head.json" 12

# ---- a Google Benchmark binary's own figures ------------------------------------
# What the binary reported beside real time reaches compare.py: its cpu
# time (compare.py's CPU column and geomean), its label, and its counters
# (bytes_per_second, items_per_second, the user's "size") in the export.
GB=$FIXTURES/gbench/gbench_suite
if [[ -x $GB ]]; then
	for s in base head; do
		"$BENCHTRAP" run "$GB" --bench 'BM_memcpy/*' --bench 'BM_threads*' --time 0.05 \
			--min-samples 3 --output "$TMP/gbr-$s.json" >/dev/null 2>"$TMP/err" ||
			fail "run of $GB: $(cat "$TMP/err")"
	done
	run export "$TMP/gbr-head.json" --format gbench
	expect_status 0
	# The results file keeps each repetition's cpu time (one per sample:
	# each sample is a repetition's final batch) and the label.
	want='{b["name"]: [b["counters"], b["gbench"], len(b["raw_samples"])] for b in json.load(open("'"$TMP/gbr-head.json"'"))["benchmarks"]}'
	expect_json "all(len(w[1][\"cpu_time\"]) == w[2] >= 3 for w in ($want).values())"
	# (the median of an even number of repetitions is a mean of two,
	# written to ten digits: equal to the last of them)
	expect_json "all(abs(b[\"cpu_time\"] - ($want)[b[\"run_name\"]][0][\"cpu_time\"]) <= 1e-9 * b[\"cpu_time\"] for b in d[\"benchmarks\"] if b[\"run_type\"] == \"iteration\" or b.get(\"aggregate_name\") == \"median\")"
	expect_json "all(b.get(k) == v for b in d[\"benchmarks\"] if b[\"run_type\"] == \"iteration\" for k, v in ($want)[b[\"run_name\"]][0].items() if k != \"cpu_time\")"
	expect_json 'all({"bytes_per_second", "items_per_second", "size"} <= set(b) and b["label"] == "one copy" for b in d["benchmarks"] if b["run_name"].startswith("BM_memcpy/") and b["run_type"] == "iteration")'
	expect_json 'all(b["label"] == "one copy" for b in d["benchmarks"] if b["run_name"].startswith("BM_memcpy/"))'
	expect_json 'not any("label" in b for b in d["benchmarks"] if b["run_name"].startswith("BM_threads"))'
	"$BENCHTRAP" export "$TMP/gbr-base.json" --format gbench >"$TMP/gb-base.json" || fail "export gbr-base"
	cp "$TMP/out" "$TMP/gb-head.json"
	"$GPY" "$COMPARE_PY" --no-color -d "$TMP/cmp.json" benchmarks "$TMP/gb-base.json" \
		"$TMP/gb-head.json" >"$TMP/cmp.txt" 2>"$TMP/cmp.err" ||
		fail "compare.py: $(tail -3 "$TMP/cmp.err")"
	# compare.py's own reading: each row's cpu_time is the binary's, the
	# label the binary set.
	checks=$((checks + 1))
	"$GPY" -c 'import json,sys
d = json.load(open(sys.argv[1]))
want = {b["name"]: b["counters"]["cpu_time"] for b in json.load(open(sys.argv[2]))["benchmarks"]}
rows = [x for x in d if x["name"] in want]
ok = len(rows) == len(want) and all(
    abs(x["measurements"][0]["cpu_time"] - want[x["name"]]) <= 1e-9 * want[x["name"]]
    and (x["label"] == "one copy") == x["name"].startswith("BM_memcpy/") for x in rows)
sys.exit(0 if ok else 1)' "$TMP/cmp.json" "$TMP/gbr-base.json" ||
		fail "compare.py does not read the binary's cpu time or label: $(cat "$TMP/cmp.txt")"
else
	echo "note: the Google Benchmark fixture was not built (libbenchmark-dev): its export is not checked"
fi

# ---- crafted: no time, and a failure ---------------------------------------------
# 'neg' measured less than the empty loop (its samples around -0.5 ns, its
# value 0; the file says nothing of no_time) and 'empty' measured no time
# ("no_time": true, its interval reaching below zero): every format leaves
# both out, and stderr counts them. benchtrap compare leaves them out of its
# geometric mean, and so does compare.py, which never sees them.
$MK "$TMP/n-base.json" --seed 1 steady=1000~5 slower=1000~5 neg=-0.5~0.1 empty=notime
$MK "$TMP/n-head.json" --seed 2 steady=1000~5 slower=1500~5 neg=-0.5~0.1 empty=notime
run export "$TMP/n-head.json" --format gbench
expect_status 0
expect_json 'sorted(b["run_name"] for b in d["benchmarks"] if b["run_type"] == "iteration") == ["slower", "steady"]'
expect_json 'not [b for b in d["benchmarks"] if b["run_name"] in ("neg", "empty")]'
expect_err '^benchtrap: export: 2 benchmarks that measured no time left out \(a figure within the noise; the results file has them\)$'
for fmt in bmf gab; do
	run export "$TMP/n-head.json" --format $fmt
	expect_status 0
	expect_json 'sorted(d if isinstance(d, dict) else [x["name"] for x in d]) == ["slower", "steady"]'
	expect_err '^benchtrap: export: 2 benchmarks that measured no time left out'
done
run export "$TMP/n-head.json" --format bmf
expect_json "$BMF_OK"
same_geomean "$TMP/n-base.json" "$TMP/n-head.json" 2
checks=$((checks + 1))
grep -q 'nan' "$TMP/cmp.txt" && fail "compare.py printed nan: $(grep -i nan "$TMP/cmp.txt")"

# 'gone' crashed in head: no row in any format (one line on stderr), so
# compare.py does not read its real_time of 0 as a -100% improvement.
$MK "$TMP/f-base.json" --seed 1 steady=1000~5 gone=1000~5
$MK "$TMP/f-head.json" --seed 2 steady=1100~5 gone=failed
for fmt in bmf gbench gab; do
	run export "$TMP/f-head.json" --format $fmt
	expect_status 0
	expect_err '^benchtrap: export: 1 failed benchmark left out \(no figure\)$'
	checks=$((checks + 1))
	grep -q gone "$TMP/out" && fail "$fmt export has the failed benchmark: $(grep -m3 gone "$TMP/out")"
done
"$BENCHTRAP" export "$TMP/f-base.json" --format gbench >"$TMP/gb-base.json" || fail "export f-base"
"$BENCHTRAP" export "$TMP/f-head.json" --format gbench >"$TMP/gb-head.json" 2>/dev/null ||
	fail "export f-head"
"$GPY" "$COMPARE_PY" --no-color -d "$TMP/cmp.json" benchmarks "$TMP/gb-base.json" \
	"$TMP/gb-head.json" >"$TMP/cmp.txt" 2>"$TMP/cmp.err" ||
	fail "compare.py: $(tail -3 "$TMP/cmp.err")"
checks=$((checks + 1))
"$GPY" -c 'import json,sys
d = json.load(open(sys.argv[1]))
sys.exit(any(x["name"].startswith("gone") for x in d) or not any(x["name"] == "steady" for x in d))' \
	"$TMP/cmp.json" || fail "compare.py pairs the failed benchmark or lost steady: $(cat "$TMP/cmp.txt")"

# ---- nothing to export, and --output -----------------------------------------------
# An export with no benchmark ([] or {}) fails github-action-benchmark: one
# line, exit 2, nothing on stdout, an --output file left as it was.
$MK "$TMP/none.json"
$MK "$TMP/allfailed.json" --seed 1 gone=failed empty=notime
echo keep >"$TMP/kept.json"
for fmt in bmf gbench gab; do
	run export "$TMP/none.json" --format $fmt
	expect_usage_error "^benchtrap: export: .*none.json: no benchmark to export \(it has none\): nothing written"
	run export "$TMP/allfailed.json" --format $fmt --output "$TMP/kept.json"
	expect_usage_error "allfailed.json: no benchmark to export \(1 failed, 1 measured no time\)"
	checks=$((checks + 1))
	[[ $(cat "$TMP/kept.json") == keep ]] || fail "an empty $fmt export replaced the --output file"
done
# --output FILE (-o) writes what stdout gets, and nothing to stdout.
run export "$TMP/cg-head.json" --format gab
expect_status 0
cp "$TMP/out" "$TMP/gab-stdout.json"
run export "$TMP/cg-head.json" --format gab -o "$TMP/gab-file.json"
expect_status 0
checks=$((checks + 1))
[[ -z $out ]] || fail "export --output wrote to stdout: $out"
cmp -s "$TMP/gab-stdout.json" "$TMP/gab-file.json" ||
	fail "export --output wrote other bytes than stdout"
run export "$TMP/cg-head.json" --format gab --output "$TMP/missing/gab.json"
expect_usage_error "missing/gab.json: cannot write the export: no such directory \(create it first\)"

# ---- crafted: names of 2000 bytes ---------------------------------------------------
# Two names that share their first 1500 bytes, one of exactly 1024 (kept).
long_a=$(printf 'a%.0s' {1..2000})
long_b=$(printf 'a%.0s' {1..1500})$(printf 'b%.0s' {1..500})
exact=$(printf 'c%.0s' {1..1024})
$MK "$TMP/long.json" "$long_a=10~1" "$long_b=20~1" "$exact=30~1" short=40~1
run export "$TMP/long.json" --format bmf
expect_status 0
expect_json "$BMF_OK"
expect_json "len(d) == 4 and \"$exact\" in d and \"short\" in d"
expect_json "sorted(round(m[\"latency\"][\"value\"]) for k, m in d.items() if len(k) == 1024 and k.startswith(\"a\" * 1000)) == [10, 20]"
expect_json 'all(k[1007] == "~" and all(c in "0123456789abcdef" for c in k[1008:]) for k in d if k[0] == "a")'
expect_err '^benchtrap: export: 2 benchmark names longer than Bencher takes \(1024 bytes\) shortened to a prefix and a hash of the whole name$'
checks=$((checks + 1))
[[ $(wc -l <"$TMP/err") -eq 1 ]] || fail "expected one line on stderr, got: $err"
first=$out
run export "$TMP/long.json" --format bmf
checks=$((checks + 1))
[[ $out == "$first" ]] || fail "the shortened names differ from one export to the next"
# gbench and gab have no limit: whole names, nothing said.
run export "$TMP/long.json" --format gbench
expect_status 0
expect_json "{b[\"name\"] for b in d[\"benchmarks\"] if b[\"run_type\"] == \"iteration\"} == {\"$long_a\", \"$long_b\", \"$exact\", \"short\"}"
[[ -z $err ]] || fail "gbench export wrote to stderr: $err"
run export "$TMP/long.json" --format gab
expect_status 0
expect_json "[x[\"name\"] for x in d] == [\"$long_a\", \"$long_b\", \"$exact\", \"short\"]"
[[ -z $err ]] || fail "gab export wrote to stderr: $err"

# ---- crafted: counts of 10^10 and more -------------------------------------------
$MK "$TMP/big.json" --no-raw big=12345678901@callgrind huge=98765432109876@callgrind
for fmt in bmf gbench gab; do
	run export "$TMP/big.json" --format "$fmt"
	expect_status 0
	expect_out '12345678901[^.0-9e]'
	expect_out '98765432109876[^.0-9e]'
	checks=$((checks + 1))
	grep -q 'e+1' "$TMP/out" && fail "$fmt export rounds a count: $(grep 'e+1' "$TMP/out" | head -3)"
done
run export "$TMP/big.json" --format bmf
expect_json 'd["big"]["instructions"]["value"] == 12345678901 and d["huge"]["instructions"]["value"] == 98765432109876'
# merge writes the results file as run does.
run merge "$TMP/big.json" --output "$TMP/big-merged.json"
expect_status 0
checks=$((checks + 1))
python3 -c 'import json,sys; d = {b["name"]: b for b in json.load(open(sys.argv[1]))["benchmarks"]}
sys.exit(not (d["big"]["value"] == 12345678901 and d["huge"]["stats"]["median"] == 98765432109876))' \
	"$TMP/big-merged.json" || fail "merge rounded a count: $(grep -m3 'e+1' "$TMP/big-merged.json")"

done_ok
