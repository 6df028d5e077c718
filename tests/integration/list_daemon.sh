#!/usr/bin/env bash
# list of a binary that lists by running it (a Google Benchmark suite,
# docs/gbench.md) whose constructor daemonizes (fork, setsid, fork, the
# middle process exits; tests/fixtures/gbench/daemonizes.c): the list is
# printed, and the daemon does not outlive benchtrap, as nothing a run
# starts does. The daemon writes its pid to a file: that pid must be gone
# (a bounded wait), and no process of the fixture left. No duration is
# asserted.
. "$(dirname "$0")/lib.sh"
D=$FIXTURES/gbench/gbench_daemonizes
[[ -x $D ]] || fail "fixture $D was not built"
export DAEMON_PID_FILE=$TMP/daemon.pid

# The daemon's pid, once written, must not be alive; fail naming it.
expect_daemon_gone() {
	checks=$((checks + 1))
	local pid
	# Written before the binary's main runs, so before it lists.
	[[ -s $DAEMON_PID_FILE ]] || fail "the fixture's daemon wrote no pid to $DAEMON_PID_FILE"
	pid=$(cat "$DAEMON_PID_FILE")
	for _ in $(seq 200); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.05
	done
	kill -9 "$pid" 2>/dev/null
	fail "the daemon $pid its constructor started outlived benchtrap list"
}

for how in text json; do
	rm -f "$DAEMON_PID_FILE"
	if [[ $how == json ]]; then
		run list "$D" --json
		expect_status 0
		expect_json 'd["framework"] == "gbench" and [b["name"] for b in d["benchmarks"]] == ["BM_daemonizes", "BM_daemonizes/8"]'
	else
		run list "$D" --filter 'BM_daemonizes/*'
		expect_status 0
		expect_out 'BENCHMARK \(Google Benchmark\)'
		expect_out 'BM_daemonizes/8'
	fi
	expect_daemon_gone
	expect_no_orphans "$D"
done

# run lists it the same way: nothing left either.
rm -f "$DAEMON_PID_FILE"
run run "$D" --bench 'nothing*'
expect_usage_error "no benchmark matches 'nothing\*'"
expect_daemon_gone
expect_no_orphans "$D"
done_ok
