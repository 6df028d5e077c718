#!/usr/bin/env bash
# Shell completion (completions/, made from --help by scripts/clihelp.py):
# the bash completion sourced in this shell, its function called as bash
# calls it (COMP_WORDS, COMP_CWORD), its candidates checked against
# `benchtrap --help` and the values benchtrap accepts; the zsh completion
# (tests/integration/completion.zsh) when zsh is installed.
. "$(dirname "$0")/lib.sh"

COMPL=$BUILD_ROOT/completions
[[ -f $COMPL/benchtrap ]] || { echo "SKIP: no completions in $COMPL (python3 missing or a cross build)"; exit 77; }

# shellcheck source=/dev/null
. "$COMPL/benchtrap"
checks=$((checks + 1))
[[ $(complete -p benchtrap) == *"-F _benchtrap"* ]] || fail "the completion does not register _benchtrap"

# complete WORD... : the candidates when the cursor is at the end of the
# last word (give '' to complete a new word), sorted, one a line.
complete_words() {
	COMP_WORDS=(benchtrap "$@")
	COMP_CWORD=$#
	COMP_LINE="benchtrap $*"
	COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	_benchtrap benchtrap "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort
}

expect_words() { # what, want, got
	checks=$((checks + 1))
	[[ $2 == "$3" ]] || fail "$1: want [$(echo $2)], got [$(echo $3)]"
}

sorted() { printf '%s\n' "$@" | sort -u; }

# The commands.
run --help
cmds=$(sed -n '/^commands:/,/^$/p' <<<"$out" | awk 'NR > 1 && NF { print $1 }')
expect_words "benchtrap <tab>" "$(sorted $cmds help)" "$(complete_words '')"
expect_words "benchtrap ru<tab>" "run" "$(complete_words ru)"
expect_words "benchtrap r<tab>" "$(sorted report run)" "$(complete_words r)"
expect_words "benchtrap -<tab>" "$(sorted -h --help -V --version)" "$(complete_words -)"
expect_words "benchtrap help <tab>" "$(sorted $cmds)" "$(complete_words help '')"

# Each command's options: those at the start of a line of its --help.
for c in $cmds; do
	run $c --help
	want=$(grep -oP '^\s{2,}\K(-[A-Za-z]|--[a-z][a-z0-9-]*)' <<<"$out"
		grep -oP '^\s{2,}-.*' <<<"$out" |
		grep -oP '(?<![\w-])--[a-z][a-z0-9-]*' )
	want=$(sorted $want)
	expect_words "benchtrap $c -<tab>" "$want" "$(complete_words $c -)"
	expect_words "benchtrap $c --<tab> (after a file)" "$(grep -- '^--' <<<"$want")" \
		"$(complete_words $c ./prog --)"
done

# Values from a fixed list are those benchtrap accepts: the words its one
# line names when it refuses one.
refused_values() { # cmd option
	run "$1" "$2" @
	expect_status 2
	sed -E -e "s/.* is (.*), not '@'$/\1/" -e "s/.*'@' \((.*)\)$/\1/" <<<"$err" |
		sed -E -e 's/,? or /\n/g' -e 's/, /\n/g' -e "s/'//g" | sort
}
for co in "run --format" "run --instrument" "run --isolation" "compare --format" \
	"compare --instrument" "observe --format" "export --format"; do
	set -- $co
	got=$(complete_words "$1" ./prog "$2" '')
	expect_words "benchtrap $co <tab>" "$(refused_values "$1" "$2")" "$got"
done
# ... which are the instruments of run --help's table and the formats of
# the contract (docs/results.md, docs/ci.md).
run run --help
instruments=$(sed -n '/^  --instrument NAME/,/^  --[a-z]/p' <<<"$out" |
	grep -oP '^ {20,}\K[a-z]+(?= {2,})')
expect_words "run --instrument <tab> and run --help" "$(sorted $instruments)" \
	"$(complete_words run ./prog --instrument '')"
expect_words "run --format j<tab>" "json" "$(complete_words run ./prog --format j)"
expect_words "export --format <tab>" "$(sorted bmf gbench gab)" \
	"$(complete_words export r.json --format '')"
expect_words "run --instrument c<tab>" "callgrind" "$(complete_words run ./prog --instrument c)"
# --format=<tab> and --format=j<tab>: bash splits the word at '='.
expect_words "run --format=<tab>" "$(refused_values run --format)" \
	"$(complete_words run ./prog --format =)"
expect_words "run --format=j<tab>" "json" "$(complete_words run ./prog --format = j)"

# Files and directories.
mkdir "$TMP/files" "$TMP/files/outdir"
touch "$TMP/files/prog" "$TMP/files/out.json"
cd "$TMP/files" || fail "cd $TMP/files"
expect_words "run <tab> (the binary)" "$(sorted out.json outdir prog)" "$(complete_words run '')"
expect_words "run p<tab>" "prog" "$(complete_words run p)"
expect_words "run prog --output o<tab>" "$(sorted out.json outdir)" \
	"$(complete_words run prog --output o)"
expect_words "run prog --profile <tab> (a directory)" "outdir" "$(complete_words run prog --profile '')"
expect_words "list <tab>" "$(sorted out.json outdir prog)" "$(complete_words list '')"
expect_words "merge a.json --output o<tab>" "$(sorted out.json outdir)" \
	"$(complete_words merge a.json --output o)"
# -o is --output: a file after it.
expect_words "merge a.json -o o<tab>" "$(sorted out.json outdir)" \
	"$(complete_words merge a.json -o o)"
expect_words "observe -o o<tab>" "$(sorted out.json outdir)" "$(complete_words observe -o o)"
# A value that is neither: nothing to offer.
expect_words "run prog --time <tab>" "" "$(complete_words run prog --time '')"
# After --, the target's own arguments: files, never benchtrap's options.
expect_words "run prog -- --<tab>" "" "$(complete_words run prog -- --)"
expect_words "observe --symbol f -- ./p<tab>" "./prog" "$(complete_words observe --symbol f -- ./p)"
cd / || exit 1

# zsh: the same questions through its completion system.
if command -v zsh >/dev/null; then
	checks=$((checks + 1))
	zsh -f "$(dirname "$0")/completion.zsh" "$COMPL/_benchtrap" "$BENCHTRAP" ||
		fail "zsh completion (completion.zsh) failed"
else
	echo "note: zsh is not installed: its completion is not checked"
fi

done_ok
