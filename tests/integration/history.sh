#!/usr/bin/env bash
# benchtrap history on real runs and crafted files:
#  - real callgrind runs of the CI suite's two builds (tests/fixtures/ci:
#    ci_head's slow_one does 4x the work), each added as several commits:
#    `check` finds one change point, in slow_one alone, at the first head
#    commit, and exits 1 naming both; an exact series has no other;
#  - crafted walltime series with 3 % noise: a +20 % step found at its
#    commit, a flat series none, a -20 % step is not a regression;
#  - the same file twice adds it once; eight adds at once all land;
#  - show as text, json and csv; list; forget by commit and by run;
#  - the commit and branch read from git in a checkout, and from GITHUB_SHA;
#  - a truncated, a foreign and a non-SQLite file: exit 2, one line, and
#    the file byte for byte as it was.
. "$(dirname "$0")/lib.sh"
BASE=$FIXTURES/ci/ci_base
HEAD=$FIXTURES/ci/ci_head
MK="python3 $SOURCE_ROOT/tests/fixtures/ci/make_results.py"
# Nothing of the CI this test may run under decides a commit here.
unset GITHUB_SHA CI_COMMIT_SHA BUILDKITE_COMMIT GIT_COMMIT GITHUB_HEAD_REF GITHUB_REF_NAME \
	CI_COMMIT_REF_NAME BUILDKITE_BRANCH GIT_BRANCH BENCHTRAP_HISTORY
DB=$TMP/h.db

# A copy of results file $1 as run $3 of its machine ($2): its own date, so
# that its bytes (and digest) are its own.
as_run() {
	sed "s/\"date\": \"[^\"]*\"/\"date\": \"2026-03-$(printf %02d "$3")T10:00:00Z\"/" "$1" >"$2"
}

# ---- real runs: one step, in slow_one, at the first head commit ---------
run run "$BASE" --instrument callgrind --output "$TMP/base.json"
expect_status 0
run run "$HEAD" --instrument callgrind --output "$TMP/head.json"
expect_status 0
for i in 1 2 3 4 5 6 7 8; do
	if ((i <= 4)); then src=$TMP/base.json; else src=$TMP/head.json; fi
	as_run "$src" "$TMP/r$i.json" "$i"
	run history add --db "$DB" --commit "c0ffee$i" --branch main "$TMP/r$i.json"
	expect_status 0
	expect_out "added, [0-9]+ benchmark\(s\), commit c0ffee$i"
done
run history add --db "$DB" --commit c0ffee8 "$TMP/r8.json"
expect_status 0
expect_out "in the history already, not added again"
run history list --db "$DB" --format json
expect_status 0
expect_json 'len(d["runs"]) == 8 and [r["commit"] for r in d["runs"]] == ["c0ffee%d" % i for i in range(1, 9)]'

run history check --db "$DB" --format json
expect_status 1
expect_json '[s["name"] for s in d["series"]] == ["slow_one"] and d["series"][0]["regressed"]'
expect_json 'len(d["series"][0]["change_points"]) == 1 and d["series"][0]["change_points"][0]["commit"] == "c0ffee5" and d["series"][0]["change_points"][0]["previous"] == "c0ffee4"'
# Four times the loop's work, exactly: a step of about +300 %.
expect_json '2.5 < d["series"][0]["change_points"][0]["step"] < 3.5 and d["series"][0]["change_points"][0]["p"] == 0'
run history check --db "$DB"
expect_status 1
expect_out '^REGRESSED +slow_one \(callgrind, .*\): \+[0-9.]+ % at c0ffee5 \(after c0ffee4\)'
expect_out '1 newest a regression beyond 5 %'
# A threshold above the step passes.
run history check --db "$DB" --threshold 500
expect_status 0
run history check --db "$DB" --bench 'chain_*'
expect_status 0
expect_out '0 change point'

run history show --db "$DB" slow_one --format json
expect_status 0
expect_json 'len(d["series"]) == 1 and len(d["series"][0]["points"]) == 8 and d["series"][0]["instrument"] == "callgrind"'
expect_json 'all(p["status"] == "ok" and p["value"] > 0 for p in d["series"][0]["points"])'
expect_json 'd["series"][0]["points"][4]["value"] > 3.5 * d["series"][0]["points"][3]["value"]'
run history show --db "$DB" slow_one --format csv
expect_status 0
[[ $(grep -c . <<<"$out") -eq 9 ]] || fail "csv: a header and 8 rows expected"
expect_out '^name,instrument,unit,machine,run,commit,branch,date,status,value'
run history show --db "$DB" 'chain_*'
expect_status 0
expect_out '^chain_1000 \(callgrind, '
expect_out '^chain_3000 \(callgrind, '
run history show --db "$DB" nothing_here
expect_usage_error "no benchmark named 'nothing_here'"

# ---- forget ---------------------------------------------------------------
cp "$DB" "$TMP/keep.db"
run history forget --db "$DB" --commit c0ffee8
expect_status 0
expect_out 'forgot 1 run'
run history forget --db "$DB" --commit c0f
expect_usage_error 'wants 4 characters or more'
run history forget --db "$DB"
expect_usage_error 'which runs'
run history list --db "$DB" --format json
expect_json 'len(d["runs"]) == 7'
cp "$TMP/keep.db" "$DB"

# ---- crafted walltime series with noise ------------------------------------
W=$TMP/w.db
for i in $(seq 1 24); do
	if ((i <= 12)); then up=100; down=200; else up=120; down=160; fi
	$MK "$TMP/w$i.json" "up=$up~3x40" "flat=50~1.5x40" "down=$down~6x40" --seed "$i" ||
		fail "make_results.py"
	run history add --db "$W" --commit "$(printf 'w%04d' "$i")" --date \
		"2026-02-$(printf %02d "$i")T00:00:00Z" "$TMP/w$i.json"
	expect_status 0
done
run history check --db "$W" --format json
expect_status 1
expect_json 'sorted(s["name"] for s in d["series"]) == ["down", "up"]'
expect_json '[s["change_points"][-1]["commit"] for s in d["series"] if s["name"] == "up"] == ["w0013"]'
expect_json 'all(s["regressed"] == (s["name"] == "up") for s in d["series"])'
expect_json 'all(0.1 < s["change_points"][-1]["step"] < 0.3 for s in d["series"] if s["name"] == "up")'
expect_json 'all(0 < s["change_points"][-1]["p"] <= 0.05 for s in d["series"])'

# ---- eight adds at once: every one lands -------------------------------------
C=$TMP/c.db
pids=()
for i in 1 2 3 4 5 6 7 8; do
	"$BENCHTRAP" history add --db "$C" --commit "cc$i" "$TMP/w$i.json" >"$TMP/c$i.out" 2>&1 &
	pids+=($!)
done
for i in 1 2 3 4 5 6 7 8; do
	wait "${pids[$((i - 1))]}" || { out=$(cat "$TMP/c$i.out"); fail "concurrent add $i failed"; }
done
run history list --db "$C" --format json
expect_json 'sorted(r["commit"] for r in d["runs"]) == ["cc%d" % i for i in range(1, 9)]'
expect_json 'all(r["benchmarks"] == 3 for r in d["runs"])'

# ---- the commit from git, and from the CI ---------------------------------
if command -v git >/dev/null; then
	G=$TMP/repo
	mkdir -p "$G"
	(cd "$G" && git init -q -b topic && git -c user.name=t -c user.email=t@t commit -q \
		--allow-empty -m one) || fail "git init"
	sha=$(cd "$G" && git rev-parse HEAD)
	(cd "$G" && "$BENCHTRAP" history add --db "$TMP/g.db" "$TMP/w1.json") >"$TMP/out" 2>&1 ||
		fail "add in a checkout: $(cat "$TMP/out")"
	run history list --db "$TMP/g.db" --format json
	expect_json "d['runs'][0]['commit'] == '$sha' and d['runs'][0]['branch'] == 'topic'"
	# A commit git does not know is ordered by the run's date: one after
	# the first commit's.
	(cd "$G" && GITHUB_SHA=feedface GITHUB_REF_NAME=ci-branch "$BENCHTRAP" history add \
		--db "$TMP/g.db" --date 2099-01-01T00:00:00Z "$TMP/w2.json") >/dev/null 2>&1 ||
		fail "add with GITHUB_SHA"
	run history list --db "$TMP/g.db" --format json
	expect_json "[r['commit'] for r in d['runs']] == ['$sha', 'feedface'] and d['runs'][1]['branch'] == 'ci-branch'"
fi

# ---- bad input: one line, exit 2, the file as it was ----------------------
sum() { sha256sum "$1" | cut -d' ' -f1; }
head -c 5000 "$DB" >"$TMP/trunc.db"
before=$(sum "$TMP/trunc.db")
run history add --db "$TMP/trunc.db" "$TMP/w1.json"
expect_usage_error 'trunc.db: a damaged history'
[[ $(sum "$TMP/trunc.db") == "$before" ]] || fail "the truncated history was changed"
run history check --db "$TMP/trunc.db"
expect_usage_error 'a damaged history'

python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("create table t(x)"); c.execute("insert into t values (1)"); c.commit()' "$TMP/foreign.db"
before=$(sum "$TMP/foreign.db")
run history add --db "$TMP/foreign.db" "$TMP/w1.json"
expect_usage_error 'foreign.db: an SQLite database, but not a benchtrap history'
[[ $(sum "$TMP/foreign.db") == "$before" ]] || fail "the foreign database was changed"

printf 'notes, not a database\n' >"$TMP/text.db"
run history add --db "$TMP/text.db" "$TMP/w1.json"
expect_usage_error 'text.db: not a benchtrap history \(not an SQLite database\)'
[[ $(cat "$TMP/text.db") == 'notes, not a database' ]] || fail "the text file was changed"

run history list --db "$TMP/none.db"
expect_usage_error 'none.db: no history here'
[[ ! -e $TMP/none.db ]] || fail "list made a history"
run history add --db "$TMP/x.db" "$TMP/missing.json"
expect_usage_error 'missing.json: no such file'
[[ ! -e $TMP/x.db ]] || fail "a failed add made a history"
printf '{"schema": "other"}' >"$TMP/bad.json"
run history add --db "$DB" "$TMP/w1.json" "$TMP/bad.json"
expect_usage_error 'bad.json'
run history list --db "$DB" --format json
expect_json 'len(d["runs"]) == 8'
run history frob
expect_usage_error "history: the command is 'add', 'import', 'list', 'show', 'check' or 'forget', not 'frob'"
run history check --db "$DB" --threshold lots
expect_usage_error "--threshold wants a percentage"
run history show --db "$DB" slow_one --format xml
expect_usage_error "--format is text, json or csv"

# ---- import: a directory, commits from the names ---------------------------
mkdir -p "$TMP/results"
cp "$TMP/w1.json" "$TMP/results/aaaa111.json"
cp "$TMP/w2.json" "$TMP/results/bbbb222.json"
touch "$TMP/results/notes.txt"
run history import --db "$TMP/i.db" --commit-from name "$TMP/results"
expect_status 0
expect_out 'imported 2 of 2 results file'
run history import --db "$TMP/i.db" --commit-from name "$TMP/results"
expect_out 'imported 0 of 2 results file\(s\) into .* \(2 in it already\)'
run history list --db "$TMP/i.db" --format json
expect_json 'sorted(r["commit"] for r in d["runs"]) == ["aaaa111", "bbbb222"]'

done_ok
