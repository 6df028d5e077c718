#!/usr/bin/env bash
# Selecting the instances of a generic Rust function (fixture_rust::inner::
# sum_to, instantiated for u32 and u64 in tests/fixtures/elf/rust_names.rs).
# Mangled the legacy way, both demangle to one name and differ only by their
# hash: list shows each with its hash, the name alone is refused with the
# list of the names that pick one, a name with its hash runs that instance
# alone, a glob runs both in rows of their own, and merge and compare take
# the file. Mangled the v0 way, the instances are named by their type.
. "$(dirname "$0")/lib.sh"
L=$FIXTURES/elf/rust_legacy
V=$FIXTURES/elf/rust_v0
Q=(--warmup 0.05 --time 0.1)

[[ -x $L && -x $V ]] || { echo "SKIP: no rustc: $L and $V were not built"; exit 77; }
command -v nm >/dev/null || { echo "SKIP: nm (binutils) is not installed"; exit 77; }
# Both instances are there, under two raw names (in address order, the order
# in which benchtrap lists them).
mapfile -t raw < <(nm -n "$L" | awk '{print $3}' | grep -E '^_ZN12fixture_rust5inner6sum_to17h[0-9a-f]{16}E$')
[[ ${#raw[@]} -eq 2 ]] || { echo "SKIP: rustc made ${#raw[@]} instances of sum_to, not 2"; exit 77; }
# Their names as benchtrap gives them: the hash kept.
names=()
for r in "${raw[@]}"; do
	h=${r%E}
	names+=("fixture_rust::inner::sum_to::${h: -17}")
done

# ---- list: one name each -------------------------------------------------------------------
run list "$L" --symbols --no-libs --filter 'fixture_rust::inner::sum_to'
expect_status 0
for i in 0 1; do
	expect_out " ${names[i]} +${raw[i]}\$"
done
[[ $(grep -c 'fixture_rust::inner::sum_to' <<<"$out") -eq 2 ]] || fail "two instances expected"
# A function that is not generic keeps its plain name.
run list "$L" --symbols --no-libs --filter '*::add_numbers' --json
expect_status 0
expect_json '[s["name"] for s in d["symbols"]] == ["fixture_rust::inner::add_numbers"]'

# ---- the name alone: refused with the names that pick one ----------------------------------
run run "$L" --symbol 'fixture_rust::inner::sum_to' "${Q[@]}"
expect_usage_error "--symbol 'fixture_rust::inner::sum_to' names several instances of a generic function: '${names[0]}' and '${names[1]}' \(pick one by its whole name, as in --symbol '${names[0]}'\)"

# ---- one by its hash: that instance alone --------------------------------------------------
run run "$L" --symbol "${names[1]}" "${Q[@]}" --format json
expect_status 0
expect_json "[(b['name'], b['symbol'], b['status']) for b in d['benchmarks']] == [('${names[1]}', '${raw[1]}', 'ok')]"

# ---- a glob: both, in rows of their own, which merge and compare take ----------------------
run run "$L" --symbol 'fixture_rust::inner::sum_to*' "${Q[@]}" --format json --output "$TMP/both.json"
expect_status 0
cp "$TMP/both.json" "$TMP/out"
expect_json "sorted((b['name'], b['symbol']) for b in d['benchmarks']) == [('${names[0]}', '${raw[0]}'), ('${names[1]}', '${raw[1]}')]"
run merge "$TMP/both.json" --output "$TMP/merged.json"
expect_status 0
run compare "$TMP/both.json" "$TMP/merged.json" --format json
expect_status 0
expect_json "sorted(p['name'] for p in d['benchmarks']) == ['${names[0]}', '${names[1]}']"
expect_json 'd["warnings"] == []'

# ---- v0: named by their types ---------------------------------------------------------------
run list "$V" --symbols --no-libs --filter 'fixture_rust::inner::sum_to'
expect_status 0
expect_out ' fixture_rust::inner::sum_to::<u32> +_R'
expect_out ' fixture_rust::inner::sum_to::<u64> +_R'
run run "$V" --symbol 'fixture_rust::inner::sum_to' "${Q[@]}"
expect_usage_error "--symbol 'fixture_rust::inner::sum_to' names several instances of a generic function: 'fixture_rust::inner::sum_to::<u32>' and 'fixture_rust::inner::sum_to::<u64>' \(pick one by its whole name, as in --symbol 'fixture_rust::inner::sum_to::<u32>'\)"
run run "$V" --symbol 'fixture_rust::inner::sum_to::<u64>' "${Q[@]}" --format json
expect_status 0
expect_json "[b['name'] for b in d['benchmarks']] == ['fixture_rust::inner::sum_to::<u64>']"

expect_no_orphans "$L"
expect_no_orphans "$V"
done_ok
