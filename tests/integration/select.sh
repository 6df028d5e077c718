#!/usr/bin/env bash
# Selecting C++ functions by name (tests/fixtures/elf/cxx_select.cc): list
# shows overloads, templates, const members and gcc's pieces and copies of
# functions; an exact name of several overloads is refused with their list;
# one is picked by its parameter types and run with arguments, the memory
# instrument's exact count proving which overload ran (each allocates bytes
# that say so); rows keep the types, so merge accepts the file; globs leave
# out the pieces (.cold, .part), which are refused by name; a specialized
# copy (.constprop, .isra) runs with a diagnostic. observe leaves the
# pieces out too.
. "$(dirname "$0")/lib.sh"
F=$FIXTURES/elf/cxx_select
MEM=(--instrument memory)

[[ -x $F ]] || { echo "SKIP: no C++ compiler: $F was not built"; exit 77; }
command -v nm >/dev/null || { echo "SKIP: nm (binutils) is not installed"; exit 77; }
# What gcc -O2 made of the fixture: each kind of piece and copy is needed.
syms=$(nm "$F")
for suffix in '\.cold$' '\.part\.[0-9]+$' '\.constprop\.[0-9]+$' '\.isra\.[0-9]+$'; do
	grep -qE -- "$suffix" <<<"$syms" ||
		{ echo "SKIP: the compiler made no function named like /$suffix/ in $F"; exit 77; }
done

# ---- list -----------------------------------------------------------------------------------
run list "$F" --symbols --no-libs
expect_status 0
expect_out ' +FUNCTION +RAW +NOTE$'
expect_out ' num::scale\(long\) +_ZN3num5scaleEl$'
expect_out ' num::scale\(long, long\) +_ZN3num5scaleEll$'
expect_out ' num::scale\(double\) +_ZN3num5scaleEd$'
expect_out ' num::rare_error\(long\) \[clone \.cold\] +_ZN3num10rare_errorEl\.cold +not callable'
expect_out ' num::guarded\(long\*, long\) \[clone \.part\.[0-9]+\] +\S+ +not callable'
expect_out ' num::with_k\(long, long\) \[clone \.constprop\.[0-9]+\] +\S+ +compiler.s copy'
expect_out ' num::first_of\(num::wide const\*\) \[clone \.isra\.[0-9]+\] +\S+ +compiler.s copy'
run list "$F" --symbols --no-libs --json
expect_status 0
expect_json '[s["kind"] for s in d["symbols"] if s["raw"] == "_ZN3num10rare_errorEl.cold"] == ["fragment"]'
expect_json 'all(s["callable"] == (s["kind"] != "fragment" and not s["member"]) for s in d["symbols"])'
expect_json '[s["name"] for s in d["symbols"] if s["member"]] == ["Grid<int>::sum() const", "Grid<int>::grow(int)"]'
expect_json 'sum(s["kind"] == "clone" for s in d["symbols"]) == 2'
expect_json 'all(s["kind"] == "function" for s in d["symbols"] if s["name"].startswith("num::scale"))'

# Templates without their return type, members without const, C++ globs.
for f in 'num::unroll<8>' 'long num::unroll<8>' 'Grid<int>::sum' 'Grid<int>::sum()' \
	'Grid<int>::sum() const' 'num::scale(long,long)'; do
	run list "$F" --symbols --no-libs --filter "$f"
	expect_status 0
	[[ $(wc -l <<<"$out") -eq 2 ]] || fail "--filter '$f' must list one function"
done
run list "$F" --symbols --no-libs --filter 'num::unroll*'
expect_status 0
expect_out 'long num::unroll<8>\(long\)'

# ---- an exact name of several overloads -----------------------------------------------------
run run "$F" --symbol 'num::scale(7)' "${MEM[@]}"
expect_usage_error "--symbol 'num::scale\(7\)' names several functions: 'num::scale\(double\)', 'num::scale\(long\)' and 'num::scale\(long, long\)' \(pick one by its parameter types, as in --symbol 'num::scale\(long\)\(7\)'\)"
run run "$F" --symbol 'num::scale' "${MEM[@]}"
expect_usage_error "names several functions"

# A function template's name: its instances, like overloads; one instance
# alone is selected (twice<int> allocates 5000 + x bytes, twice<long> 6000 + x).
run run "$F" --symbol 'twice' "${MEM[@]}"
expect_usage_error "--symbol 'twice' names several instances of a function template: 'int twice<int>\(int\)' and 'long twice<long>\(long\)' \(pick one by its template arguments or its parameter types, as in --symbol 'twice<int>' or 'twice<int>\(int\)'\)"
run run "$F" --symbol 'twice(5)' "${MEM[@]}"
expect_usage_error "as in --symbol 'twice<int>\(5\)' or 'twice<int>\(int\)\(5\)'"
run run "$F" "${MEM[@]}" --format json --symbol 'twice<long>(5)' --symbol 'twice<int>(int)(3)' \
	--symbol 'num::unroll(5)'
expect_status 0
expect_json '[(b["name"], b["value"]) for b in d["benchmarks"]] == [("long twice<long>(long)(5)", 6005), ("int twice<int>(int)(3)", 5003), ("long num::unroll<8>(long)(5)", 0)]'

# ---- one overload by its types: the right one runs, rows keep the types ---------------------
run run "$F" "${MEM[@]}" --format json --output "$TMP/ints.json" \
	--symbol 'num::scale(long)(7)' --symbol 'num::scale(long, long)(3,4)' \
	--symbol 'num::unroll<8>(5)'
expect_status 0
expect_json '[b["name"] for b in d["benchmarks"]] == ["num::scale(long)(7)", "num::scale(long, long)(3,4)", "long num::unroll<8>(long)(5)"]'
expect_json 'all(b["status"] == "ok" for b in d["benchmarks"])'
# (long a): 1000 + a bytes; (long a, long b): 2000 + 10 a + b
expect_json 'd["benchmarks"][0]["value"] == 1007 and d["benchmarks"][1]["value"] == 2034'
expect_json 'd["benchmarks"][0]["args"] == [7] and d["benchmarks"][1]["args"] == [3, 4]'
run run "$F" "${MEM[@]}" --format json --output "$TMP/double.json" \
	--symbol 'num::scale(double)' --symbol '_ZN3num5scaleEl'
expect_status 0
# (double d): 3000 bytes
expect_json '[(b["name"], b["value"]) for b in d["benchmarks"]] == [("num::scale(double)", 3000), ("num::scale(long)", 1000)]'

# Types as written in C++, not as demangled: const before the type,
# "long int", blanks around '*' (num::text allocates 4000 bytes, 4001 for a
# pointer that is not null).
run run "$F" "${MEM[@]}" --format json --symbol 'num::text(const char *)(0)' \
	--symbol 'num::scale(long int)(7)' --symbol 'num::scale(long int, long)(3,4)'
expect_status 0
expect_json '[(b["name"], b["value"]) for b in d["benchmarks"]] == [("num::text(char const*)(0)", 4000), ("num::scale(long)(7)", 1007), ("num::scale(long, long)(3,4)", 2034)]'

# Unique names: merge takes both files.
run merge "$TMP/ints.json" "$TMP/double.json" --output "$TMP/merged.json"
expect_status 0
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); n=[b["name"] for b in d["benchmarks"]]; sys.exit(len(n) != 5 or len(set(n)) != 5)' \
	"$TMP/merged.json" || fail "merged file must hold 5 distinct benchmarks"

# Integers for a floating-point parameter: refused, with or without a glob.
run run "$F" --symbol 'num::scale(double)(2)' "${MEM[@]}"
expect_usage_error "'num::scale\(double\)' takes floating-point parameters"
run run "$F" --symbol 'num::scale*(2)' "${MEM[@]}"
expect_usage_error "'num::scale\(double\)' takes floating-point parameters"
run run "$F" --symbol 'num::scale(double)(2.5)' "${MEM[@]}"
expect_usage_error "cannot read --symbol 'num::scale\(double\)\(2\.5\)': arguments must be integers"
run run "$F" --symbol 'num::scale(long)(abc)' "${MEM[@]}"
expect_usage_error "cannot read --symbol 'num::scale\(long\)\(abc\)': arguments must be integers"

# ---- pieces of functions: left out of globs, refused by name --------------------------------
run run "$F" --symbol 'num::*' "${MEM[@]}" --format json
expect_status 0
expect_json 'not any("[clone .cold]" in b["name"] or "[clone .part" in b["name"] for b in d["benchmarks"])'
expect_json 'all(b["status"] == "ok" for b in d["benchmarks"])'
expect_json 'len(set(b["name"] for b in d["benchmarks"])) == len(d["benchmarks"]) >= 9'
expect_json '"num::rare_error(long)" in [b["name"] for b in d["benchmarks"]]'
for piece in '_ZN3num10rare_errorEl.cold' 'num::rare_error(long) [clone .cold]'; do
	run run "$F" --symbol "$piece" "${MEM[@]}"
	expect_usage_error "'num::rare_error\(long\) \[clone \.cold\]' is a piece the compiler split off a function"
done
run run "$F" --symbol 'num::guarded' "${MEM[@]}"
expect_usage_error "'num::guarded\(long\*, long\) \[clone \.part\.[0-9]+\]' is a piece"
# A function's own name does not take its pieces along.
run run "$F" --symbol 'num::rare_error' "${MEM[@]}" --format json
expect_status 0
expect_json '[b["name"] for b in d["benchmarks"]] == ["num::rare_error(long)"]'

# observe arms no piece either (num::guarded's .part runs twice in this
# program, and 'num::*' names it).
run observe --symbol 'num::*' --output "$TMP/observe.json" -- "$F"
expect_status 0
python3 -c 'import json,sys
n = [b["name"] for b in json.load(open(sys.argv[1]))["benchmarks"]]
sys.exit("num::rare_error(long)" not in n or any("[clone .cold]" in x or "[clone .part" in x for x in n))' \
	"$TMP/observe.json" || fail "observe must time num::rare_error and no piece of a function"
checks=$((checks + 1))

# ---- member functions: 'this' cannot be passed ----------------------------------------------
# const by its mangled name, grow by the DWARF ('this' is its first,
# artificial, parameter); zero is static and runs.
run list "$F" --symbols --no-libs --filter 'Grid<int>::*'
expect_status 0
expect_out ' Grid<int>::sum\(\) const +\S+ +member function: needs an object$'
expect_out ' Grid<int>::grow\(int\) +\S+ +member function: needs an object$'
expect_out ' Grid<int>::zero\(long\) +_ZN4GridIiE4zeroEl$'
for m in 'Grid<int>::sum' 'Grid<int>::sum() const' '_ZNK4GridIiE3sumEv'; do
	run run "$F" --symbol "$m" "${MEM[@]}"
	expect_usage_error "'Grid<int>::sum\(\) const' is a member function that needs an object"
done
run run "$F" --symbol 'Grid<int>::grow(3)' "${MEM[@]}"
expect_usage_error "'Grid<int>::grow\(int\)' is a member function that needs an object"
# A glob leaves members out; the static member runs (7000 + n bytes).
run run "$F" --symbol 'Grid<int>::*(5)' "${MEM[@]}" --format json
expect_status 0
expect_json '[(b["name"], b["value"]) for b in d["benchmarks"]] == [("Grid<int>::zero(long)(5)", 7005)]'
expect_json 'd["benchmarks"][0]["diagnostics"] == []'
run run "$F" --symbol 'Grid<int>::s*' "${MEM[@]}"
expect_usage_error "'Grid<int>::sum\(\) const' is a member function that needs an object"
# "did you mean" offers no member and no piece.
run run "$F" --symbol 'Grid<int>::gro' "${MEM[@]}"
expect_usage_error "no function matches 'Grid<int>::gro'"
[[ $err != *grow* ]] || fail "a member function must not be suggested: $err"
run run "$F" --symbol 'num::rare_erro' "${MEM[@]}"
expect_usage_error "no function matches 'num::rare_erro'"
[[ $err != *cold* ]] || fail "a piece of a function must not be suggested: $err"

# Without DWARF, grow may or may not need an object: it is not refused, and
# what runs says so. The const member is still known.
N=$FIXTURES/elf/cxx_select_nodwarf
run list "$N" --symbols --no-libs --filter 'Grid<int>::*' --json
expect_status 0
expect_json '[s["name"] for s in d["symbols"] if s["member"]] == ["Grid<int>::sum() const"]'
run run "$N" --symbol 'Grid<int>::zero(5)' "${MEM[@]}" --format json
expect_status 0
expect_json 'd["benchmarks"][0]["value"] == 7005'
expect_json 'any("needs an object" in x for x in d["benchmarks"][0]["diagnostics"])'
run run "$N" --symbol 'Grid<int>::sum' "${MEM[@]}"
expect_usage_error "'Grid<int>::sum\(\) const' is a member function that needs an object"

# ---- a specialized copy: runs, said in its diagnostics --------------------------------------
run run "$F" --symbol 'num::with_k' "${MEM[@]}" --format json
expect_status 0
expect_json 'd["benchmarks"][0]["name"].startswith("num::with_k(long, long) [clone .constprop.")'
expect_json 'any("specialized for its callers" in x for x in d["benchmarks"][0]["diagnostics"])'
run run "$F" --symbol 'num::scale(long)' "${MEM[@]}" --format json
expect_status 0
expect_json 'd["benchmarks"][0]["diagnostics"] == []'

expect_no_orphans "$F"
done_ok
