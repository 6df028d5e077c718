#!/usr/bin/env bash
# benchtrap run --instrument perf. Where the machine has no PMU (most VMs),
# benchtrap must say so in one line and suggest callgrind; the counting
# itself can only be tested where counters exist.
. "$(dirname "$0")/lib.sh"
COUNTED=$FIXTURES/callgrind/counted
STATIC=$FIXTURES/callgrind/counted_static

run run "$STATIC" --instrument perf
expect_usage_error 'static binary'

run run "$COUNTED" --instrument perf --symbol 'counted_loop(1000)' --format json
if [[ $status -eq 2 ]]; then
	expect_usage_error 'no hardware performance counters.*--instrument callgrind|perf_event_open is not permitted'
	echo "$checks passed; skipped the rest: no usable hardware counters here ($err)"
	exit 77
fi
expect_status 0
# Exact up to the counters' own skid: 2n + 2 per call.
expect_json 'abs(d["benchmarks"][0]["value"] - 2002) <= 20'
expect_json 'd["benchmarks"][0]["unit"] == "instructions" and d["benchmarks"][0]["counters"]["cycles"] > 0'
done_ok
