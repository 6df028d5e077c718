#!/usr/bin/env bash
# benchtrap's GitHub Action and the workflows of docs/ci.md, run as CI runs
# them, without GitHub: the YAML is checked (ci_workflows.py: keys,
# permissions, Node.js 24 majors, bash -n of every shell step), and the
# scripts the steps call run for real: the base worktree twice in one
# workspace (GitLab's lines of docs/ci.md too), the comment of a
# 1000-benchmark comparison capped under GitHub's limit, and the comment
# posted or updated by its marker through a fake gh that records its calls.
# The end-to-end measurement through the action's script is in ci_e2e.sh.
. "$(dirname "$0")/lib.sh"
: "${SOURCE_ROOT:?}"
CI=$SOURCE_ROOT/scripts/ci
MAKE=$SOURCE_ROOT/tests/fixtures/ci/make_results.py
# A Python with yaml: Debian's (python3-yaml) when a virtual environment or
# pyenv on PATH has none.
PY=
for py in /usr/bin/python3 python3; do
	if "$py" -c 'import yaml' 2>/dev/null; then PY=$py; break; fi
done
[[ $PY ]] || {
	echo "skip: no python3 with the yaml module (Debian: python3-yaml, which scripts/setup installs)"
	exit 77
}
command -v jq >/dev/null || { echo "skip: no jq (Debian: jq, which scripts/setup installs)"; exit 77; }
command -v git >/dev/null || { echo "skip: no git, which the workflows check out with"; exit 77; }

# ---- the YAML ---------------------------------------------------------------
mkdir -p "$TMP/steps"
out=$("$PY" "$(dirname "$0")/ci_workflows.py" "$SOURCE_ROOT" "$TMP/steps" 2>&1)
status=$?
expect_status 0
expect_out '^checked 2 actions, 2 workflows, [0-9]+ shell steps: 0 problem'
# The checker finds what it is for: a copy with each fault of the old
# workflow put back.
mkdir -p "$TMP/bad/docs" "$TMP/bad/comment"
cp "$SOURCE_ROOT/action.yml" "$TMP/bad/"
cp "$SOURCE_ROOT/comment/action.yml" "$TMP/bad/comment/"
"$PY" - "$SOURCE_ROOT/docs/ci.md" "$TMP/bad/docs/ci.md" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
s = re.sub(r"actions/checkout@[0-9a-f]{40} # v6[.0-9]*", "actions/checkout@v4", s, 1)
s = re.sub(r"actions/download-artifact@[0-9a-f]{40} # v7[.0-9]*", "actions/download-artifact@v6", s,
           1)
# A commit whose comment names another release, one without a comment.
s = re.sub(r"(actions/upload-artifact@[0-9a-f]{40} # )v6[.0-9]*", r"\g<1>v6.9.9", s, 1)
s = re.sub(r"(actions/upload-artifact@[0-9a-f]{40}) # v6(?!\.9\.9)[.0-9]*", r"\1", s, 1)
# The comment job on forks' pull requests too.
s = s.replace(" &&\n      github.event.pull_request.head.repo.full_name == github.repository", "", 1)
# The job that builds the pull request may write.
s = s.replace("    permissions:\n      contents: read\n    strategy:",
              "    permissions:\n      contents: read\n      pull-requests: write\n    strategy:", 1)
s = s.replace("      - uses: OWNER/benchtrap/comment@v0.1.0",
              "      - run: gh pr comment \"$PR\" --body-file report.md --edit-last", 1)
s = s.replace("    - git worktree prune\n", "    - git worktree prune\n    - if [ x\n", 1)
open(sys.argv[2], "w").write(s)
PY
# action.yml: cache on a Node.js 20 major, and the URL of the fetch made of
# github.action_repository, which is empty in a composite action.
sed -i -E 's/actions\/cache@[0-9a-f]{40} # v5[.0-9]*/actions\/cache@v4/' "$TMP/bad/action.yml"
sed -i -E 's|^( *)REPOSITORY: \$\{\{ inputs.repository \}\}|\1REPOSITORY: ${{ github.action_repository }}|' \
	"$TMP/bad/action.yml"
out=$("$PY" "$(dirname "$0")/ci_workflows.py" "$TMP/bad" "$TMP/steps" 2>&1)
status=$?
expect_status 1
expect_out 'action.yml: .*actions/cache@v4 runs on the deprecated Node.js 20: use v5'
expect_out 'job measure: step 1: actions/checkout@v4 runs on the deprecated Node.js 20'
expect_out 'job measure: step 1: actions/checkout@v4: a tag can be moved; pin the commit'
expect_out 'job measure: step 3: actions/upload-artifact@b7c566a772e6b6bfb58ed0dc250532a479d7789f is actions/upload-artifact v6.0.0, not v6.9.9'
expect_out 'job compare: step 3: actions/upload-artifact@b7c566a772e6b6bfb58ed0dc250532a479d7789f: a commit needs its release in a comment'
expect_out 'job comment: has write permission but runs on forks.* pull requests'
expect_out 'action.yml: step [0-9]+ \(Fetch benchtrap at ref\): github.action_repository and action_ref are empty'
expect_out 'job compare: step 1: actions/download-artifact@v6 runs on the deprecated'
expect_out 'job measure: has write permission and checks out or runs'
expect_out 'job comment: has write permission but does not post the comment'
expect_out 'edit-last'
expect_out 'GitLab CI.*not valid bash'

# ---- the base worktree, twice in one workspace ------------------------------
repo=$TMP/ws/project
mkdir -p "$repo" && cd "$repo" || fail "cd $repo"
git init -q . && git config user.email ci@example.com && git config user.name ci
echo base >version && git add version && git commit -qm base
echo head >version && git commit -qam head
for i in 1 2; do
	"$CI/base-worktree.sh" ../base HEAD~1 >"$TMP/out" 2>"$TMP/err"
	status=$? out=$(cat "$TMP/out") err=$(cat "$TMP/err")
	expect_status 0
	checks=$((checks + 1))
	[[ $(cat ../base/version) == base ]] || fail "run $i: ../base does not hold the base commit"
done
# Locked, with files of an earlier build in it.
mkdir -p ../base/build && touch ../base/build/stale.o && git worktree lock ../base
"$CI/base-worktree.sh" ../base HEAD >/dev/null 2>"$TMP/err" || fail "locked worktree: $(cat "$TMP/err")"
checks=$((checks + 1))
[[ $(cat ../base/version) == head && ! -e ../base/build/stale.o ]] || fail "the locked worktree was not made again"
# The project cloned again (GitLab's clone strategy): ../base stays behind,
# registered nowhere.
rm -rf .git/worktrees
"$CI/base-worktree.sh" ../base HEAD~1 >/dev/null 2>"$TMP/err" || fail "worktree of a gone clone: $(cat "$TMP/err")"
checks=$((checks + 1))
[[ $(cat ../base/version) == base ]] || fail "the worktree of a gone clone was not made again"
# A directory that is no worktree of ours is left alone, with one line.
mkdir -p ../mine && echo keep >../mine/file
"$CI/base-worktree.sh" ../mine HEAD >"$TMP/out" 2>"$TMP/err"
status=$? out=$(cat "$TMP/out") err=$(cat "$TMP/err")
expect_status 2
expect_err 'mine exists and is not a worktree of .*: remove it or choose another DIR'
checks=$((checks + 1))
[[ $(cat ../mine/file) == keep ]] || fail "a directory that was not ours was touched"

# GitLab's lines of docs/ci.md, twice, on the same workspace: the old
# `git worktree add ../base` failed the second time.
"$PY" - "$SOURCE_ROOT/docs/ci.md" >"$TMP/gitlab.sh" <<'PY'
import re, sys, yaml
md = open(sys.argv[1]).read()
for b in re.findall(r"```yaml\n(.*?)```", md, re.S):
    d = yaml.safe_load(b)
    if "jobs" not in d:
        print("set -e")
        print("\n".join(l for l in d["benchmarks"]["script"] if "worktree" in l))
PY
checks=$((checks + 1))
[[ $(grep -c worktree "$TMP/gitlab.sh") -ge 2 ]] || fail "no worktree lines in GitLab's pipeline"
git branch -q base-branch HEAD~1
git fetch -q . base-branch # FETCH_HEAD, as the pipeline's fetch of the base
for i in 1 2; do
	BASE_DIR=$repo/.benchtrap-base bash "$TMP/gitlab.sh" >/dev/null 2>"$TMP/err" ||
		fail "GitLab's worktree lines, run $i: $(cat "$TMP/err")"
	checks=$((checks + 1))
	[[ $(cat .benchtrap-base/version) == base ]] || fail "GitLab run $i: no base checkout"
done
cd "$TMP" || fail "cd $TMP"

# ---- the action's own steps, run by bash as GitHub runs them -----------------
# step NAME: the run: script of action.yml's step NAME, on stdout.
step() {
	"$PY" - "$SOURCE_ROOT/action.yml" "$1" <<'PY'
import sys, yaml
for s in yaml.safe_load(open(sys.argv[1]))["runs"]["steps"]:
    if s.get("name") == sys.argv[2]:
        print(s["run"])
        sys.exit(0)
sys.exit("no step named " + sys.argv[2])
PY
}
# Building base and head, twice in the same workspace, as a self-hosted
# runner does: the base worktree is made again, the build runs in both.
cd "$repo" || fail "cd $repo"
step 'Build base and head' >"$TMP/build-step.sh" || fail "no build step"
for i in 1 2; do
	SRC=$SOURCE_ROOT BASE_DIR=$TMP/runner-temp/benchtrap-base BASE_REF=HEAD~1 \
		BUILD='cat version >built-from' bash -e "$TMP/build-step.sh" >/dev/null 2>"$TMP/err" ||
		fail "the build step, run $i: $(cat "$TMP/err")"
	checks=$((checks + 1))
	[[ $(cat built-from) == head && $(cat "$TMP/runner-temp/benchtrap-base/built-from") == base ]] ||
		fail "the build step, run $i, did not build head and base"
done
# Fetching benchtrap at a ref. Inside a composite action
# github.action_repository is empty: the URL the step used to make of it was
# the server's alone. Without the input repository the step now stops with
# one line and fetches nothing; with owner/name it fetches from the server,
# with a path or URL from there.
step 'Fetch benchtrap at ref' >"$TMP/fetch-step.sh" && step "The build's cache key" >"$TMP/key-step.sh" ||
	fail "no fetch or key step"
SRCDIR=$TMP/runner-temp/benchtrap-src
fetch() {
	rm -rf "$SRCDIR"
	SERVER=$TMP/server REF=$1 REPOSITORY=$2 DIR=$SRCDIR bash -e "$TMP/fetch-step.sh" >"$TMP/out" 2>"$TMP/err"
	status=$? out=$(cat "$TMP/out") err=$(cat "$TMP/err")
}
fetch v0.1.0 ''
expect_status 2
expect_out "^::error::benchtrap: ref 'v0.1.0' needs the input repository"
checks=$((checks + 1))
[[ ! -e $SRCDIR ]] || fail "the fetch step without repository made $SRCDIR"
fetch v0.1.0 'o/b; rm -rf /'
expect_status 2
expect_out "repository 'o/b; rm -rf /' is neither owner/name nor a git URL"
if git -C "$SOURCE_ROOT" rev-parse --verify -q HEAD >/dev/null; then
	want=$(git -C "$SOURCE_ROOT" rev-parse HEAD)
	mkdir -p "$TMP/server/owner" && ln -s "$SOURCE_ROOT" "$TMP/server/owner/benchtrap"
	for repository in owner/benchtrap "$SOURCE_ROOT" "file://$SOURCE_ROOT"; do
		fetch HEAD "$repository"
		expect_status 0
		checks=$((checks + 1))
		[[ $(git -C "$SRCDIR" rev-parse HEAD) == "$want" ]] || fail "fetched from $repository: not $want"
	done
else
	echo "note: the source is no git checkout: the fetch step is not run, the key is of a copy"
	mkdir -p "$SRCDIR"
	tar -C "$SOURCE_ROOT" --exclude=./.git --exclude='./build*' -cf - . | tar -C "$SRCDIR" -xf -
fi

# The cache key of what was fetched: the same source gives the same key, a
# change to any file the build reads another. As fetched (a git checkout)
# and as the runner unpacks the action (no .git: every file).
key() {
	: >"$TMP/key-out"
	SRC=$1 SCRIPTS=$SOURCE_ROOT/scripts/ci PREFIX=$TMP/runner-temp/benchtrap \
		GITHUB_OUTPUT=$TMP/key-out bash -e "$TMP/key-step.sh" || fail "the key step"
	sed -n 's/^key=//p' "$TMP/key-out"
}
unpacked=$TMP/runner-temp/unpacked
mkdir -p "$unpacked" && cp -r "$SRCDIR"/. "$unpacked/" && rm -rf "$unpacked/.git"
for src in "$SRCDIR" "$unpacked"; do
	k1=$(key "$src") k2=$(key "$src")
	checks=$((checks + 1))
	[[ $k1 =~ ^benchtrap-[a-z0-9.-]+-$(uname -m)-[0-9a-f]{8}-[0-9a-f]{16}$ && $k1 == "$k2" ]] ||
		fail "cache keys of $src: $k1 $k2"
	# One tracked file under each directory the build reads (sources,
	# meson files, scripts, man pages and docs, completions, benches,
	# tests and their fixtures), and the top-level meson files.
	changed=0 files=()
	for dir in controller target-stub scripts docs/man docs completions benches tests/fixtures tests; do
		f=$(cd "$src" && find "$dir" -maxdepth 1 -type f | LC_ALL=C sort | head -n1)
		[[ $f ]] || fail "no file under $dir of $src"
		files+=("$f")
	done
	for f in "${files[@]}" meson.build meson_options.txt; do
		cp "$src/$f" "$TMP/keep"
		echo >>"$src/$f"
		k3=$(key "$src")
		cp "$TMP/keep" "$src/$f"
		checks=$((checks + 1))
		[[ $k3 != "$k1" ]] || fail "the key of $src did not change with $f"
		changed=$((changed + 1))
	done
	checks=$((checks + 1))
	[[ $(key "$src") == "$k1" ]] || fail "the key of $src is not back to $k1"
	echo "cache key of ${src##*/}: $k1; another after a change to each of $changed files"
done
# The fetched checkout and the unpacked copy of the same files: one key.
checks=$((checks + 1))
[[ $(key "$SRCDIR") == $(key "$unpacked") ]] || fail "a checkout and its unpacked copy have two keys"
cd "$TMP" || fail "cd $TMP"

# ---- the comment of 1000 benchmarks -----------------------------------------
# 100 regressed (+50%), 100 improved (-30%), 800 unchanged, 1 failed in head.
"$PY" - "$MAKE" "$TMP" <<'PY'
import subprocess, sys
make, tmp = sys.argv[1], sys.argv[2]
base, head = [], []
for i in range(1000):
    c = 1500 if i % 10 == 0 else 700 if i % 10 == 1 else 1000
    base.append("bench_with_a_longer_name_%04d=1000~5x30" % i)
    head.append("bench_with_a_longer_name_%04d=%d~5x30" % (i, c))
base.append("crashy=1000~5x30")
head.append("crashy=failed")
subprocess.run([sys.executable, make, tmp + "/base.json", "--build-id", "aa"] + base, check=True)
subprocess.run([sys.executable, make, tmp + "/head.json", "--build-id", "bb", "--seed", "2"] + head,
               check=True)
PY
: >"$TMP/summary.md" && : >"$TMP/gh-output"
BT=$BENCHTRAP BT_BASE=$TMP/base.json BT_HEAD=$TMP/head.json BT_OUT=$TMP/c1000 BT_COMMENT=true \
	BT_COMMENT_ID=benchmarks/compare GITHUB_OUTPUT=$TMP/gh-output GITHUB_STEP_SUMMARY=$TMP/summary.md \
	GITHUB_SERVER_URL=https://github.com GITHUB_REPOSITORY=o/r GITHUB_RUN_ID=42 \
	"$CI/compare.sh" >"$TMP/out" 2>"$TMP/err"
status=$? out=$(cat "$TMP/out") err=$(cat "$TMP/err")
expect_status 0 # the gate is the action's next step
expect_err 'compare exited 1'
checks=$((checks + 1))
grep -qx 'status=1' "$TMP/gh-output" || fail "GITHUB_OUTPUT has no status=1: $(cat "$TMP/gh-output")"
full=$(wc -c <"$TMP/c1000/report.md") comment=$(wc -c <"$TMP/c1000/comment.md")
echo "1000 benchmarks: the whole report $full bytes, the comment $comment bytes"
checks=$((checks + 1))
((full > 65536 && comment <= 65000)) || fail "report $full bytes, comment $comment bytes"
# The job summary has the whole report, once.
checks=$((checks + 1))
[[ $(grep -c '^### benchtrap:' "$TMP/summary.md") -eq 1 ]] && grep -q '<details>' "$TMP/summary.md" ||
	fail "the job summary does not hold the whole report once"
out=$(cat "$TMP/c1000/comment.md")
checks=$((checks + 1))
[[ $(head -n1 "$TMP/c1000/comment.md") == '<!-- benchtrap: benchmarks/compare -->' ]] ||
	fail "the comment does not start with its marker"
expect_out '^\*\*100 regressed\*\*, 100 improved, 800 unchanged, \*\*1 failed\*\*'
expect_no_out '<details>'
expect_out 'not shown here\*\* \(at most [0-9]+ bytes\): see \[the full report\]\(https://github.com/o/r/actions/runs/42\)\.$'
# Failed first, then every regression, then improvements: the table's rows
# in order of their verdicts.
order=$(grep -oE '^\| [^|]+ \|.*\| (\*\*)?(failed|regressed|improved|unchanged)(\*\*)? \|' "$TMP/c1000/comment.md" |
	sed -E 's/.*\| (\*\*)?([a-z]+)(\*\*)? \|$/\2/' | uniq -c | awk '{print $2 ":" $1}' | tr '\n' ' ')
echo "comment rows: $order"
checks=$((checks + 1))
[[ $order =~ ^failed:1\ regressed:100\ improved:[1-9][0-9]*\ $ ]] || fail "rows in the wrong order: $order"
shown=$(grep -oE '^\*\*[0-9]+ more changed' "$TMP/c1000/comment.md" | grep -oE '[0-9]+')
imp=${order##*improved:}
checks=$((checks + 1))
((${imp% } + ${shown:-0} == 100)) || fail "improved shown ${imp% } + not shown ${shown:-0} != 100"

# The HTML report of the comparison, for the artifact: named in
# GITHUB_OUTPUT, every benchmark of both files in it.
checks=$((checks + 1))
grep -qx "html=$TMP/c1000/report.html" "$TMP/gh-output" || fail "GITHUB_OUTPUT has no html=: $(cat "$TMP/gh-output")"
checks=$((checks + 1))
grep -q 'bench_with_a_longer_name_0999' "$TMP/c1000/report.html" && grep -q 'crashy' "$TMP/c1000/report.html" ||
	fail "the HTML report does not hold the comparison's benchmarks"
# With a history on the default branch: head's results added as the
# commit, history check's findings beside the report, its series in it.
hist() {
	BT=$BENCHTRAP BT_BASE=$TMP/base.json BT_HEAD=$1 BT_OUT=$TMP/h BT_HISTORY=$TMP/h.db \
		BT_HISTORY_ADD=true GITHUB_SHA=$2 GITHUB_STEP_SUMMARY= "$CI/compare.sh" >/dev/null 2>"$TMP/err" ||
		fail "compare.sh with a history: $(cat "$TMP/err")"
}
hist "$TMP/base.json" 0000001
hist "$TMP/head.json" 0000002
checks=$((checks + 1))
[[ $("$BENCHTRAP" history list --db "$TMP/h.db" --format json | jq '[.runs[].commit] == ["0000001", "0000002"]') == true ]] ||
	fail "the history does not hold both runs: $("$BENCHTRAP" history list --db "$TMP/h.db")"
out=$(cat "$TMP/h/history.txt")
expect_out 'series checked'
checks=$((checks + 1))
grep -q 'data-kind="history"' "$TMP/h/report.html" || fail "the HTML report has no history"

# A smaller limit cuts changed rows too, and says how many.
BT=$BENCHTRAP BT_BASE=$TMP/base.json BT_HEAD=$TMP/head.json BT_OUT=$TMP/c12k BT_COMMENT=true \
	BT_MAX_BYTES=12000 GITHUB_STEP_SUMMARY= "$CI/compare.sh" >/dev/null 2>"$TMP/err" || fail "$(cat "$TMP/err")"
comment=$(wc -c <"$TMP/c12k/comment.md")
rows=$(grep -cE '^\| bench_with' "$TMP/c12k/comment.md")
left=$(grep -oE '^\*\*[0-9]+ more changed benchmarks and 800 unchanged are not shown' "$TMP/c12k/comment.md" |
	grep -oE '^\*\*[0-9]+' | tr -d '*')
echo "at 12000 bytes: $comment bytes, $rows rows of benchmarks, ${left:-no} more not shown"
checks=$((checks + 1))
((comment <= 12000 && rows > 0 && ${left:-0} > 0 && rows + left == 200)) ||
	fail "at 12000 bytes: $comment bytes, $rows rows, ${left:-?} left"

# Results that match nothing: said, exit 2 (the action's step fails).
BT=$BENCHTRAP BT_RESULTS="$TMP/none-*.json $TMP/base.json" BT_OUT=$TMP/none "$CI/compare.sh" >"$TMP/out" 2>"$TMP/err"
status=$? out=$(cat "$TMP/out") err=$(cat "$TMP/err")
expect_status 2
expect_err "no results file matches '.*/none-\*\.json'"

# The options themselves: bad values are one line and exit 2.
run compare "$TMP/base.json" "$TMP/head.json" --max-bytes 60000
expect_usage_error '--max-bytes applies to --format markdown'
run compare "$TMP/base.json" "$TMP/head.json" --format markdown --max-bytes 0
expect_usage_error '--max-bytes wants a size in bytes'
run compare "$TMP/base.json" "$TMP/head.json" --format markdown --max-bytes 100
expect_usage_error '--max-bytes 100 is too small'
run compare "$TMP/base.json" "$TMP/head.json" --format markdown --full-report 'http://x/a b'
expect_usage_error '--full-report wants a URL without spaces'
# A limit the whole report fits in changes nothing.
run compare "$TMP/base.json" "$TMP/head.json" --format markdown
cp "$TMP/out" "$TMP/whole.md"
run compare "$TMP/base.json" "$TMP/head.json" --format markdown --max-bytes 1000000 --full-report https://x/1
checks=$((checks + 1))
cmp -s "$TMP/out" "$TMP/whole.md" || fail "a report under the limit was changed"

# ---- posting by marker, through a fake gh -----------------------------------
mkdir -p "$TMP/bin"
cat >"$TMP/bin/gh" <<'SH'
#!/usr/bin/env bash
# Records each call; lists FAKE_COMMENTS through the --jq filter given, as
# gh does; records the body a PATCH or POST would send.
printf '%s\n' "$*" >>"$FAKE_LOG"
[[ $1 == api ]] || exit 3
shift
method=GET jq= body=
while (($#)); do
	case $1 in
	--method) method=$2; shift ;;
	--jq) jq=$2; shift ;;
	-F) [[ $2 == body=@* ]] && body=${2#body=@}; shift ;;
	--paginate) ;;
	*) path=$1 ;;
	esac
	shift
done
if [[ $method == GET ]]; then
	jq -r "$jq" <"$FAKE_COMMENTS"
else
	echo "$method $path" >>"$FAKE_LOG.writes"
	cat "$body" >"$FAKE_LOG.body"
	echo '{}'
fi
SH
chmod +x "$TMP/bin/gh"
export FAKE_LOG=$TMP/gh.log FAKE_COMMENTS=$TMP/comments.json
post() {
	rm -f "$FAKE_LOG" "$FAKE_LOG.writes" "$FAKE_LOG.body"
	PATH=$TMP/bin:$PATH "$CI/post-comment.sh" "$@" >"$TMP/out" 2>"$TMP/err"
	status=$? out=$(cat "$TMP/out") err=$(cat "$TMP/err")
}
cat >"$TMP/comments.json" <<'JSON'
[{"id": 11, "user": {"login": "someone"}, "body": "<!-- benchtrap: benchmarks/compare -->\nquoted by a person"},
 {"id": 12, "user": {"login": "github-actions[bot]"}, "body": "<!-- benchtrap: nightly/compare -->\nanother workflow's"},
 {"id": 13, "user": {"login": "github-actions[bot]"}, "body": "a comment that quotes\n<!-- benchtrap: benchmarks/compare -->"},
 {"id": 14, "user": {"login": "github-actions[bot]"}, "body": "<!-- benchtrap: benchmarks/compare -->\r\nour last one"},
 {"id": 15, "user": {"login": "github-actions[bot]"}, "body": null}]
JSON
post o/r 7 "$TMP/c1000/comment.md"
expect_status 0
expect_out 'updated comment 14 of #7'
checks=$((checks + 1))
[[ $(cat "$FAKE_LOG.writes") == "PATCH repos/o/r/issues/comments/14" ]] || fail "wrote: $(cat "$FAKE_LOG.writes")"
cmp -s "$FAKE_LOG.body" "$TMP/c1000/comment.md" || fail "the body sent is not the comment"
grep -q -- '--paginate repos/o/r/issues/7/comments' "$FAKE_LOG" || fail "comments not listed: $(cat "$FAKE_LOG")"
# None of ours yet: one is posted, and nothing else is edited.
echo '[{"id": 12, "user": {"login": "github-actions[bot]"}, "body": "<!-- benchtrap: nightly/compare -->"}]' \
	>"$TMP/comments.json"
post o/r 7 "$TMP/c1000/comment.md"
expect_status 0
expect_out 'commented on #7'
checks=$((checks + 1))
[[ $(cat "$FAKE_LOG.writes") == "POST repos/o/r/issues/7/comments" ]] || fail "wrote: $(cat "$FAKE_LOG.writes")"
# A file without the marker, a number that is not one: refused, nothing sent.
printf 'no marker\n' >"$TMP/plain.md"
post o/r 7 "$TMP/plain.md"
expect_status 2
expect_err 'does not start with a <!-- benchtrap: ID --> marker'
post o/r 'x; rm' "$TMP/c1000/comment.md"
expect_status 2
checks=$((checks + 1))
[[ ! -e $FAKE_LOG ]] || fail "gh was called on bad input: $(cat "$FAKE_LOG")"
done_ok
