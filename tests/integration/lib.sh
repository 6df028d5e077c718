# Shared by the integration tests: run the real benchtrap, check what it did.
# A test sources this file, calls `run ARGS...`, then asserts on $status,
# $out (stdout) and $err (stderr). A failed check prints why and exits 1.
set -uo pipefail

: "${BENCHTRAP:?BENCHTRAP must name the benchtrap binary}"
TMP=$(mktemp -d /tmp/benchtrap-test.XXXXXX)
# True in the test's own shell, false in a subshell of it: only that shell
# cleans up on exit (a subshell that ends by a signal must not take $TMP
# with it while the test goes on).
main_shell() {
	[[ $BASHPID == "$$" ]]
}
trap 'if main_shell; then rm -rf "$TMP"; fi' EXIT
checks=0

run() {
	"$BENCHTRAP" "$@" >"$TMP/out" 2>"$TMP/err"
	status=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
}

fail() {
	echo "FAIL: $*" >&2
	echo "--- command status: ${status:-?}" >&2
	echo "--- stdout:" >&2
	printf '%s\n' "${out:-}" | head -40 >&2
	echo "--- stderr:" >&2
	printf '%s\n' "${err:-}" | head -20 >&2
	exit 1
}

expect_status() {
	checks=$((checks + 1))
	[[ $status -eq $1 ]] || fail "expected exit status $1, got $status"
}

expect_out() {
	checks=$((checks + 1))
	grep -qE -- "$1" <<<"$out" || fail "stdout does not match /$1/"
}

expect_no_out() {
	checks=$((checks + 1))
	! grep -qE -- "$1" <<<"$out" || fail "stdout matches /$1/ but must not"
}

expect_err() {
	checks=$((checks + 1))
	grep -qE -- "$1" <<<"$err" || fail "stderr does not match /$1/"
}

# Bad input: exit 2, nothing on stdout, exactly one line on stderr that
# matches $1.
expect_usage_error() {
	expect_status 2
	checks=$((checks + 1))
	[[ -z $out ]] || fail "expected no stdout on bad input"
	[[ $(printf '%s\n' "$err" | wc -l) -eq 1 ]] || fail "expected exactly one line on stderr"
	[[ $err == benchtrap:* ]] || fail "the error line must start with 'benchtrap:'"
	expect_err "$1"
}

# The JSON file $1: each line of $2 a Python expression over it (bound to
# 'd') that must be true, one Python start for a block of them (it is slow
# on some machines).
expect_json_in() {
	local n
	n=$(grep -c . <<<"$2")
	checks=$((checks + n))
	python3 - "$1" "$2" <<'PY' || fail "JSON check of $1 failed (above)"
import json, sys
d = json.load(open(sys.argv[1]))
for line in sys.argv[2].splitlines():
    if line.strip() and not eval(line):
        sys.exit("false: " + line)
PY
}

# JSON on stdout: check it parses and run a Python expression over it
# (bound to 'd', over as many lines as it takes) that must be true.
expect_json() {
	checks=$((checks + 1))
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$TMP/out" "$1" || fail "JSON check failed: $1"
}

# Temporary directories to a $TMPDIR of this test's own (own_tmpdir), so
# that another test's cannot be taken for one left behind; temp_dirs
# those of benchtrap's there, and expect_no_temp_dirs none left (within 5 s).
own_tmpdir() {
	export TMPDIR=$TMP/tmp
	mkdir -p "$TMPDIR"
}
temp_dirs() {
	ls -d "$TMPDIR"/benchtrap-* 2>/dev/null | sort
}
expect_no_temp_dirs() {
	checks=$((checks + 1))
	for _ in $(seq 100); do
		[[ -z $(temp_dirs) ]] && return
		sleep 0.05
	done
	fail "temporary directories left: $(temp_dirs) $(find "$TMPDIR" | head -5)"
}

# Process $1 ends within 60 s (its exit status in $status), or the test
# fails for $2: never a hung suite.
wait_bounded() {
	for _ in $(seq 1200); do
		kill -0 "$1" 2>/dev/null || { wait "$1" 2>/dev/null; status=$?; return 0; }
		sleep 0.05
	done
	# What it was doing, for the log: its processes, their states and
	# signal masks, and what it wrote so far.
	{
		echo "--- processes under $1:"
		ps -o pid,ppid,stat,wchan:24,args --forest -g "$(ps -o sid= -p "$1" | tr -d ' ')" 2>/dev/null
		for p in $1 $(pgrep -P "$1") $(pgrep -P "$(pgrep -P "$1" | head -1)" 2>/dev/null); do
			echo "--- /proc/$p/status:"
			grep -E '^(Name|State|TracerPid|SigPnd|ShdPnd|SigBlk|SigIgn|SigCgt)' "/proc/$p/status" 2>/dev/null
		done
		echo "--- its stderr so far:"
		head -c 2000 "$TMP/err" 2>/dev/null
	} >&2
	fail "$2: benchtrap did not end"
}

# Wait until process $1 runs the program $2: a job started with & is a copy
# of the shell until it has executed the program, and on a loaded machine
# that can take a while.
wait_exec() {
	local want
	want=$(readlink -f "$2")
	for _ in $(seq 600); do
		[[ $(readlink "/proc/$1/exe" 2>/dev/null) == "$want" ]] && return 0
		sleep 0.05
	done
	fail "process $1 did not start $2"
}

# Processes whose command line matches $1 (a fixture's path), other than
# this shell and benchtrap itself (whose command line names the fixture
# too): what a run left behind. benchtrap is known by its executable, or by
# its argv[0] while it exits (its executable may be unreadable a moment
# before its command line is).
BT_EXE=$(readlink -f "$BENCHTRAP")
fixture_procs() {
	local pid argv0
	for pid in $(pgrep -f -- "$1"); do
		[[ $pid == "$$" ]] && continue
		[[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$BT_EXE" ]] && continue
		argv0=$({ tr '\0' '\n' <"/proc/$pid/cmdline"; } 2>/dev/null | head -1)
		[[ -z $argv0 || $argv0 == "$BENCHTRAP" || $argv0 == "$BT_EXE" ]] && continue
		echo "$pid"
	done
}

# No process of $1 outlived benchtrap. Cleanup after a benchtrap that was
# killed runs in its worker and may end a little later: poll, up to 10 s.
expect_no_orphans() {
	checks=$((checks + 1))
	local left
	for _ in $(seq 200); do
		left=$(fixture_procs "$1")
		[[ -z $left ]] && return
		sleep 0.05
	done
	fail "processes of $1 outlived benchtrap: $(ps -o pid,ppid,stat,args -p "${left//$'\n'/,}")"
}

# Every counter of every benchmark that is ok in the results file $1 is the
# same in $2, where it is ok too. $3: names to leave out, space-separated.
same_counts() {
	checks=$((checks + 1))
	python3 - "$1" "$2" "${3:-}" <<'PY' || fail "counters differ between $1 and $2"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
skip = set(sys.argv[3].split())
other = {x["name"]: x for x in b["benchmarks"]}
bad, n = [], 0
for x in a["benchmarks"]:
    if x["status"] != "ok" or x["name"] in skip:
        continue
    n += 1
    y = other.get(x["name"])
    if y is None or y["status"] != "ok" or y["counters"] != x["counters"]:
        bad.append("%s: %s against %s" % (x["name"], x["counters"],
                                          y and (y["counters"] if y["status"] == "ok" else y["error"])))
if n == 0 or bad:
    sys.exit("\n".join(["no benchmark compared"] if n == 0 else bad))
PY
}

done_ok() {
	echo "$checks passed, 0 failed"
}
