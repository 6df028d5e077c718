#!/usr/bin/env bash
# Run one libFuzzer target and print one line of figures: FUZZ_RUNS inputs
# from the fixed seed FUZZ_SEED (default 1), the same inputs on every run and
# machine, or else FUZZ_SECONDS (default 20) from a random seed. Exit 0 when
# nothing was found, 1 on a finding (the input is kept under OUT/findings/),
# 77 when the target cannot run here.
# Usage: run.sh TARGET NAME OUT REGRESSIONS_DIR [SEED...]
#   SEED: a file, or a directory whose files are seeds
set -uo pipefail
target=$1 name=$2 out=$3 regressions=$4
shift 4
seconds=${FUZZ_SECONDS:-20}
if [[ -n ${FUZZ_RUNS:-} ]]; then
	budget=("-runs=$FUZZ_RUNS" "-seed=${FUZZ_SEED:-1}")
	# Without address randomization: libFuzzer learns from the values
	# compared, pointers among them, so that the same seed makes the same
	# inputs.
	fixed=(setarch "$(uname -m)" -R)
	"${fixed[@]}" true 2>/dev/null || fixed=()
else
	budget=("-max_total_time=$seconds")
	fixed=()
fi

[[ -x $target ]] || { echo "fuzz-$name: $target is not built (skipped)"; exit 77; }

# The work corpus starts afresh from the seeds on every run; findings stay.
rm -rf "$out/corpus" "$out/seeds"
mkdir -p "$out/corpus" "$out/seeds" "$out/findings"
for s in "$@"; do
	if [[ -d $s ]]; then
		find "$s" -maxdepth 1 -type f ! -name '.*' -exec cp -t "$out/seeds" {} +
	elif [[ -f $s ]]; then
		cp "$s" "$out/seeds/"
	fi
done
if [[ $name == elf ]]; then
	# Seeds without their debug sections (symbols stay): libFuzzer cuts
	# inputs to 1 MiB, which would lose the section headers at the end of
	# a large file, and the debug sections name the build directory, which
	# would make the seeds, and so a fixed-seed run, differ from checkout
	# to checkout.
	for f in "$out"/seeds/*; do
		objcopy --strip-debug "$f" "$f.nodebug" 2>/dev/null && mv "$f.nodebug" "$f"
		rm -f "$f.nodebug"
	done
	# The vDSO this machine maps into every process, as walltime reads it.
	python3 - "$out/seeds/vdso" <<'PY' 2>/dev/null || true
import sys
for line in open("/proc/self/maps"):
    if line.rstrip().endswith("[vdso]"):
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        with open("/proc/self/mem", "rb") as m:
            m.seek(lo)
            open(sys.argv[1], "wb").write(m.read(hi - lo))
PY
fi
if [[ $name == results ]]; then
	# Pairs for compare and merge: BASE, a NUL byte, HEAD.
	samples=("$out"/seeds/*.json)
	for ((i = 0; i + 1 < ${#samples[@]}; i++)); do
		{ cat "${samples[i]}"; printf '\0'; cat "${samples[i + 1]}"; } \
			>"$out/seeds/pair-$i"
	done
fi
dirs=("$out/corpus" "$out/seeds")
[[ -d $regressions ]] && dirs+=("$regressions")
dict=()
[[ -n ${FUZZ_DICT:-} && -f $FUZZ_DICT ]] && dict=("-dict=$FUZZ_DICT")

before=$(find "$out/findings" -type f | wc -l)
log="$out/log"
# libFuzzer's own exit code on a finding is 77, which meson reads as
# "skipped": make every finding exit 1. ASan must abort for libFuzzer to
# keep the input; leaks are findings too.
ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
"${fixed[@]}" "$target" "${budget[@]}" -timeout=60 -rss_limit_mb=4096 \
	-error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
	-artifact_prefix="$out/findings/" "${dict[@]}" "${dirs[@]}" >"$log" 2>&1
rc=$?
after=$(find "$out/findings" -type f | wc -l)

stat=$(grep -E '^#[0-9]+' "$log" | tail -1)
cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$stat")
ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$stat")
corp=$(sed -nE 's/.* corp: ([0-9]+).*/\1/p' <<<"$stat")
runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log")
time=$(sed -nE 's/^Done [0-9]+ runs in ([0-9]+) second.*/\1/p' "$log")
found=$((after - before))
printf 'fuzz-%s: %s executions in %s s, cov %s, ft %s, corpus %s, findings %s%s\n' \
	"$name" "${runs:-?}" "${time:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" \
	"$found" "$( ((found || rc)) && echo " (see $out/findings/ and $log)")" |
	tee "$out/summary"
if ((rc != 0)); then
	# the report of the finding, for the test log
	grep -E -A40 '^==[0-9]+==ERROR|runtime error|^ALARM|out-of-memory|deadly signal' "$log" |
		head -60
	exit 1
fi
exit 0
