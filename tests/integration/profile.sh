#!/usr/bin/env bash
# run --profile DIR (docs/run.md, "Profiles"): after each benchmark was
# measured, a pass of its own records its stacks; DIR gets a folded file
# and an SVG flamegraph per benchmark, the results name them. Checked: the
# SVG parses as XML, the files name the functions that ran (fib[20] is
# nearly all fib; two_helpers splits between heavy and light about 3:1), a
# stripped program's library function is named by its symbols, a crash in
# the profiling pass is said and leaves the measured figure alone, bad
# usage is refused, nothing is left behind. Shares are asserted within
# wide bounds: they are counts of samples, never durations.
. "$(dirname "$0")/lib.sh"
EX=$BUILD_ROOT/benches/examples
PROF=$FIXTURES/profile
FAST=(--time 0.1 --warmup 0 --sample-time 0.002 --min-samples 5 --format json)
D=$TMP/prof
mkdir -p "$D"

# share FOLDED FRAME: the percentage of the samples whose stack holds FRAME.
share() {
	python3 -c 'import sys
tot = hit = 0
for line in open(sys.argv[1]):
    path, n = line.rsplit(" ", 1)
    tot += int(n)
    if sys.argv[2] in path.split(";"):
        hit += int(n)
print(round(100 * hit / tot) if tot else -1)' "$1" "$2"
}

# svg_ok SVG NAME: the SVG parses, and a frame's title names NAME.
svg_ok() {
	checks=$((checks + 1))
	python3 -c 'import sys, xml.etree.ElementTree as E
ns = "{http://www.w3.org/2000/svg}"
root = E.parse(sys.argv[1]).getroot()
assert root.tag == ns + "svg", root.tag
titles = [t.text for t in root.iter(ns + "title")]
assert any(t.startswith(sys.argv[2] + " (") for t in titles), titles[:10]
assert not any(e.get("href") or e.get("{http://www.w3.org/1999/xlink}href") for e in root.iter())
' "$1" "$2" || fail "$1: not a flamegraph naming $2"
}

# ---- fib[20]: the files, the results, the share of fib ----------------------
run run "$EX" --bench 'fib[20]' "${FAST[@]}" --profile "$D"
expect_status 0
expect_json 'd["benchmarks"][0]["status"] == "ok"'
expect_json 'd["benchmarks"][0]["flamegraph"] == {"folded": "'"$D"'/000-fib_20_.folded", "svg": "'"$D"'/000-fib_20_.svg"}'
[[ -s $D/000-fib_20_.folded && -s $D/000-fib_20_.svg ]] || fail "no profile files in $D"
svg_ok "$D/000-fib_20_.svg" fib
s=$(share "$D/000-fib_20_.folded" fib)
checks=$((checks + 1))
((s >= 95)) || fail "fib has $s% of fib[20]'s samples, not 95% or more"
# Outermost first: every stack starts at the benchmark's function.
checks=$((checks + 1))
! grep -qv '^benchtrap_bench_fib[; ]' "$D/000-fib_20_.folded" || fail "a stack of fib[20] does not start at its function"

# ---- two helpers, 3:1 -------------------------------------------------------
run run "$PROF/profile" --bench two_helpers "${FAST[@]}" --profile "$D"
expect_status 0
h=$(share "$D/000-two_helpers.folded" heavy)
l=$(share "$D/000-two_helpers.folded" light)
checks=$((checks + 1))
((h >= 65 && h <= 85 && l >= 15 && l <= 35)) || fail "heavy $h%, light $l%: not about 75/25"
svg_ok "$D/000-two_helpers.svg" heavy

# ---- a stripped program's library function, by its symbols -----------------
run run "$PROF/stripped" --symbol proflib_work "${FAST[@]}" --profile "$D"
expect_status 0
checks=$((checks + 1))
grep -q '^proflib_work;proflib_inner ' "$D/000-proflib_work.folded" ||
	fail "proflib_inner not named in $(cat "$D/000-proflib_work.folded")"

# ---- C++: the harness is no frame, whatever module's range it fell in ------
# (Its page lands among libstdc++'s and libgcc_s's mappings, whose name the
# walk gave it: every stack started at [libgcc_s.so.1].)
run run "$FIXTURES/elf/cxx_select" --symbol 'num::scale(long)(7)' "${FAST[@]}" --profile "$D"
expect_status 0
F=$D/000-num__scale_long__7_.folded
checks=$((checks + 1))
[[ -s $F ]] || fail "no profile of num::scale(long)(7)"
checks=$((checks + 1))
! grep -q '^\[lib' "$F" || fail "a stack of num::scale(long) starts at a library's name: $(head -3 "$F")"
checks=$((checks + 1))
grep -q '^num::scale(long)[; ]' "$F" || fail "no stack starts at num::scale(long): $(head -3 "$F")"

# ---- a crash in the profiling pass ------------------------------------------
rm -f "$TMP/counter"
PROFILE_FIXTURE_COUNTER=$TMP/counter run run "$PROF/profile" --bench crash_in_profile "${FAST[@]}" \
	--profile "$D"
expect_status 0
expect_json 'd["benchmarks"][0]["status"] == "ok" and d["benchmarks"][0]["value"] > 0'
expect_json '"flamegraph" not in d["benchmarks"][0]'
expect_json 'any("not profiled: the child was killed by SIGSEGV during it, in benchtrap_bench_crash_in_profile" in x for x in d["benchmarks"][0]["diagnostics"])'
[[ ! -e $D/000-crash_in_profile.folded ]] || fail "a profile of a pass that crashed"

# ---- callgrind: exact costs by call path ------------------------------------
# The folded costs add up to the counted instructions per call, exactly.
sums_to_value() {
	checks=$((checks + 1))
	python3 -c 'import json, sys
b = json.load(open(sys.argv[1]))["benchmarks"][0]
tot = sum(int(l.rsplit(" ", 1)[1]) for l in open(b["flamegraph"]["folded"]))
sys.exit(0 if tot == b["value"] else 1)' "$TMP/out" || fail "the folded costs do not add up to the value"
}
if command -v valgrind >/dev/null; then
	C=$TMP/cg
	mkdir -p "$C"
	run run "$EX" --bench 'fib[20]' --instrument callgrind --format json --profile "$C"
	expect_status 0
	sums_to_value
	svg_ok "$C/000-fib_20_.svg" fib
	s=$(share "$C/000-fib_20_.folded" fib)
	checks=$((checks + 1))
	((s >= 95)) || fail "fib has $s% of fib[20]'s instructions under callgrind"
	run run "$PROF/profile" --bench two_helpers --instrument callgrind --format json \
		--profile "$C"
	expect_status 0
	sums_to_value
	h=$(share "$C/000-two_helpers.folded" heavy)
	l=$(share "$C/000-two_helpers.folded" light)
	checks=$((checks + 1))
	((h == 75 && l == 25)) || fail "heavy $h%, light $l% of the instructions: not 75/25"
	# A static binary: the stub's own run.
	run run "$FIXTURES/elf/stub_static_O2" --bench alpha --instrument callgrind --format json \
		--profile "$C"
	expect_status 0
	sums_to_value
	checks=$((checks + 1))
	grep -q '^benchtrap_bench_alpha;fixture_known_function ' "$C/000-alpha.folded" ||
		fail "no call path to fixture_known_function in $(cat "$C/000-alpha.folded")"
else
	echo "valgrind is not installed: callgrind's profiles not checked"
fi

# ---- bad usage --------------------------------------------------------------
run run "$EX" --bench 'fib[20]' --profile "$TMP/nonexistent"
expect_usage_error "--profile wants a writable directory"
run run "$EX" --bench 'fib[20]' --profile "$D" --instrument memory
expect_usage_error "--profile"
run compare "$EX" "$EX" --bench 'fib[20]' --profile "$D"
expect_usage_error "--profile does not apply to two binaries"

expect_no_orphans "$EX"
expect_no_orphans "$PROF/profile"
done_ok
