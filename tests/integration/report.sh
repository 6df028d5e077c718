#!/usr/bin/env bash
# benchtrap report: one self-contained HTML page of real results of this
# build's example suite (a run, one with --profile for a flame graph, a run
# against another with --base, a paired comparison of two binaries, the calls
# observed in tests/fixtures/observe/recurse) and of a history. Then each
# page is loaded in headless Chromium: no console message (errors, refused
# requests), the screenshot is not blank where the plots are, and the DOM it
# dumps holds a plot per benchmark with its data, the verdicts of `benchtrap
# compare`, the change points of `benchtrap history check`. Without chromium
# the pages are checked as files and the test exits 77. REPORT_SCREENSHOTS=DIR
# keeps the screenshots and pages there; REPORT_CHROMIUM=PATH names the
# browser.
. "$(dirname "$0")/lib.sh"
EX=$BUILD_ROOT/benches/examples
RECURSE=$FIXTURES/observe/recurse
DOM="python3 $SOURCE_ROOT/tests/integration/report_dom.py"
MK="python3 $SOURCE_ROOT/tests/fixtures/ci/make_results.py"
FAST=(--time 0.05 --warmup 0 --sample-time 0.002 --min-samples 10)
own_tmpdir

# ---- the command line -------------------------------------------------------
run report --help
expect_status 0
expect_out '^usage: benchtrap report FILE\.\.\. '
expect_out '^examples:$'
expect_out '^exit status: '
run report
expect_usage_error 'report: which files\? usage: benchtrap report FILE'
run report --bogus
expect_usage_error "report: unknown option '--bogus'"
$MK "$TMP/small.json" --seed 1 'x<y>&"z'"'"'=100~3' gone=failed
run report "$TMP/small.json"
expect_usage_error 'report: where to\? add -o OUT\.html'
run report "$TMP/small.json" --threshold lots -o "$TMP/x.html"
expect_usage_error "report: --threshold wants a percentage from 0 to 10000, e.g. 5, not 'lots'"
# Bad input: results_load's one line, exit 2, and what was at the output
# stays as it was.
echo "kept" >"$TMP/kept.html"
run report "$TMP/missing.json" -o "$TMP/kept.html"
expect_usage_error "missing\.json: no such file"
echo '{"schema": "benchtrap-results/1", "benchmarks": [' >"$TMP/cut.json"
run report "$TMP/small.json" "$TMP/cut.json" -o "$TMP/kept.html"
expect_usage_error 'cut\.json'
run report "$TMP/small.json" --base "$TMP/missing.json" -o "$TMP/kept.html"
expect_usage_error "missing\.json: no such file"
run report "$TMP/small.json" --history "$TMP/missing.db" -o "$TMP/kept.html"
expect_usage_error "missing\.db"
run report "$TMP/small.json" -o "$TMP/nodir/x.html"
expect_usage_error 'report: .*/nodir/x\.html: cannot write the report'
checks=$((checks + 1))
[[ $(cat "$TMP/kept.html") == kept ]] || fail "a failed report changed the file at its output"
# Escaped names: the crafted file's, in text and attributes.
run report "$TMP/small.json" -o "$TMP/small.html"
expect_status 0
checks=$((checks + 1))
grep -qF 'data-bench="x&lt;y&gt;&amp;&quot;z&#39;"' "$TMP/small.html" &&
	! grep -qF 'x<y>' "$TMP/small.html" || fail "a benchmark's name is not escaped"
# -o - writes the same page on stdout.
run report "$TMP/small.json" -o -
expect_status 0
checks=$((checks + 1))
cmp -s "$TMP/out" "$TMP/small.html" || fail "report -o - differs from the file written"

# ---- real results -----------------------------------------------------------
run run "$EX" --bench 'fib*' --bench loop_300ns --bench empty "${FAST[@]}" --quiet \
	--output "$TMP/run.json"
expect_status 0
run run "$EX" --bench 'fib*' --bench loop_300ns --bench empty "${FAST[@]}" --quiet \
	--output "$TMP/run2.json"
expect_status 0
# A flame graph, its path relative to where the run was: the report finds it
# beside the results file.
mkdir -p "$TMP/prof"
(cd "$TMP" && "$BENCHTRAP" run "$EX" --bench 'fib[20]' "${FAST[@]}" --quiet --profile prof \
	--output prof.json) >"$TMP/out" 2>"$TMP/err"
status=$?
expect_status 0
expect_json_in "$TMP/prof.json" 'd["benchmarks"][0]["flamegraph"]["svg"].startswith("prof/")'
run compare "$EX" "$EX" --bench 'fib*' "${FAST[@]}" --quiet --output "$TMP/paired.json"
expect_status 0
run observe --symbol fib --symbol slow_setup --symbol bail_out --output "$TMP/obs.json" -- "$RECURSE"
expect_status 0
expect_json_in "$TMP/obs.json" 'len(d["benchmarks"]) == 3'

run report "$TMP/run.json" "$TMP/prof.json" --title 'run & profile' -o "$TMP/run.html"
expect_status 0
# A flame graph gone: said on the page, the rest is there.
mv "$TMP/prof" "$TMP/prof.moved"
run report "$TMP/prof.json" -o "$TMP/noflame.html"
expect_status 0
checks=$((checks + 1))
grep -q 'flame graph <code>prof/[^<]*\.svg</code>: No such file' "$TMP/noflame.html" &&
	grep -q 'data-kind="samples" data-bench="fib\[20\]"' "$TMP/noflame.html" ||
	fail "a missing flame graph is not said on the page"
mv "$TMP/prof.moved" "$TMP/prof"
run report "$TMP/run2.json" --base "$TMP/run.json" --threshold 20 -o "$TMP/base.html"
expect_status 0
run compare "$TMP/run.json" "$TMP/run2.json" --threshold 20 --format json
cp "$TMP/out" "$TMP/base-cmp.json"
run report "$TMP/paired.json" -o "$TMP/paired.html"
expect_status 0
run compare "$TMP/paired.json" --format json
cp "$TMP/out" "$TMP/paired-cmp.json"
run report "$TMP/obs.json" -o "$TMP/obs.html"
expect_status 0
# An observe file against a run's is refused, as compare refuses it.
run report "$TMP/obs.json" --base "$TMP/run.json" -o "$TMP/x.html"
expect_usage_error 'obs\.json holds calls observed by `benchtrap observe`'

# ---- a history --------------------------------------------------------------
pages=(run base paired obs)
# The two real runs, and a crafted series that steps up 20 % halfway
# and a count that steps once: change points to find.
run history add --db "$TMP/H.db" --commit 1111111aaaa --date 2026-01-01T00:00:00Z "$TMP/run.json"
expect_status 0
run history add --db "$TMP/H.db" --commit 2222222bbbb --date 2026-01-02T00:00:00Z "$TMP/run2.json"
expect_status 0
for i in $(seq 1 12); do
	$MK "$TMP/h$i.json" --seed "$i" steady=500~5 "step=$((i > 6 ? 1200 : 1000))~10" \
		"count=$((i > 8 ? 1040 : 1000))@callgrind"
	run history add --db "$TMP/H.db" --commit "$(printf '%02dcafe%033d' "$i" 0)" \
		--date "2026-02-$(printf %02d "$i")T00:00:00Z" "$TMP/h$i.json"
	expect_status 0
done
run history show '*' --db "$TMP/H.db" --format json
expect_status 0
cp "$TMP/out" "$TMP/show.json"
run history check --db "$TMP/H.db" --format json
cp "$TMP/out" "$TMP/check.json"
expect_json_in "$TMP/check.json" 'sum(len(s["change_points"]) for s in d["series"]) >= 2'
run report --history "$TMP/H.db" -o "$TMP/history.html"
expect_status 0
run report "$TMP/run.json" "$TMP/paired.json" "$TMP/obs.json" --history "$TMP/H.db" -o "$TMP/all.html"
expect_status 0
pages+=(history all)
have_history=1

# Every page: nothing it would load.
for p in "${pages[@]}"; do
	checks=$((checks + 1))
	$DOM offline "$TMP/$p.html" || fail "$p.html would load something"
done

# ---- in a browser -----------------------------------------------------------
# REPORT_CHROMIUM names the browser (empty: none, to try the skip).
CHROMIUM=${REPORT_CHROMIUM-$(command -v chromium || command -v chromium-browser)}
if [[ -z $CHROMIUM ]]; then
	echo "SKIP: chromium is not installed (apt-get install chromium): the $checks checks of" \
		"the pages as files passed, but none was loaded in a browser"
	exit 77
fi
# A browser of its own per page (its profile in $TMP), bounded in time.
chromium() {
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$TMP/chrome-$1" --enable-logging=stderr --v=0 "${@:2}"
}
load() {
	local p=$1
	chromium "$p" --window-size=1280,2000 --screenshot="$TMP/$p.png" "file://$TMP/$p.html" \
		>/dev/null 2>"$TMP/$p.shot.log"
	status=$?
	expect_status 0
	chromium "$p" --dump-dom "file://$TMP/$p.html" >"$TMP/$p.dom" 2>"$TMP/$p.dom.log"
	status=$?
	expect_status 0
	# Any console message is a script error or a refused request.
	checks=$((checks + 1))
	! grep -h ':CONSOLE' "$TMP/$p.shot.log" "$TMP/$p.dom.log" ||
		fail "$p.html: console messages in Chromium (above)"
	[[ -n ${REPORT_SCREENSHOTS:-} ]] && mkdir -p "$REPORT_SCREENSHOTS" &&
		cp "$TMP/$p.png" "$TMP/$p.html" "$REPORT_SCREENSHOTS/"
	return 0
}
# The colours of the plots' bars, of the median, of a series' points, of
# the threshold's band: where they are, the plots were drawn.
BAR=6c9bd2 MEDIAN=b42318 POINT=2c6cb0 BAND=eef1f5

load run
checks=$((checks + 1))
$DOM png "$TMP/run.png" --colour $BAR --colour $MEDIAN || fail "run.png"
checks=$((checks + 1))
$DOM dom "$TMP/run.dom" --run "$TMP/run.json" "$TMP/run.json" --run "$TMP/prof.json" "$TMP/prof.json" \
	--flamegraph 'fib[20]' || fail "run.html's DOM"

load base
checks=$((checks + 1))
$DOM png "$TMP/base.png" --colour $BAND --colour $BAR || fail "base.png"
checks=$((checks + 1))
$DOM dom "$TMP/base.dom" --compare "$TMP/run2.json" "$TMP/base-cmp.json" \
	--run "$TMP/run2.json" "$TMP/run2.json" || fail "base.html's DOM"

load paired
checks=$((checks + 1))
$DOM png "$TMP/paired.png" --colour $BAND || fail "paired.png"
checks=$((checks + 1))
$DOM dom "$TMP/paired.dom" --compare "$TMP/paired.json" "$TMP/paired-cmp.json" \
	--run "$TMP/paired.json" "$TMP/paired.json" || fail "paired.html's DOM"

load obs
checks=$((checks + 1))
$DOM png "$TMP/obs.png" --colour $BAR --colour $MEDIAN || fail "obs.png"
checks=$((checks + 1))
$DOM dom "$TMP/obs.dom" --observe "$TMP/obs.json" "$TMP/obs.json" || fail "obs.html's DOM"

if [[ -n $have_history ]]; then
	load history
	checks=$((checks + 1))
	$DOM png "$TMP/history.png" --colour $POINT || fail "history.png"
	checks=$((checks + 1))
	$DOM dom "$TMP/history.dom" --history "$TMP/show.json" "$TMP/check.json" ||
		fail "history.html's DOM"
	load all
	checks=$((checks + 1))
	$DOM dom "$TMP/all.dom" --run "$TMP/paired.json" "$TMP/paired.json" \
		--compare "$TMP/paired.json" "$TMP/paired-cmp.json" \
		--observe "$TMP/obs.json" "$TMP/obs.json" \
		--history "$TMP/show.json" "$TMP/check.json" || fail "all.html's DOM"
fi
done_ok
