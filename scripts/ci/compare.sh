#!/usr/bin/env bash
# The measuring and reporting steps of benchtrap's GitHub Action (action.yml),
# kept here so that tests run them as CI does. Settings come from the
# environment, as the action passes its inputs:
#
#   BT              the benchtrap executable (default: benchtrap on PATH)
#   BT_BASE BT_HEAD two binaries (measured side by side) or two results files
#   BT_RESULTS      instead: results files to merge and compare (paths or
#                   globs, one per line or separated by spaces), e.g. the
#                   paired-*.json of several shards
#   BT_INSTRUMENT   walltime (default), callgrind, ...
#   BT_BENCH        --bench globs, one per line
#   BT_SHARD        K/N: this machine's part of the suite
#   BT_THRESHOLD    percent (default 5)
#   BT_ARGS         more options of compare (e.g. --time 0.5), split at spaces
#   BT_OUT          where the files go (default: benchtrap-out)
#   BT_COMMENT      true: also write a pull-request comment, capped to
#                   BT_MAX_BYTES (default 65000) with its marker first
#   BT_COMMENT_ID   the marker's id: <!-- benchtrap: ID --> (default
#                   "$GITHUB_WORKFLOW/$GITHUB_JOB")
#   BT_FULL_REPORT  the URL the comment links for the whole report (default:
#                   this run's page on GitHub, when GITHUB_RUN_ID is set)
#   BT_HTML         false: no HTML report (default true)
#   BT_HISTORY      a history database (benchtrap history) to draw in the
#                   HTML report, and with BT_HISTORY_ADD to add to
#   BT_HISTORY_ADD  true: add head's results to BT_HISTORY as the commit
#                   GITHUB_SHA (or git's), then `history check` it: a
#                   regression found there is status 1 too
#
# Writes BT_OUT/results.json (the compared document), BT_OUT/report.md (the
# whole Markdown report; benchtrap appends it to GITHUB_STEP_SUMMARY too),
# BT_OUT/report.html (benchtrap report, with the history's series),
# BT_OUT/history.txt (history check's findings), BT_OUT/comment.md, and
# status=0|1 (compare's exit status), results=, report=, html=, comment= to
# GITHUB_OUTPUT when set. Exits 2 on bad input, as
# compare does, and 0 otherwise: the gate is the caller's to apply.
set -uo pipefail
bt=${BT:-benchtrap}
out=${BT_OUT:-benchtrap-out}
threshold=${BT_THRESHOLD:-5}
max=${BT_MAX_BYTES:-65000}
id=${BT_COMMENT_ID:-${GITHUB_WORKFLOW:-benchtrap}/${GITHUB_JOB:-compare}}
mkdir -p "$out" || exit 2

say() { echo "benchtrap-ci: $*" >&2; }

opts=(--threshold "$threshold")
[[ -n ${BT_INSTRUMENT:-} ]] && opts+=(--instrument "$BT_INSTRUMENT")
while IFS= read -r glob; do
	[[ -n $glob ]] && opts+=(--bench "$glob")
done <<<"${BT_BENCH:-}"
[[ -n ${BT_SHARD:-} ]] && opts+=(--shard "$BT_SHARD")
read -r -a extra <<<"${BT_ARGS:-}"

status=0
if [[ -n ${BT_RESULTS:-} ]]; then
	# Split at blanks without globbing, then glob each pattern alone, so
	# that one matching nothing is named.
	set -f
	patterns=($BT_RESULTS)
	set +f
	shopt -s nullglob
	files=()
	for pattern in "${patterns[@]}"; do
		matched=($pattern)
		((${#matched[@]})) || { say "no results file matches '$pattern'"; exit 2; }
		files+=("${matched[@]}")
	done
	shopt -u nullglob
	((${#files[@]})) || { say "results names no file"; exit 2; }
	if ((${#files[@]} == 1)); then
		cp -- "${files[0]}" "$out/results.json" || exit 2
	else
		# Runners of one pool may differ in CPU model: each shard measured
		# base and head side by side on its own machine.
		"$bt" merge "${files[@]}" --output "$out/results.json" --allow-mismatch || exit 2
	fi
	"$bt" compare "$out/results.json" --threshold "$threshold" --format markdown \
		>"$out/report.md" || status=$?
elif [[ -n ${BT_BASE:-} && -n ${BT_HEAD:-} ]]; then
	output=()
	# Two binaries are measured: keep the document, to compare it again.
	# Two results files are compared as they are.
	if [[ $(head -c4 "$BT_BASE" 2>/dev/null) == $'\x7fELF' ]]; then
		output=(--output "$out/results.json")
	else
		opts=(--threshold "$threshold") extra=()
	fi
	"$bt" compare "$BT_BASE" "$BT_HEAD" "${opts[@]}" "${extra[@]}" "${output[@]}" \
		--format markdown >"$out/report.md" || status=$?
	((${#output[@]})) || { cp -- "$BT_HEAD" "$out/results.json" || exit 2; }
else
	say "give base and head (binaries or results files), or results"
	exit 2
fi
if ((status > 1)); then
	say "compare failed (exit $status)"
	exit 2
fi

comment=
if [[ ${BT_COMMENT:-false} == true ]]; then
	marker="<!-- benchtrap: $id -->"
	url=${BT_FULL_REPORT:-}
	if [[ -z $url && -n ${GITHUB_RUN_ID:-} ]]; then
		url=${GITHUB_SERVER_URL:-https://github.com}/$GITHUB_REPOSITORY/actions/runs/$GITHUB_RUN_ID
	fi
	link=()
	[[ -n $url ]] && link=(--full-report "$url")
	comment=$out/comment.md
	printf '%s\n' "$marker" >"$comment"
	# The comment is judged again from the document: the same verdicts
	# (a fixed seed), and no second copy in the job summary.
	args=(--threshold "$threshold")
	if [[ -n ${BT_RESULTS:-} ]] || [[ $(head -c4 "${BT_BASE:-}" 2>/dev/null) == $'\x7fELF' ]]; then
		src=("$out/results.json")
	else
		src=("$BT_BASE" "$BT_HEAD")
	fi
	GITHUB_STEP_SUMMARY= "$bt" compare "${src[@]}" "${args[@]}" --format markdown \
		--max-bytes $((max - ${#marker} - 1)) "${link[@]}" >>"$comment"
	r=$?
	((r <= 1)) || { say "the comment could not be written (exit $r)"; exit 2; }
fi

if [[ ${BT_HISTORY_ADD:-false} == true && -n ${BT_HISTORY:-} ]]; then
	# Head's side is the commit measured; a history check's newest
	# regression fails as compare's would.
	"$bt" history add --db "$BT_HISTORY" "$out/results.json" >&2 ||
		{ say "the results could not be added to $BT_HISTORY"; exit 2; }
	"$bt" history check --db "$BT_HISTORY" --threshold "$threshold" >"$out/history.txt"
	r=$?
	((r <= 1)) || { say "history check failed (exit $r)"; exit 2; }
	((r == 0)) || status=1
	cat "$out/history.txt" >&2
fi

html=
if [[ ${BT_HTML:-true} == true ]]; then
	html=$out/report.html
	hist=() base=()
	[[ -n ${BT_HISTORY:-} && -f ${BT_HISTORY:-} ]] && hist=(--history "$BT_HISTORY")
	# Two results files compared: head's against base's. A document of
	# two builds measured side by side holds both.
	if [[ -n ${BT_BASE:-} && $(head -c4 "$BT_BASE" 2>/dev/null) != $'\x7fELF' ]]; then
		base=(--base "$BT_BASE")
	fi
	"$bt" report "$out/results.json" "${base[@]}" "${hist[@]}" -o "$html" ||
		{ say "the HTML report could not be written"; exit 2; }
fi

if [[ -n ${GITHUB_OUTPUT:-} ]]; then
	{
		echo "status=$status"
		echo "results=$out/results.json"
		echo "report=$out/report.md"
		echo "html=$html"
		echo "comment=$comment"
	} >>"$GITHUB_OUTPUT"
fi
say "compare exited $status ($( ((status)) && echo "a regression or a failure" || echo "no regression"))"
exit 0
