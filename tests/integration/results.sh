#!/usr/bin/env bash
# compare, merge and export on inputs that are not ordinary results files:
# devices, FIFOs without a writer, files past the size limit (refused at once,
# one line, exit 2), and stdin, pipes and process substitution (still read).
# With the argument 'nospace': writing to a full device says so, in one line.
. "$(dirname "$0")/lib.sh"
MK="python3 $SOURCE_ROOT/tests/fixtures/ci/make_results.py"

if [[ ${1:-} == nospace ]]; then
	specs=()
	for i in $(seq 1 40); do specs+=("bench_$i=1000~5"); done
	$MK "$TMP/a.json" "${specs[@]}"
	$MK "$TMP/b.json" "${specs[@]}"
	# stdout on /dev/full: every writer's error reaches the message.
	for cmd in "compare $TMP/a.json $TMP/b.json" "compare $TMP/a.json $TMP/b.json --format json" \
		"export $TMP/a.json --format gbench" "export $TMP/a.json --format bmf"; do
		# shellcheck disable=SC2086
		"$BENCHTRAP" $cmd >/dev/full 2>"$TMP/err"
		status=$? out= err=$(cat "$TMP/err")
		expect_usage_error 'no space left on the device'
	done
	# A file on a full file system: a 32 KiB tmpfs in a mount namespace of
	# our own, gone when the command ends.
	if ! unshare -m true 2>/dev/null; then
		echo "SKIP: cannot make a mount namespace (unshare -m needs root)"
		exit 77
	fi
	mkdir "$TMP/mnt"
	unshare -m bash -c 'mount -t tmpfs -o size=32k tmpfs "$1" || exit 77
		exec "$2" merge "$3" "$4" --output "$1/merged.json" --allow-duplicates' \
		_ "$TMP/mnt" "$BENCHTRAP" "$TMP/a.json" "$TMP/b.json" >"$TMP/out" 2>"$TMP/err"
	status=$? out=$(cat "$TMP/out") err=$(cat "$TMP/err")
	[[ $status -ne 77 ]] || { echo "SKIP: cannot mount a tmpfs"; exit 77; }
	expect_usage_error 'merged.json: cannot write the merged results: no space left on the device'
	done_ok
	exit 0
fi
# Nothing here may wait: a hang is a failure (status 124), not a stuck run.
run() {
	timeout 20 "$BENCHTRAP" "$@" >"$TMP/out" 2>"$TMP/err"
	status=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
}

$MK "$TMP/a.json" a=1000~5 b=100~5
$MK "$TMP/b.json" a=1000~5 b=100~5

# ---- inputs that must be refused without reading or waiting --------------
mkfifo "$TMP/fifo"
truncate -s 1025M "$TMP/big.json" # sparse: no disk used
for cmd in compare merge export; do
	case $cmd in
	compare) args=("$TMP/a.json") ;;
	merge) args=(--output "$TMP/m.json") ;;
	export) args=(--format bmf) ;;
	esac
	run $cmd /dev/zero "${args[@]}"
	expect_usage_error '/dev/zero: a device, not a results file'
	run $cmd "$TMP/fifo" "${args[@]}"
	expect_usage_error 'fifo: a FIFO that nothing writes to'
	run $cmd "$TMP/big.json" "${args[@]}"
	expect_usage_error 'big.json: larger than 1 GiB'
done

# ---- values no writer gives: refused, one line naming the field ----------
# (python3 edits a valid file: an unknown instrument, a count below zero,
# statistics out of order; an unknown field stays ignored)
edit() {
	python3 - "$TMP/a.json" "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
b = d["benchmarks"][1]
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
}
edit "$TMP/instr.json" 'b["instrument"] = "walltme"'
edit "$TMP/neg.json" 'b["instrument"] = "callgrind"; b["unit"] = "instructions"; b["raw_samples"] = [5, -1]'
edit "$TMP/order.json" 'b["stats"]["min"] = b["stats"]["max"] + 1'
edit "$TMP/extra.json" 'b["not_a_field_yet"] = -1; d["later"] = {"x": [1]}'
for cmd in compare merge export; do
	case $cmd in
	compare) args=("$TMP/b.json") ;;
	merge) args=(--output "$TMP/m.json" --force) ;;
	export) args=(--format bmf) ;;
	esac
	run $cmd "$TMP/instr.json" "${args[@]}"
	expect_usage_error 'instr.json: benchmarks\[1\].instrument: unknown instrument "walltme"'
	run $cmd "$TMP/neg.json" "${args[@]}"
	expect_usage_error 'neg.json: benchmarks\[1\].raw_samples\[1\]: -1 is below zero, which a count \(callgrind\) cannot be'
	run $cmd "$TMP/order.json" "${args[@]}"
	expect_usage_error 'order.json: benchmarks\[1\].stats.min: .* is above q1 '
	run $cmd "$TMP/extra.json" "${args[@]}"
	expect_status 0
done
[[ ! -e $TMP/m.json ]] || grep -q not_a_field_yet "$TMP/m.json" || fail "merge dropped an unknown field"

# ---- stdin and pipes are still read ----------------------------------------
run compare - "$TMP/b.json" <"$TMP/a.json"
expect_status 0
expect_out 'unchanged'
run compare /dev/stdin "$TMP/b.json" < <(cat "$TMP/a.json")
expect_status 0
expect_out 'unchanged'
run compare "$TMP/a.json" <(cat "$TMP/b.json")
expect_status 0
expect_out 'unchanged'
run export <(cat "$TMP/a.json") --format gab
expect_status 0
expect_out '"name": "a"'

done_ok
