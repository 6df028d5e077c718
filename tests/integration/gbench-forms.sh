#!/usr/bin/env bash
# Google Benchmark benchmarks in every form their functions take
# (tests/fixtures/gbench/forms.cpp, docs/gbench.md "Which function"): in a
# namespace, a nested one, an anonymous one, registered with its
# namespace, two instances of a template, two of another whose arguments are
# spelled otherwise than the compiler does (each name matches both, and a
# run of it tells which it calls), a fixture in a namespace, ->Arg
# instances, ->Threads(2), and a lambda given to RegisterBenchmark. Each is
# measured (status ok) under walltime, callgrind and memory; under the
# exact instruments each iteration counts as counted_loop's known
# 2n + 2 instructions and a few of the loop's own. callgrind's figure for
# one instance equals the slope derived here by hand from a valgrind run
# of our own with the options benchtrap uses: the profiles' totals and the
# batches' iteration counts from the library's log, exactly.
# No duration is asserted.
. "$(dirname "$0")/lib.sh"
F=$FIXTURES/gbench/gbench_forms
if [[ ! -x $F ]]; then
	echo "skipped: the Google Benchmark fixture was not built (libbenchmark-dev is not installed)"
	exit 77
fi
NAMES="BM_UFlat BM_args/8 BM_args/64 BM_nested inner::BM_qualified BM_t<int> BM_t<double>
BM_s<std::string> BM_s<std::vector<int>> Fix/Foo/16 BM_threads/threads:2 BM_anon lambda_loop"
# Each instance's counted_loop(n), in the order of $NAMES (100 + the size of
# a std::string, of a std::vector<int>).
LOOPS="100 8 64 100 100 40 80 132 124 100 100 100 100"
PYNAMES=$(python3 -c 'import sys; print(sys.argv[1].split())' "$NAMES")

run list "$F" --json
expect_status 0
expect_json '[b["name"] for b in d["benchmarks"]] == '"$PYNAMES"

for instrument in walltime callgrind memory; do
	run run "$F" --instrument "$instrument" --time 0.05 --min-samples 3 --format json
	expect_status 0
	expect_json '[b["name"] for b in d["benchmarks"]] == '"$PYNAMES"
	python3 - "$TMP/out" <<'PY' || fail "not every instance measured under $instrument"
import json, sys
bad = [(b["name"], b["error"]) for b in json.load(open(sys.argv[1]))["benchmarks"]
       if b["status"] != "ok"]
sys.exit("\n".join("%s: %s" % x for x in bad) if bad else 0)
PY
	checks=$((checks + 1))
	expect_no_orphans "$F"
	cp "$TMP/out" "$TMP/$instrument.json"
done

# callgrind: counted_loop(n) is 2n + 2 instructions; the loop of
# Google Benchmark's State and the call add a few of their own per
# iteration, fewer than 40.
python3 - "$TMP/callgrind.json" "$LOOPS" <<'PY' || fail "callgrind's figures are not the known work"
import json, sys
d = json.load(open(sys.argv[1]))["benchmarks"]
bad = []
for b, n in zip(d, map(int, sys.argv[2].split())):
    extra = b["value"] - (2 * n + 2)
    if not (0 <= extra < 40) or b["counters"]["Ir"] != b["value"]:
        bad.append("%s: %s for counted_loop(%d)" % (b["name"], b["value"], n))
sys.exit("\n".join(bad) if bad else 0)
PY
checks=$((checks + 1))
# memory: none of them allocates.
python3 - "$TMP/memory.json" <<'PY' || fail "the memory instrument counted allocations where none are"
import json, sys
d = json.load(open(sys.argv[1]))["benchmarks"]
bad = [b["name"] for b in d if b["counters"] != {"bytes": 0, "allocations": 0, "frees": 0, "peak_bytes": 0}]
sys.exit(" ".join(bad) if bad else 0)
PY
checks=$((checks + 1))
# The lambda's function, and that of each instance of BM_s (both instances
# match either name), is the one a run of it entered first, and it says so;
# the others' are told by their symbols.
python3 - "$TMP/callgrind.json" "$TMP/memory.json" <<'PY' || fail "the functions seen at run time are not said to be"
import json, sys
seen = {"lambda_loop": "LambdaBenchmark<main::{lambda(benchmark::State&)#1}>::Run",
        "BM_s<std::string>": "BM_s<std::__cxx11::basic_string<char",
        "BM_s<std::vector<int>>": "BM_s<std::vector<int, std::allocator<int> > >"}
for p in sys.argv[1:]:
    for b in json.load(open(p))["benchmarks"]:
        said = [x for x in b["diagnostics"] if "a run of it entered first" in x]
        if b["name"] not in seen:
            if said:
                sys.exit("%s: %s: %s" % (p, b["name"], said))
        elif not (said and seen[b["name"]] in said[0] and
                  (b["name"] == "lambda_loop" or "more than one function" in said[0])):
            sys.exit("%s: %s: %s" % (p, b["name"], b["diagnostics"]))
PY
checks=$((checks + 1))

# callgrind by hand, on the namespaced instance: valgrind with the options
# benchtrap passes (gbench/callgrind.c), a profile after each call of the
# function, the batches' iteration counts in the library's log (--v=2).
if ! command -v valgrind >/dev/null; then
	fail "valgrind is needed to derive the figure by hand"
fi
FN='snappy::BM_UFlat(benchmark::State&)'
D=$TMP/hand
mkdir -p "$D"
valgrind --tool=callgrind --vgdb=no --log-file="$D/valgrind.log" \
	--callgrind-out-file="$D/callgrind.out.%p" --collect-atstart=no \
	--toggle-collect="$FN" --dump-after="$FN" \
	"$F" --benchmark_min_time=0.05 --benchmark_repetitions=1 --v=2 \
	'--benchmark_filter=^BM_UFlat$' --benchmark_out="$D/out.json" \
	--benchmark_out_format=json >/dev/null 2>"$D/stderr" ||
	fail "valgrind's own run failed: $(tail -3 "$D/stderr")"
hand=$(python3 - "$D" <<'PY'
import glob, re, sys
d = sys.argv[1]
dumps = []
for p in glob.glob(d + "/callgrind.out.*.*"):
    n = int(p.rsplit(".", 1)[1])
    if n == 0:
        continue
    # The profile's total of each event, "totals:" (or "summary:"); Ir first.
    events, total = None, None
    for line in open(p):
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith(("totals:", "summary:")):
            total = int(line.split()[1 + events.index("Ir")])
    dumps.append((n, total))
dumps = [t for _, t in sorted(dumps)]
iters = [int(m.group(1)) for m in
         re.finditer(r"-- LOG\(2\): Running BM_UFlat for (\d+)", open(d + "/stderr").read())]
if len(iters) < 2 or len(dumps) != len(iters):
    sys.exit("%d profiles, %d batches" % (len(dumps), len(iters)))
slope = (dumps[-1] - dumps[-2]) / (iters[-1] - iters[-2])
print(repr(slope))
PY
) || fail "cannot derive the figure by hand: $hand"
checks=$((checks + 1))
python3 - "$TMP/callgrind.json" "$hand" <<'PY' || fail "benchtrap's figure is not the one derived by hand ($hand)"
import json, sys
b = json.load(open(sys.argv[1]))["benchmarks"][0]
sys.exit(0 if b["name"] == "BM_UFlat" and b["value"] == float(sys.argv[2]) else
         "%s: %s" % (b["name"], b["value"]))
PY
checks=$((checks + 1))
expect_no_orphans "$F"
done_ok
