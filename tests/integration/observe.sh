#!/usr/bin/env bash
# benchtrap observe against fixtures that know their own call counts:
# recursion, longjmp, --skip, a stripped binary, exit status and crash passed
# through, a pool made before main with four calls at once, a library loaded
# with dlopen, a function whose code changed before main (its row says it
# was not armed), attach and detach of a running process (which keeps running
# with its original code), signals passed on, bad input. Durations are never
# asserted. With the argument 'xz': the call counts of liblzma functions in a
# real xz run against callgrind's count of the same calls.
. "$(dirname "$0")/lib.sh"
OBS=$FIXTURES/observe
RECURSE=$OBS/recurse

# Checks on the results file, one Python start for a block of them (it is
# slow on some machines): each line of stdin is an expression over 'd' that
# must be true.
expect_file_json() {
	expect_json_in "$TMP/obs.json" "$1"
}

if [[ ${1:-} == xz ]]; then
	command -v xz >/dev/null || { echo "SKIP: xz is not installed"; exit 77; }
	command -v valgrind >/dev/null || { echo "SKIP: valgrind is not installed"; exit 77; }
	# A compressible input of a few hundred kB, the same for both runs.
	python3 -c 'import random; random.seed(6); print("\n".join(" ".join(random.choice(["alpha","beta","gamma","delta"]) for _ in range(12)) for _ in range(8000)))' >"$TMP/input.txt"
	# lzma_get_progress has a second, versioned name at its address
	# (lzma_get_progress@XZ_5.2.2): one row, patched once.
	run observe --symbol lzma_code --symbol 'lzma_crc*' --symbol lzma_stream_encoder \
		--symbol 'lzma_get_progress*' --output "$TMP/obs.json" -- xz -T1 -6 -k -f "$TMP/input.txt"
	expect_status 0
	expect_file_json '[b["name"] for b in d["benchmarks"] if b["status"] == "failed" and "another program" not in (b["error"] or "")] == []
	[b["name"] for b in d["benchmarks"] if b["name"].startswith("lzma_get_progress")] == ["lzma_get_progress"]'
	# Every selected function has a row. One that another program's
	# breakpoint sits on (a kernel uprobe on liblzma, set by someone else
	# on this machine, is in every process that maps it) cannot be
	# observed, and its row says so: then there is nothing to compare.
	probed=$(python3 -c 'import json,sys; print("; ".join(b["name"] + ": " + b["error"] for b in json.load(open(sys.argv[1]))["benchmarks"] if b["status"] == "failed" and "another program" in b["error"]))' "$TMP/obs.json")
	[[ -z $probed ]] || { echo "SKIP: $probed"; exit 77; }
	checks=$((checks + 1))
	xz -dc "$TMP/input.txt.xz" | cmp -s - "$TMP/input.txt" || fail "xz's output under observe does not decompress to its input"
	expect_no_orphans "xz -T1 -6 -k -f $TMP/input.txt"
	valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" xz -T1 -6 -c "$TMP/input.txt" \
		>/dev/null 2>"$TMP/vg.err" || fail "valgrind failed: $(tail -3 "$TMP/vg.err")"
	# callgrind's count of calls to FUNC: the calls= lines under cfn=FUNC.
	checks=$((checks + 1))
	python3 - "$TMP/obs.json" "$TMP/cg.out" <<'PY' || fail "call counts differ from callgrind's"
import json, re, sys
obs = {b["name"]: b for b in json.load(open(sys.argv[1]))["benchmarks"]}
names, cur, calls = {}, None, {}
for line in open(sys.argv[2]):
    m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
    if m:
        if m.group(3):
            names[m.group(2)] = m.group(3)
        if m.group(1) == "cfn":
            cur = names.get(m.group(2))
        continue
    if line.startswith("calls=") and cur is not None:
        calls[cur] = calls.get(cur, 0) + int(line[6:].split()[0])
checked = 0
for name in ("lzma_code", "lzma_crc32", "lzma_crc64", "lzma_stream_encoder"):
    if name not in obs:
        continue
    assert obs[name]["status"] != "failed", (name, obs[name]["error"])
    print(f"{name}: observe {obs[name]['calls']}, callgrind {calls.get(name, 0)}")
    assert obs[name]["calls"] == calls.get(name, 0), name
    assert obs[name]["unmatched_returns"] == 0, name
    checked += 1
assert "lzma_code" in obs, "no row for lzma_code"
assert checked >= 2 and obs["lzma_code"]["calls"] > 1
PY
	done_ok
	exit 0
fi

# ---- help and bad input ----------------------------------------------------------
run observe --help
expect_status 0
expect_out '^usage: benchtrap observe'
expect_out 'exit status'
run observe -- "$RECURSE"
expect_usage_error 'which functions\?'
run observe --symbol fib
expect_usage_error 'what to observe\?'
run observe --symbol fib --pid 1 -- "$RECURSE"
expect_usage_error 'either --pid PID or'
run observe --symbol fib --duration soon -- "$RECURSE"
expect_usage_error "--duration wants seconds"
run observe --symbol fib --frobnicate -- "$RECURSE"
expect_usage_error "unknown option '--frobnicate'"
run observe --symbol fib -- "$TMP/no-such-program"
expect_usage_error 'no such file'
run observe --symbol fib -- no-such-command-anywhere
expect_usage_error 'command not found'
run observe --symbol fib --pid 999999999
expect_usage_error "--pid wants a process id|no process"
run observe --symbol fib --pid 4194000
expect_usage_error 'no process 4194000'
# Every bad input is one line, even with a pattern that matches nothing
# (whose error or note must not come before the other error).
NOMATCH=(--symbol fib --symbol no_such_function_anywhere)
cp "$RECURSE" "$TMP/not-executable"
chmod a-x "$TMP/not-executable"
printf 'just text\n' >"$TMP/not-elf"
chmod +x "$TMP/not-elf"
run observe "${NOMATCH[@]}" -- "$TMP/no-such-program"
expect_usage_error 'no such file'
run observe "${NOMATCH[@]}" -- "$TMP"
expect_usage_error 'is a directory'
run observe "${NOMATCH[@]}" -- "$TMP/not-elf"
expect_usage_error 'not an ELF binary'
# A script names its interpreter; a version manager's shim, what to ask.
printf '#!/usr/bin/python3 -u\nprint(1)\n' >"$TMP/script.py"
chmod +x "$TMP/script.py"
run observe "${NOMATCH[@]}" -- "$TMP/script.py" 1
expect_usage_error "script.py is a script \(#!/usr/bin/python3 -u\): observe its interpreter, as in \`benchtrap observe --symbol ... -- /usr/bin/python3 -u $TMP/script.py\`$"
mkdir -p "$TMP/shims"
printf '#!/usr/bin/env bash\nexec python3 "$@"\n' >"$TMP/shims/python3"
chmod +x "$TMP/shims/python3"
run observe "${NOMATCH[@]}" -- "$TMP/shims/python3"
expect_usage_error 'shims/python3 is a shim, a script \(#!/usr/bin/env bash\) that runs another program: observe that one \(`pyenv which python3`, `rbenv which python3`'
run observe --symbol fib -- "$TMP/not-executable"
expect_usage_error 'cannot execute .*not-executable: Permission denied'
run observe "${NOMATCH[@]}" -- no-such-command-anywhere
expect_usage_error 'command not found'
for pid in 0 -1 abc '' 1x 99999999999999999999; do
	run observe "${NOMATCH[@]}" --pid "$pid"
	expect_usage_error "--pid wants a process id, not '$pid'"
done
run observe "${NOMATCH[@]}" --pid 4194000
expect_usage_error 'no process 4194000'
# benchtrap's own process id (the shell's, which execs benchtrap).
sh -c 'exec "$0" observe --symbol fib --pid $$' "$BENCHTRAP" >"$TMP/out" 2>"$TMP/err"
status=$?
out=$(cat "$TMP/out")
err=$(cat "$TMP/err")
expect_usage_error 'is benchtrap itself'
run observe "${NOMATCH[@]}" --duration bad --pid 1
expect_usage_error "--duration wants seconds"
run observe "${NOMATCH[@]}" --no-such-option -- "$RECURSE"
expect_usage_error "unknown option '--no-such-option'"
run observe "${NOMATCH[@]}"
expect_usage_error 'what to observe\?'
run observe "${NOMATCH[@]}" --
expect_usage_error "'--' must be followed by the command"
# A process that exited and was not reaped: no program left to observe.
(sleep 0.1 & exec sleep 30) &
zparent=$!
for _ in $(seq 100); do
	zombie=$(pgrep -P "$zparent" || true)
	[[ -n $zombie && $(awk '{print $3}' "/proc/$zombie/stat" 2>/dev/null) == Z ]] && break
	sleep 0.1
done
run observe "${NOMATCH[@]}" --pid "$zombie"
expect_usage_error "process $zombie runs no program to observe"
kill "$zparent"
wait "$zparent" 2>/dev/null
# A process another tracer holds cannot be traced.
"$OBS/forever" >/dev/null &
victim=$!
wait_exec "$victim" "$OBS/forever"
"$BENCHTRAP" observe --symbol tick --pid "$victim" --duration 30 >/dev/null 2>&1 &
holder=$!
for _ in $(seq 100); do
	[[ $(awk '/^TracerPid:/ {print $2}' "/proc/$victim/status") != 0 ]] && break
	sleep 0.1
done
run observe --symbol tick --pid "$victim" --duration 1
expect_usage_error "not allowed to trace process $victim"
kill -INT "$holder"
wait "$holder" 2>/dev/null
kill "$victim"
wait "$victim" 2>/dev/null

# Attached under --no-patch, the cost of a stop is calibrated as with a
# command (the threads' first stops are ones a call may borrow).
"$OBS/forever" >/dev/null &
victim=$!
wait_exec "$victim" "$OBS/forever"
run observe --no-patch --symbol tick --pid "$victim" --duration 1
kill "$victim"
wait "$victim" 2>/dev/null
expect_status 0
expect_out '^stops removed from every duration: measured per stop'
checks=$((checks + 1))
grep -q 'could not be calibrated' <<<"$out$err" && fail "--pid --no-patch: not calibrated"

# A pattern that matches no function of a program that cannot load a library
# later (no dlopen) is refused before the program starts, as run refuses it,
# with the closest names; one such pattern among good ones is refused too.
run observe --symbol no_such_function_anywhere -- "$RECURSE" 5
expect_usage_error "recurse: no function matches 'no_such_function_anywhere' in it or its libraries"
run observe --symbol fib --symbol fbi -- "$RECURSE" 5
expect_usage_error "recurse: no function matches 'fbi' \(did you mean 'fib'"
# A misspelt function of a library of a stripped binary: its name and its
# library first (xz's functions are liblzma's).
run observe --symbol lzma_coode -- xz --version
expect_usage_error "xz: no function matches 'lzma_coode' \(did you mean 'lzma_code' \(liblzma.so.5\)\?\); if it is the binary's own, the binary is stripped"
run observe --symbol fib --skip 'slow_stup*' -- "$RECURSE" 5
expect_usage_error "recurse: no function matches 'slow_stup\*' \(did you mean 'slow_setup'"
# Attached: refused before the process is stopped; it runs on, untraced.
"$OBS/forever" >/dev/null &
victim=$!
wait_exec "$victim" "$OBS/forever"
run observe --symbol fbi --pid "$victim" --duration 1
expect_usage_error "forever: no function matches 'fbi'"
checks=$((checks + 1))
[[ $(awk '/^TracerPid:/ {print $2}' "/proc/$victim/status") == 0 &&
	$(awk '{print $3}' "/proc/$victim/stat") != [tT] ]] ||
	fail "the process was stopped or left traced after a refused pattern"
kill "$victim"
wait "$victim" 2>/dev/null

# ---- counts: exact whatever the ring kept ---------------------------------------------
# 3,000,000 calls of a few ns fill the agent's ring faster than it may be
# read; the count is the agent's own, and what was timed is said apart.
run observe --symbol flood_tiny --output "$TMP/obs.json" -- "$FIXTURES/observe/flood" 3000000
expect_status 0
expect_file_json '[(b["calls"], b["bounded_by"]) for b in d["benchmarks"]] == [(3000000, "patch")]
0 < d["benchmarks"][0]["timed_calls"] <= 3000000
len(d["benchmarks"][0]["raw_samples"]) == d["benchmarks"][0]["timed_calls"]'

# ---- recursion, longjmp, the program's output and status -----------------------------
run observe --symbol fib --symbol bail_out --output "$TMP/obs.json" -- "$RECURSE" 10 3
expect_status 3
expect_out '^fib\(10\) = 55$'
expect_out '^jumps 3$'
expect_err '^fib +177 '
expect_file_json 'd["schema"] == "benchtrap-results/1" and d["run"]["instrument"] == "observe"
d["run"]["end"] == "exited" and d["run"]["exit_code"] == 3
{b["name"]: b["calls"] for b in d["benchmarks"]} == {"fib": 177, "bail_out": 0}
{b["name"]: b["unmatched_returns"] for b in d["benchmarks"]} == {"fib": 0, "bail_out": 3}
all(b["instrument"] == "observe" and b["unit"] == "ns" for b in d["benchmarks"])
{b["name"]: b["status"] for b in d["benchmarks"]} == {"fib": "ok", "bail_out": "no_calls"}
d["benchmarks"][0]["value"] == d["benchmarks"][0]["stats"]["median"] and d["benchmarks"][0]["stats"]["samples"] == 177
sum(h["count"] for h in d["benchmarks"][0]["histogram"]) == 177
all(h["lt_ns"] == 2 * max(h["ge_ns"], 1) for h in d["benchmarks"][0]["histogram"])
d["benchmarks"][0]["parallel_rounds"]["count"] == 0
(lambda c: c["patched_calls"] == 200 and c["overhead_p10_ns"] <= c["overhead_ns"] <= c["overhead_p90_ns"] and c["overhead_uncertainty_ns"] > 0)(d["run"]["calibration"])
[b["bounded_by"] for b in d["benchmarks"]] == ["patch", "patch"]
(lambda s: s["min"] <= s["q1"] <= s["median"] <= s["q3"] <= s["max"] and s["uncertainty"] > 0)(d["benchmarks"][0]["stats"])'
expect_no_orphans "$RECURSE"

# The same by breakpoints (--no-patch): the same counts, the stops'
# calibration instead of the agent's.
run observe --no-patch --symbol fib --symbol bail_out --output "$TMP/obs.json" -- "$RECURSE" 10 3
expect_status 3
expect_file_json '{b["name"]: (b["calls"], b["unmatched_returns"], b["bounded_by"]) for b in d["benchmarks"]} == {"fib": (177, 0, "breakpoints"), "bail_out": (0, 3, "breakpoints")}
d["run"]["calibration"]["calls"] == 200 and d["run"]["calibration"]["latency_p10_ns"] <= d["run"]["calibration"]["latency_ns"] <= d["run"]["calibration"]["latency_p90_ns"]
"patched_calls" not in d["run"]["calibration"]'

# A thread that exits inside an observed call: unmatched, nothing hangs.
run observe --symbol thread_quits --symbol fib --output "$TMP/obs.json" -- "$RECURSE" 3
expect_status 0
expect_file_json '{b["name"]: (b["calls"], b["unmatched_returns"]) for b in d["benchmarks"]} == {"fib": (5, 0), "thread_quits": (0, 1)}'

# C++: demangled names, an exception thrown through an observed function:
# no return, patched and under --no-patch alike.
if [[ -x $OBS/throw ]]; then
	for mode in patched --no-patch; do
		flag=()
		[[ $mode == patched ]] || flag=(--no-patch)
		run observe "${flag[@]}" --symbol 'ns::thrower' --symbol '*ns::value<int>*' \
			--output "$TMP/obs.json" -- "$OBS/throw"
		expect_status 0
		expect_out '^caught 5$'
		expect_file_json '{b["name"]: (b["calls"], b["unmatched_returns"]) for b in d["benchmarks"]} == {"ns::thrower(int)": (0, 5), "int ns::value<int>(int)": (5, 0)}
		[b["symbol"] for b in d["benchmarks"]] == ["_ZN2ns7throwerEi", "_ZN2ns5valueIiEET_S1_"]'
	done
fi

# --format json: the results document on stdout, as run's, after the
# program's own output; the table's stream, stderr, has none of it.
run observe --symbol fib --format json -- "$RECURSE" 4
expect_status 0
expect_out '^fib\(4\) = 3$'
checks=$((checks + 1))
python3 -c 'import json,sys
s = sys.stdin.read()
d = json.loads(s[s.index("\n{\n") + 1:])
assert s.startswith("fib(4) = 3\n")
assert d["schema"] == "benchtrap-results/1" and d["benchmarks"][0]["calls"] == 9' <<<"$out" ||
	fail "stdout does not hold the program's output, then the results document with fib(4)'s 9 calls"
checks=$((checks + 1))
! grep -q '"schema"' <<<"$err" || fail "the results document went to stderr"

# ---- observe files in compare and export ------------------------------------------------
# Two observations of one build, with every kind of row: timed (fib,
# slow_setup), no call returned (bail_out: three longjmps), skipped
# (crash_now, never reached). Each file is a results file (docs/results.md).
OBSARGS=(--symbol fib --symbol slow_setup --symbol bail_out --skip crash_now)
run observe "${OBSARGS[@]}" --output "$TMP/oa.json" -- "$RECURSE" 10
expect_status 0
run observe "${OBSARGS[@]}" --output "$TMP/ob.json" -- "$RECURSE" 10
expect_status 0
cp "$TMP/oa.json" "$TMP/obs.json"
expect_file_json '{b["name"]: b["status"] for b in d["benchmarks"]} == {"fib": "ok", "slow_setup": "ok", "bail_out": "no_calls", "crash_now": "skipped"}
[(b["value"], b["stats"], b["raw_samples"]) for b in d["benchmarks"] if b["status"] != "ok"] == [(None, None, [])] * 2
any(x.startswith("no call returned: 3 calls left it otherwise") for b in d["benchmarks"] if b["name"] == "bail_out" for x in b["diagnostics"])
any(x.startswith("skipped (--skip)") for b in d["benchmarks"] if b["name"] == "crash_now" for x in b["diagnostics"])
all(isinstance(b["no_time"], bool) for b in d["benchmarks"])
d["benchmarks"][0]["name"] == "fib"
(lambda b: len(b["raw_samples"]) == b["stats"]["samples"] == b["calls"] == 177 and b["stats"]["iterations_per_sample"] == 1)(d["benchmarks"][0])
(lambda s: s["stddev"] >= 0 and s["ci_low"] <= s["median"] <= s["ci_high"] and s["confidence"] == 0.95)(d["benchmarks"][0]["stats"])
sorted(d["benchmarks"][0]["raw_samples"])[88] == d["benchmarks"][0]["stats"]["median"]'
# compare: one verdict per observed function. The same build with the same
# arguments, so no change can fail the gate (exit 0 whatever the noise made
# of fib's and slow_setup's); the rows without a figure are unchanged.
run compare "$TMP/oa.json" "$TMP/ob.json" --format json
expect_status 0
expect_json 'd["same_build"] is True and d["gate"] == "pass" and d["summary"]["counts"]["failed"] == 0'
expect_json 'sorted(b["name"] for b in d["benchmarks"]) == ["bail_out", "crash_now", "fib", "slow_setup"]'
expect_json 'all(b["instrument"] == "observe" and b["unit"] == "ns" for b in d["benchmarks"])'
expect_json '{b["name"]: (b["verdict"], b["note"]) for b in d["benchmarks"] if b["name"] in ("bail_out", "crash_now")} == {"bail_out": ("unchanged", "no figure in base nor head"), "crash_now": ("unchanged", "no figure in base nor head")}'
expect_json 'all(b["verdict"] in ("regressed", "improved", "unchanged", "inconclusive") for b in d["benchmarks"])'
run compare "$TMP/oa.json" "$TMP/ob.json"
expect_status 0
expect_out '^bail_out +no calls +no calls +- +- +unchanged +no figure in base nor head$'
expect_out '^crash_now +skipped +skipped +- +- +unchanged'
run compare "$TMP/oa.json" "$TMP/ob.json" --format markdown
expect_status 0
expect_out '^### benchtrap: '
# Functions in both files without a figure to compare (no call returned,
# skipped): the headline says no change could be judged, not that no
# function was measured in both.
run observe --symbol bail_out --skip crash_now --output "$TMP/od.json" -- "$RECURSE" 10
expect_status 0
run observe --symbol bail_out --skip crash_now --output "$TMP/oe.json" -- "$RECURSE" 10
expect_status 0
run compare "$TMP/od.json" "$TMP/oe.json"
expect_status 0
expect_out '^no change could be judged in the 2 benchmarks found in both base and head'
expect_no_out 'no benchmark was measured in both'
expect_out '^bail_out +no calls +no calls'
run compare "$TMP/od.json" "$TMP/oe.json" --format json
expect_status 0
expect_json 'd["summary"]["sentence"].startswith("no change could be judged in the 2 benchmarks")'
# slow_setup timed in base and skipped in head, or the other way round: by
# its status, not by noise.
run observe --symbol fib --skip slow_setup --symbol bail_out --skip crash_now --output "$TMP/oc.json" -- "$RECURSE" 10
expect_status 0
run compare "$TMP/oa.json" "$TMP/oc.json" --format json
expect_status 0
expect_json '[(b["verdict"], b["note"], b["base"] is None, b["head"] is None, b["base_status"], b["head_status"]) for b in d["benchmarks"] if b["name"] == "slow_setup"] == [("missing", "skipped in head", False, True, "ok", "skipped")]'
expect_json '{b["name"]: (b["base_status"], b["head_status"]) for b in d["benchmarks"] if b["name"] != "fib"} == {"slow_setup": ("ok", "skipped"), "bail_out": ("no_calls", "no_calls"), "crash_now": ("skipped", "skipped")}'
run compare "$TMP/oc.json" "$TMP/oa.json" --format json
expect_status 0
expect_json '[(b["verdict"], b["note"]) for b in d["benchmarks"] if b["name"] == "slow_setup"] == [("new", "skipped in base")]'
# export: each format is valid and holds the timed functions alone, less
# those observe calls unresolved ("no_time": fib's call may be shorter than
# observe resolves), left out of every format alike and counted on stderr.
timed=$(python3 -c 'import json,sys; print(json.dumps(sorted(b["name"] for b in json.load(open(sys.argv[1]))["benchmarks"] if b["status"] == "ok" and not b["no_time"])))' "$TMP/oa.json")
unresolved=$(python3 -c 'import json,sys; print(sum(b["status"] == "ok" and b["no_time"] for b in json.load(open(sys.argv[1]))["benchmarks"]))' "$TMP/oa.json")
# Which are resolved is the machine's doing (slow_setup's single 0.7 ms call
# is too, when a loaded host makes the stops' calibration spread wide):
# the exports are checked against the file, whatever it holds.
run export "$TMP/oa.json" --format bmf
expect_status 0
expect_json 'sorted(d) == '"$timed"' and all(isinstance(v["latency"]["value"], (int, float)) and v["latency"]["lower_value"] <= v["latency"]["value"] <= v["latency"]["upper_value"] for v in d.values())'
if ((unresolved)); then
	expect_err "^benchtrap: export: $unresolved benchmarks? that measured no time left out"
else
	[[ -z $err ]] || fail "export wrote to stderr: $err"
fi
run export "$TMP/oa.json" --format gbench
expect_status 0
expect_json 'sorted(d) == ["benchmarks", "context"] and sorted({b["run_name"] for b in d["benchmarks"]}) == '"$timed"
# One iteration row per function (its median call) and aggregates over its
# 177 calls, as Google Benchmark writes 177 repetitions: repetitions 177 on
# every row, and on the aggregates iterations 177, the runs they are over.
expect_json '[b["real_time"] for b in d["benchmarks"] if b["run_name"] == "slow_setup" and b["run_type"] == "iteration"] == [f["value"] for f in json.load(open("'"$TMP/oa.json"'"))["benchmarks"] if f["name"] == "slow_setup" and not f["no_time"]] and not any("error_occurred" in b for b in d["benchmarks"])'
expect_json '{(b["repetitions"], b["iterations"]) for b in d["benchmarks"] if b["run_name"] == "fib" and b["run_type"] == "aggregate"} <= {(177, 177)}'
expect_json 'all(b["time_unit"] == "ns" and b["iterations"] == 1 and isinstance(b["real_time"], (int, float)) for b in d["benchmarks"] if b["run_type"] == "iteration")'
run export "$TMP/oa.json" --format gab
expect_status 0
expect_json 'sorted(b["name"] for b in d) == '"$timed"' and all(b["unit"] == "ns" and isinstance(b["value"], (int, float)) and b["extra"].startswith("observe: median of ") for b in d)'
# A file of run and a file of observe: one line, exit 2, either way round.
python3 "$SOURCE_ROOT/tests/fixtures/ci/make_results.py" "$TMP/run.json" fib=1000~5
run compare "$TMP/run.json" "$TMP/oa.json"
expect_usage_error "compare: .*oa.json holds calls observed by .benchtrap observe. and .*run.json benchmarks of .benchtrap run.: their times are not alike \(compare two observe files, or two run files\)"
run compare "$TMP/oa.json" "$TMP/run.json" --format json
expect_usage_error "oa.json holds calls observed by"
# Still refused: a row with no figure that says "ok" (what observe wrote
# before the statuses), a status no reader knows.
python3 - "$TMP/oa.json" "$TMP/bad.json" "$TMP/bad2.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
b = [b for b in d["benchmarks"] if b["name"] == "bail_out"][0]
b["status"] = "ok"
json.dump(d, open(sys.argv[2], "w"))
b["status"] = "vanished"
json.dump(d, open(sys.argv[3], "w"))
PY
run compare "$TMP/bad.json" "$TMP/ob.json"
expect_usage_error 'bad.json: benchmarks\[[0-9]\].value: null, but status is "ok"'
for fmt in bmf gbench gab; do
	run export "$TMP/bad.json" --format "$fmt"
	expect_usage_error 'bad.json: benchmarks\[[0-9]\].value: null, but status is "ok"'
done
run export "$TMP/bad2.json" --format bmf
expect_usage_error 'bad2.json: benchmarks\[[0-9]\].status: expected "ok", "failed", "skipped" or "no_calls", not "vanished"'

# ---- --skip on a stripped binary (functions from .dynsym) -------------------------------
run observe --symbol fib --skip slow_setup --output "$TMP/obs.json" -- "$OBS/recurse_stripped" 5
expect_status 0
expect_out '^setup 0$'
expect_out '^fib\(5\) = 5$'
expect_file_json '{b["name"]: (b["calls"], b["skipped"]) for b in d["benchmarks"]} == {"fib": (15, False), "slow_setup": (1, True)}
[b["value"] for b in d["benchmarks"] if b["skipped"]] == [None]'

# ---- a crash is reported, its signal passed on --------------------------------------------
run observe --symbol fib -- "$RECURSE" 3 0 crash
expect_status 139
expect_err 'killed by SIGSEGV'
expect_err 'crash_now'
expect_err '^fib +5 '
expect_no_orphans "$RECURSE"

# ---- threads: a pool made before main, four calls at once, exact counts -------------------
run observe --symbol work --output "$TMP/obs.json" -- "$OBS/pool" 25
expect_status 0
expect_out '^work calls 100$'
expect_file_json 'd["benchmarks"][0]["calls"] == 100 and d["benchmarks"][0]["unmatched_returns"] == 0
d["benchmarks"][0]["parallel_rounds"]["count"] == 25 and d["benchmarks"][0]["parallel_rounds"]["max_threads"] == 4
(lambda r: r["min"] <= r["median"] <= r["max"])(d["benchmarks"][0]["parallel_rounds"])'
expect_no_orphans "$OBS/pool"

# ---- a library loaded with dlopen after main --------------------------------------------------
run observe --symbol 'plugin_*' --output "$TMP/obs.json" -- "$OBS/dlopen" "$OBS/libobserve_plugin.so" 7
expect_status 0
expect_out '^plugin_run\(7\) = 70$'
expect_err "note: no function of .* matches 'plugin_\*'; it is armed if a library loaded later"
expect_file_json '{b["name"]: b["calls"] for b in d["benchmarks"]} == {"plugin_step": 7, "plugin_run": 1}
all(b["object"].endswith("libobserve_plugin.so") for b in d["benchmarks"])'
run observe --symbol 'no_such_function_*' -- "$OBS/dlopen" "$OBS/libobserve_plugin.so" 2
expect_status 0
expect_err "no function matched 'no_such_function_\*' in the program or the libraries it loaded"

# ---- a function whose code changed before main keeps its row ---------------------------------
# patched()'s entry is rewritten by a constructor (as a live patch, or a
# kernel uprobe that another program set, changes code): it cannot be
# armed, and its row says so instead of missing from the table and the file.
"$OBS/patched" >/dev/null
alone=$?
if ((alone == 4)); then
	echo "note: patched skipped: this system does not let a program make its code writable"
elif ((alone != 0)); then
	fail "the patched fixture exits $alone on its own"
else
	run observe --symbol patched --symbol plain --output "$TMP/obs.json" -- "$OBS/patched"
	expect_status 0
	expect_out '^105$'
	expect_err '^patched +\? +not armed '
	expect_err '^plain +7 '
	expect_err 'note: patched in .*patched was not armed: its code in memory differs from the file'
	expect_file_json 'sorted(b["name"] for b in d["benchmarks"]) == ["patched", "plain"]
[b["calls"] for b in d["benchmarks"] if b["name"] == "plain"] == [7]
(lambda b: b["status"] == "failed" and b["value"] is None and b["stats"] is None and b["calls"] == 0)([b for b in d["benchmarks"] if b["name"] == "patched"][0])
(lambda b: "not armed" in b["error"] and "differs from the file" in b["error"] and b["diagnostics"] == [b["error"]])([b for b in d["benchmarks"] if b["name"] == "patched"][0])'
	# A failed row in an observe file reads back: compare says it failed.
	run compare "$TMP/obs.json" "$TMP/obs.json" --format json
	expect_json '[b["verdict"] for b in d["benchmarks"] if b["name"] == "patched"] == ["failed"]'
	expect_no_orphans "$OBS/patched"
fi

# ---- a signal sent to benchtrap reaches the program ---------------------------------------------
"$BENCHTRAP" observe --symbol tick -- "$OBS/forever" >"$TMP/fw.out" 2>"$TMP/fw.err" &
bt=$!
for _ in $(seq 100); do
	pgrep -f -- "$OBS/forever" | grep -qv "^$bt\$" && break
	sleep 0.05
done
sleep 0.3
kill -TERM "$bt"
wait "$bt"
status=$?
err=$(cat "$TMP/fw.err")
expect_status 143
expect_err 'killed by SIGTERM'
expect_err '^tick +[0-9]+ '
expect_no_orphans "$OBS/forever"

# --duration with a command: observing stops, the program runs on to its end.
"$BENCHTRAP" observe --symbol tick --duration 0.3 --output "$TMP/obs.json" -- "$OBS/forever" >"$TMP/fw.out" 2>"$TMP/fw.err" &
bt=$!
sleep 1
kill -TERM "$bt"
wait "$bt"
status=$?
err=$(cat "$TMP/fw.err")
expect_status 143
expect_file_json 'd["run"]["end"] == "killed" and d["run"]["signal"] == "TERM" and d["run"]["duration_s"] == 0.3
d["benchmarks"][0]["calls"] > 0 and d["run"]["observed_s"] > 0'
expect_no_orphans "$OBS/forever"

# ---- attach to a running process, detach, and it runs on with its own code -----------------------
"$OBS/forever" "$TMP/progress" &
target=$!
trap 'if main_shell; then kill -9 $target 2>/dev/null; rm -rf "$TMP"; fi' EXIT
for _ in $(seq 100); do
	[[ -s $TMP/progress ]] && break
	sleep 0.05
done
run observe --symbol tick --pid "$target" --duration 0.5 --output "$TMP/obs.json"
expect_status 0
expect_out '^tick +[0-9]+ '
expect_out "detached from $target: [0-9]+ code bytes at breakpoint addresses compared with the files, 0 differ"
# A call open at the moment of detaching is said, not counted.
expect_file_json 'd["run"]["attached"] is True and d["run"]["end"] == "detached" and d["run"]["pid"] == '"$target"'
d["benchmarks"][0]["calls"] > 0 and d["run"]["restored"]["mismatches"] == 0 and d["run"]["restored"]["bytes_checked"] > 0
all("still running when observing ended" in x for x in d["run"]["diagnostics"])'
checks=$((checks + 1))
kill -0 "$target" 2>/dev/null || fail "the attached process died"
checks=$((checks + 1))
[[ $(awk '/^TracerPid/ {print $2}' "/proc/$target/status") == 0 ]] || fail "the process is still traced"
# Still running: its progress file moves on.
before=$(cat "$TMP/progress")
for _ in $(seq 100); do
	[[ $(cat "$TMP/progress") != "$before" ]] && break
	sleep 0.05
done
checks=$((checks + 1))
[[ $(cat "$TMP/progress") != "$before" ]] || fail "the process stopped making progress after detach"
# Its code is the files' code: every executable file mapping, byte for byte.
checks=$((checks + 1))
python3 "$(dirname "$0")/code_is_files.py" "$target" ||
	fail "code in memory differs from the files after detach"
# Ctrl-C ends observing the same way.
"$BENCHTRAP" observe --symbol tick --pid "$target" --output "$TMP/obs.json" >"$TMP/int.out" 2>"$TMP/int.err" &
bt=$!
sleep 0.6
kill -INT "$bt"
wait "$bt"
status=$?
expect_status 0
expect_file_json 'd["run"]["end"] == "detached" and d["run"]["restored"]["mismatches"] == 0'
checks=$((checks + 1))
kill -0 "$target" 2>/dev/null || fail "the attached process died after Ctrl-C"
kill -9 "$target"
wait "$target" 2>/dev/null

# ---- a patched call changes no register its function does not ------------------------
run observe --symbol keep_leaf --output "$TMP/obs.json" -- "$OBS/keepregs"
expect_status 0
expect_out '^registers kept$'
# keep_leaf is a few ns: when its calls are shorter than observe resolves
# (the document says whether), the row shows no median and no mean either
# (the noise's too), only MIN, MAX and the ±; else all five.
checks=$((checks + 1))
python3 - "$TMP/obs.json" "$err" <<'PY' || fail "the row of keep_leaf does not match its document"
import json, re, sys
b = json.load(open(sys.argv[1]))["benchmarks"][0]
row = next(l for l in sys.argv[2].splitlines() if l.startswith("keep_leaf "))
durations = re.findall(r"[0-9.]+ (?:ns|µs|ms|s)\b", row)
if b["no_time"]:
    assert " unresolved " in row and len(durations) == 3, row
else:
    assert " unresolved " not in row and len(durations) == 5, row
PY
expect_file_json 'd["benchmarks"][0]["calls"] == 10 and d["benchmarks"][0]["bounded_by"] == "patch"'

# ---- more threads than shadow stacks, and calls left by longjmp ---------------------------
# The counts the fixture knows, patched and by breakpoints alike; no note
# of a call not timed.
for how in patch breakpoints; do
	extra=()
	[[ $how == breakpoints ]] && extra=(--no-patch)
	run observe "${extra[@]}" --symbol churn_fn --symbol jumper --symbol outer_fn \
		--output "$TMP/obs.json" -- "$OBS/churn"
	expect_status 0
	expect_out '^churn: 600 threads, 500 jumps$'
	expect_file_json '{b["name"]: (b["calls"], b["unmatched_returns"], b["bounded_by"]) for b in d["benchmarks"]} == {"churn_fn": (1200, 0, "'$how'"), "jumper": (0, 500, "'$how'"), "outer_fn": (0, 500, "'$how'")}
not [x for x in d["run"]["diagnostics"] if "not timed" in x or "lost" in x]'
done

# ---- patched calls on four threads: detach, and benchtrap killed -------------------------
# Four threads nearly always inside work(): at the detach, and when
# benchtrap is killed (SIGKILL, nothing restored), calls are open whose
# return addresses lead through the agent. Either way the program finishes
# with its own output.
for how in detach kill; do
	rm -f "$TMP/b4.started"
	("$OBS/busy4" "$TMP/b4.started" >"$TMP/b4.out"; echo "status $?" >>"$TMP/b4.out") &
	b4=$!
	for _ in $(seq 200); do
		[[ -e $TMP/b4.started ]] && break
		sleep 0.02
	done
	pid=$(pgrep -f -- "$OBS/busy4 $TMP/b4.started" | head -1)
	if [[ $how == detach ]]; then
		run observe --symbol work --pid "$pid" --duration 0.4 --output "$TMP/obs.json"
		expect_status 0
		expect_file_json 'd["run"]["end"] == "detached" and d["benchmarks"][0]["bounded_by"] == "patch" and d["benchmarks"][0]["calls"] > 0'
	else
		"$BENCHTRAP" observe --symbol work --pid "$pid" >/dev/null 2>&1 &
		bt=$!
		sleep 0.4
		kill -9 "$bt"
		wait "$bt" 2>/dev/null
	fi
	wait "$b4"
	checks=$((checks + 1))
	grep -qx 'busy4 done: 2400 calls' "$TMP/b4.out" && grep -qx 'status 0' "$TMP/b4.out" ||
		fail "after benchtrap's $how the program did not finish on its own: $(cat "$TMP/b4.out")"
done

# ---- threads that come and go: detach and benchtrap's end ---------------------------------
# Rounds of 8 threads created and joined while observed (rounds.c); at the
# end of --duration, and when benchtrap gets SIGINT, SIGTERM or SIGKILL, the
# program finishes with all its calls. (A calibration injected into a thread
# stopped in the middle of clone3 once put it back unreturned: glibc read
# -ENOSYS and made the thread twice, and the program exited 0 early with no
# output. benches/detach_trials.py runs 50 such trials.)
ROUNDS=$OBS/rounds
for how in duration INT TERM KILL; do
	rm -f "$TMP/rounds.started"
	("$ROUNDS" "$TMP/rounds.started" 1500 8 2000 >"$TMP/rounds.out"
	 echo "status $?" >>"$TMP/rounds.out") &
	rp=$!
	for _ in $(seq 400); do
		[[ -e $TMP/rounds.started ]] && break
		sleep 0.01
	done
	pid=$(pgrep -f -- "$ROUNDS $TMP/rounds.started" | head -1)
	if [[ $how == duration ]]; then
		run observe --symbol 'obs_*' --pid "$pid" --duration 0.5 --output "$TMP/rounds.json"
		expect_status 0
	else
		"$BENCHTRAP" observe --symbol 'obs_*' --pid "$pid" >/dev/null 2>&1 &
		bt=$!
		sleep 0.5
		kill -s "$how" "$bt"
		wait "$bt" 2>/dev/null
	fi
	wait "$rp"
	checks=$((checks + 1))
	grep -qx 'rounds done: 24000000 calls' "$TMP/rounds.out" && grep -qx 'status 0' "$TMP/rounds.out" ||
		fail "threads coming and going, $how: the program did not finish whole: $(cat "$TMP/rounds.out")"
done

# ---- a signal storm under --no-patch: still stoppable ----------------------------------------
# SIGALRM every 200 µs (storm.c, which would run 120 s): each signal is a
# stop. SIGINT, SIGTERM and SIGKILL of benchtrap end everything well before
# the program would end on its own. (A signal that came while a thread was
# stepped over a breakpoint was sent again at once, stopped the step again,
# and the step never ran: benchtrap spun, deaf to every signal.)
STORM=$OBS/storm
for sig in INT TERM KILL; do
	"$BENCHTRAP" observe --no-patch --symbol storm_work --output "$TMP/storm.json" \
		-- "$STORM" 120 >/dev/null 2>&1 &
	bt=$!
	wait_exec "$bt" "$BENCHTRAP"
	for _ in $(seq 400); do
		[[ -n $(fixture_procs "$STORM") ]] && break
		sleep 0.01
	done
	sleep 1
	kill -s "$sig" "$bt"
	checks=$((checks + 1))
	# Once both are gone, they are: benchtrap's worker may still be
	# exiting (fixture_procs leaves it out).
	gone=false
	for _ in $(seq 600); do
		[[ -z $(fixture_procs "$STORM") ]] && ! kill -0 "$bt" 2>/dev/null && gone=true && break
		sleep 0.05
	done
	$gone || fail "signal storm, SIG$sig: benchtrap or the program still runs 30 s later: $(
		ps -o pid,ppid,stat,args -p "$(echo "$bt" $(fixture_procs "$STORM") | tr ' ' ,)")"
	wait "$bt" 2>/dev/null
done

# ---- more functions than the agent can patch -------------------------------------------------
# 8,300 selected: 8,191 patched, the rest timed by breakpoints, said in one
# note; the calibration of a patched call keeps its own place; every call
# counted (86).
run observe --symbol 'many_*' --output "$TMP/obs.json" -- "$OBS/many"
expect_status 0
expect_out '^many: '
expect_err '^note: 109 functions timed by breakpoints, not patched: beyond the 8,191 functions the agent can patch \(select fewer to patch them all\) \(many_8191, many_8192, many_8193, and 106 more\)$'
expect_err '^patched calls: the agent'
checks=$((checks + 1))
grep -q 'could not be calibrated' <<<"$err" && fail "the patched calibration found no place"
expect_file_json 'len(d["benchmarks"]) == 8300 and sum(b["calls"] for b in d["benchmarks"]) == 86 and sum(b["bounded_by"] == "patch" for b in d["benchmarks"]) == 8191'

# ---- coroutines: ucontext switches inside observed calls ----------------------------------
# Two coroutines on stacks 16 MiB apart, each call of co_step switching to
# the other inside it: 200 calls, all returned, patched and --no-patch.
for mode in patched --no-patch; do
	flag=()
	[[ $mode == patched ]] || flag=(--no-patch)
	run observe "${flag[@]}" --symbol co_step --output "$TMP/obs.json" -- "$OBS/coro"
	expect_status 0
	expect_out '^coro done: 200 steps$'
	expect_file_json '[(b["calls"], b["unmatched_returns"]) for b in d["benchmarks"]] == [(200, 0)]'
done

# Children started by fork, vfork, posix_spawn and system(), 5 of each:
# every one exits 0, patched and under --no-patch, the functions they run
# before exec selected or every function of the binary (a vfork child shares
# the memory: it must meet no trap). --no-patch counts the parent's calls
# alone; patched, the agent in the shared memory counts the vfork child's
# too.
SPAWN=$OBS/spawn
for mode in patched --no-patch; do
	flag=()
	[[ $mode == patched ]] || flag=(--no-patch)
	for sym in 'spawn_*' '*'; do
		run observe "${flag[@]}" --symbol "$sym" --output "$TMP/spawn.json" -- "$SPAWN" 5
		expect_status 0
		expect_out '^spawn: ok$'
	done
	python3 - "$TMP/spawn.json" "$mode" <<'PY' || fail "spawn, $mode: counts"
import json, sys
d = {b["name"]: b for b in json.load(open(sys.argv[1]))["benchmarks"]}
want = 20 if sys.argv[2] == "--no-patch" else 25
got = d["spawn_work"]["calls"]
assert got == want, "spawn_work: %s calls, not %d" % (got, want)
PY
	checks=$((checks + 1))
done

done_ok
