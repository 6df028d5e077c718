# The zsh completion, run by completion.sh when zsh is installed:
#   zsh -f completion.zsh PATH/_benchtrap BENCHTRAP
# The completion function runs in a real zsh with the completion system's
# _arguments, _describe and _files replaced by recorders, so what it hands
# them for each command line is checked: the commands, each command's
# options (those of its --help) and the values of --instrument and --format.
emulate -L zsh
compfile=$1 benchtrap=$2
fail() { print -u2 "FAIL (zsh): $*"; exit 1 }

typeset -ga calls
# Each call: its arguments, one a line. As the real _arguments does, the
# spec '*:: :->args' leaves the words from the command on in $words and
# sets $state.
_arguments() {
	calls+=("${(pj:\n:)@}")
	if (( ${@[(Ie)*:: :->args]} )); then
		state=args
		words=(${words[2,-1]})
		(( CURRENT-- ))
	fi
	return 1
}
_describe() { calls+=("${(pj:\n:)@}"$'\n'"${(pj:\n:)${(P)${@[-1]}}}"); return 0 }
_files() { return 0 }

fpath=(${compfile:h} $fpath)
autoload -Uz _benchtrap
# complete WORDS...: what _benchtrap hands _arguments for this line.
complete() {
	calls=()
	local -a words=(benchtrap "$@")
	local CURRENT=$#words curcontext= state= line=
	_benchtrap
}

complete ''
[[ ${calls[1]} == *$'\n1: :_benchtrap_commands\n'* ]] || fail "no command completion: ${calls[1]}"
_benchtrap_commands
cmds=(${(f)"$("$benchtrap" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')"})
for c in $cmds; do
	[[ ${calls[-1]} == *$'\n'${c}:* ]] || fail "command $c not described: ${calls[-1]}"
done

for c in $cmds; do
	# _arguments is called for the command line, then for the command.
	words=()
	complete $c ''
	spec=${calls[-1]}
	want=(${(f)"$("$benchtrap" $c --help | grep -oP '^\s{2,}-.*' |
		grep -oP '(?<![\w-])(-[A-Za-z]|--[a-z][a-z0-9-]*)(?![\w-])' | sort -u)"})
	got=(${(f)"$(print -r -- $spec | grep -oP '^\*?\K-[-a-z0-9]+' | sort -u)"})
	[[ ${(j: :)want} == ${(j: :)got} ]] || fail "$c: options want [$want], got [$got]"
done

complete run ./prog --instrument ''
[[ ${calls[-1]} == *"--instrument=:value:(walltime callgrind perf memory)"* ]] ||
	fail "run --instrument: ${calls[-1]}"
complete export r.json --format ''
[[ ${calls[-1]} == *"--format=:value:(bmf gbench gab)"* ]] || fail "export --format: ${calls[-1]}"
complete run ./prog --output ''
[[ ${calls[-1]} == *"--output=:file:_files"* ]] || fail "run --output: ${calls[-1]}"
print "zsh: ${#cmds} commands checked"
