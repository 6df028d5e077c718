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

# ---- observe: a live line on a terminal, nothing elsewhere ----------------------------------------
# helpers paced N calls light() N times 10 ms apart: however fast the
# machine, observing lasts long enough for the line to be drawn (the first
# after 100 ms, then every 250 ms), and after its first call it runs on for
# (N - 1) * 10 ms, more than the time between two lines.
HELPERS=$FIXTURES/observe/helpers
FOREVER=$FIXTURES/observe/forever
PACED=40
# The live lines of observe in tty file $1, as "calls functions" a line:
# each drawn as "\r\e[K" then the line, the last erased by "\r\e[K" written
# right after it (the program's output goes to a file).
observe_lines() {
	python3 - "$1" <<'PY'
import re, sys
t = open(sys.argv[1], "rb").read().decode()
pat = "\r\x1b\\[Kobserving: ([0-9,]+) calls? of ([0-9]+) functions?, [0-9.]+ s"
for m in re.finditer(pat, t):
    print(m.group(1).replace(",", ""), m.group(2))
last = list(re.finditer(pat, t))
if last and not t[last[-1].end():].startswith("\r\x1b[K"):
    print("not erased")
PY
}
if command -v script >/dev/null; then
	# A command: the line on the terminal, with counts that only grow, up to
	# the calls the program made, of the one function; erased at the end; the
	# program's stdout its own.
	cmd="$BENCHTRAP observe --symbol light"
	script -qfec "$cmd -- $HELPERS paced $PACED >$TMP/obs.out" /dev/null >"$TMP/tty" 2>&1
	status=$?
	out=$(cat "$TMP/obs.out") err=$(cat -v "$TMP/tty")
	expect_status 0
	checks=$((checks + 1))
	[[ $out == "calls $PACED" ]] || fail "the program's stdout is not its own"
	observe_lines "$TMP/tty" >"$TMP/lines"
	[[ -s $TMP/lines ]] || fail "no live line of observe on a terminal"
	awk -v max="$PACED" '{ bad += $2 != 1 || $1 > max || $1 < prev; prev = $1 }
		END { exit bad || prev < 1 }' \
		"$TMP/lines" || fail "implausible counts in observe's line: $(tr '\n' ' ' <"$TMP/lines")"
	grep -qE '^light +[0-9]+ ' <(tr -d '\r' <"$TMP/tty") || fail "no table on the terminal"
	# --quiet: none, the same stdout.
	script -qfec "$cmd --quiet -- $HELPERS paced $PACED >$TMP/obs.out" /dev/null >"$TMP/tty" 2>&1
	status=$?
	out=$(cat "$TMP/obs.out") err=$(cat -v "$TMP/tty")
	expect_status 0
	checks=$((checks + 1))
	[[ $out == "calls $PACED" ]] || fail "the program's stdout differs with --quiet"
	! grep -q 'observing:' "$TMP/tty" || fail "observe's line on a terminal despite --quiet"
	grep -qE '^light +[0-9]+ ' <(tr -d '\r' <"$TMP/tty") || fail "no table with --quiet"
	# stdout a terminal, stderr a file: nothing periodic, the table.
	script -qfec "$cmd -- $HELPERS paced $PACED 2>$TMP/obs.err" /dev/null >"$TMP/tty" 2>&1
	status=$?
	out=$(tr -d '\r' <"$TMP/tty") err=$(cat "$TMP/obs.err")
	expect_status 0
	expect_out "^calls $PACED\$"
	expect_err '^light +[0-9]+ '
	checks=$((checks + 1))
	! grep -q 'observing:' "$TMP/obs.err" "$TMP/tty" || fail "observe's line with stderr a file"
	! grep -q $'\e' "$TMP/obs.err" || fail "escape sequences in a file"

	# --pid: the table on stdout, the line on stderr only; under JSON none,
	# the document whole.
	"$FOREVER" >/dev/null &
	victim=$!
	trap 'if main_shell; then kill -9 $victim 2>/dev/null; rm -rf "$TMP"; fi' EXIT
	wait_exec "$victim" "$FOREVER"
	cmd="$BENCHTRAP observe --symbol tick --pid $victim --duration 1"
	script -qfec "$cmd >$TMP/obs.out" /dev/null >"$TMP/tty" 2>&1
	status=$?
	out=$(cat "$TMP/obs.out") err=$(cat -v "$TMP/tty")
	expect_status 0
	expect_out '^tick +[0-9]+ '
	expect_no_out 'observing:'
	checks=$((checks + 1))
	! grep -q $'\e' "$TMP/obs.out" || fail "escape sequences on stdout"
	observe_lines "$TMP/tty" >"$TMP/lines"
	[[ -s $TMP/lines ]] || fail "no live line of observe --pid on a terminal"
	awk '{ bad += $2 != 1 || $1 < prev; prev = $1 } END { exit bad }' "$TMP/lines" ||
		fail "implausible counts in observe --pid's line: $(tr '\n' ' ' <"$TMP/lines")"
	script -qfec "$cmd --format json >$TMP/out" /dev/null >"$TMP/tty" 2>&1
	status=$?
	err=$(cat -v "$TMP/tty")
	expect_status 0
	expect_json 'd["run"]["attached"] is True and d["benchmarks"][0]["name"] == "tick"'
	checks=$((checks + 1))
	! grep -q 'observing:' "$TMP/tty" "$TMP/out" || fail "observe's line under --format json"
	script -qfec "$cmd --quiet >$TMP/obs.out" /dev/null >"$TMP/tty" 2>&1
	status=$?
	out=$(cat "$TMP/obs.out") err=$(cat -v "$TMP/tty")
	expect_status 0
	expect_out '^tick +[0-9]+ '
	checks=$((checks + 1))
	! grep -q 'observing:' "$TMP/tty" "$TMP/obs.out" || fail "observe --pid's line despite --quiet"
	kill -0 "$victim" 2>/dev/null || fail "the attached process died"
	kill -9 "$victim"
	wait "$victim" 2>/dev/null
else
	echo "note: script is not installed: progress on a terminal not checked"
fi

done_ok
