#!/usr/bin/env bash
# target-stub binaries on their own (no controller): the smoke-test mode runs
# every benchmark once and prints its name; BENCHTRAP_RUN runs one. And
# benchtrap list finds the example suite's benchmarks in the file.
. "$(dirname "$0")/lib.sh"
EX=$BUILD_ROOT/benches/examples
expected="empty loop_300ns fib[10] fib[15] fib[20] allocator_ripple_1 allocator_ripple_2 allocator_ripple_3 threaded_pool optimized_away syscall_getppid "

run_target() {
	"$@" >"$TMP/out" 2>"$TMP/err"
	status=$?
	out=$(cat "$TMP/out")
	err=$(cat "$TMP/err")
}

run_target "$EX"
expect_status 0
[[ $(tr '\n' ' ' <<<"$out") == "$expected" ]] || fail "standalone run must print every benchmark"

run_target env BENCHTRAP_RUN='fib[15]' "$EX"
expect_status 0
[[ -z $out ]] || fail "BENCHTRAP_RUN prints nothing on success"

run_target env BENCHTRAP_RUN='nope' "$EX"
expect_status 2
expect_err "^benchtrap: no benchmark named 'nope'"

# The same names from the file alone.
run list "$EX"
expect_status 0
[[ $(awk 'NR>1{printf "%s ", $1}' <<<"$out") == "$expected" ]] || fail "list must show the suite in source order"
run list "$EX" --json
expect_json '[b["symbol"] for b in d["benchmarks"]][:2] == ["benchtrap_bench_empty", "benchtrap_bench_loop_300ns"]'
run list "$EX" --filter 'allocator_ripple_*'
expect_status 0
[[ $(wc -l <<<"$out") -eq 4 ]] || fail "three allocator_ripple benchmarks"

# Every stub fixture build runs standalone too.
for v in pie_O0 nopie_O2 lto_O3 static_O2 staticpie_O2; do
	run_target "$FIXTURES/elf/stub_$v"
	expect_status 0
	[[ $(tr '\n' ' ' <<<"$out") == "alpha beta[1] beta[2] beta[-3] gamma_uses_lib " ]] ||
		fail "stub_$v standalone"
done

# benchtrap.h from C++ (tests/fixtures/elf/cxx_stub.cc): standalone, listed
# from the file in source order, and measured.
cxx_expected="cxx_kinds cxx_fib[5] cxx_fib[10] cxx_atomic[threads=1] cxx_atomic[threads=2] "
cxx_found=0
for v in cxx11 cxx17 clang; do
	x=$FIXTURES/elf/cxx_stub_$v
	[[ -x $x ]] || continue
	cxx_found=$((cxx_found + 1))
	run_target "$x"
	expect_status 0
	[[ $(tr '\n' ' ' <<<"$out") == "$cxx_expected" ]] || fail "cxx_stub_$v standalone"
	run list "$x"
	expect_status 0
	[[ $(awk 'NR>1{printf "%s ", $1}' <<<"$out") == "$cxx_expected" ]] ||
		fail "list must show cxx_stub_$v's benchmarks in source order"
	# g++ keeps the C names of the static extern "C" functions; clang++
	# mangles them (_ZL25benchtrap_bench_cxx_kindsv).
	run list "$x" --json
	expect_json 'all("benchtrap_bench_" + b["name"].split("[")[0] in b["symbol"] for b in d["benchmarks"])'
	run run "$x" --time 0.05 --warmup 0 --max-samples 3 --format json
	expect_status 0
	expect_json '[b["name"] for b in d["benchmarks"]] == "'"$cxx_expected"'".split()'
	expect_json 'all(b["status"] == "ok" and b["error"] is None for b in d["benchmarks"])'
done
if [[ $cxx_found -eq 0 ]]; then
	echo "no C++ compiler found at configure time: benchtrap.h's C++ checks skipped"
elif [[ ! -x $FIXTURES/elf/cxx_stub_clang ]]; then
	echo "clang++ not found at configure time: benchtrap.h checked with the C++ compiler only"
fi

done_ok
