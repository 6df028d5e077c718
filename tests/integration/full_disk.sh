#!/usr/bin/env bash
# Output directories on a full file system (a 64 KiB tmpfs filled up):
# --profile of run and observe, --alloc-stacks, --keep-profiles. As for
# --output: one line that says so, exit 2, and no empty or cut file left;
# a profile of an earlier run under the same name is kept as it was.
. "$(dirname "$0")/lib.sh"
PROF=$FIXTURES/profile/profile
FAST=(--time 0.05 --warmup 0 --sample-time 0.002 --min-samples 5)

FULL=$TMP/full
mkdir "$FULL"
if [[ $(id -u) != 0 ]] || ! mount -t tmpfs -o size=64k,mode=0755 benchtrap-full "$FULL" 2>/dev/null; then
	echo "skip: a small tmpfs cannot be mounted here (needs root)"
	exit 77
fi
trap 'if main_shell; then umount "$FULL" 2>/dev/null; rm -rf "$TMP"; fi' EXIT

# An earlier profile, then every block taken.
echo "earlier 1" >"$FULL/000-two_helpers.folded"
dd if=/dev/zero of="$FULL/fill" bs=4k 2>/dev/null
checks=$((checks + 1))
! echo x >"$FULL/probe" 2>/dev/null || fail "the tmpfs is not full"
rm -f "$FULL/probe"

# Exit 2, one 'benchtrap:' line that names the file and the full disk, and
# nothing in the directory but what was there.
expect_full() {
	expect_status 2
	checks=$((checks + 1))
	[[ $(grep -c '^benchtrap:' <<<"$err") -eq 1 ]] || fail "expected exactly one error line"
	grep '^benchtrap:' <<<"$err" | grep -qE -- "$1.*no space left on the device" ||
		fail "the error line does not say /$1/ and the full disk"
	checks=$((checks + 1))
	local left
	left=$(cd "$FULL" && ls -A | grep -vx -e fill -e 000-two_helpers.folded)
	[[ -z $left ]] || fail "files were left on the full file system: $left"
	[[ $(cat "$FULL/000-two_helpers.folded") == "earlier 1" ]] ||
		fail "the earlier profile was destroyed"
}

run run "$PROF" --bench two_helpers "${FAST[@]}" --profile "$FULL"
expect_full "000-two_helpers\.(folded|svg): cannot write"

run observe --symbol work --symbol heavy --profile "$FULL" -- "$FIXTURES/observe/helpers"
expect_full "observe: (work|heavy): not profiled: cannot write .*\.(folded|svg)"

run run "$FIXTURES/memory/allocs" --instrument memory --bench 'blocks[10]' --alloc-stacks "$FULL"
expect_full "000-blocks\[10\]\.folded: cannot write"

if command -v valgrind >/dev/null; then
	run run "$FIXTURES/callgrind/counted" --instrument callgrind --symbol 'counted_loop(1000)' \
		--keep-profiles "$FULL"
	expect_full "000-counted_loop\(1000\)\.callgrind: cannot write"
else
	echo "note: valgrind is not installed: --keep-profiles is not checked"
fi

done_ok
