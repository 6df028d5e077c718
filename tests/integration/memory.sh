#!/usr/bin/env bash
# The memory instrument: what one call allocates, counted by the memory
# driver's wrapped C allocator in a child of the fork server. Checked here,
# on tests/fixtures/memory (each fixture derives its own figures):
# - every counter (bytes_allocated, allocations, frees, peak_bytes,
#   leaked_bytes) of every benchmark of allocs, exactly: malloc, calloc,
#   realloc (from NULL, to 0, of a block from before main), reallocarray,
#   posix_memalign, aligned_alloc, memalign, valloc, pvalloc, strdup, a
#   leak, a peak, a free of a block from before main; a thread's allocation
#   is counted; value is bytes_allocated, in bytes;
# - the same figures under --isolation benchmark, process and shared (the
#   two isolated modes also compared counter by counter);
# - --warmup-calls 2: the same figures for a benchmark without state, the
#   figures of a later call for one with a cache, a diagnostic that says so;
# - ripple_1..3 identical (bytes asked for do not ripple, even shared);
# - crash fails with SIGSEGV, exit 1, and after_crash is still exact;
# - C++ (new, std::string, std::vector), Rust (a Vec through realloc) and a
#   library function of a stripped program, with --symbol;
# - a program that forks while another of its threads allocates: the
#   children allocate and exit, the call returns;
# - bad input: a static binary (and static-pie), --warmup-calls with
#   another instrument, a missing file: exit 2, one line; no process left
#   behind;
# - more blocks live at once than the driver's table holds: said, and the
#   figures on the side the diagnostic says (last: a heavy run).
# No duration is asserted (fork_churn's --timeout only bounds a hang).
. "$(dirname "$0")/lib.sh"
M=$FIXTURES/memory
ALLOCS=$M/allocs
MEM=(--instrument memory)

# ---- bad input: one line, exit 2 ------------------------------------------------------------
for static in allocs_static allocs_staticpie; do
	run run "$M/$static" "${MEM[@]}"
	expect_usage_error "$static is a static binary"
done
run run "$M/no_such_binary" "${MEM[@]}"
expect_usage_error "no_such_binary"
for inst in callgrind walltime; do
	run run "$ALLOCS" --instrument "$inst" --warmup-calls 2 --bench nothing
	expect_usage_error "--warmup-calls applies to --instrument memory only"
done
run run "$ALLOCS" --warmup-calls 2 --bench nothing
expect_usage_error "--warmup-calls"
run run "$ALLOCS" "${MEM[@]}" --warmup-calls x --bench nothing
expect_usage_error "--warmup-calls"
run run "$ALLOCS" "${MEM[@]}" --isolation nonsense
expect_usage_error "nonsense"
expect_no_orphans "$ALLOCS"

# ---- the figures ----------------------------------------------------------------------------
# Checks every counter of every benchmark named in the table below that the
# results file $1 holds (at least one), and that a benchmark it does not
# know is not there. $2: "warm" for the figures after --warmup-calls.
# Each row: bytes_allocated, allocations, frees, peak_bytes, leaked_bytes.
figures() {
	checks=$((checks + 1))
	python3 - "$1" "${2:-}" <<'PY' || fail "figures of $1 ${2:-}"
import json, sys
d = json.load(open(sys.argv[1]))
warm = sys.argv[2] == "warm"
KEYS = ("bytes_allocated", "allocations", "frees", "peak_bytes", "leaked_bytes")
blocks = lambda n: (24 * n + n * (n - 1) // 2, n, n, 24 * n + n * (n - 1) // 2, 0)
E = {
    "blocks[1]": blocks(1), "blocks[10]": blocks(10), "blocks[100]": blocks(100),
    # 16, 32, ..., 4096: nine reallocs, the first from NULL.
    "realloc_chain": (8176, 9, 1, 4096, 0),
    "calloc_one": (1000, 1, 1, 1000, 0),
    "leak": (1024, 2, 1, 1024, 1000),
    "peak_pattern": (350, 3, 3, 300, 0),
    "free_old": (0, 0, 1, 0, 0),
    "realloc_old": (200, 1, 1, 200, 0),
    "realloc_zero": (50, 1, 1, 50, 0),
    "reallocarray_two": (240, 2, 1, 160, 0),
    "aligned": (228, 2, 2, 228, 0),
    "aligned_legacy": (240, 3, 3, 240, 0),
    "strdup_one": (10, 1, 1, 10, 0),
    # The first call fills its cache (512 bytes, kept); later calls do not.
    "lazy_cache": (8, 1, 1, 8, 0) if warm else (520, 2, 1, 520, 512),
    "after_crash": (7, 1, 1, 7, 0),
    "ripple_1": (4 << 20, 1, 1, 4 << 20, 0),
    "ripple_2": (4 << 20, 1, 1, 4 << 20, 0),
    "ripple_3": (4 << 20, 1, 1, 4 << 20, 0),
    "nothing": (0, 0, 0, 0, 0),
    "reexec": (7, 1, 1, 7, 0),
    # C++ (allocs_cxx.cpp) and Rust (allocs_rust.rs), with --symbol.
    "new_delete()": (173, 3, 3, 173, 0),
    "vector_growth()": (1020, 8, 8, 768, 0),
    "aligned_new()": (128, 1, 1, 128, 0),
    "rs_alloc(300)": (300, 1, 1, 300, 0),
    "rs_string_push": (248, 5, 1, 128, 0),
    # memlib.c, in the stripped memprog.
    "memlib_make(300)": (300, 1, 1, 300, 0),
}
bad, n = [], 0
for b in d["benchmarks"]:
    name = b["name"]
    if name == "crash":
        if b["status"] != "failed" or "SIGSEGV" not in (b["error"] or "") or b["value"] is not None:
            bad.append("crash: %s %s" % (b["status"], b["error"]))
        continue
    if b["status"] != "ok":
        bad.append("%s: %s (%s)" % (name, b["status"], b["error"]))
        continue
    if b["instrument"] != "memory" or b["unit"] != "bytes" or sorted(b["counters"]) != sorted(KEYS) \
            or b["value"] != b["counters"]["bytes_allocated"]:
        bad.append("%s: not a memory result: %s %s value %s counters %s" %
                   (name, b["instrument"], b["unit"], b["value"], b["counters"]))
        continue
    got = tuple(b["counters"][k] for k in KEYS)
    n += 1
    if name == "thread_alloc":
        # The thread's malloc(5000) and free, at least: pthread_create may
        # allocate too (glibc: the thread's DTV, once per fresh stack).
        c = b["counters"]
        if not (c["bytes_allocated"] >= 5000 and c["allocations"] >= 1 and c["frees"] >= 1
                and c["peak_bytes"] >= 5000
                and c["leaked_bytes"] <= c["bytes_allocated"] - 5000):
            bad.append("thread_alloc: %s" % c)
        continue
    if name not in E:
        bad.append("%s: not in the table" % name)
    elif got != E[name]:
        bad.append("%s: %s, expected %s (%s)" % (name, dict(zip(KEYS, got)),
                                                 dict(zip(KEYS, E[name])), ", ".join(KEYS)))
if n == 0 or bad:
    sys.exit("\n".join(["no benchmark checked"] if n == 0 else bad))
PY
}


# The whole suite (crash included) in each isolation: exit 1 for crash, and
# the figures of everything else exact.
for iso in benchmark process shared; do
	run run "$ALLOCS" "${MEM[@]}" --isolation "$iso" --format json
	expect_status 1
	cp "$TMP/out" "$TMP/allocs-$iso.json"
	expect_json 'd["run"]["instrument"] == "memory" and d["run"]["isolation"] == "'"$iso"'"'
	expect_json 'len(d["benchmarks"]) == 23'
	expect_json '[b["name"] for b in d["benchmarks"] if b["status"] != "ok"] == ["crash"]'
	expect_json '"SIGSEGV" in [b for b in d["benchmarks"] if b["name"] == "crash"][0]["error"]'
	figures "$TMP/allocs-$iso.json"
	# Bytes asked for do not ripple: all three alike, isolated or not.
	expect_json 'len({json.dumps(b["counters"]) for b in d["benchmarks"] if b["name"].startswith("ripple_")}) == 1'
	expect_no_orphans "$ALLOCS"
done
# A process per benchmark when isolated; shared: one, and one more after crash.
cp "$TMP/allocs-benchmark.json" "$TMP/out"
expect_json 'len({b["pid"] for b in d["benchmarks"]}) == 23'
cp "$TMP/allocs-shared.json" "$TMP/out"
expect_json 'len({b["pid"] for b in d["benchmarks"]}) == 2'
same_counts "$TMP/allocs-benchmark.json" "$TMP/allocs-process.json"
same_counts "$TMP/allocs-process.json" "$TMP/allocs-benchmark.json"

# The text report: bytes, scaled; the failure said below the table.
run run "$ALLOCS" "${MEM[@]}" --bench 'blocks[10]' --bench ripple_1 --bench crash
expect_status 1
expect_out '^blocks\[10\] +285 B'
expect_out '^ripple_1 +4\.00 MiB'
expect_out 'crash failed: SIGSEGV'
expect_no_orphans "$ALLOCS"

# ---- --warmup-calls -------------------------------------------------------------------------
WARM=(--bench 'blocks[10]' --bench leak --bench lazy_cache --bench thread_alloc --bench free_old)
for iso in benchmark process; do
	run run "$ALLOCS" "${MEM[@]}" --warmup-calls 2 "${WARM[@]}" --isolation "$iso" --format json
	expect_status 0
	cp "$TMP/out" "$TMP/warm-$iso.json"
	# free_old: its block was freed by the first uncounted call; the
	# counted one frees NULL, which is no free.
	expect_json '[b["counters"] for b in d["benchmarks"] if b["name"] == "free_old"] == [dict(bytes_allocated=0, allocations=0, frees=0, peak_bytes=0, leaked_bytes=0)]'
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
d["benchmarks"] = [b for b in d["benchmarks"] if b["name"] != "free_old"]
json.dump(d, open(sys.argv[1], "w"))' "$TMP/warm-$iso.json"
	figures "$TMP/warm-$iso.json" warm
	expect_json 'all(any("warmup-calls" in x for x in b["diagnostics"]) for b in d["benchmarks"])'
	expect_no_orphans "$ALLOCS"
done
same_counts "$TMP/warm-benchmark.json" "$TMP/warm-process.json"
# blocks[10] and leak have no state: the same every call, warm or not.
checks=$((checks + 1))
python3 - "$TMP/warm-benchmark.json" "$TMP/allocs-benchmark.json" <<'PY' || fail "--warmup-calls changed a stateless benchmark"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
f = lambda d, n: [x["counters"] for x in d["benchmarks"] if x["name"] == n]
sys.exit(0 if all(f(a, n) == f(b, n) and f(a, n) for n in ("blocks[10]", "leak")) else 1)
PY

# ---- --alloc-stacks: the sites of each call, in the results and folded ----------------------
mkdir "$TMP/stacks"
run run "$ALLOCS" "${MEM[@]}" --bench 'blocks[10]' --bench strdup_one --bench nothing \
	--alloc-stacks "$TMP/stacks" --format json
expect_status 0
expect_json '[b["alloc_sites"] for b in d["benchmarks"][:2]] == [[{"bytes": 285, "count": 10, "stack": ["benchtrap_bench_blocks"]}], [{"bytes": 10, "count": 1, "stack": ["__strdup", "benchtrap_bench_strdup_one"]}]]'
expect_json '"alloc_sites" not in d["benchmarks"][2]'
checks=$((checks + 1))
[[ $(cat "$TMP/stacks/001-strdup_one.folded") == "benchtrap_bench_strdup_one;__strdup 10" ]] ||
	fail "folded stacks of strdup_one: $(cat "$TMP/stacks/001-strdup_one.folded")"
# Counting with stacks counts the same.
expect_json '[b["counters"]["bytes_allocated"] for b in d["benchmarks"]] == [285, 10, 0]'
# One benchmark, and in one process: the process that names the stacks may
# end as soon as its call does, and they are named all the same.
for iso in benchmark shared; do
	rm -f "$TMP"/stacks/*
	run run "$ALLOCS" "${MEM[@]}" --bench strdup_one --isolation "$iso" --alloc-stacks "$TMP/stacks"
	expect_status 0
	checks=$((checks + 1))
	[[ $(cat "$TMP/stacks/000-strdup_one.folded") == "benchtrap_bench_strdup_one;__strdup 10" ]] ||
		fail "$iso: folded stacks of strdup_one: $(cat "$TMP/stacks/000-strdup_one.folded")"
done
run run "$ALLOCS" "${MEM[@]}" --alloc-stacks "$TMP/no-such-dir"
expect_usage_error 'alloc-stacks wants an existing directory'
run run "$ALLOCS" --instrument callgrind --alloc-stacks "$TMP/stacks"
expect_usage_error '--alloc-stacks applies to --instrument memory only$'

# ---- other languages, and a library of a stripped program, with --symbol --------------------
if [[ -x $M/allocs_cxx ]]; then
	run run "$M/allocs_cxx" "${MEM[@]}" --symbol new_delete --symbol vector_growth \
		--symbol aligned_new --format json
	expect_status 0
	expect_json '[b["name"] for b in d["benchmarks"]] == ["new_delete()", "vector_growth()", "aligned_new()"]'
	figures "$TMP/out"
	expect_no_orphans "$M/allocs_cxx"
	# Where they allocated: demangled stacks, innermost first, the
	# wrappers and the driver left out; a folded file per benchmark.
	mkdir "$TMP/stacks-cxx"
	run run "$M/allocs_cxx" "${MEM[@]}" --symbol new_delete --symbol vector_growth \
		--alloc-stacks "$TMP/stacks-cxx" --format json
	expect_status 0
	expect_json '[s["stack"] for s in d["benchmarks"][1]["alloc_sites"]] == [["operator new(unsigned long)", "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int>(__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, int&&)", "vector_growth()"]]'
	expect_json '[(s["bytes"], s["count"]) for s in d["benchmarks"][1]["alloc_sites"]] == [(1020, 8)]'
	expect_json 'sorted((s["bytes"], s["count"], s["stack"][-1]) for s in d["benchmarks"][0]["alloc_sites"]) == [(32, 1, "new_delete()"), (40, 1, "new_delete()"), (101, 1, "new_delete()")]'
	checks=$((checks + 1))
	grep -qx 'vector_growth();void std::vector<int, std::allocator<int> >::_M_realloc_insert<int>(__gnu_cxx::__normal_iterator<int\*, std::vector<int, std::allocator<int> > >, int&&);operator new(unsigned long) 1020' \
		"$TMP/stacks-cxx/001-vector_growth().folded" || fail "folded stacks of vector_growth: $(cat "$TMP"/stacks-cxx/*)"
else
	echo "note: C++ skipped: $M/allocs_cxx is not built (no C++ compiler)"
fi
if [[ -x $M/allocs_rust ]]; then
	run run "$M/allocs_rust" "${MEM[@]}" --symbol 'rs_alloc(300)' --symbol rs_string_push --format json
	expect_status 0
	expect_json '[b["name"] for b in d["benchmarks"]] == ["rs_alloc(300)", "rs_string_push"]'
	figures "$TMP/out"
	expect_no_orphans "$M/allocs_rust"
else
	echo "note: Rust skipped: $M/allocs_rust is not built (no rustc)"
fi

MEMPROG=$M/memprog_stripped
checks=$((checks + 1))
if command -v readelf >/dev/null; then
	! readelf -S "$MEMPROG" | grep -q '\.symtab' || fail "$MEMPROG is not stripped"
fi
for iso in benchmark process shared; do
	run run "$MEMPROG" "${MEM[@]}" --symbol 'memlib_make(300)' --isolation "$iso" --format json
	expect_status 0
	expect_json '[b["name"] for b in d["benchmarks"]] == ["memlib_make(300)"]'
	expect_json 'd["benchmarks"][0]["object"].endswith("libmemlib.so")'
	figures "$TMP/out"
	expect_no_orphans "$MEMPROG"
done

# ---- a fork while another thread allocates --------------------------------------------------
# glibc's malloc works in the child of a threaded program: fork takes its
# locks first. The child must not find the driver's own lock held by a
# thread it did not inherit. 200 forks; it takes well under a second alone.
run run "$ALLOCS" "${MEM[@]}" --symbol 'fork_churn(200)' --timeout 20 --format json
expect_status 0
expect_json 'd["benchmarks"][0]["status"] == "ok" and d["benchmarks"][0]["counters"]["allocations"] >= 1'
expect_no_orphans "$ALLOCS"

# ---- more blocks live at once than the driver's table holds ---------------------------------
# 3.2 million blocks of 16 bytes, all freed: allocations, frees and bytes
# stay exact; peak_bytes and leaked_bytes cannot be, and the diagnostic
# says on which side they are (lower bounds: at most 76,800,000 and 0).
run run "$ALLOCS" "${MEM[@]}" --symbol 'many_live(3200000)' --format json
expect_status 0
expect_json 'd["benchmarks"][0]["status"] == "ok"'
expect_json '(lambda c: (c["allocations"], c["frees"], c["bytes_allocated"]) == (3200001, 3200001, 76800000))(d["benchmarks"][0]["counters"])'
expect_json 'any("table" in x for x in d["benchmarks"][0]["diagnostics"])'
expect_json 'any("lower bounds" in x for x in d["benchmarks"][0]["diagnostics"])'
expect_json 'd["benchmarks"][0]["counters"]["peak_bytes"] <= 76800000'
expect_json 'd["benchmarks"][0]["counters"]["leaked_bytes"] == 0'
expect_no_orphans "$ALLOCS"

# ---- a program with its own malloc: failed with why, never a silent 0 ----------------------
run run "$FIXTURES/memory/own_malloc" "${MEM[@]}" --symbol work --format json
expect_status 1
expect_json 'd["benchmarks"][0]["status"] == "failed" and "defines its own malloc" in d["benchmarks"][0]["error"]'

done_ok
