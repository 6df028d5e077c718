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

done_ok
