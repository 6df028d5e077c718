#!/usr/bin/env bash
# The manual pages (docs/man/, made from --help by scripts/clihelp.py): one
# per command of `benchtrap --help`; every option a command's --help names
# is in its page and every option its page names is in --help (so the
# sections written by hand, docs/man/extra.txt, name no option that is
# gone); the sections --help gives (synopsis, options, exit status,
# examples) and those written by hand (SEE ALSO) are there; groff renders
# every page without a warning.
. "$(dirname "$0")/lib.sh"

MAN=$BUILD_ROOT/docs/man
[[ -f $MAN/benchtrap.1 ]] || { echo "SKIP: no manual pages in $MAN (python3 missing or a cross build)"; exit 77; }

# Options named anywhere in a text: -x and --long-name, as words.
options_in() {
	grep -oP '(?<![\w-])(-[A-Za-z]|--[a-z][a-z0-9-]*)(?![\w-])' | sort -u
}

# The text of a page's roff source: no comments, no font changes, \- as -.
page_text() {
	grep -v '^\.\\"' "$1" | sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\&//g'
}

# One page per command, and no page of a command that is gone.
run --help
expect_status 0
cmds=$(sed -n '/^commands:/,/^$/p' <<<"$out" | awk 'NR > 1 && NF { print $1 }')
[[ -n $cmds ]] || fail "no commands in benchtrap --help"
want=$(printf 'benchtrap.1\n'; for c in $cmds; do echo "benchtrap-$c.1"; done)
have=$(cd "$MAN" && ls *.1)
checks=$((checks + 1))
[[ $(sort <<<"$want") == "$(sort <<<"$have")" ]] ||
	fail "pages in $MAN: $(echo $have); commands want: $(echo $want)"

for page in benchtrap $(for c in $cmds; do echo "benchtrap-$c"; done); do
	cmd=${page#benchtrap}
	cmd=${cmd#-}
	run $cmd --help
	expect_status 0
	help_opts=$(options_in <<<"$out")
	man_opts=$(page_text "$MAN/$page.1" | options_in)
	checks=$((checks + 1))
	missing=$(comm -23 <(echo "$help_opts") <(echo "$man_opts"))
	extra=$(comm -13 <(echo "$help_opts") <(echo "$man_opts"))
	[[ -z $missing && -z $extra ]] ||
		fail "$page.1: options of --help not in the page: $(echo $missing);" \
			"options in the page not in --help: $(echo $extra)"
	# Every option of an option list is a tagged paragraph of its own.
	for o in $(grep -oP '^\s{2,}\K(-[A-Za-z]|--[a-z][a-z0-9-]*)' <<<"$out" | sort -u); do
		checks=$((checks + 1))
		grep -A1 -x '\.TP' "$MAN/$page.1" | sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' |
			grep -qP "(^|[ ,])\Q$o\E([ ,=]|$)" ||
			fail "$page.1: $o is not the tag of a paragraph of its own"
	done
	for section in NAME SYNOPSIS DESCRIPTION OPTIONS 'EXIT STATUS' 'SEE ALSO'; do
		checks=$((checks + 1))
		grep -qx "\.SH $section" "$MAN/$page.1" || fail "$page.1 has no $section section"
	done
	if [[ $page != benchtrap ]]; then
		checks=$((checks + 1))
		grep -qx '\.SH EXAMPLES' "$MAN/$page.1" || fail "$page.1 has no EXAMPLES section"
	fi
	# The synopsis is --help's, line for line.
	checks=$((checks + 1))
	syn_help=$(sed -n '1,/^$/p' <<<"$out" | sed '/^$/d' | cut -c8-)
	syn_man=$(sed -n '/^\.SH SYNOPSIS/,/^\.SH/p' "$MAN/$page.1" | grep -v '^\.' |
		sed -e 's/\\-/-/g' -e 's/\\e/\\/g')
	[[ $syn_help == "$syn_man" ]] || fail "$page.1: the synopsis differs from --help's"
done

# groff renders every page without a warning (-ww: all of them).
if command -v groff >/dev/null; then
	for f in "$MAN"/*.1; do
		checks=$((checks + 1))
		warnings=$(groff -man -Tutf8 -ww -z "$f" 2>&1)
		[[ -z $warnings ]] || fail "groff warns on $(basename "$f"): $warnings"
	done
	if command -v man >/dev/null; then
		run_man=$(MANWIDTH=80 man -l "$MAN/benchtrap-run.1" 2>&1 | col -b)
		checks=$((checks + 1))
		grep -q -- '--instrument NAME' <<<"$run_man" || fail "man -l benchtrap-run.1 shows no --instrument"
	fi
else
	echo "note: groff is not installed: rendering not checked"
fi

done_ok
