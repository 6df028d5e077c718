#!/usr/bin/env bash
# benchtrap observe --profile: per observed function, a folded file and an
# SVG flamegraph of its calls' stacks, named in the results; a function
# never called gets a diagnostic; with a command and with --pid (the
# process runs on after benchtrap detached). Durations and sample counts
# are never asserted, only which callees appear, and that work(), three
# instructions that only call, has no sample of its own: a thread found
# where benchtrap left it at an inner call's breakpoint is a stop.
. "$(dirname "$0")/lib.sh"
HELPERS=$FIXTURES/observe/helpers
target=""
# A check that fails while the attached process runs must not leave it
# holding the test's output open.
trap 'if main_shell; then [[ -n $target ]] && kill -9 $target 2>/dev/null; rm -rf "$TMP"; fi' EXIT

# The results file $1 and its profiles: the checks on stdin, one Python
# expression a line over 'd' (the results) and 'fg(name)' (the folded
# lines of function 'name' as {path: count}).
expect_profiles() {
	checks=$((checks + $(grep -c . <<<"$2")))
	python3 - "$1" "$2" <<'PY' || fail "profile check failed (above)"
import json, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1]))
b = {x["name"]: x for x in d["benchmarks"]}
def fg(name):
    out = {}
    for line in open(b[name]["flamegraph"]["folded"]):
        path, n = line.rsplit(" ", 1)
        out[path] = int(n)
    return out
def svg_ok(name):
    root = ET.parse(b[name]["flamegraph"]["svg"]).getroot()
    return root.tag.endswith("svg") and name in ET.tostring(root, encoding="unicode")
for line in sys.argv[2].splitlines():
    if line.strip() and not eval(line):
        sys.exit("false: " + line)
PY
}

CHECKS='set(b) == {"work", "heavy", "never_called"}
b["work"]["flamegraph"]["folded"] == DIR + "/" + "%03d-work.folded" % list(b).index("work")
b["work"]["flamegraph"]["svg"] == DIR + "/" + "%03d-work.svg" % list(b).index("work")
svg_ok("work") and svg_ok("heavy")
all(p.split(";")[0] == "work" for p in fg("work"))
"work" not in fg("work")
any(p.startswith("work;heavy") for p in fg("work")) and any(p.startswith("work;light") for p in fg("work"))
all(p.split(";")[0] == "heavy" for p in fg("heavy")) and not any("light" in p for p in fg("heavy"))
"flamegraph" not in b["never_called"]
any("not profiled" in m and "never called" in m for m in b["never_called"]["diagnostics"])
not any("not profiled" in m for m in b["work"]["diagnostics"] + b["heavy"]["diagnostics"])'

# ---- a command --------------------------------------------------------------------
mkdir "$TMP/prof"
run observe --symbol work --symbol heavy --symbol never_called --profile "$TMP/prof" \
	--output "$TMP/obs.json" -- "$HELPERS"
expect_status 0
expect_out '^calls 40$'
expect_err '^work +40 '
expect_err 'never_called: not profiled: no stack was recorded inside its calls \(it was never called\)'
expect_profiles "$TMP/obs.json" "${CHECKS//DIR/\"$TMP/prof\"}"
expect_no_orphans "$HELPERS"

# ---- a process attached to, which runs on ------------------------------------------
mkdir "$TMP/prof2"
"$HELPERS" forever "$TMP/progress" &
target=$!
for _ in $(seq 100); do
	[[ -s $TMP/progress ]] && break
	sleep 0.05
done
run observe --symbol work --symbol heavy --symbol never_called --profile "$TMP/prof2" \
	--duration 1 --output "$TMP/obs2.json" --pid "$target"
expect_status 0
expect_out 'detached from'
expect_profiles "$TMP/obs2.json" "${CHECKS//DIR/\"$TMP/prof2\"}"
checks=$((checks + 1))
before=$(cat "$TMP/progress")
for _ in $(seq 200); do
	[[ $(cat "$TMP/progress") != "$before" ]] && break
	sleep 0.05
done
[[ $(cat "$TMP/progress") != "$before" ]] && kill -0 "$target" ||
	fail "the attached process does not run on after benchtrap detached"
kill "$target"
wait "$target" 2>/dev/null

# ---- a short function whose time is in its callee -------------------------------------
# front() itself is a few instructions; parse(), which it calls, is all of
# its time; the program runs long stretches between calls. Samples are of
# the time front() ran, so nearly all of them hold parse(); samples of the
# stops at front()'s breakpoints would hold front() alone (half or more of
# them, whatever the load). Its 100 calls run about 1.5 ms each here: some
# 150 samples, of which a loaded machine drops some; 20 is far below.
mkdir "$TMP/prof4"
run observe --symbol front --profile "$TMP/prof4" --output "$TMP/obs4.json" \
	-- "$FIXTURES/observe/shortcall"
expect_status 0
expect_out '^calls 100$'
expect_profiles "$TMP/obs4.json" 'sum(fg("front").values()) >= 20
sum(n for p, n in fg("front").items() if p.startswith("front;parse")) >= 0.8 * sum(fg("front").values())'

# ---- C++ names longer than any buffer ------------------------------------------------
# Two instances of a template whose mangled names share their first 150
# bytes, demangled longer than 200: both appear whole, demangled, with
# their spaces, each in its own frame (cut at 127 bytes they were one
# mangled frame).
if [[ -x $FIXTURES/observe/longnames ]]; then
	mkdir "$TMP/prof5"
	run observe --symbol driver --profile "$TMP/prof5" --output "$TMP/obs5.json" \
		-- "$FIXTURES/observe/longnames"
	expect_status 0
	long='void benchtrap_fixture_namespace_whose_name_is_long_enough_to_matter::a_function_template_with_a_name_so_long_that_its_first_hundred_and_twenty_seven_bytes_are_shared_by_both_instances_called_here<N, benchtrap_fixture_namespace_whose_name_is_long_enough_to_matter::a_holder_type_with_a_long_name_as_template_libraries_have<int> >(benchtrap_fixture_namespace_whose_name_is_long_enough_to_matter::a_holder_type_with_a_long_name_as_template_libraries_have<int>)'
	expect_profiles "$TMP/obs5.json" "len(\"$long\") > 200
any(p.split(\";\")[1:2] == [\"$long\".replace(\"<N,\", \"<1,\")] for p in fg(\"driver\"))
any(p.split(\";\")[1:2] == [\"$long\".replace(\"<N,\", \"<2,\")] for p in fg(\"driver\"))"
fi

# ---- a program that crashes inside an observed call ------------------------------------
# crash_now was called (its call never returned) and almost always holds
# no stack: the diagnostic says so rather than "never called"; the crash is
# passed on. On a loaded machine the fault's stop can last long enough for a
# sample to land in it: then its flamegraph is written instead.
mkdir "$TMP/prof3"
run observe --symbol crash_now --profile "$TMP/prof3" -- "$FIXTURES/observe/recurse" 3 0 crash
expect_status 139
expect_err 'killed by SIGSEGV'
if [[ -e $TMP/prof3/000-crash_now.folded ]]; then
	checks=$((checks + 1))
	grep -q "^crash_now" "$TMP/prof3/000-crash_now.folded" || fail "crash_now's folded stacks do not start at it"
else
	expect_err 'crash_now: not profiled: no stack was recorded inside its calls \(each was shorter'
fi
expect_no_orphans "$FIXTURES/observe/recurse"

# ---- bad input -------------------------------------------------------------------------
run observe --symbol work --profile "$TMP/none" -- "$HELPERS"
expect_usage_error "--profile wants a writable directory for the flamegraphs, not '$TMP/none'"

done_ok
