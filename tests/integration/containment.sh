#!/usr/bin/env bash
# Nothing benchtrap starts outlives it, and a process it attached to
# outlives it: after a normal end, after SIGINT, and after SIGKILL of the
# benchtrap process itself, under walltime and callgrind, and in compare of
# two builds; the child's
# standard input is /dev/null unless --input says otherwise. Waiting loops
# bound how long cleanup may take on a loaded machine; no duration is
# asserted.
. "$(dirname "$0")/lib.sh"
ESC=$FIXTURES/run/escape
OBS=$FIXTURES/observe
FAST=(--time 0.05 --warmup 0 --sample-time 0.002 --min-samples 5)
bt="" target=""
trap 'if main_shell; then kill -9 $bt $target 2>/dev/null; rm -rf "$TMP"; fi' EXIT

wait_for_fixture() {
	for _ in $(seq 200); do
		[[ -n $(fixture_procs "$1") ]] && return
		sleep 0.05
	done
	fail "the fixture $1 never started"
}

# callgrind's temporary directories go to $TMPDIR: this test's own, so
# that other runs of benchtrap on the machine cannot disturb the count.
export TMPDIR=$TMP/tmpdir
mkdir "$TMPDIR"
temp_dirs() {
	ls -d "$TMPDIR"/benchtrap-callgrind.* 2>/dev/null | sort
}

# ---- daemons a benchmark leaves behind (setsid, double fork) ----------------------------
run run "$ESC" --bench leaves_daemon "${FAST[@]}"
expect_status 0
expect_no_orphans "$ESC"
run run "$ESC" --bench leaves_daemon --isolation shared "${FAST[@]}"
expect_status 0
expect_no_orphans "$ESC"

# ---- benchtrap killed: SIGINT, SIGTERM, SIGKILL, each instrument ------------------------
instruments=(walltime)
command -v valgrind >/dev/null && instruments+=(callgrind)
for instrument in "${instruments[@]}"; do
	for sig in INT TERM KILL; do
		before=$(temp_dirs)
		"$BENCHTRAP" run "$ESC" --bench daemon_then_hangs --instrument "$instrument" \
			--timeout 120 >/dev/null 2>&1 &
		bt=$!
		wait_for_fixture "$ESC"
		# Let the daemon start (valgrind takes a while): it is what the
		# test is about. Whether or not it did, nothing may be left.
		sleep 1
		kill -s "$sig" "$bt"
		wait "$bt" 2>/dev/null
		expect_no_orphans "$ESC"
		checks=$((checks + 1))
		for _ in $(seq 100); do
			[[ $(temp_dirs) == "$before" ]] && break
			sleep 0.05
		done
		[[ $(temp_dirs) == "$before" ]] ||
			fail "$instrument, SIG$sig: temporary directory left: $(comm -13 <(echo "$before") <(temp_dirs))"
	done
done

# ---- compare of two builds killed: the same guard as run -----------------------------------
# Both builds are the one fixture: what either starts must not outlive
# benchtrap, SIGKILL included.
for sig in INT TERM KILL; do
	"$BENCHTRAP" compare "$ESC" "$ESC" --bench daemon_then_hangs --timeout 120 >/dev/null 2>&1 &
	bt=$!
	wait_for_fixture "$ESC"
	sleep 1
	kill -s "$sig" "$bt"
	wait "$bt" 2>/dev/null
	expect_no_orphans "$ESC"
done

# ---- a traced child with threads, each stopped at its exit event -----------------------
# The threads of the pool fixture exist from its constructor on.
for sig in INT TERM KILL; do
	"$BENCHTRAP" run "$OBS/pool" --symbol work --timeout 120 >/dev/null 2>&1 &
	bt=$!
	wait_for_fixture "$OBS/pool"
	sleep 0.3
	kill -s "$sig" "$bt"
	wait_bounded "$bt" "threaded child, SIG$sig"
	expect_no_orphans "$OBS/pool"
done

# ---- the worker dies without cleaning up: the first process sweeps --------------------------
for sig in SEGV USR1; do
	"$BENCHTRAP" run "$ESC" --bench daemon_then_hangs --timeout 120 >/dev/null 2>&1 &
	bt=$!
	wait_for_fixture "$ESC"
	sleep 0.5
	worker=$(pgrep -P "$bt" | head -1)
	checks=$((checks + 1))
	[[ -n $worker ]] || fail "no worker process under benchtrap $bt"
	kill -s "$sig" "$worker"
	wait_bounded "$bt" "worker killed by SIG$sig"
	expect_no_orphans "$ESC"
done
# A signal no command handles, sent to benchtrap: it dies, the worker
# cleans up.
"$BENCHTRAP" run "$ESC" --bench daemon_then_hangs --timeout 120 >/dev/null 2>&1 &
bt=$!
wait_for_fixture "$ESC"
sleep 0.5
kill -s USR1 "$bt"
wait_bounded "$bt" "SIGUSR1"
expect_no_orphans "$ESC"

# ---- standard input ------------------------------------------------------------------------
# By default the child reads /dev/null: it neither sees nor eats a pipe.
got=$(printf 'abort\nrest\n' | { "$BENCHTRAP" run "$ESC" --bench reads_stdin "${FAST[@]}" \
	>"$TMP/out" 2>"$TMP/err"; echo "status $?"; cat; })
checks=$((checks + 1))
[[ $got == $'status 0\nabort\nrest' ]] || fail "stdin was read by the benchmark: $got"
# --input -: benchtrap's own input.
printf 'abort\n' | "$BENCHTRAP" run "$ESC" --bench reads_stdin --input - "${FAST[@]}" \
	>"$TMP/out" 2>"$TMP/err"
status=$? out=$(cat "$TMP/out") err=$(cat "$TMP/err")
expect_status 1
expect_out 'reads_stdin failed'
# --input FILE: every child reads it from its start.
printf 'abort\n' >"$TMP/input"
run run "$ESC" --bench reads_stdin --input "$TMP/input" "${FAST[@]}"
expect_status 1
expect_out 'SIGABRT'
if command -v valgrind >/dev/null; then
	run run "$ESC" --bench reads_stdin --input "$TMP/input" --instrument callgrind
	expect_status 1
	run run "$ESC" --bench reads_stdin --instrument callgrind
	expect_status 0
fi
run run "$ESC" --bench reads_stdin --input "$TMP/missing"
expect_usage_error "--input wants a readable file"
run run "$ESC" --bench reads_stdin --input "$TMP"
expect_usage_error "--input wants a readable file"

# ---- observe: the program it started dies with it ------------------------------------------
"$BENCHTRAP" observe --symbol tick -- "$OBS/forever" >/dev/null 2>&1 &
bt=$!
wait_for_fixture "$OBS/forever"
sleep 0.3
kill -9 "$bt"
wait "$bt" 2>/dev/null
expect_no_orphans "$OBS/forever"

# ---- observe --pid: the attached process outlives benchtrap, even its SIGKILL --------------
code_is_files() {
	python3 "$(dirname "$0")/code_is_files.py" "$1" >/dev/null
}

tracer_of() {
	awk '/^TracerPid/ {print $2}' "/proc/$1/status" 2>/dev/null
}

"$OBS/forever" "$TMP/progress" &
target=$!
for trial in 1 2 3 4 5 6; do
	sig=KILL
	((trial % 3 == 0)) && sig=TERM
	"$BENCHTRAP" observe --symbol tick --pid "$target" >/dev/null 2>&1 &
	bt=$!
	for _ in $(seq 200); do
		[[ $(tracer_of "$target") != 0 ]] && break
		sleep 0.02
	done
	# A different moment each trial: right after attaching, or later.
	sleep "0.$((trial * 15))"
	kill -s "$sig" "$bt"
	wait "$bt" 2>/dev/null
	for _ in $(seq 200); do
		[[ $(tracer_of "$target") == 0 ]] && break
		sleep 0.02
	done
	checks=$((checks + 1))
	[[ $(tracer_of "$target") == 0 ]] || fail "trial $trial (SIG$sig): the process is still traced"
	before=$(cat "$TMP/progress" 2>/dev/null)
	for _ in $(seq 100); do
		[[ $(cat "$TMP/progress" 2>/dev/null) != "$before" ]] && break
		sleep 0.05
	done
	checks=$((checks + 1))
	kill -0 "$target" 2>/dev/null && [[ $(awk '/^State/ {print $2}' "/proc/$target/status") != Z ]] ||
		fail "trial $trial (SIG$sig): the attached process died with benchtrap"
	[[ $(cat "$TMP/progress") != "$before" ]] || fail "trial $trial: the process stopped making progress"
	checks=$((checks + 1))
	code_is_files "$target" || fail "trial $trial (SIG$sig): code differs from the files"
done
kill -9 "$target"
wait "$target" 2>/dev/null

done_ok
