#!/usr/bin/env bash
# Output paths of run (--output, --markers), observe, merge and export: what is at the
# path is never destroyed. A regular file (or what a symlink leads to) is
# replaced atomically, a character device, FIFO or pipe is written through, a
# directory or socket is refused; a path that cannot be written is refused
# before anything runs; an interrupted merge leaves no temporary file.
# Device nodes are made in $TMP with mknod (same major:minor as /dev/null and
# /dev/full): the system's own are never at stake, even when this fails.
. "$(dirname "$0")/lib.sh"
PLAIN=$FIXTURES/run/plain
FAST=(--time 0.05 --warmup 0 --sample-time 0.002 --min-samples 5)
# The fixture creates this file when it starts: proof that something ran.
STARTED=$TMP/started
export PLAIN_STARTED=$STARTED

RO=$TMP/ro
trap 'if main_shell; then umount "$RO" 2>/dev/null; rm -rf "$TMP"; fi' EXIT

# An input for merge.
"$BENCHTRAP" run "$PLAIN" --symbol plain_work "${FAST[@]}" --output "$TMP/in.json" \
	>/dev/null 2>&1 || fail "cannot make the merge input"

# write_to CMD PATH: CMD (run, observe, merge, export) writes its results to
# PATH (export: Google Benchmark's JSON, which has "benchmarks" too).
write_to() {
	rm -f "$STARTED"
	case $1 in
	run) run run "$PLAIN" --symbol plain_work "${FAST[@]}" --output "$2" ;;
	observe) run observe --symbol plain_work --output "$2" -- "$PLAIN" ;;
	merge) run merge "$TMP/in.json" --output "$2" ;;
	export) run export "$TMP/in.json" --format gbench --output "$2" ;;
	esac
}

# Exit 2 and exactly one 'benchtrap:' line, matching $1, on stderr (observe
# prints its table there too).
expect_one_error() {
	expect_status 2
	checks=$((checks + 1))
	[[ $(grep -c '^benchtrap:' <<<"$err") -eq 1 ]] || fail "expected exactly one error line"
	grep '^benchtrap:' <<<"$err" | grep -qE -- "$1" || fail "the error line does not match /$1/"
}

# Refused before anything ran: nothing on stdout, one line, no child started.
expect_refused_early() {
	expect_usage_error "$1"
	checks=$((checks + 1))
	[[ ! -e $STARTED ]] || fail "the program ran although the output path was refused"
}

expect_json_file() {
	checks=$((checks + 1))
	python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); sys.exit(0 if "benchmarks" in d else 1)' \
		"$1" 2>/dev/null || fail "$1 does not hold a results document"
}

expect_no_temp() {
	checks=$((checks + 1))
	local left
	left=$(find "$TMP" -mindepth 1 -name '*.??????' ! -name '*.json' 2>/dev/null)
	[[ -z $left ]] || fail "temporary files were left behind: $left"
}

# Wait until the reader started as $1 blocks opening its FIFO: it then counts
# as the FIFO's reader.
wait_reader() {
	for _ in $(seq 400); do
		[[ $(cat "/proc/$1/comm" 2>/dev/null) == cat ]] &&
			[[ $(cat "/proc/$1/wchan" 2>/dev/null) == *partner* ||
				$(cut -d' ' -f1 "/proc/$1/syscall" 2>/dev/null) == 257 ]] && return 0
		sleep 0.025
	done
	fail "the FIFO's reader did not start"
}

have_nodes=true
if ! mknod "$TMP/null" c 1 3 2>/dev/null || ! mknod "$TMP/full" c 1 7 2>/dev/null; then
	have_nodes=false
	echo "note: mknod failed here: the /dev/null and /dev/full cases are skipped"
fi
have_ro=true
mkdir "$RO"
if ! mount --bind -o ro "$RO" "$RO" 2>/dev/null; then
	have_ro=false
	echo "note: no read-only bind mount here (not root?): the read-only case is skipped"
fi
mkfifo "$TMP/fifo"
mkdir "$TMP/dir"
ln -s /proc/self/fd/1 "$TMP/stdout"
python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$TMP/sock"

for cmd in run observe merge export; do
	# A character device is written through: the node stays what it was.
	if $have_nodes; then
		write_to $cmd "$TMP/null"
		expect_status 0
		checks=$((checks + 1))
		[[ -c $TMP/null && $(stat -c %t:%T "$TMP/null") == 1:3 ]] ||
			fail "$cmd --output replaced the null device: $(ls -l "$TMP/null")"
		write_to $cmd "$TMP/full"
		expect_one_error "full: cannot write .*no space left on the device"
		checks=$((checks + 1))
		[[ -c $TMP/full && $(stat -c %t:%T "$TMP/full") == 1:7 ]] ||
			fail "$cmd --output replaced the full device: $(ls -l "$TMP/full")"
	fi

	# A FIFO: its reader gets the document; without a reader, refused
	# before anything runs (opening it would block).
	cat "$TMP/fifo" >"$TMP/got" &
	reader=$!
	wait_reader $reader
	write_to $cmd "$TMP/fifo"
	expect_status 0
	wait $reader
	expect_json_file "$TMP/got"
	checks=$((checks + 1))
	[[ -p $TMP/fifo ]] || fail "$cmd --output replaced the FIFO"
	write_to $cmd "$TMP/fifo"
	expect_refused_early "fifo: cannot write .*nothing reads from it"

	# A pipe through a symlink to /proc/self/fd/1, as /dev/stdout is.
	rm -f "$STARTED"
	case $cmd in
	run) "$BENCHTRAP" run "$PLAIN" --symbol plain_work "${FAST[@]}" --output "$TMP/stdout" ;;
	observe) "$BENCHTRAP" observe --symbol plain_work --output "$TMP/stdout" -- "$PLAIN" ;;
	merge) "$BENCHTRAP" merge "$TMP/in.json" --output "$TMP/stdout" ;;
	export) "$BENCHTRAP" export "$TMP/in.json" --format gbench --output "$TMP/stdout" ;;
	esac 2>/dev/null | cat >"$TMP/piped"
	status=${PIPESTATUS[0]}
	expect_status 0
	checks=$((checks + 1))
	grep -q '"benchmarks"' "$TMP/piped" || fail "$cmd --output /dev/stdout: nothing reached the pipe"
	[[ -L $TMP/stdout ]] || fail "$cmd --output replaced the /dev/stdout link"

	# A symlink to a regular file: the link stays, its target is replaced
	# and keeps its mode.
	echo old >"$TMP/target-$cmd"
	chmod 640 "$TMP/target-$cmd"
	ln -s "target-$cmd" "$TMP/link-$cmd"
	write_to $cmd "$TMP/link-$cmd"
	expect_status 0
	checks=$((checks + 1))
	[[ -L $TMP/link-$cmd && $(readlink "$TMP/link-$cmd") == "target-$cmd" ]] ||
		fail "$cmd --output replaced the symlink"
	expect_json_file "$TMP/target-$cmd"
	checks=$((checks + 1))
	[[ $(stat -c %a "$TMP/target-$cmd") == 640 ]] || fail "the replaced target lost its mode"

	# A symlink to a missing file in an existing directory: the file is made.
	ln -s "new-$cmd.json" "$TMP/dangling-$cmd"
	write_to $cmd "$TMP/dangling-$cmd"
	expect_status 0
	checks=$((checks + 1))
	[[ -L $TMP/dangling-$cmd ]] || fail "$cmd --output replaced the dangling symlink"
	expect_json_file "$TMP/new-$cmd.json"

	# Refused before anything runs.
	write_to $cmd "$TMP/dir"
	expect_refused_early "dir: cannot write .*is a directory"
	write_to $cmd "$TMP/missing/r.json"
	expect_refused_early "missing/r.json: cannot write .*no such directory"
	write_to $cmd "$TMP/sock"
	expect_refused_early "sock: cannot write .*neither a file, a FIFO nor a character device"
	checks=$((checks + 1))
	[[ -S $TMP/sock && -d $TMP/dir ]] || fail "$cmd --output replaced a socket or directory"
	if $have_ro; then
		write_to $cmd "$RO/r.json"
		expect_refused_early "r.json: cannot write .*read-only file system"
	fi
	expect_no_temp
done

# Another user's file in a sticky directory cannot be renamed over: refused
# before anything runs, not after. Needs an unprivileged user who can run
# benchtrap from this build.
if [[ $(id -u) == 0 ]] && su nobody -s /bin/sh -c "test -x '$BENCHTRAP' -a -r '$PLAIN'" 2>/dev/null; then
	mkdir -m 1777 "$TMP/sticky" && echo '{}' >"$TMP/sticky/r.json" && chmod 755 "$TMP"
	su nobody -s /bin/sh -c "PLAIN_STARTED='$TMP/sticky/started' '$BENCHTRAP' run '$PLAIN' \
		--symbol plain_work --time 0.05 --warmup 0 --output '$TMP/sticky/r.json'" \
		>"$TMP/out" 2>"$TMP/err"
	status=$? out=$(cat "$TMP/out") err=$(cat "$TMP/err")
	expect_usage_error "r.json: cannot write .*another user's file in a sticky directory"
	checks=$((checks + 1))
	[[ ! -e $TMP/sticky/started ]] || fail "the program ran although the output path was refused"
	[[ $(cat "$TMP/sticky/r.json") == '{}' ]] || fail "the sticky directory's file changed"
else
	echo "note: no unprivileged user can run this build: the sticky-directory case is skipped"
fi

# run --markers: checked and opened before anything runs, written through.
rm -f "$STARTED"
run run "$PLAIN" --symbol plain_work "${FAST[@]}" --markers "$TMP/missing/m.jsonl"
expect_refused_early "m.jsonl: cannot write markers: no such directory"
run run "$PLAIN" --symbol plain_work "${FAST[@]}" --markers "$TMP/fifo"
expect_refused_early "fifo: cannot write markers: nothing reads from it"
cat "$TMP/fifo" >"$TMP/got" &
reader=$!
wait_reader $reader
run run "$PLAIN" --symbol plain_work "${FAST[@]}" --markers "$TMP/fifo"
expect_status 0
wait $reader
checks=$((checks + 1))
grep -q '"event":"benchmark_end"' "$TMP/got" || fail "the FIFO's reader got no markers"
if $have_nodes; then
	run run "$PLAIN" --symbol plain_work "${FAST[@]}" --markers "$TMP/null"
	expect_status 0
	checks=$((checks + 1))
	[[ -c $TMP/null ]] || fail "run --markers replaced the null device"
	# Markers that cannot be written (a full device) are not lost in
	# silence: the run says so in one line, exit 2, after its table.
	run run "$PLAIN" --symbol plain_work "${FAST[@]}" --markers "$TMP/full"
	expect_one_error "full: cannot write markers: no space left on the device"
	expect_out plain_work
fi

# An interrupted merge leaves no temporary file, whatever moment the signal
# hits (before, while or after the output is written): each trial only checks
# what is left.
python3 - "$TMP/in.json" "$TMP/big.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
b = d["benchmarks"][0]
d["benchmarks"] = [dict(b, name="b%d" % i) for i in range(4000)]
json.dump(d, open(sys.argv[2], "w"), indent=2)
PY
mkdir "$TMP/int"
t0=$(date +%s%N)
"$BENCHTRAP" merge "$TMP/big.json" "$TMP/big.json" "$TMP/big.json" --force \
	--output "$TMP/int/merged.json" >/dev/null || fail "the large merge failed"
span_ms=$((($(date +%s%N) - t0) / 1000000 + 1))
for _ in $(seq 20); do
	rm -f "$TMP/int/merged.json"
	"$BENCHTRAP" merge "$TMP/big.json" "$TMP/big.json" "$TMP/big.json" --force \
		--output "$TMP/int/merged.json" >/dev/null 2>&1 &
	pid=$!
	sleep "$(awk -v ms=$((RANDOM % span_ms)) 'BEGIN { printf "%.3f", ms / 1000 }')"
	kill -TERM $pid 2>/dev/null
	wait $pid
	checks=$((checks + 1))
	left=$(ls "$TMP/int" | grep -v '^merged\.json$' || true)
	[[ -z $left ]] || fail "an interrupted merge left $left behind"
done

# -o FILE is --output FILE wherever --output is taken, attached (-oFILE) too;
# -o without a value is named as such, and a command without --output does
# not take -o.
rm -f "$TMP"/short-*.json
run run "$PLAIN" --symbol plain_work "${FAST[@]}" -o "$TMP/short-run.json"
expect_status 0
expect_json_file "$TMP/short-run.json"
run observe --symbol plain_work -o "$TMP/short-observe.json" -- "$PLAIN"
expect_status 0
expect_json_file "$TMP/short-observe.json"
run merge "$TMP/in.json" -o "$TMP/short-merge.json"
expect_status 0
expect_json_file "$TMP/short-merge.json"
run merge "$TMP/in.json" -o"$TMP/short-merge2.json"
expect_status 0
expect_json_file "$TMP/short-merge2.json"
for cmd in run merge observe compare export; do
	run $cmd "$TMP/in.json" -o
	expect_usage_error "$cmd: option '-o' needs a value"
done
run compare "$TMP/in.json" "$TMP/in.json" -o "$TMP/short-compare.json"
expect_usage_error "compare: --output applies when comparing two binaries"
run export "$TMP/in.json" --format gbench -o "$TMP/short-export.json"
expect_status 0
expect_json_file "$TMP/short-export.json"

done_ok
