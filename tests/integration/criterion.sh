#!/usr/bin/env bash
# Rust criterion suites, unmodified (docs/criterion.md), on
# tests/fixtures/criterion built by cargo against Debian's crates:
# - list: every benchmark under the id criterion gives it, asked of the
#   binary itself, in its order; --filter and --json (framework criterion);
# - run (walltime): each benchmark in a process of its own (distinct pids),
#   the one that dies failed with SIGSEGV and its backtrace, the others run;
#   every sample a bracketed call of Bencher's batch function, as many as
#   criterion's --sample-size; nothing written in the current directory
#   (criterion's reports go to a CRITERION_HOME of benchtrap's, removed);
#   each batch timed by criterion's own clock, iter_batched's setup out;
# - callgrind: instructions per iteration of sum_1000 equal to the slope
#   derived here by hand from a valgrind run of our own with the options
#   benchtrap uses (the last two profiles' totals over the iterations
#   between them), within the clock reads' few instructions; the same in
#   two runs;
# - memory: alloc/vec's one allocation of 800 bytes and one free an
#   iteration, exact, its set-up's table out (it is made before b.iter);
#   sum_1000 allocates nothing; the crash failed alone;
# - perf refused with the reason; reserved arguments after '--' refused; a
#   flag the binary does not take: its own words;
# - compare BASE HEAD of the two builds: paired, both sides measured, pairs
#   taken (structure only: no verdict that noise decides);
# - --timeout: the benchmark that runs past it failed;
# - no process of the suite, and no temporary directory, left behind after
#   any of them, nor after benchtrap is killed (SIGINT, SIGTERM, SIGKILL)
#   while a benchmark runs, under walltime and callgrind.
# No duration is asserted.
. "$(dirname "$0")/lib.sh"
S=$FIXTURES/criterion/crit_suite
SLOW=$FIXTURES/criterion/crit_suite_slow
if [[ ! -x $S || ! -x $SLOW ]]; then
	if [[ ! -x /usr/bin/cargo ]] && ! command -v cargo >/dev/null; then
		echo "skipped: the criterion fixture was not built: cargo is not installed"
	elif ! ls -d /usr/share/cargo/registry/criterion-0.3.* >/dev/null 2>&1; then
		echo "skipped: the criterion fixture was not built: the criterion 0.3 crate is not installed (librust-criterion-dev)"
	else
		echo "skipped: the criterion fixture was not built"
	fi
	exit 77
fi
own_tmpdir
NAMES="fib/10 fib/20 sum_1000 group/chase crash twin/same twin/5pct twin/2pct batched/setup batched/plain alloc/vec"
# Every run from a directory of its own: criterion would write
# target/criterion there without a CRITERION_HOME.
mkdir -p "$TMP/cwd"
cd "$TMP/cwd" || fail "cannot enter $TMP/cwd"

# list: the binary's own ids, in its order.
run list "$S"
expect_status 0
expect_out "^BENCHMARK \(criterion\)$"
[[ $(tail -n +2 <<<"$out" | tr "\n" " ") == "$NAMES " ]] ||
	fail "list does not give the binary's ids in its order"
checks=$((checks + 1))
run list "$S" --filter 'fib/*' --json
expect_status 0
expect_json 'd["framework"] == "criterion" and [b["name"] for b in d["benchmarks"]] == ["fib/10", "fib/20"]'
run list "$S" --filter 'nothing*'
expect_usage_error "no benchmark matches 'nothing\*'"
expect_no_orphans "$S"

# run, walltime: a process each, every sample a bracketed call.
run run "$S" --bench 'fib/20' --bench sum_1000 --bench group/chase --time 1 --format json
expect_status 0
expect_json '[b["name"] for b in d["benchmarks"]] == ["fib/20", "sum_1000", "group/chase"]'
expect_json 'all(b["status"] == "ok" and b["instrument"] == "walltime" and b["value"] > 0 for b in d["benchmarks"])'
expect_json 'len({b["pid"] for b in d["benchmarks"]}) == 3 and all(b["pid"] > 0 for b in d["benchmarks"])'
# --time 1 at 10 ms a sample: criterion's --sample-size 100.
expect_json 'all(b["stats"]["samples"] == 100 and b["stats"]["iterations_per_sample"] >= 100 for b in d["benchmarks"])'
expect_json 'd["run"]["isolation"] == "process"'
# The headline is the samples' median; the least-squares slope a counter.
expect_json 'all(b["value"] == b["stats"]["median"] and b["counters"]["slope_ns"] > 0 for b in d["benchmarks"])'
# Timed as criterion times it, from Instant::now to Instant::elapsed:
# iter_batched's setup, 100 times the routine's work, is out of the figure,
# which stays within 3x of the same routine under b.iter (with the setup
# in, ~100x).
run run "$S" --bench 'batched/*' --time 1 --format json
expect_status 0
expect_json '[b["status"] for b in d["benchmarks"]] == ["ok", "ok"]'
expect_json '1 / 3 < d["benchmarks"][0]["value"] / d["benchmarks"][1]["value"] < 3'
expect_json 'not any(b["diagnostics"] for b in d["benchmarks"])'
# The benchmark that dies: SIGSEGV with a backtrace through criterion's
# batch function, the other measured, exit 1.
run run "$S" --bench crash --bench sum_1000 --time 1 --format json
expect_status 1
expect_json '[b["status"] for b in d["benchmarks"]] == ["ok", "failed"]'
expect_json 'd["benchmarks"][1]["error"].startswith("SIGSEGV") and "criterion::bencher::Bencher<M>::iter" in d["benchmarks"][1]["error"]'
# criterion's own sample size, given after '--', is what it takes.
run run "$S" --bench sum_1000 --time 1 --format json -- --sample-size 12
expect_status 0
expect_json 'd["benchmarks"][0]["stats"]["samples"] == 12'
checks=$((checks + 1))
[[ -z $(ls -A "$TMP/cwd") ]] || fail "criterion wrote in the current directory: $(ls -A "$TMP/cwd")"
expect_no_orphans "$S"
expect_no_temp_dirs

# callgrind by hand, on sum_1000: valgrind with the options benchtrap
# passes (criterion/callgrind.c), a profile after each call of Bencher's
# batch function under --profile-time 1 (calls of 1, 2, 4, ... iterations).
command -v valgrind >/dev/null || fail "valgrind is needed to derive the figure by hand"
FN='criterion::bencher::Bencher<M>::iter'
D=$TMP/hand
mkdir -p "$D"
CRITERION_HOME=$D/home valgrind --tool=callgrind --vgdb=no --log-file="$D/valgrind.log" \
	--callgrind-out-file="$D/callgrind.out.%p" --collect-atstart=no \
	--toggle-collect="$FN" --dump-after="$FN" \
	"$S" --bench --noplot --plotting-backend plotters --profile-time 1 '^sum_1000$' \
	>"$D/stdout" 2>"$D/stderr" || fail "valgrind's own run failed: $(tail -3 "$D/stderr")"
hand=$(python3 - "$D" <<'PY'
import glob, sys
d = sys.argv[1]
dumps = []
for p in glob.glob(d + "/callgrind.out.*.*"):
    n = int(p.rsplit(".", 1)[1])
    if n == 0:
        continue
    events, total = None, None
    for line in open(p):
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith(("totals:", "summary:")):
            total = int(line.split()[1 + events.index("Ir")])
    dumps.append((n, total))
dumps.sort()
c = [t for _, t in dumps]
k = len(c) - 2
# Call k ran 2^k iterations, call k+1 twice as many.
print(repr((c[k + 1] - c[k]) / 2 ** k) if k >= 0 else "none")
PY
)
[[ $hand != none ]] || fail "valgrind's own run dumped fewer than two profiles"
run run "$S" --instrument callgrind --format json
expect_status 1
cp "$TMP/out" "$TMP/cg1.json"
expect_json '[b["name"] for b in d["benchmarks"]] == '"$(python3 -c 'import sys; print(sys.argv[1].split())' "$NAMES")"
expect_json 'all(b["status"] == "ok" and b["unit"] == "instructions" and b["value"] > 0 for b in d["benchmarks"] if b["name"] != "crash")'
# The signal, then valgrind's account of it: where, and the stack.
expect_json '[b for b in d["benchmarks"] if b["name"] == "crash"][0]["error"].startswith("SIGSEGV (Segmentation fault) under valgrind\n")'
expect_json '"Access not within mapped region at address 0x0" in [b for b in d["benchmarks"] if b["name"] == "crash"][0]["error"]'
# Within 0.1%: each call reads the clock twice (criterion's Instant::now),
# and the vDSO's clock takes a few instructions more or fewer from one
# read to the next.
expect_json 'abs([b for b in d["benchmarks"] if b["name"] == "sum_1000"][0]["value"] - '"$hand"') <= 0.001 * '"$hand"
# fib(20) does about 110 times fib(10)'s work (21891 calls against 177).
expect_json '100 < [b["value"] for b in d["benchmarks"] if b["name"] == "fib/20"][0] / [b["value"] for b in d["benchmarks"] if b["name"] == "fib/10"][0] < 150'
run run "$S" --instrument callgrind --format json
expect_status 1
python3 - "$TMP/cg1.json" "$TMP/out" <<'PY' || fail "two callgrind runs differ by more than 0.1%"
import json, sys
a, b = ({x["name"]: x["value"] for x in json.load(open(p))["benchmarks"] if x["status"] == "ok"} for p in sys.argv[1:3])
sys.exit(0 if a.keys() == b.keys() and all(abs(a[k] - b[k]) <= 0.001 * a[k] for k in a) else 1)
PY
checks=$((checks + 1))
expect_no_orphans "$S"

# What criterion's rows refuse, and what a binary says of its own.
run run "$S" --instrument perf
expect_usage_error "criterion binary: --instrument perf does not measure one: .*Bencher"
run run "$S" --instrument memory --bench alloc/vec --bench sum_1000 --bench crash --format json
expect_status 1
expect_json '{b["name"]: b["status"] for b in d["benchmarks"]} == {"alloc/vec": "ok", "sum_1000": "ok", "crash": "failed"}'
expect_json '[b["counters"] for b in d["benchmarks"] if b["name"] == "alloc/vec"][0] == {"bytes": 800, "allocations": 1, "frees": 1, "peak_bytes": 800}'
expect_json '[b["counters"] for b in d["benchmarks"] if b["name"] == "sum_1000"][0] == {"bytes": 0, "allocations": 0, "frees": 0, "peak_bytes": 0}'
expect_json '"SIGSEGV" in [b["error"] for b in d["benchmarks"] if b["name"] == "crash"][0]'
expect_no_orphans "$S"
for flag in --profile-time --list --save-baseline --bench; do
	run run "$S" --bench sum_1000 -- "$flag" 1
	expect_usage_error "'$flag' after '--' would change what benchtrap selects"
done
run run "$S" --bench sum_1000 -- --noise-threshold 0.1 sum
expect_usage_error "'sum' after '--' would change what benchtrap selects"
run run "$S" --bench sum_1000 --time 1 -- --no-such-flag
expect_status 1
expect_out "sum_1000 failed: exited with status 1; its last words:"
expect_out "error: Found argument '--no-such-flag'"
expect_no_orphans "$S"

# compare BASE HEAD: the two builds paired, call by call, in three pairs of
# processes (--time 1), each pair's ratios counted apart.
run compare "$S" "$SLOW" --bench sum_1000 --bench fib/10 --time 1 --format json \
	--output "$TMP/cpair.json"
[[ $status -eq 0 || $status -eq 1 ]] || fail "compare exited with $status"
checks=$((checks + 1))
expect_json 'd["paired"] is True and sorted(b["name"] for b in d["benchmarks"]) == ["fib/10", "sum_1000"]'
expect_json_in "$TMP/cpair.json" 'all(len(b["paired"]["processes"]) == 3 and sum(b["paired"]["processes"]) == b["paired"]["pairs"] for b in d["benchmarks"])'
expect_json 'all(b["base_status"] == "ok" and b["head_status"] == "ok" and b["paired"] is True for b in d["benchmarks"])'
expect_json 'all(b["base"] > 0 and b["head"] > 0 and b["ratio"] > 0 for b in d["benchmarks"])'
expect_no_orphans "$S"
expect_no_orphans "$SLOW"
checks=$((checks + 1))
[[ -z $(ls -A "$TMP/cwd") ]] || fail "criterion wrote in the current directory: $(ls -A "$TMP/cwd")"
expect_no_temp_dirs

# --timeout bounds a benchmark's whole process: failed, its process gone.
run run "$S" --bench sum_1000 --timeout 2 --format json -- --measurement-time 60
expect_status 1
expect_json 'd["benchmarks"][0]["status"] == "failed" and "timed out after 2000 ms" in d["benchmarks"][0]["error"]'
expect_no_orphans "$S"
expect_no_temp_dirs

# benchtrap killed while a benchmark runs: nothing of the suite survives,
# criterion's tree under CRITERION_HOME included.
for instrument in walltime callgrind; do
	for sig in INT TERM KILL; do
		"$BENCHTRAP" run "$S" --bench fib/20 --instrument "$instrument" --timeout 120 \
			-- --measurement-time 60 >/dev/null 2>&1 &
		bt=$!
		for _ in $(seq 200); do
			[[ -n $(fixture_procs "$S") ]] && break
			sleep 0.05
		done
		sleep 0.5
		kill -s "$sig" "$bt"
		wait "$bt" 2>/dev/null
		expect_no_orphans "$S"
		expect_no_temp_dirs
	done
done

done_ok
