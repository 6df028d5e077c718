#!/usr/bin/env bash
# Benchmarks that signal the processes around them (tests/fixtures/signals):
# SIGKILL and SIGTERM to their parent (benchtrap's worker under walltime, the
# fork server under callgrind and memory), SIGTERM to their process group
# (kill(0)), and every other way at benchtrap's worker (tamper_*: other
# signalling calls, F_SETOWN, prlimit, its memory, ptrace). Under each
# instrument, beside two ordinary benchmarks before
# and after it:
# - the run exits 1 and writes its results file;
# - the benchmark fails with what it did ("sent SIGTERM to its parent");
# - the ordinary ones are measured, and nothing of the fixture is left;
# - kill(getppid(), 0), which signals nothing, is allowed.
# kill(-1) is not run: as root it would reach every process of the machine
# if it got through.
. "$(dirname "$0")/lib.sh"
SIG=$FIXTURES/signals/signals

# $1: instrument; $2: the benchmark; $3: what its error must say.
check() {
	local inst=$1 bench=$2 want=$3
	rm -f "$TMP/r.json"
	run run "$SIG" --instrument "$inst" --bench 'counted[10]' --bench "$bench" \
		--bench 'counted[1000]' --timeout 60 --output "$TMP/r.json"
	expect_status 1
	[[ -f $TMP/r.json ]] || fail "$inst, $bench: no results file"
	checks=$((checks + 1))
	python3 - "$TMP/r.json" "$bench" "$want" <<'PY' || fail "$inst, $bench: results"
import json, re, sys
d = json.load(open(sys.argv[1]))
b = {x["name"]: x for x in d["benchmarks"]}
bad = [n for n in ("counted[10]", "counted[1000]") if b.get(n, {}).get("status") != "ok"]
x = b.get(sys.argv[2])
if bad:
    sys.exit("not measured: %s: %s" % (bad, [b.get(n, {}).get("error") for n in bad]))
if not x or x["status"] != "failed" or not re.search(sys.argv[3], x["error"] or ""):
    sys.exit("%s: %s" % (sys.argv[2], x and (x["status"], x["error"])))
PY
	expect_no_orphans "$SIG"
}

# Every other way at benchtrap's worker, all in one run per instrument:
# each refused with its words, or harmless (tamper_mem cannot open the
# file: it is measured), and every benchmark after it measured.
tamper() {
	local inst=$1
	rm -f "$TMP/t.json"
	run run "$SIG" --instrument "$inst" --bench 'counted[10]' --bench 'tamper_*' \
		--bench 'counted[1000]' --timeout 60 --output "$TMP/t.json"
	expect_status 1
	checks=$((checks + 1))
	python3 - "$TMP/t.json" "$inst" <<'PY' || fail "$inst, tampering: results"
import json, re, sys
d = json.load(open(sys.argv[1]))
b = {x["name"]: x for x in d["benchmarks"]}
who = r"(its parent \(benchtrap, pid \d+\)|benchtrap \(pid \d+\))"
want = {
    "tamper_kill": "sent SIGTERM to " + who,
    "tamper_tgkill": "sent SIGTERM to " + who,
    "tamper_sigqueue": "sent SIGTERM to " + who,
    "tamper_pidfd": "sent SIGKILL to " + who,
    "tamper_setown": r"gave a descriptor's signals \(F_SETOWN\) to " + who,
    "tamper_setown_ex": r"gave a descriptor's signals \(F_SETOWN_EX\) to " + who,
    "tamper_prlimit": "changed the resource limits of " + who,
    "tamper_ptrace": "tried to ptrace " + who,
    "tamper_vm_write": "wrote into the memory of " + who,
    "tamper_mem": None,
}
# valgrind refuses pidfd_send_signal itself (ENOSYS): harmless, measured.
if sys.argv[2] == "callgrind":
    want["tamper_pidfd"] = None
bad = []
for n in ["counted[10]", "counted[1000]"] + list(want):
    x = b.get(n)
    w = want.get(n)
    if not x:
        bad.append((n, "missing"))
    elif w is None and x["status"] != "ok":
        bad.append((n, x["status"], x.get("error")))
    elif w and (x["status"] != "failed" or not re.fullmatch(w, x["error"] or "")):
        bad.append((n, x["status"], x.get("error")))
if bad:
    sys.exit("%s" % bad)
PY
	expect_no_orphans "$SIG"
}

instruments=(walltime memory)
if command -v valgrind >/dev/null; then
	instruments+=(callgrind)
else
	echo "callgrind left out: valgrind is not installed"
fi
for inst in "${instruments[@]}"; do
	check "$inst" kill_parent_kill 'sent SIGKILL to its parent \((benchtrap|the fork server), pid [0-9]+\)'
	check "$inst" kill_parent_term 'sent SIGTERM to its parent \((benchtrap|the fork server), pid [0-9]+\)'
	check "$inst" kill_group_term 'SIGTERM'
	tamper "$inst"
	run run "$SIG" --instrument "$inst" --bench parent_alive --bench 'counted[10]' \
		--output "$TMP/ok.json"
	expect_status 0
done
done_ok
