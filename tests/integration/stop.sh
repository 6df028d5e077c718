#!/usr/bin/env bash
# A run that is stopped keeps what it measured. Three quick benchmarks, then
# one that hangs, then one after it (tests/fixtures/run/stop.c):
# - SIGINT or SIGTERM of benchtrap while "hangs" runs, under walltime,
#   memory and callgrind: exit 128 + the signal, the table and --output hold
#   the three quick ones, the document marked partial (selected 5, measured
#   3), stderr says so, the journal is gone, nothing of the fixture is left;
# - compare BASE HEAD stopped so: the three quick ones of both builds
#   judged, the document partial on both sides, exit 128 + the signal;
# - SIGKILL of the worker itself: FILE.journal holds the three, and reads as
#   a results file (compare, merge), marked partial; a run given the same
#   --output then refuses to start, and the journal stays as it was.
# Waiting loops bound how long anything may take on a loaded machine; no
# duration is asserted.
. "$(dirname "$0")/lib.sh"
S=$FIXTURES/run/stop
SEL=(--bench 'quick*' --bench hangs --bench after)
FAST=(--time 0.05 --warmup 0 --sample-time 0.002 --min-samples 5)
bt=""
trap 'if main_shell; then kill -9 $bt 2>/dev/null; rm -rf "$TMP"; fi' EXIT

# Wait until the journal $1 holds $2 benchmarks (its header line and $2 more).
wait_journal() {
	for _ in $(seq 1200); do
		[[ -f $1 && $(wc -l <"$1") -ge $(($2 + 1)) ]] && return
		sleep 0.05
	done
	fail "the journal $1 never held $2 benchmarks: $(cat "$1" 2>/dev/null | head -c 300)"
}

# $1: the results file; what it must hold after a stop by $2 (INT, TERM).
check_partial() {
	checks=$((checks + 1))
	python3 - "$1" "$2" <<'PY' || fail "$1: not the partial document expected"
import json, sys
d = json.load(open(sys.argv[1]))
names = [b["name"] for b in d["benchmarks"]]
assert names == ["quick[1]", "quick[2]", "quick[3]"], names
assert all(b["status"] == "ok" for b in d["benchmarks"]), d["benchmarks"]
assert d["partial"] == {"signal": "SIG" + sys.argv[2], "selected": 5, "measured": 3}, d["partial"]
PY
}

instruments=(walltime memory)
if command -v valgrind >/dev/null; then
	instruments+=(callgrind)
else
	echo "callgrind left out: valgrind is not installed"
fi
for inst in "${instruments[@]}"; do
	for sig in INT TERM; do
		R=$TMP/r-$inst-$sig.json
		"$BENCHTRAP" run "$S" "${SEL[@]}" --instrument "$inst" "${FAST[@]}" --timeout 300 \
			--output "$R" >"$TMP/out" 2>"$TMP/err" &
		bt=$!
		wait_journal "$R.journal" 3
		kill -s "$sig" "$bt"
		wait_bounded "$bt" "$inst, SIG$sig"
		out=$(cat "$TMP/out") err=$(cat "$TMP/err")
		sig_n=$(kill -l "$sig")
		expect_status $((128 + sig_n))
		check_partial "$R" "$sig"
		expect_err "stopping: the benchmarks measured are kept"
		expect_err "stopped by SIG$sig after 3 of 5 benchmarks: the 3 measured are in $R, marked partial"
		expect_out "quick\[3\]"
		checks=$((checks + 1))
		[[ ! -e $R.journal ]] || fail "$inst, SIG$sig: the journal was left beside a whole file"
		grep -q "hangs" <<<"$out" && fail "$inst, SIG$sig: the interrupted benchmark is in the table"
		expect_no_orphans "$S"
	done
done

# compare BASE HEAD stopped while "hangs" runs in both builds: the three
# quick ones of both judged and kept, the document partial on both sides.
cp "$S" "$TMP/stop_head"
for sig in INT TERM; do
	R=$TMP/c-$sig.json
	"$BENCHTRAP" compare "$S" "$TMP/stop_head" "${SEL[@]}" "${FAST[@]}" --timeout 300 \
		--output "$R" >"$TMP/out" 2>"$TMP/err" &
	bt=$!
	for _ in $(seq 1200); do
		[[ $(grep -c 'quick\[3\] (head)' "$TMP/err") -ge 1 ]] && break
		sleep 0.05
	done
	sleep 0.3
	kill -s "$sig" "$bt"
	wait_bounded "$bt" "compare, SIG$sig"
	out=$(cat "$TMP/out") err=$(cat "$TMP/err")
	expect_status $((128 + $(kill -l "$sig")))
	expect_err "stopped by SIG$sig: 3 of 5 benchmarks of both builds measured and judged \(in $R, marked partial\)"
	expect_out "quick\[3\]"
	expect_json_in "$R" '[b["name"] for b in d["benchmarks"]] == ["quick[1]", "quick[2]", "quick[3]"]
[b["name"] for b in d["paired"]["base"]["benchmarks"]] == ["quick[1]", "quick[2]", "quick[3]"]
d["partial"] == d["paired"]["base"]["partial"] == {"signal": "SIG'"$sig"'", "selected": 5, "measured": 3}'
	expect_no_orphans "$S"
	expect_no_orphans "$TMP/stop_head"
done

# The worker killed outright: the journal is what is left.
R=$TMP/killed.json
"$BENCHTRAP" run "$S" "${SEL[@]}" "${FAST[@]}" --timeout 300 --output "$R" >/dev/null 2>&1 &
bt=$!
wait_journal "$R.journal" 3
worker=$(pgrep -P "$bt" | head -1)
checks=$((checks + 1))
[[ -n $worker ]] || fail "no worker process under benchtrap $bt"
kill -9 "$worker"
wait_bounded "$bt" "worker killed by SIGKILL"
expect_no_orphans "$S"
checks=$((checks + 1))
[[ ! -e $R && -f $R.journal ]] || fail "after SIGKILL: $(ls "$TMP")"
cp "$R.journal" "$TMP/journal.copy"
run compare "$R.journal" "$R.journal" --format json
expect_status 0
expect_json '[b["name"] for b in d["benchmarks"]] == ["quick[1]", "quick[2]", "quick[3]"]'
expect_json 'any("partial" in w for w in d["warnings"])'
run merge "$R.journal" --output "$TMP/merged.json"
expect_status 0
expect_json_in "$TMP/merged.json" '[b["name"] for b in d["benchmarks"]] == ["quick[1]", "quick[2]", "quick[3]"] and d["partial"]["journal"] is True'
# A journal left by a run that did not finish is never replaced.
run run "$S" --bench 'quick*' "${FAST[@]}" --output "$R"
expect_usage_error "$R.journal: left by a run that did not finish"
checks=$((checks + 1))
cmp -s "$R.journal" "$TMP/journal.copy" || fail "the journal was changed"
[[ ! -e $R ]] || fail "a refused run wrote $R"
# Nor is a file of another kind in its place.
echo "mine" >"$TMP/other.json.journal"
run run "$S" --bench 'quick*' "${FAST[@]}" --output "$TMP/other.json"
expect_usage_error "other.json.journal: in the way of the journal"
checks=$((checks + 1))
[[ $(cat "$TMP/other.json.journal") == mine ]] || fail "the file in the way was changed"
# A run that ends normally leaves no journal.
run run "$S" --bench 'quick*' "${FAST[@]}" --output "$TMP/whole.json"
expect_status 0
checks=$((checks + 1))
[[ -f $TMP/whole.json && ! -e $TMP/whole.json.journal ]] || fail "a whole run left its journal"
expect_json_in "$TMP/whole.json" '"partial" not in d'
done_ok
