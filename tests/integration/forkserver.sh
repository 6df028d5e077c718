#!/usr/bin/env bash
# The callgrind fork server: under --isolation benchmark, one
# valgrind per run reaches main once and forks a child per benchmark;
# --isolation process starts a fresh valgrind per benchmark. Checked here:
# - every counter of every benchmark is the same in both modes (forkserver,
#   pool, the example suite; with --cache-sim for forkserver), ripple_1..3
#   count alike in both, and as the first call of a shared run (a process
#   with no server in the way) counts;
# - run.isolation, and a pid per benchmark;
# - crash, abort, exit and hang fail with their reason, exit 1, and the
#   benchmark after each counts as in process mode;
# - a grandchild that outlives its benchmark spoils no count, in all three
#   modes;
# - a program with threads at main (pool) falls back to a fresh valgrind
#   per benchmark and says so;
# - SIGINT and SIGTERM to benchtrap, and SIGKILL to the server, leave no
#   process of the fixture behind; the server's death fails the benchmark
#   that ran, and a new server runs the rest;
# - bad input: one line, exit 2.
# No duration is asserted: waits poll with a bound, and every figure
# compared is an exact count.
. "$(dirname "$0")/lib.sh"
FS=$FIXTURES/forkserver/forkserver
POOL=$FIXTURES/forkserver/pool
EX=$BUILD_ROOT/benches/examples
CG=(--instrument callgrind)
bt=""
trap 'if main_shell; then kill -9 $bt 2>/dev/null; rm -rf "$TMP"; fi' EXIT

# ---- bad input: one line, exit 2 (needs no valgrind) ------------------------------------
run run "$FS" --isolation nonsense
expect_usage_error "nonsense"
run run "$FS" "${CG[@]}" --isolation nonsense
expect_usage_error "nonsense"

if ! command -v valgrind >/dev/null; then
	echo "skipped: valgrind is not installed (apt install valgrind)"
	exit 77
fi

# callgrind's temporary directories go to this test's own $TMPDIR, so that
# a directory left behind can be seen.
export TMPDIR=$TMP/tmpdir
mkdir "$TMPDIR"
temp_dirs() {
	ls -d "$TMPDIR"/benchtrap-callgrind.* 2>/dev/null
}

# Polls up to 30 s until hangs says on stderr (file $1, through
# --show-output) that it is spinning. (Markers would not do: they reach
# their file when it is closed.)
wait_for_hang() {
	for _ in $(seq 600); do
		grep -q 'hangs is spinning' "$1" 2>/dev/null && return
		sleep 0.05
	done
	fail "hangs never started (stderr: $(cat "$1" 2>/dev/null))"
}

# The server of fixture $1: a process of the fixture whose parent is not
# one (its children, forked per benchmark, have it as their parent).
server_of() {
	local procs pid
	procs=$(fixture_procs "$1")
	for pid in $procs; do
		grep -qx -- "$(ps -o ppid= -p "$pid" | tr -d ' ')" <<<"$procs" || echo "$pid"
	done
}


# ---- forkserver: the same counts forked as in a fresh valgrind -------------------------
# Every benchmark that does not fail; each reads the same 16 bytes of input.
HAPPY=(--bench 'ripple_*' --bench stack_string --bench first_malloc --bench forks_child
	--bench 'counted*' --bench 'reads_stdin*')
printf '0123456789abcdefghijklmnopqrstuvwxyz0123' >"$TMP/input"
for iso in benchmark process; do
	run run "$FS" "${CG[@]}" "${HAPPY[@]}" --input "$TMP/input" --isolation "$iso" --format json
	expect_status 0
	cp "$TMP/out" "$TMP/fs-$iso.json"
	expect_json 'd["run"]["isolation"] == "'"$iso"'"'
	expect_json 'len(d["benchmarks"]) == 11 and all(b["status"] == "ok" for b in d["benchmarks"])'
	# A child (or a process) per benchmark.
	expect_json 'all(isinstance(b["pid"], int) and b["pid"] > 0 for b in d["benchmarks"])'
	expect_json 'len({b["pid"] for b in d["benchmarks"]}) == 11'
	# Isolated, the three ripples are each the first 4 MiB calloc.
	expect_json 'len({json.dumps(b["counters"]) for b in d["benchmarks"] if b["name"].startswith("ripple_")}) == 1'
	# Each child sees stdin from its start.
	expect_json 'len({json.dumps(b["counters"]) for b in d["benchmarks"] if b["name"].startswith("reads_stdin")}) == 1'
	expect_json '(lambda v: v["counted[1000]"] - v["counted[10]"] == 1980 and 22 <= v["counted[10]"] <= 30)({b["name"]: b["value"] for b in d["benchmarks"]})'
	expect_no_orphans "$FS"
done
same_counts "$TMP/fs-benchmark.json" "$TMP/fs-process.json"
same_counts "$TMP/fs-process.json" "$TMP/fs-benchmark.json"
# The counts are those of isolation: the same suite in one process ripples.
run run "$FS" "${CG[@]}" --bench 'ripple_*' --bench first_malloc --isolation shared --format json
expect_status 0
expect_json 'd["run"]["isolation"] == "shared" and len({b["pid"] for b in d["benchmarks"]}) == 1'
expect_json '(lambda v: v[0] < v[1] < v[2])([b["value"] for b in d["benchmarks"]][:3])'
expect_no_orphans "$FS"
# And those of a process that called nothing before: the first benchmark
# of a shared run is called from main, with no fork server in the way. A
# server that did something before forking (a malloc, a read of stdin)
# would change both isolations alike, but not this.
for first in ripple_1 stack_string first_malloc 'reads_stdin[1]'; do
	run run "$FS" "${CG[@]}" --bench "$first" --bench 'counted[10]' --input "$TMP/input" \
		--isolation shared --format json
	expect_status 0
	checks=$((checks + 1))
	python3 - "$TMP/out" "$TMP/fs-benchmark.json" <<'PY' || fail "$first: first in a shared run, it counts otherwise than forked"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
x = a["benchmarks"][0]
y = [y for y in b["benchmarks"] if y["name"] == x["name"]][0]
sys.exit(0 if x["counters"] == y["counters"] else "%s against %s" % (x["counters"], y["counters"]))
PY
done
expect_no_orphans "$FS"

# With the cache simulation: the accesses (Ir, Dr, Dw) the same; the misses
# of the simulated caches depend on what they held at the call, which is
# what the server did before the fork (the same steps before every fork,
# but a set that thrashes still ages): within a few lines of each other.
for iso in benchmark process; do
	run run "$FS" "${CG[@]}" "${HAPPY[@]}" --input "$TMP/input" --cache-sim --isolation "$iso" --format json
	expect_status 0
	cp "$TMP/out" "$TMP/cache-$iso.json"
	expect_json 'all(b["status"] == "ok" and {"Ir", "Dr", "D1mr", "DLmw"} <= set(b["counters"]) for b in d["benchmarks"])'
	expect_no_orphans "$FS"
done
checks=$((checks + 1))
python3 - "$TMP/cache-benchmark.json" "$TMP/cache-process.json" <<'PY' || fail "cache-sim counters differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
other = {x["name"]: x["counters"] for x in b["benchmarks"]}
bad = []
for x in a["benchmarks"]:
    y = other[x["name"]]
    for k, v in x["counters"].items():
        exact = k in ("Ir", "Dr", "Dw")
        if (v != y[k]) if exact else abs(v - y[k]) > 3:
            bad.append("%s %s: %s against %s" % (x["name"], k, v, y[k]))
sys.exit("\n".join(bad) if bad or not a["benchmarks"] else 0)
PY

# ---- failures in a forked child: reported, and the server unharmed ----------------------
# Each failing benchmark is followed by one whose count shows the state of
# the process it ran in (the stack, malloc's state, a 4 MiB calloc, a loop).
FAILING=(--bench crash --bench stack_string --bench aborts --bench first_malloc --bench exits
	--bench ripple_1 --bench hangs --bench 'counted[1000]')
for iso in benchmark process; do
	run run "$FS" "${CG[@]}" "${FAILING[@]}" --timeout 3 --isolation "$iso" --format json
	expect_status 1
	cp "$TMP/out" "$TMP/failing-$iso.json"
	expect_json '[b["status"] for b in d["benchmarks"]] == ["failed", "ok"] * 4'
	expect_json '(lambda e: "SIGSEGV" in e and "benchtrap_bench_crash" in e)(d["benchmarks"][0]["error"])'
	expect_json '"SIGABRT" in d["benchmarks"][2]["error"]'
	expect_json '"exited with status 3" in d["benchmarks"][4]["error"]'
	expect_json '"timed out after 3000 ms" in d["benchmarks"][6]["error"]'
	expect_json 'all(b["value"] is None for b in d["benchmarks"] if b["status"] == "failed")'
	expect_no_orphans "$FS"
done
same_counts "$TMP/failing-benchmark.json" "$TMP/failing-process.json"
same_counts "$TMP/failing-benchmark.json" "$TMP/fs-process.json"

# ---- a grandchild that outlives its benchmark ---------------------------------------------
# forks_child's child sleeps 2 s and exits while slow (seconds under
# valgrind) is counted: its dump is neither forks_child's nor slow's.
for iso in benchmark process shared; do
	run run "$FS" "${CG[@]}" --bench forks_child --bench slow --bench 'counted[10]' --isolation "$iso" --format json
	expect_status 0
	expect_json 'd["run"]["isolation"] == "'"$iso"'"'
	expect_json '(lambda v: v["slow[100000010]"] == v["counted[10]"] + 200000000)({b["name"]: b["value"] for b in d["benchmarks"]})'
	checks=$((checks + 1))
	python3 - "$TMP/out" "$TMP/fs-process.json" <<'PY' || fail "$iso: forks_child does not count as in process mode"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
f = lambda d: [x["counters"] for x in d["benchmarks"] if x["name"] == "forks_child"]
sys.exit(0 if f(a) == f(b) else "%s against %s" % (f(a), f(b)))
PY
	expect_no_orphans "$FS"
done

# ---- threads at main: a fresh valgrind per benchmark, said on each -----------------------
for iso in benchmark process; do
	run run "$POOL" "${CG[@]}" --isolation "$iso" --timeout 20 --format json
	expect_status 0
	cp "$TMP/out" "$TMP/pool-$iso.json"
	expect_json '[b["name"] for b in d["benchmarks"]] == ["pool_sum", "plain"]'
	expect_json 'all(b["status"] == "ok" for b in d["benchmarks"])'
	expect_json 'len({b["pid"] for b in d["benchmarks"]}) == 2'
	expect_no_orphans "$POOL"
done
cp "$TMP/pool-benchmark.json" "$TMP/out"
expect_json 'all(any("thread" in x.lower() for x in b["diagnostics"]) for b in d["benchmarks"])'
same_counts "$TMP/pool-benchmark.json" "$TMP/pool-process.json"
same_counts "$TMP/pool-process.json" "$TMP/pool-benchmark.json"

# ---- the example suite (a worker pool from a constructor too) ---------------------------
if [[ -x $EX ]]; then
	for iso in benchmark process; do
		run run "$EX" "${CG[@]}" --isolation "$iso" --format json
		expect_status 0
		cp "$TMP/out" "$TMP/ex-$iso.json"
		expect_json 'len(d["benchmarks"]) == 11 and all(b["status"] == "ok" for b in d["benchmarks"])'
		expect_no_orphans "$EX"
	done
	cp "$TMP/ex-benchmark.json" "$TMP/out"
	expect_json 'all(any("thread" in x.lower() for x in b["diagnostics"]) for b in d["benchmarks"])'
	# threaded_pool's count depends on how its workers are scheduled, even
	# under valgrind (callgrind.sh); pool_sum above is the exact case.
	same_counts "$TMP/ex-benchmark.json" "$TMP/ex-process.json" threaded_pool
	same_counts "$TMP/ex-process.json" "$TMP/ex-benchmark.json" threaded_pool
else
	echo "note: the example suite skipped: $EX is not built"
fi

# ---- SIGINT and SIGTERM to benchtrap while a forked child hangs ------------------------
for sig in INT TERM; do
	"$BENCHTRAP" run "$FS" "${CG[@]}" --bench 'counted[10]' --bench hangs --bench 'counted[1000]' \
		--timeout 30 --show-output >"$TMP/bg.out" 2>"$TMP/bg.err" &
	bt=$!
	wait_for_hang "$TMP/bg.err"
	kill -s "$sig" "$bt"
	wait_bounded "$bt" "SIG$sig"
	bt=""
	out=$(cat "$TMP/bg.out") err=$(cat "$TMP/bg.err")
	checks=$((checks + 1))
	[[ $status -ne 0 ]] || fail "SIG$sig: benchtrap exited 0"
	expect_no_orphans "$FS"
	checks=$((checks + 1))
	for _ in $(seq 200); do
		[[ -z $(temp_dirs) ]] && break
		sleep 0.05
	done
	[[ -z $(temp_dirs) ]] || fail "SIG$sig: temporary directory left: $(temp_dirs)"
done

# ---- the server killed while a child hangs: that one fails, a new server runs the rest --
"$BENCHTRAP" run "$FS" "${CG[@]}" --bench 'counted[10]' --bench hangs --bench 'counted[1000]' \
	--bench stack_string --timeout 30 --show-output --format json >"$TMP/out" 2>"$TMP/err" &
bt=$!
wait_for_hang "$TMP/err"
server=$(server_of "$FS")
checks=$((checks + 1))
[[ $(wc -w <<<"$server") -eq 1 && -n $(pgrep -P "$server") ]] ||
	fail "no single valgrind server with a child: $(ps -o pid,ppid,args -p "$(fixture_procs "$FS" | paste -sd,)")"
kill -9 "$server"
wait_bounded "$bt" "server killed"
bt=""
out=$(cat "$TMP/out") err=$(cat "$TMP/err")
expect_status 1
expect_json '[(b["name"], b["status"]) for b in d["benchmarks"]] == [("counted[10]", "ok"), ("hangs", "failed"), ("counted[1000]", "ok"), ("stack_string", "ok")]'
expect_json 'd["benchmarks"][1]["error"].startswith("its fork server (valgrind) was killed by SIGKILL while it ran") and d["benchmarks"][1]["value"] is None'
expect_no_orphans "$FS"

done_ok
