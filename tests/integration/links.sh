#!/usr/bin/env bash
# Links planted by another user in a sticky world-writable directory (/tmp)
# are not followed (docs/results.md, "Output files"): --output, --markers
# and the output directories of --profile, --alloc-stacks and
# --keep-profiles. Run as root, benchtrap would otherwise replace or create
# whatever file such a link names. The links are planted by nobody in a
# scratch sticky directory; the files they lead to are root's, in $TMP.
# A link of the user running benchtrap, or of the directory's owner, is
# followed as before.
. "$(dirname "$0")/lib.sh"
PLAIN=$FIXTURES/run/plain
PROF=$FIXTURES/profile/profile
FAST=(--time 0.05 --warmup 0 --sample-time 0.002 --min-samples 5)
STARTED=$TMP/started
export PLAIN_STARTED=$STARTED

# as_nobody CMD...: CMD run as the unprivileged user nobody.
if [[ $(id -u) != 0 ]]; then
	echo "skip: planting another user's links needs root (setpriv, runuser)"
	exit 77
fi
if setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null; then
	as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
elif runuser -u nobody -- true 2>/dev/null; then
	as_nobody() { runuser -u nobody -- "$@"; }
else
	echo "skip: neither setpriv nor runuser can run a command as nobody"
	exit 77
fi

# nobody reaches $TMP/sticky, a directory like /tmp; nothing else in $TMP.
chmod 711 "$TMP"
STICKY=$TMP/sticky
mkdir -m 1777 "$STICKY"
plant() {
	as_nobody ln -s "$2" "$1" || fail "nobody cannot plant $1"
	[[ $(stat -c %U "$1") == nobody ]] || fail "$1 is not nobody's link"
}

echo precious >"$TMP/victim"
mkdir "$TMP/victim-dir"
expect_victim_intact() {
	checks=$((checks + 1))
	[[ $(cat "$TMP/victim") == precious ]] || fail "the file the planted link names was written"
	[[ -z $(ls -A "$TMP/victim-dir") ]] || fail "a file was made through a planted directory link"
	[[ ! -e $TMP/created ]] || fail "the file a planted dangling link names was created"
}

# Refused before anything runs: one line, exit 2, the program never started.
expect_refused() {
	expect_usage_error "$1"
	checks=$((checks + 1))
	[[ ! -e $STARTED ]] || fail "the program ran although the path was refused"
	expect_victim_intact
}

LINKED="a symbolic link of another user in a sticky directory is not followed"

# ---- --output of run, observe and merge; --markers -----------------------------------------
plant "$STICKY/r.json" "$TMP/victim"
plant "$STICKY/dangling.json" "$TMP/created"
"$BENCHTRAP" run "$PLAIN" --symbol plain_work "${FAST[@]}" --output "$TMP/in.json" \
	>/dev/null 2>&1 || fail "cannot make the merge input"
rm -f "$STARTED"
for path in "$STICKY/r.json" "$STICKY/dangling.json"; do
	run run "$PLAIN" --symbol plain_work "${FAST[@]}" --output "$path"
	expect_refused "cannot write results: $LINKED"
	run observe --symbol plain_work --output "$path" -- "$PLAIN"
	expect_refused "cannot write results: $LINKED"
	run merge "$TMP/in.json" --output "$path"
	expect_refused "cannot write the merged results: $LINKED"
	run run "$PLAIN" --symbol plain_work "${FAST[@]}" --markers "$path"
	expect_refused "cannot write markers: $LINKED"
done
# A chain: root's own link to nobody's link is refused as well.
ln -s "$STICKY/r.json" "$TMP/chain.json"
run run "$PLAIN" --symbol plain_work "${FAST[@]}" --output "$TMP/chain.json"
expect_refused "cannot write results: $LINKED"

# ---- output directories given through a planted link ----------------------------------------
plant "$STICKY/dir" "$TMP/victim-dir"
for d in "$STICKY/dir" "$STICKY/dir/"; do
	run run "$PROF" --bench two_helpers "${FAST[@]}" --profile "$d"
	expect_refused "run: --profile .*: cannot write in it: $LINKED"
	run run "$FIXTURES/memory/allocs" --instrument memory --bench 'blocks[10]' \
		--alloc-stacks "$d"
	expect_refused "run: --alloc-stacks .*: cannot write in it: $LINKED"
	run run "$FIXTURES/callgrind/counted" --instrument callgrind \
		--symbol 'counted_loop(1000)' --keep-profiles "$d"
	expect_refused "run: --keep-profiles .*: cannot write in it: $LINKED"
	run observe --symbol plain_work --profile "$d" -- "$PLAIN"
	expect_refused "observe: --profile .*: cannot write in it: $LINKED"
done

# ---- links planted under the names benchtrap writes in an output directory ------------------
# The sticky directory itself is the --profile directory: the names are
# predictable (000-two_helpers.folded), the links neither followed nor
# replaced; the benchmark is measured, its profile refused in one line.
plant "$STICKY/000-two_helpers.folded" "$TMP/victim"
plant "$STICKY/000-two_helpers.svg" "$TMP/created"
run run "$PROF" --bench two_helpers "${FAST[@]}" --profile "$STICKY"
expect_status 2
checks=$((checks + 1))
[[ $(grep -c '^benchtrap:' <<<"$err") -eq 1 ]] || fail "expected one error line"
expect_err "000-two_helpers.folded: cannot write: something other than a regular file has that name"
expect_victim_intact
checks=$((checks + 1))
[[ -L $STICKY/000-two_helpers.folded && -L $STICKY/000-two_helpers.svg ]] ||
	fail "a planted link in the profile directory was replaced"

# ---- what stays allowed ---------------------------------------------------------------------
# root's own link in the sticky directory: followed, the target replaced,
# the link kept.
echo old >"$TMP/mine.json"
ln -s "$TMP/mine.json" "$STICKY/mine.json"
run run "$PLAIN" --symbol plain_work "${FAST[@]}" --output "$STICKY/mine.json"
expect_status 0
checks=$((checks + 1))
[[ -L $STICKY/mine.json ]] || fail "the user's own link was replaced"
grep -q '"benchmarks"' "$TMP/mine.json" || fail "the user's own link's target was not written"
# A link of the directory's owner: followed (nobody owns this directory).
mkdir -m 1777 "$TMP/nobodys" && chown nobody "$TMP/nobodys"
plant "$TMP/nobodys/r.json" "$TMP/owner.json"
run run "$PLAIN" --symbol plain_work "${FAST[@]}" --output "$TMP/nobodys/r.json"
expect_status 0
checks=$((checks + 1))
grep -q '"benchmarks"' "$TMP/owner.json" || fail "the directory owner's link was not followed"
# A profile directory that is root's own link in the sticky directory.
mkdir "$TMP/prof"
ln -s "$TMP/prof" "$STICKY/myprof"
run run "$PROF" --bench two_helpers "${FAST[@]}" --profile "$STICKY/myprof"
expect_status 0
checks=$((checks + 1))
[[ -s $TMP/prof/000-two_helpers.folded && -s $TMP/prof/000-two_helpers.svg ]] ||
	fail "no profile through the user's own directory link"

done_ok
