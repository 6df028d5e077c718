#!/usr/bin/env bash
# Progress on stderr when it is not a terminal (a CI log): one line per
# finished benchmark, in order, "[k/N] name  figure" or "failed: why", for
# run under each instrument that runs here and for compare of two binaries;
# --quiet says none; stdout is the same with or without it. On a terminal,
# the live line only. Durations are never asserted: a figure is checked for
# its shape, a count (callgrind) against the table's.
. "$(dirname "$0")/lib.sh"
EX=$BUILD_ROOT/benches/examples
FAILING=$FIXTURES/run/failing
PAIRED=$FIXTURES/paired
FAST=(--time 0.05 --warmup 0 --sample-time 0.002 --min-samples 5)
DURATION='-?[0-9][0-9.]* (ns|µs|ms|s)( ± [0-9]+\.[0-9]%)?'

# stderr is exactly one line per "name|regex" argument, in that order, each
# "[k/N] name  " then what matches regex to the line's end.
expect_progress() {
	checks=$((checks + 1))
	local n=$# k=0 line want name re
	local -a lines
	mapfile -t lines <<<"$err"
	[[ -n $err && ${#lines[@]} -eq $n ]] ||
		fail "expected $n progress lines on stderr, got ${#lines[@]}"
	for want in "$@"; do
		name=${want%%|*} re=${want#*|}
		line=${lines[k]}
		k=$((k + 1))
		[[ $line == "[$k/$n] $name  "* ]] || fail "line $k is not [$k/$n] $name: $line"
		[[ ${line#"[$k/$n] $name  "} =~ ^($re)$ ]] ||
			fail "line $k's figure does not match /$re/: $line"
	done
}

# walltime: a failure in the middle says failed and why; the JSON on stdout
# is whole.
run run "$FAILING" --bench ok_before --bench crash --bench exits --bench ok_after \
	"${FAST[@]}" --format json
expect_status 1
expect_json '[b["name"] for b in d["benchmarks"]] == ["ok_before", "crash", "exits", "ok_after"]'
expect_progress "ok_before|$DURATION" 'crash|failed: SIGSEGV .*' \
	'exits|failed: exited with status 3' "ok_after|$DURATION"
# A benchmark with samples enough has its interval.
run run "$EX" --bench loop_300ns --bench 'fib[10]' "${FAST[@]}"
expect_status 0
expect_out '^loop_300ns '
expect_no_out '^\[[0-9]'
expect_progress 'loop_300ns|[0-9.]+ (ns|µs|ms) ± [0-9]+\.[0-9]%' "fib[10]|$DURATION"

# --quiet: nothing on stderr, the same failures in the results.
run run "$FAILING" --bench ok_before --bench crash "${FAST[@]}" --format json --quiet
expect_status 1
expect_json '[b["status"] for b in d["benchmarks"]] == ["ok", "failed"]'
checks=$((checks + 1))
[[ -z $err ]] || fail "--quiet wrote to stderr"
# compare of two files takes --quiet too (it says no progress anyway).
"$BENCHTRAP" run "$EX" --bench empty "${FAST[@]}" --output "$TMP/a.json" >/dev/null 2>&1
run compare "$TMP/a.json" "$TMP/a.json" --quiet
expect_status 0
checks=$((checks + 1))
[[ -z $err ]] || fail "compare of two files wrote to stderr"

# The memory instrument: bytes allocated per call.
run run "$EX" --bench allocator_ripple_1 --bench 'fib[10]' --instrument memory
expect_status 0
expect_progress 'allocator_ripple_1|4\.00 MiB allocated' 'fib[10]|0 B allocated'

# callgrind: counts, exact; stdout byte for byte the same with --quiet.
if command -v valgrind >/dev/null; then
	CG=(--bench 'fib*' --bench allocator_ripple_1 --instrument callgrind)
	run run "$EX" "${CG[@]}"
	expect_status 0
	cp "$TMP/out" "$TMP/cg.out"
	expect_progress 'fib[10]|[0-9,]+ instructions' 'fib[15]|[0-9,]+ instructions' \
		'fib[20]|[0-9,]+ instructions' 'allocator_ripple_1|[0-9,]+ instructions'
	# Each line's count is the table's (the fixture's count depends on how
	# it was compiled).
	checks=$((checks + 1))
	while read -r _ name count _; do
		awk -v n="$name" -v c="$count" '$1 == n && $2 == c { f = 1 } END { exit !f }' \
			"$TMP/cg.out" || fail "$name: $count is not the table's"
	done <<<"$err"
	run run "$EX" "${CG[@]}" --quiet
	expect_status 0
	checks=$((checks + 1))
	cmp -s "$TMP/out" "$TMP/cg.out" || fail "stdout differs with --quiet"
	[[ -z $err ]] || fail "--quiet wrote to stderr under callgrind"
	# valgrind that cannot start the program: one line, no progress for
	# benchmarks that never ran.
	VALGRIND_LIB=$TMP/no-such-dir run run "$EX" --bench 'fib*' --instrument callgrind
	expect_usage_error 'cannot run .* under valgrind'
else
	echo "note: valgrind is not installed: callgrind's progress not checked"
fi

# compare BASE_BINARY HEAD_BINARY: a line per build's benchmark, the build
# named; head's crashy fails; fresh is head's alone.
run compare "$PAIRED/paired_base" "$PAIRED/paired_head" "${FAST[@]}" --format json
expect_status 1
expect_json 'd["schema"] == "benchtrap-compare/1"'
expect_progress "work (base)|$DURATION" "work (head)|$DURATION" "same (base)|$DURATION" \
	"same (head)|$DURATION" "crashy (base)|$DURATION" 'crashy (head)|failed: SIGSEGV .*' \
	"fresh (head)|$DURATION"
run compare "$PAIRED/paired_base" "$PAIRED/paired_head" "${FAST[@]}" --bench work --quiet
checks=$((checks + 1))
[[ -z $err ]] || fail "--quiet wrote to stderr in compare"

# On a terminal: the live line, erased, and no kept lines; --quiet: none.
if command -v script >/dev/null; then
	cmd="$BENCHTRAP run $FAILING --bench crash --bench ok_after ${FAST[*]}"
	script -qc "$cmd 2>$TMP/tty.err >/dev/null" /dev/null >/dev/null 2>&1
	checks=$((checks + 1))
	# stdout a terminal, stderr a file: the kept lines, no escapes.
	grep -q '^\[2/2\] ok_after  ' "$TMP/tty.err" || fail "no kept line with stderr a file"
	! grep -q $'\e' "$TMP/tty.err" || fail "escape sequences in a file"
	script -qc "$cmd >/dev/null" /dev/null >"$TMP/tty" 2>&1
	checks=$((checks + 1))
	grep -q $'\r\e\\[K\\[2/2\\] ok_after' "$TMP/tty" || fail "no live line on a terminal"
	! grep -q 'ok_after  ' "$TMP/tty" || fail "a finished line on a terminal"
	script -qc "$cmd --quiet >/dev/null" /dev/null >"$TMP/tty" 2>&1
	checks=$((checks + 1))
	! grep -q '\[[12]/2\]' "$TMP/tty" || fail "progress on a terminal despite --quiet"
fi

done_ok
