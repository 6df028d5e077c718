#!/usr/bin/env bash
# Which file of a library list and run name: the one the program's own
# dynamic loader loads. hwprog's DT_RUNPATH directory holds libhwfx.so and
# glibc-hwcaps/x86-64-v2/libhwfx.so; on a CPU that supports x86-64-v2 the
# loader takes the second, which alone has hwfx_v2_only (the first alone
# has hwfx_base_only). Also: LD_LIBRARY_PATH, a child whose environment
# resolves another file (--clean-env), a library not found, an
# interpreter that is not there.
. "$(dirname "$0")/lib.sh"
HW=$FIXTURES/elf/hwcaps
FAST=(--time 0.05 --warmup 0 --sample-time 0.002 --min-samples 5)
V2=/glibc-hwcaps/x86-64-v2/libhwfx.so

# meson's test environment points LD_LIBRARY_PATH at the build's libraries.
unset LD_LIBRARY_PATH

# The program itself says which build its loader loaded.
level=$("$HW/hwprog") || fail "hwprog did not run"
if [[ $level != "hwfx level 2" ]]; then
	echo "SKIP: the dynamic loader does not pick glibc-hwcaps/x86-64-v2 here ($level)"
	exit 77
fi

# list: the library the loader loads, and its functions only.
run list "$HW/hwprog" --symbols --filter 'hwfx_*' --json
expect_status 0
expect_json '{s["name"]: s["object"].endswith("'$V2'") for s in d["symbols"]} == {"hwfx_level": True, "hwfx_v2_only": True}'
expect_json 'any(l["path"].endswith("'$V2'") for l in d["libraries"]) and d["missing_libraries"] == []'
run list "$HW/hwprog" --symbols --filter 'hwfx_base_only'
expect_usage_error "no function matches 'hwfx_base_only'"

# run: the same library, by name and by address in the child.
run run "$HW/hwprog" --symbol hwfx_v2_only --symbol hwfx_level "${FAST[@]}" --format json
expect_status 0
expect_json '[(b["name"], b["status"], b["object"].endswith("'$V2'")) for b in d["benchmarks"]] == [("hwfx_v2_only", "ok", True), ("hwfx_level", "ok", True)]'
run run "$HW/hwprog" --symbol hwfx_base_only
expect_usage_error "hwprog: no function matches 'hwfx_base_only' \(did you mean 'hwfx_v2_only' \(libhwfx.so\)\?\)$"
expect_no_orphans "$HW/hwprog"

# LD_LIBRARY_PATH comes before DT_RUNPATH: a copy of the baseline build
# there is what the loader takes, for list and for run alike.
mkdir "$TMP/other"
cp "$HW/libhwfx.so" "$TMP/other/"
export LD_LIBRARY_PATH=$TMP/other
run list "$HW/hwprog" --symbols --filter 'hwfx_*' --json
expect_status 0
expect_json 'sorted(s["name"] for s in d["symbols"] if s["object"] == "'"$TMP"'/other/libhwfx.so") == ["hwfx_base_only", "hwfx_level"]'
run run "$HW/hwprog" --symbol hwfx_base_only "${FAST[@]}" --format json
expect_status 0
expect_json 'd["benchmarks"][0]["status"] == "ok" and d["benchmarks"][0]["object"] == "'"$TMP"'/other/libhwfx.so" and not any(x.startswith("called in") for x in d["benchmarks"][0]["diagnostics"])'

# --clean-env: the child has no LD_LIBRARY_PATH and loads the hwcaps
# build. The function is called where the child mapped it, and the result
# says so; a function that file lacks fails with that reason.
run run "$HW/hwprog" --symbol hwfx_level --clean-env "${FAST[@]}" --format json
expect_status 0
expect_json 'd["benchmarks"][0]["status"] == "ok" and any(x.startswith("called in ") and "'$V2', the library the program loaded, not in '"$TMP"'/other/libhwfx.so" in x for x in d["benchmarks"][0]["diagnostics"])'
run run "$HW/hwprog" --symbol hwfx_base_only --clean-env "${FAST[@]}" --format json
expect_status 1
expect_json '"'$V2', not '"$TMP"'/other/libhwfx.so, and it has no function hwfx_base_only" in d["benchmarks"][0]["error"]'
expect_no_orphans "$HW/hwprog"
unset LD_LIBRARY_PATH

# A library the loader does not find: named by list, and by run when the
# function is not found elsewhere.
cp "$HW/hwprog" "$TMP/alone"
run list "$TMP/alone" --symbols --filter main
expect_status 0
expect_err 'library libhwfx.so not found'
run run "$TMP/alone" --symbol hwfx_level
expect_usage_error "no function matches 'hwfx_level', and library libhwfx.so was not found"

# An interpreter that is not on this machine: list lists the binary and
# says why its libraries are not; run refuses it with that reason.
NOINTERP=/nonexistent/ld-benchtrap.so.1/padding-for-a-test-to-write-a-path-over-it
run list "$HW/nointerp" --symbols --filter main
expect_status 0
expect_out ' nointerp +main$'
expect_err "nointerp: its interpreter $NOINTERP is not on this machine: it cannot run here"
run run "$HW/nointerp" --symbol main
expect_usage_error "nointerp: its interpreter $NOINTERP is not on this machine, so it cannot run here"

# An interpreter that anyone may have written is not started: a copy of
# the system's loader, group-writable, named by a copy of the program.
# The libraries are then searched for by the loader's rules (which find
# the baseline build next to it through DT_RUNPATH $ORIGIN), with a note.
cp "$(readelf -l "$HW/hwprog" | sed -n 's/.*interpreter: \(.*\)\]/\1/p')" "$TMP/ld.so"
chmod 775 "$TMP/ld.so"
cp "$HW/libhwfx.so" "$TMP/"
python3 - "$HW/nointerp" "$TMP/own-interp" "$NOINTERP" "$TMP/ld.so" <<'PY'
import sys
src, dst, old, new = sys.argv[1:]
data = open(src, "rb").read()
old, new = old.encode(), new.encode()
assert data.count(old + b"\0") == 1 and len(new) <= len(old)
open(dst, "wb").write(data.replace(old, new.ljust(len(old), b"\0")))
PY
chmod +x "$TMP/own-interp"
run list "$TMP/own-interp" --symbols --filter 'hwfx_*' --json
expect_status 0
expect_err "own-interp: its interpreter $TMP/ld.so could not be asked which libraries it loads; they were searched for as it searches"
expect_json 'sorted(s["name"] for s in d["symbols"]) == ["hwfx_base_only", "hwfx_level"]'

done_ok
