#!/usr/bin/env bash
# Benchmarks that leave their call in ways waitpid alone does not show, and
# one that starts thousands of threads, under every instrument that runs
# here (tests/fixtures/run/wayward.c):
# - execs: "executed another program" (under the fork server, with the
#   program's path), not a timeout; the benchmarks around it are measured;
# - stops: raise(SIGSTOP): continued and measured under every instrument,
#   as under walltime, not a timeout;
# - threads (2000 sleeping threads, then a spin) and churns (threads that
#   create threads without end): reported as timed out with --timeout 2,
#   the others measured, and the run ends (timeout 300 is only a safety
#   net: no duration is asserted).
# No process of the fixture outlives benchtrap.
. "$(dirname "$0")/lib.sh"
W=$FIXTURES/run/wayward
trap 'if main_shell; then rm -rf "$TMP"; fi' EXIT

instruments=(walltime memory)
if command -v valgrind >/dev/null; then
	instruments+=(callgrind)
else
	echo "valgrind is not installed: callgrind left out"
fi

# Run benchtrap under a safety bound; $status 124 means it never ended.
run_bounded() {
	timeout 300 "$BENCHTRAP" "$@" >"$TMP/out" 2>"$TMP/err"
	status=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
	[[ $status -ne 124 ]] || fail "benchtrap $* did not end"
}

verdict() { # name: its error's first line, or "ok"
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
b = [b for b in d["benchmarks"] if b["name"] == sys.argv[2]][0]
print("ok" if b["status"] == "ok" else b["error"].splitlines()[0])' "$TMP/out" "$1"
}

for ins in "${instruments[@]}"; do
	run_bounded run "$W" --instrument "$ins" --timeout 2 --bench ok_before --bench execs \
		--bench stops --bench ok_after --format json
	expect_status 1
	expect_json 'len(d["benchmarks"]) == 4'
	expect_json '[b["status"] for b in d["benchmarks"]] == ["ok", "failed", "ok", "ok"]'
	checks=$((checks + 1))
	e=$(verdict execs)
	[[ $e == "executed another program"* ]] || fail "$ins: execs: $e"
	if [[ $ins != walltime ]]; then
		checks=$((checks + 1))
		[[ $e == "executed another program (/"*"/sleep)" ]] || fail "$ins: execs names no program: $e"
	fi
	expect_no_orphans "$W"

	# valgrind runs at most 500 threads (its --max-threads): under it, fewer,
	# so that the timeout, not valgrind's limit, ends the benchmark.
	threads=threads
	[[ $ins != callgrind ]] || threads=threads_400
	WAYWARD_THREADS=2000 run_bounded run "$W" --instrument "$ins" --timeout 2 \
		--bench ok_before --bench "$threads" --bench churns --bench ok_after --format json
	expect_status 1
	expect_json '[b["status"] for b in d["benchmarks"]] == ["ok", "failed", "failed", "ok"]'
	expect_json 'all(b["error"].startswith("timed out after 2000 ms") for b in d["benchmarks"][1:3])'
	expect_no_orphans "$W"
done

# Past valgrind's limit of threads, its own account says so.
if command -v valgrind >/dev/null; then
	run_bounded run "$W" --instrument callgrind --timeout 120 --bench threads --format json
	expect_status 1
	checks=$((checks + 1))
	[[ $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["benchmarks"][0]["error"])' \
		"$TMP/out") == *"Max number of threads is too low"* ]] ||
		fail "callgrind past 500 threads: valgrind's reason is not reported"
	expect_no_orphans "$W"
fi
done_ok
