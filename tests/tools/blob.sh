#!/usr/bin/env bash
# arch/blob.py turns freestanding C into bytes to inject into a child; it
# must refuse whatever would not run where the bytes are copied: a global
# variable (a relocation, or data of the code's own), a string constant
# (read-only data), a call to a library function (a relocation), a missing
# entry point; and accept code that needs nothing outside itself.
# usage: blob.sh BLOB_PY CC [CC ARGS...]
set -uo pipefail
blob=$1
shift
cc=("$@")
tmp=$(mktemp -d /tmp/benchtrap-blob.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
checks=0

refuse() { # NAME SOURCE WHAT: blob.py fails, saying WHAT
	printf '%s\n' "$2" >"$tmp/$1.c"
	checks=$((checks + 1))
	if python3 "$blob" "$tmp/$1.out.c" t "$tmp/$1.c" f -- "${cc[@]}" >"$tmp/err" 2>&1; then
		echo "FAIL: $1 was accepted"
		exit 1
	fi
	grep -q -- "$3" "$tmp/err" || { echo "FAIL: $1: no '$3' in:"; cat "$tmp/err"; exit 1; }
}

refuse global 'int g; int f(void) { return g; }' "relocations\|no data"
refuse data 'static int g = 3; int f(int x) { g += x; return g; }' "relocations\|no data"
refuse string 'const char *f(void) { return "a string"; }' "relocations\|no data"
refuse call 'int puts(const char *); int f(void) { return puts(0); }' "relocations"
refuse entry 'int g(int x) { return x + 1; }' "no function f"

printf 'long f(long x) { return x * 3 + 1; }\n' >"$tmp/ok.c"
checks=$((checks + 1))
python3 "$blob" "$tmp/ok.out.c" t "$tmp/ok.c" f -- "${cc[@]}" || { echo "FAIL: good code refused"; exit 1; }
grep -q 'const size_t t_f = 0;' "$tmp/ok.out.c" || { echo "FAIL: no entry point"; exit 1; }
echo "$checks passed, 0 failed"
