#!/usr/bin/env bash
# benchtrap run against real fixtures: selection, parameters, an unmodified
# binary and a library function, isolation, failures in the middle of a
# suite, the results file against the documented schema, markers, and that
# no child outlives the controller. Durations are never asserted.
. "$(dirname "$0")/lib.sh"
EX=$BUILD_ROOT/benches/examples
FAILING=$FIXTURES/run/failing
PLAIN=$FIXTURES/run/plain
FAST=(--time 0.05 --warmup 0 --sample-time 0.002 --min-samples 5)

# Selection: parameters expand, globs and exact bracketed names select.
run run "$EX" --bench 'fib*' --bench 'empty' "${FAST[@]}" --format json
expect_status 0
expect_json '[b["name"] for b in d["benchmarks"]] == ["fib[10]", "fib[15]", "fib[20]", "empty"]'
expect_json '[b["args"] for b in d["benchmarks"]] == [[10], [15], [20], []]'
expect_json 'all(b["status"] == "ok" and b["error"] is None for b in d["benchmarks"])'
# fib is exponential: more work, more time, whatever the machine's speed.
expect_json 'd["benchmarks"][0]["value"] < d["benchmarks"][1]["value"] < d["benchmarks"][2]["value"]'
expect_no_orphans "$EX"

# Overlapping selectors run a benchmark once; each must match something.
run run "$EX" --bench 'fib*' --bench 'fib[20]' "${FAST[@]}" --format json
expect_status 0
expect_json '[b["name"] for b in d["benchmarks"]] == ["fib[10]", "fib[15]", "fib[20]"]'
run run "$PLAIN" --symbol plain_work --symbol 'plain_w*' "${FAST[@]}" --format json
expect_status 0
expect_json '[b["name"] for b in d["benchmarks"]] == ["plain_work"]'
# The command line is recorded as typed; --max-samples alone lowers the minimum.
run run "$EX" --bench empty --time 0.05 --warmup 0 --max-samples 3 --format json -- x
expect_status 0
expect_json 'd["run"]["command"][1:4] == ["run", "'"$EX"'", "--bench"] and d["run"]["command"][-2:] == ["--", "x"]'
expect_json 'd["benchmarks"][0]["stats"]["samples"] == 3'
# A name without a slash is the file in the current directory, not one in PATH.
cp "$FAILING" "$TMP/xz"
run_in() { (cd "$1" && shift && "$BENCHTRAP" "$@") >"$TMP/out" 2>"$TMP/err"; status=$?; out=$(cat "$TMP/out"); err=$(cat "$TMP/err"); }
run_in "$TMP" run xz --bench ok_before "${FAST[@]}"
expect_status 0
expect_out '^ok_before '
run run "$EX" --cpu 4096
expect_usage_error 'run: --cpu wants a whole number'
run run "$EX" --cpu "$(nproc)"
expect_usage_error "has no such CPU"

run run "$EX" --bench 'fib[15]' "${FAST[@]}"
expect_status 0
expect_out '^fib\[15\] '
expect_no_out '^fib\[10\]'

# The results file follows docs/results.md.
run run "$EX" --bench loop_300ns --bench optimized_away --bench threaded_pool \
	--bench syscall_getppid "${FAST[@]}" --output "$TMP/results.json" --markers "$TMP/markers.jsonl"
expect_status 0
expect_out '^loop_300ns '
expect_out 'optimized_away: measured no execution time'
expect_no_out 'loop_300ns: measured no execution time'
cp "$TMP/results.json" "$TMP/out"
expect_json 'd["schema"] == "benchtrap-results/1"'
expect_json 'set(d["environment"]) >= {"cpu", "cores", "kernel", "libc", "binary", "build_id", "compiler", "aslr"}'
expect_json 'd["environment"]["aslr"] is False and d["environment"]["cores"] >= 1'
expect_json 'len(d["environment"]["build_id"]) == 40 and "GCC" in d["environment"]["compiler"]'
expect_json 'd["run"]["instrument"] == "walltime" and d["run"]["isolation"] == "benchmark"'
expect_json 'all(set(b) >= {"name", "symbol", "args", "instrument", "unit", "value", "status", "error", "stats", "diagnostics"} for b in d["benchmarks"])'
expect_json 'all(set(b["stats"]) >= {"median", "mean", "stddev", "min", "max", "q1", "q3", "samples", "iterations_per_sample", "outliers"} for b in d["benchmarks"])'
expect_json 'all(b["unit"] == "ns" and b["value"] == max(0, b["stats"]["median"]) for b in d["benchmarks"])'
expect_json 'all(len(b["raw_samples"]) == b["stats"]["samples"] >= 5 for b in d["benchmarks"])'
expect_json 'all(b["stats"]["min"] <= b["stats"]["q1"] <= b["stats"]["median"] <= b["stats"]["q3"] <= b["stats"]["max"] for b in d["benchmarks"])'
expect_json 'all(b["stats"]["ci_low"] <= b["stats"]["median"] <= b["stats"]["ci_high"] for b in d["benchmarks"])'
expect_json '[b["symbol"] for b in d["benchmarks"]][0] == "benchtrap_bench_loop_300ns"'
expect_json 'any("measured no execution time" in x for x in d["benchmarks"][1]["diagnostics"])'
expect_json '[b["no_time"] for b in d["benchmarks"]][:2] == [False, True]'
expect_json 'all(b["stats"]["resolution"] >= 0 for b in d["benchmarks"])'
expect_json 'd["benchmarks"][0]["diagnostics"] == []'
# A fresh child per benchmark.
expect_json 'len({b["pid"] for b in d["benchmarks"]}) == 4'

# "Measured no execution time" is decided against the resolution measured
# in the same child, not by the sign of noisy samples: a bare ret, whatever
# its address, is within it; loop_300ns is a thousand times above it. Both
# orders of the passes and an empty function placed like the benchmark's
# entry leave no bias for noise to push past the floor.
for i in 1 2 3; do
	run run "$EX" --bench empty --bench optimized_away --bench loop_300ns "${FAST[@]}" \
		--format json
	expect_status 0
	expect_json '[b["no_time"] for b in d["benchmarks"]] == [True, True, False]'
	expect_json 'all(b["value"] >= 0 for b in d["benchmarks"])'
	expect_json 'all(("within this measurement\x27s resolution" in x) == b["no_time"] for b in d["benchmarks"] for x in b["diagnostics"] if x.startswith("measured no execution time"))'
done
run run "$EX" --bench optimized_away "${FAST[@]}"
expect_status 0
expect_out 'optimized_away: measured no execution time: -?[0-9.]+ ns per call \(confidence interval from -?[0-9.]+ ns\) is within this measurement.s resolution \(±[0-9.]+ ns, an empty function measured against itself in the same child; optimized away\? use benchtrap_black_box on its result\)'
# A --symbol cannot be given black_box: the advice is about the function.
run run "$EX" --symbol benchtrap_bench_optimized_away "${FAST[@]}"
expect_status 0
expect_out 'benchtrap_bench_optimized_away: measured no execution time: .*does the function do work with these arguments'
expect_no_out 'black_box'

# Markers: every benchmark starts and ends once, samples pair up inside it,
# times never go backwards, and sample markers carry the child's pid.
checks=$((checks + 1))
python3 - "$TMP/markers.jsonl" <<'PY' || fail "markers are not paired and ordered"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
assert events, "no markers"
i, names, last = 0, [], 0
while i < len(events):
    e = events[i]; assert e["event"] == "benchmark_start", e
    name = e["name"]; names.append(name); assert e["t_ns"] >= last; last = e["t_ns"]
    i += 1; pid = None; recorded = 0
    while events[i]["event"] != "benchmark_end":
        s, t = events[i], events[i + 1]
        assert s["event"] == "sample_start" and t["event"] == "sample_end", (s, t)
        assert s["name"] == t["name"] == name and s["sample"] == t["sample"]
        assert s["pid"] == t["pid"] > 0 and (pid is None or pid == s["pid"]); pid = s["pid"]
        assert s["t_ns"] <= t["t_ns"] and s["t_ns"] >= last, (s, t, last); last = t["t_ns"]
        recorded += not s["warmup"]; i += 2
    e = events[i]; assert e["name"] == name and e["t_ns"] >= last and e["pid"] == pid; last = e["t_ns"]
    assert recorded >= 5, recorded
    i += 1
assert names == ["loop_300ns", "optimized_away", "threaded_pool", "syscall_getppid"], names
PY
expect_no_orphans "$EX"

# Failures in the middle of a suite: each reported, the rest measured, exit 1.
run run "$FAILING" "${FAST[@]}" --timeout 1 --format json
expect_status 1
expect_json '[b["name"] for b in d["benchmarks"] if b["status"] == "ok"] == ["ok_before", "poison", "victim", "forks_sleeper", "handled_fault", "ok_after"]'
expect_json '[b["name"] for b in d["benchmarks"] if b["status"] == "failed"] == ["crash", "aborts", "exits", "hangs"]'
expect_json 'all(b["value"] is None and b["stats"] is None for b in d["benchmarks"] if b["status"] == "failed")'
expect_json '(lambda b: "SIGSEGV" in b and "0x10" in b and "fixture_crash_inner" in b and "fixture_crash_outer" in b)(d["benchmarks"][1]["error"])'
expect_json '"SIGABRT" in d["benchmarks"][2]["error"] and "abort" in d["benchmarks"][2]["error"]'
expect_json '"exited with status 3" in d["benchmarks"][3]["error"]'
expect_json '"timed out after 1000 ms" in d["benchmarks"][4]["error"] and "benchtrap_bench_hangs" in d["benchmarks"][4]["error"]'
expect_json '"sent by pid" in d["benchmarks"][2]["error"]'
# What a benchmark forked died with its child (checked below: no orphans).
expect_no_orphans "$FAILING"

run run "$FAILING" --bench crash --bench ok_after "${FAST[@]}"
expect_status 1
expect_out '^crash +FAILED$'
expect_out 'crash failed: SIGSEGV'
expect_out '#0 .*fixture_crash_inner'
# The harness benchtrap injected calls the benchmark: the last frame, which
# no file holds, so no library is named for it.
expect_out '^  #[0-9]+ 0x[0-9a-f]+ \[benchtrap harness\]$'
checks=$((checks + 1))
[[ $(grep '^  #' <<<"$out" | tail -1) == *' [benchtrap harness]' ]] ||
	fail "the harness is not the backtrace's last frame"
# A C++ program maps libstdc++, libm and libgcc_s: the harness's page lands
# among them, and still it is the harness's alone. An uncaught exception
# aborts in the call.
if [[ -x $FIXTURES/observe/throw ]]; then
	run run "$FIXTURES/observe/throw" --symbol 'ns::thrower(3)' "${FAST[@]}"
	expect_status 1
	expect_out 'failed: SIGABRT'
	expect_out '__cxa_throw'
	expect_out '^  #[0-9]+ 0x[0-9a-f]+ \[benchtrap harness\]$'
	expect_no_out 'benchtrap harness\].*\['
	checks=$((checks + 1))
	[[ $(grep '^  #' <<<"$out" | tail -1) == *' [benchtrap harness]' ]] ||
		fail "the harness is not the C++ backtrace's last frame"
fi

# Isolation: 'victim' crashes only after 'poison' ran in the same process.
run run "$FAILING" --bench poison --bench victim "${FAST[@]}" --format json
expect_status 0
expect_json 'd["benchmarks"][0]["pid"] != d["benchmarks"][1]["pid"]'
run run "$FAILING" --bench poison --bench victim --bench ok_after "${FAST[@]}" --isolation shared --format json
expect_status 1
expect_json 'd["run"]["isolation"] == "shared"'
expect_json '[b["status"] for b in d["benchmarks"]] == ["ok", "failed", "ok"]'
expect_json '"SIGSEGV" in d["benchmarks"][1]["error"]'
expect_json 'd["benchmarks"][0]["pid"] == d["benchmarks"][1]["pid"] != d["benchmarks"][2]["pid"]'
expect_no_orphans "$FAILING"

# An unmodified binary: its functions, with arguments, and a library's.
run run "$PLAIN" --symbol plain_work --symbol 'plain_args(3, -4)' --symbol 'fxlib_work(5)' "${FAST[@]}" --format json
expect_status 0
expect_json '[b["name"] for b in d["benchmarks"]] == ["plain_work", "plain_args(3,-4)", "fxlib_work(5)"]'
expect_json '[b["args"] for b in d["benchmarks"]] == [[], [3, -4], [5]]'
expect_json 'd["benchmarks"][2]["object"].endswith("libfxlib.so")'
expect_json 'all(b["status"] == "ok" for b in d["benchmarks"])'
# Wrong arguments make plain_args abort: the arguments really are passed.
run run "$PLAIN" --symbol 'plain_args(1,2)' "${FAST[@]}"
expect_status 1
expect_out 'SIGABRT'
# main never runs: its output would show with --show-output.
run run "$PLAIN" --symbol plain_work "${FAST[@]}" --show-output
expect_status 0
expect_no_out 'main ran'
expect_no_orphans "$PLAIN"

# An IFUNC symbol (strlen in glibc) is resolved in the child and the
# implementation it picks is timed: called with a NULL string, it faults.
run run "$PLAIN" --symbol strlen "${FAST[@]}" --format json
expect_status 1
expect_json '"SIGSEGV" in d["benchmarks"][0]["error"] and "strlen" in d["benchmarks"][0]["error"].split("#0")[1]'

# Stripped and static builds: main is found without symbols.
run run "$FIXTURES/elf/stub_stripped" --bench alpha "${FAST[@]}"
expect_status 0
expect_out '^alpha '
run run "$FIXTURES/elf/stub_static_O2" --bench 'beta[2]' "${FAST[@]}"
expect_status 0
expect_out '^beta\[2\] '

# Markdown.
run run "$EX" --bench empty "${FAST[@]}" --format markdown
expect_status 0
expect_out '^\| BENCHMARK \| MEDIAN \|'
expect_out '^\| empty \|'

# Bad input: one line, exit 2.
run run /nonexistent/bench
expect_usage_error 'no such file'
run run "$EX" --bench fibb
expect_usage_error "no benchmark matches 'fibb' \(did you mean 'fib\[10\]'"
run run "$PLAIN" --symbol plain_wrok
expect_usage_error "no function matches 'plain_wrok' \(did you mean 'plain_work'"
# A static library's function in a stripped program has no symbol: say
# so, rather than suggest a library's look-alike name.
run run "$FIXTURES/elf/static_user_stripped" --symbol fxstatic_compress
expect_usage_error "static_user_stripped: no function matches 'fxstatic_compress': the binary is stripped and exports no such function \(its code may be linked in statically, without a symbol\); run a build that is not stripped$"
run run "$FIXTURES/elf/static_user" --symbol fxstatic_compress "${FAST[@]}"
expect_status 0
expect_out '^fxstatic_compress '
if [[ -x /usr/bin/zstd ]] && ! readelf -S /usr/bin/zstd | grep -q "\.symtab"; then
	run run /usr/bin/zstd --symbol ZSTD_compress
	expect_usage_error "zstd: no function matches 'ZSTD_compress': the binary is stripped"
fi
run run "$PLAIN"
expect_usage_error 'registers no benchmarks with target-stub; select functions with --symbol'
run run "$PLAIN" --symbol 'plain_args(1,x)'
expect_usage_error "cannot read --symbol 'plain_args\(1,x\)'"
run run "$EX" --time soon
expect_usage_error "--time wants seconds"
run run "$EX" --warmup nan
expect_usage_error "--warmup wants seconds, e.g. 0.5, not 'nan'"
run run "$EX" --max-samples 0
expect_usage_error "--max-samples wants a whole number from 1 to 1000000, not '0'"
run run "$EX" --isolation none
expect_usage_error "--isolation is 'benchmark', 'process' or 'shared'"
run run "$EX" --format yaml
expect_usage_error "--format is text, json or markdown"
run run "$EX" --instrument magic
expect_usage_error "unknown instrument 'magic'"
run run "$EX" extra
expect_usage_error "unexpected argument 'extra'"
run run
expect_usage_error "which binary"
cp "$EX" "$TMP/noexec" && chmod -x "$TMP/noexec"
run run "$TMP/noexec" --bench empty
expect_usage_error "cannot execute .*noexec: Permission denied"
run run "$EX" --bench empty "${FAST[@]}" --output /nonexistent/dir/r.json
expect_status 2
expect_err "cannot write results"

# SIGINT or SIGTERM to benchtrap kills the child it drives.
for sig in INT TERM; do
	"$BENCHTRAP" run "$FAILING" --bench hangs --timeout 60 >/dev/null 2>&1 &
	bt=$!
	for _ in $(seq 100); do
		pgrep -f -- "$FAILING" | grep -qv "^$bt\$" && break
		sleep 0.05
	done
	kill -s $sig $bt
	wait $bt
	checks=$((checks + 1))
	for _ in $(seq 40); do
		[[ -z $(pgrep -f -- "$FAILING") ]] && break
		sleep 0.05
	done
	expect_no_orphans "$FAILING"
done

# On a terminal: progress on stderr and colour on stdout, no colour with
# NO_COLOR; never colour when stdout is not a terminal (all the runs above).
if command -v script >/dev/null; then
	cmd="$BENCHTRAP run $FAILING --bench crash --bench ok_after ${FAST[*]}"
	script -qc "$cmd" /dev/null >"$TMP/tty" 2>&1
	checks=$((checks + 1))
	grep -q '\[2/2\] ok_after' "$TMP/tty" || fail "no progress on a terminal"
	grep -q $'\e\\[1;31mcrash failed' "$TMP/tty" || fail "no colour on a terminal"
	NO_COLOR=1 script -qc "$cmd" /dev/null >"$TMP/tty" 2>&1
	checks=$((checks + 1))
	grep -q 'crash failed' "$TMP/tty" || fail "no failure report with NO_COLOR"
	! grep -q $'\e\\[1;31m' "$TMP/tty" || fail "colour despite NO_COLOR"
fi
checks=$((checks + 1))
run run "$FAILING" --bench crash "${FAST[@]}"
! grep -q $'\e' <<<"$out$err" || fail "escape sequences when not on a terminal"

# Help teaches.
run run --help
expect_status 0
expect_out '^usage: benchtrap run BINARY'
expect_out '--isolation MODE'
expect_out 'examples:'
# Every instrument of this version, one line each; the default marked.
expect_out '^ +walltime +time per call.*\(default\)$'
expect_out '^ +callgrind +exact instructions per call'
expect_out '^ +perf +instructions and cycles per call'
expect_out '^ +memory +bytes allocated per call'
expect_out '--warmup-calls N'
# The unknown name lists them all.
run run "$EX" --instrument magic
expect_usage_error "unknown instrument 'magic' \(walltime, callgrind, perf or memory\)$"
run run "$EX" --instrument perf --keep-profiles "$TMP" --cache-sim
expect_usage_error '--keep-profiles applies to --instrument callgrind only$'
run run "$EX" --instrument callgrind --warmup-calls 2
expect_usage_error '--warmup-calls applies to --instrument memory only$'

# The default timeout grows with the repetitions asked (docs/run.md):
# 3 x (0.05 + 0.05) s + 300 x 0.25 s; the one given is the one used.
run run "$EX" --bench empty --time 0.05 --warmup 0.05 --sample-time 0.0002 --min-samples 300 \
	--format json
expect_status 0
expect_json 'abs(d["run"]["timeout_s"] - 75.3) < 1e-6'
run run "$EX" --bench empty "${FAST[@]}" --format json
expect_status 0
expect_json 'd["run"]["timeout_s"] == 60'
run run "$EX" --bench empty "${FAST[@]}" --min-samples 300 --timeout 7 --format json
expect_status 0
expect_json 'd["run"]["timeout_s"] == 7'

done_ok
