#!/usr/bin/env bash
# benchtrap list against real fixtures: registered benchmarks, symbols of the
# binary and its libraries, JSON, and every bad input.
. "$(dirname "$0")/lib.sh"
FX=$FIXTURES/elf

# Registered benchmarks, in source order, with argument and symbol.
run list "$FX/stub_pie_O2"
expect_status 0
expect_out '^BENCHMARK +ARG +SYMBOL +ADDRESS$'
expect_out '^alpha +benchtrap_bench_alpha +0x[0-9a-f]+$'
expect_out '^beta\[-3\] +-3 +benchtrap_bench_beta +0x[0-9a-f]+$'
[[ $(sed -n '2p;6p' <<<"$out" | awk '{print $1}' | tr '\n' ' ') == "alpha gamma_uses_lib " ]] ||
	fail "benchmarks not in source order"

# Every build of the same program lists the same benchmarks.
for v in pie_O0 pie_O3 nopie_O2 lto_O3 lto_nopie_O2 static_O2 staticpie_O2 stripped; do
	run list "$FX/stub_$v"
	expect_status 0
	[[ $(awk 'NR>1{print $1}' <<<"$out" | tr '\n' ' ') == "alpha beta[1] beta[2] beta[-3] gamma_uses_lib " ]] ||
		fail "$v: wrong benchmarks"
done

# --filter: globs, and an exact name with brackets.
run list "$FX/stub_pie_O2" --filter 'beta*'
expect_status 0
[[ $(wc -l <<<"$out") -eq 4 ]] || fail "beta* must list 3 benchmarks"
run list --filter 'beta[2]' "$FX/stub_pie_O2"
expect_status 0
expect_out '^beta\[2\] '
expect_no_out '^beta\[1\]'

# JSON.
run list "$FX/stub_nopie_O2" --json
expect_status 0
expect_json 'd["schema"] == "benchtrap-list/1"'
# One document for every kind of suite, naming its kind.
expect_json 'd["framework"] == "benchtrap"'
expect_json 'd["binary"]["pie"] is False and d["binary"]["static"] is False'
expect_json 'len(d["binary"]["build_id"]) == 40'
expect_json '[b["name"] for b in d["benchmarks"]] == ["alpha", "beta[1]", "beta[2]", "beta[-3]", "gamma_uses_lib"]'
expect_json 'd["benchmarks"][3]["args"] == [-3] and d["benchmarks"][0]["args"] == []'
expect_json 'd["benchmarks"][1]["symbol"] == "benchtrap_bench_beta"'

# Symbols of the binary and of the libraries it needs.
run list "$FX/stub_pie_O2" --symbols --filter 'fxlib_*' --filter fixture_known_function
expect_status 0
expect_out ' stub_pie_O2 +fixture_known_function$'
expect_out ' libfxlib\.so +fxlib_work$'
expect_out ' libfxlib\.so +fxlib_other$'
run list "$FX/stub_pie_O2" --symbols --no-libs --filter 'fxlib_*'
expect_usage_error "no function matches 'fxlib_\*'"
run list "$FX/stub_pie_O2" --symbols --filter malloc --json
expect_status 0
expect_json 'any(s["name"] == "malloc" and s["object"].endswith("libc.so.6") and s["exported"] for s in d["symbols"])'
expect_json 'any(l["path"].endswith("libfxlib.so") for l in d["libraries"]) and d["missing_libraries"] == []'
expect_json 'd["framework"] == "benchtrap"'

# A stripped binary: dynamic symbols with a note.
run list "$FX/stub_stripped" --symbols --no-libs
expect_status 0
expect_out 'fixture_known_function'
expect_no_out 'fixture_local_function'
expect_err 'stripped: its local functions are absent'

# A static library's function in a stripped program has no symbol: say
# so, rather than suggest a library's look-alike name.
run list "$FX/static_user_stripped" --symbols --filter fxstatic_compress
expect_usage_error "static_user_stripped: no function matches 'fxstatic_compress': the binary is stripped and exports no such function \(its code may be linked in statically, without a symbol\); list a build that is not stripped$"
run list "$FX/static_user" --symbols --filter fxstatic_compress
expect_status 0
expect_out ' static_user +fxstatic_compress$'

# Demangled C++ and Rust names match by their demangled form.
if [[ -x $FX/cxx_names ]]; then
	run list "$FX/cxx_names" --symbols --no-libs --filter 'fixture::Widget<int>::grow'
	expect_status 0
	expect_out 'fixture::Widget<int>::grow\(int\) +_ZN7fixture6WidgetIiE4growEi( +member function: needs an object)?$'
fi
if [[ -x $FX/rust_v0 ]]; then
	run list "$FX/rust_v0" --symbols --no-libs --filter '*::add_numbers'
	expect_status 0
	expect_out 'fixture_rust::inner::add_numbers +_R'
fi

# An unmodified system binary: xz is stripped, its functions are in liblzma.
if [[ -x /usr/bin/xz ]]; then
	run list /usr/bin/xz
	expect_status 0
	expect_err 'registers no benchmarks with target-stub'
	run list /usr/bin/xz --symbols --filter 'lzma_code'
	expect_status 0
	expect_out '^ *0x[0-9a-f]+ +[0-9]+ +liblzma\.so\.5 +lzma_code$'
	expect_err 'xz is stripped'
fi

# Bad input: one line on stderr, exit 2.
run list /nonexistent/bench
expect_usage_error '/nonexistent/bench: no such file'
run list "$TMP"
expect_usage_error 'is a directory'
printf '#!/bin/sh\necho hi\n' >"$TMP/script"
run list "$TMP/script"
expect_usage_error 'not an ELF binary'
# A corrupt registry: the benchtrap_registry section (found with readelf)
# overwritten with garbage. Its functions are still listed, with one note;
# its benchmarks cannot be, and list and run say why.
cp "$FX/stub_static_O2" "$TMP/bad-registry"
read -r off size < <(readelf -SW "$TMP/bad-registry" |
	awk '$2 == "benchtrap_registry" { print $5, $6 } $3 == "benchtrap_registry" { print $6, $7 }')
[[ -n ${off:-} && -n ${size:-} ]] || fail "no benchtrap_registry section in stub_static_O2"
yes garbage | head -c $((16#$size)) |
	dd of="$TMP/bad-registry" bs=1 seek=$((16#$off)) conv=notrunc status=none
run list "$TMP/bad-registry" --symbols --filter fixture_known_function
expect_status 0
expect_out ' bad-registry +fixture_known_function$'
checks=$((checks + 1))
[[ $(printf '%s\n' "$err" | wc -l) -eq 1 ]] || fail "expected one note line on stderr"
expect_err '^benchtrap: note: .*bad-registry: its benchtrap_registry section is corrupt'
run list "$TMP/bad-registry" --symbols --filter fixture_known_function --json
expect_status 0
expect_json 'd["registry"] == "corrupt" and [s["name"] for s in d["symbols"]] == ["fixture_known_function"]'
run list "$FX/stub_static_O2" --symbols --filter fixture_known_function --json
expect_json 'd["registry"] == "ok"'
run list "$TMP/bad-registry"
expect_usage_error 'bad-registry: its benchtrap_registry section is corrupt, so its benchmarks cannot be read'
run run "$TMP/bad-registry"
expect_usage_error 'bad-registry: its benchtrap_registry section is corrupt, so its benchmarks cannot be read'
head -c 2000 "$FX/stub_pie_O2" >"$TMP/truncated"
run list "$TMP/truncated"
expect_usage_error 'truncated ELF'
python3 - "$TMP" <<'PY'
import struct, sys
d = sys.argv[1]
def hdr(cls, machine):
    ident = b"\x7fELF" + bytes([cls, 1, 1]) + bytes(9)
    if cls == 1:
        return ident + struct.pack("<HHIIIIIHHHHHH", 2, machine, 1, 0, 0, 0, 0, 52, 32, 0, 40, 0, 0)
    return ident + struct.pack("<HHIQQQIHHHHHH", 2, machine, 1, 0, 0, 0, 0, 64, 56, 0, 64, 0, 0)
open(d + "/i386", "wb").write(hdr(1, 3))
open(d + "/aarch64", "wb").write(hdr(2, 183))
open(d + "/riscv", "wb").write(hdr(2, 243))
PY
run list "$TMP/i386"
expect_usage_error '32-bit ELF for i386; benchtrap drives 64-bit x86-64 binaries'
run list "$TMP/aarch64"
expect_usage_error 'ELF for AArch64; benchtrap drives 64-bit x86-64 binaries'
run list "$TMP/riscv"
expect_usage_error 'ELF for RISC-V'
# Every filter must match something.
run list "$FX/stub_pie_O2" --filter alpha --filter 'betta*'
expect_usage_error "no benchmark matches 'betta\*' \(did you mean 'beta"
run list "$FX/stub_pie_O2" --symbols --no-libs --filter qqzzqq
expect_usage_error "filters are globs: '\*qqzzqq\*' matches names that contain it"
mkfifo "$TMP/fifo"
run list "$TMP/fifo"
expect_usage_error 'not an ELF binary'
run list "$FX/stub_pie_O2/inside"
expect_usage_error 'a component of the path is not a directory'
printf '\x7fELF' >"$TMP/magic_only"
run list "$TMP/magic_only"
expect_usage_error 'truncated ELF'
python3 - "$TMP" <<'PY'
import struct, sys
ident = b"\x7fELF" + bytes([2, 2, 1]) + bytes(9)
open(sys.argv[1] + "/ppc64be", "wb").write(ident + struct.pack(">HHIQQQIHHHHHH", 2, 21, 1, 0, 64, 0, 0, 64, 56, 0, 64, 0, 0))
PY
run list "$TMP/ppc64be"
expect_usage_error 'big-endian ELF; benchtrap drives 64-bit x86-64 binaries'
run list --bogus "$FX/stub_pie_O2"
expect_usage_error "list: unknown option '--bogus' \(see 'benchtrap list --help'\)"
run list "$FX/stub_pie_O2" --filter
expect_usage_error "option '--filter' needs a value"
run list "$FX/stub_pie_O2" --symbols=yes
expect_usage_error "option '--symbols' takes no value"
run help frob
expect_usage_error "'frob' is not a command"
run
expect_usage_error 'which command'
checks=$((checks + 1))
if "$BENCHTRAP" list "$FX/stub_pie_O2" --json >/dev/full 2>"$TMP/err"; then
	fail "writing to a full disk must fail"
fi
grep -q 'cannot write the output' "$TMP/err" || fail "no message for a failed write"

# Names with control characters or bad UTF-8 are escaped, never printed raw.
python3 - "$FX/stub_pie_O2" "$TMP/evil" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
old = b"fixture_known_function\x00"
evil = bytearray(old); evil[3] = 0x1b; evil[7] = 0x0a; evil[13] = 0xff
assert len(evil) == len(old) and old in data
open(sys.argv[2], "wb").write(data.replace(old, bytes(evil)))
PY
run list "$TMP/evil" --symbols --no-libs --filter 'fix*'
expect_status 0
expect_out 'fix\\x1bure\\x0aknown\\xfffunction$'
checks=$((checks + 1))
! grep -q $'\x1b' <<<"$out" || fail "an escape character reached the output"
run list "$TMP/evil" --symbols --no-libs --filter 'fix*' --json
expect_json 'any(s["name"] == "fix\\x1bure\\x0aknown\\xfffunction" for s in d["symbols"])'

# Symbol versions: the default one keeps the plain name.
run list "$FX/stub_pie_O2" --symbols --filter 'memcpy*' --json
expect_json 'any(s["name"] == "memcpy" for s in d["symbols"])'
expect_json 'all("@" not in s["name"] or s["name"].startswith("memcpy@GLIBC_") for s in d["symbols"])'

run list "$FX/stub_pie_O2" --filter 'alpah'
expect_usage_error "no benchmark matches 'alpah' \(did you mean 'alpha'\?\)"
run list "$FX/stub_pie_O2" --symbols --filter 'fixture_known_functoin'
expect_usage_error "did you mean 'fixture_known_function'"
run list
expect_usage_error 'which binary'
run list "$FX/stub_pie_O2" extra
expect_usage_error "unexpected argument 'extra'"
run list --bogus "$FX/stub_pie_O2"
expect_status 2
run lst
expect_usage_error "'lst' is not a command \(did you mean 'list'\?\)"

# Help teaches.
run list --help
expect_status 0
expect_out '^usage: benchtrap list BINARY'
expect_out 'examples:'
run --help
expect_status 0
expect_out '^  list '

done_ok
