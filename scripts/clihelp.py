#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The manual pages and shell completions of benchtrap, made from its --help.

`benchtrap --help` and `benchtrap CMD --help` are the one source of what the
commands and options are; this reads them from the built executable and
writes:

  clihelp.py BENCHTRAP man EXTRA OUTDIR [KEY=VALUE...]
                                           benchtrap.1, benchtrap-CMD.1
  clihelp.py BENCHTRAP bash FILE           bash completion
  clihelp.py BENCHTRAP zsh FILE            zsh completion
  clihelp.py BENCHTRAP options [CMD]       the options --help names, one a line

EXTRA (docs/man/extra.txt) holds the sections --help has no room for
(ENVIRONMENT, FILES, SEE ALSO, ...); @KEY@ in it becomes VALUE. The values an option takes from a fixed
list (--format, --instrument, --isolation) are the ones benchtrap's own parser
names when it refuses a value, so they cannot drift from it either.

How --help is read (docs/development.md): blocks separated by blank lines;
the first is the synopsis ("usage: "); "examples:" and "exit status:" start
their sections; any other block is paragraphs (lines at column 0) and lists
(indented lines: an item starts at the list's indentation, its description
after two spaces or at the column its continuation lines start at). A list
whose items start with '-' is a group of options, headed by the paragraph
before it ("selection (...):").
"""

import functools
import os
import re
import subprocess
import sys

OPTION_RE = re.compile(r"(?<![\w-])(-[A-Za-z]|--[a-z][a-z0-9-]*)(?![\w-])")


# A benchtrap built with ASan runs here too: what it prints is wanted, not
# its leak report (the test suite looks for leaks).
ENV = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")


@functools.lru_cache(maxsize=None)
def run_help(benchtrap, cmd):
    args = [benchtrap] + ([cmd] if cmd else []) + ["--help"]
    out = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
                         check=True, universal_newlines=True).stdout
    return tuple(out.expandtabs().splitlines())


def commands(benchtrap):
    """[(name, summary)] from the commands: list of `benchtrap --help`."""
    lines = run_help(benchtrap, None)
    start = lines.index("commands:") + 1
    out = []
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        name, summary = line.strip().split(None, 1)
        out.append((name, summary))
    return out


def choices(benchtrap, cmd, option):
    """The values benchtrap accepts for 'option' of 'cmd', from the one line
    it prints when it refuses one: "... is a, b or c, not '@'" or
    "... unknown instrument '@' (a, b or c)"; [] when it names none."""
    p = subprocess.run([benchtrap, cmd, option, "@"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=ENV, universal_newlines=True)
    m = re.search(r" is (.*), not '@'$", p.stderr.strip()) or \
        re.search(r"'@' \((.*)\)$", p.stderr.strip())
    if p.returncode != 2 or not m:
        return []
    words = re.split(r", | or ", m.group(1))
    return [w.strip("'") for w in words if re.fullmatch(r"'?[a-z][a-z0-9_-]*'?", w)]


# ---- parsing --help -------------------------------------------------------


def indent(line):
    return len(line) - len(line.lstrip(" "))


def blocks(lines):
    block = []
    for line in list(lines) + [""]:
        if line.strip():
            block.append(line.rstrip())
        elif block:
            yield block
            block = []


def parse_list(lines):
    """Items of an indented list: [(term, [description lines])]; a line
    indented deeper than the descriptions keeps its own line (its indent is
    kept, relative to the description column)."""
    base = indent(lines[0])
    conts = [indent(l) for l in lines if indent(l) > base]
    col = max(set(conts), key=conts.count) if conts else None
    items = []
    for line in lines:
        if indent(line) == base:
            body = line[base:]
            m = re.search(r"\S(\s{2,})\S", body)
            if m:
                term, desc = body[:m.start(1)], body[m.end(1):]
            elif col and len(line) > col and line[col - 1] == " " and line[col] != " ":
                term, desc = line[base:col].strip(), line[col:]
            else:
                term, desc = body, ""
            items.append((term.strip(), [desc] if desc else []))
        elif items:
            extra = indent(line) - (col or indent(line))
            items[-1][1].append(" " * extra + line.strip())
    return items


def parse_help(lines):
    """A page: {'synopsis': [...], 'parts': [(kind, ...)], 'examples': [...],
    'exit': str}. Parts are ('para', text), ('list', items, bullet) and
    ('options', heading, items)."""
    bl = list(blocks(lines))
    if not bl or not bl[0][0].startswith("usage: "):
        raise SystemExit("clihelp: --help does not start with 'usage: '")
    page = {"synopsis": [l[len("usage: "):] for l in bl[0]], "parts": [],
            "examples": [], "exit": ""}
    for block in bl[1:]:
        if block[0] == "examples:":
            page["examples"] = [l[2:] if l.startswith("  ") else l.strip()
                                for l in block[1:]]
            continue
        if block[0].startswith("exit status:"):
            text = " ".join(l.strip() for l in block)
            page["exit"] = text[len("exit status:"):].strip()
            continue
        segs = []
        for line in block:
            kind = "list" if line.startswith(" ") else "para"
            if segs and segs[-1][0] == kind:
                segs[-1][1].append(line)
            else:
                segs.append((kind, [line]))
        i = 0
        while i < len(segs):
            kind, seg = segs[i]
            if kind == "para":
                text = " ".join(l.strip() for l in seg)
                nxt = segs[i + 1] if i + 1 < len(segs) else None
                if text.endswith(":") and nxt and nxt[1][0].lstrip().startswith("-") \
                        and not nxt[1][0].lstrip().startswith("- "):
                    page["parts"].append(("options", text[:-1], parse_list(nxt[1])))
                    i += 2
                    continue
                page["parts"].append(("para", text))
            else:
                bullet = seg[0].lstrip().startswith("- ")
                if bullet:
                    base = indent(seg[0])
                    items = []
                    for l in seg:
                        if indent(l) == base:
                            items.append((None, [l.strip()[2:]]))
                        else:
                            items[-1][1].append(l.strip())
                else:
                    items = parse_list(seg)
                if not bullet and items[0][0].startswith("-"):
                    page["parts"].append(("options", "", items))
                else:
                    page["parts"].append(("list", items, bullet))
            i += 1
    return page


# ---- roff -------------------------------------------------------------------


def esc(text):
    """Text for roff: backslashes, hyphens (as \\- so that options copy as
    typed), `code` in bold."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return re.sub(r"`([^`]+)`", r"\\fB\1\\fR", text)


def line_out(text):
    """One line of input for roff: a leading . or ' would be a request."""
    return "\\&" + text if text[:1] in (".", "'") else text


def term_out(term):
    """An option term: the options bold, their values italic."""
    parts = re.split(r"(\s+|,|\||\[|\])", term)
    out = []
    for p in parts:
        if not p:
            continue
        if p.startswith("-"):
            out.append("\\fB" + esc(p) + "\\fR")
        elif re.fullmatch(r"[A-Z][A-Z_/.]*", p):
            out.append("\\fI" + esc(p) + "\\fR")
        else:
            out.append(esc(p))
    return "".join(out)


def desc_out(lines):
    out = []
    verbatim = False
    for l in lines:
        deep = l.startswith(" ")
        if deep and not verbatim:
            out.append(".nf")
            verbatim = True
        elif not deep and verbatim:
            out.append(".fi")
            verbatim = False
        out.append(line_out(esc(l)))
    if verbatim:
        out.append(".fi")
    return out


def items_out(items, bullet):
    out = []
    for term, desc in items:
        if bullet:
            out.append(".IP \\(bu 2")
        else:
            out.append(".TP")
            out.append(line_out(term_out(term)))
        out += desc_out(desc)
    return out


def read_extra(path, defs):
    """{page: [(SECTION, [roff lines])]} from EXTRA: '# page' starts a page,
    '## SECTION' a section; the rest is roff source, @KEY@ replaced by
    defs[KEY]."""
    pages = {}
    page = section = None
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            for k, v in defs.items():
                line = line.replace("@%s@" % k, esc(v))
            if re.search(r"@[A-Z]+@", line):
                raise SystemExit("clihelp: %s: no value for %s" % (path, line))
            if line.startswith("## "):
                section = (line[3:].strip(), [])
                pages[page].append(section)
            elif line.startswith("# "):
                page = line[2:].strip()
                pages.setdefault(page, [])
                section = None
            elif section is not None:
                section[1].append(line)
            elif line.strip() and not line.startswith(";"):
                raise SystemExit("clihelp: %s: text outside a section: %s" % (path, line))
    for sections in pages.values():
        for _, body in sections:
            while body and not body[-1].strip():
                body.pop()
    return pages


# Sections in the order of man-pages(7).
ORDER = ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "EXIT STATUS",
         "ENVIRONMENT", "FILES", "NOTES", "EXAMPLES", "SEE ALSO"]


def man_page(name, summary, version, page, extra):
    sections = {}
    cur = sections.setdefault("DESCRIPTION", [])
    first_options = True
    for part in page["parts"]:
        if part[0] == "para":
            cur.append(".PP")
            cur.append(line_out(esc(part[1])))
        elif part[0] == "list":
            if name == "benchtrap" and not part[2] and cur and cur[-1] == "commands:":
                cur.pop()
                cur.pop()
                cur = sections.setdefault("COMMANDS", [])
                for cmd, desc in part[1]:
                    cur += [".TP", "\\fBbenchtrap\\-%s\\fR(1)" % esc(cmd)]
                    cur += desc_out(desc)
                cur = sections.setdefault("NOTES", [])
                continue
            cur += [".RS"] + items_out(part[1], part[2]) + [".RE"]
        else:
            _, heading, items = part
            cur = sections.setdefault("OPTIONS", [])
            if heading and heading != "options":
                # On a line of its own: a '"' in it stays a character.
                cur += [".SS", line_out(esc(heading[0].upper() + heading[1:]))]
            elif not first_options:
                cur.append(".SS Options")
            first_options = False
            cur += items_out(items, False)
            # Paragraphs after the options are notes.
            cur = sections.setdefault("NOTES", [])
    if page["exit"]:
        sections["EXIT STATUS"] = [line_out(esc(page["exit"]))]
    if page["examples"]:
        sections["EXAMPLES"] = [".nf", ".RS 4"] + \
            [line_out(esc(l)) for l in page["examples"]] + [".RE", ".fi"]
    for sec, body in extra:
        if sec in sections and sections[sec]:
            raise SystemExit("clihelp: %s: section %s comes from --help already" % (name, sec))
        sections[sec] = body
    sections["NAME"] = ["%s \\- %s" % (esc(name), esc(summary))]
    sections["SYNOPSIS"] = [".nf"] + [line_out(esc(l)) for l in page["synopsis"]] + [".fi"]

    out = ['.\\" Made by scripts/clihelp.py from `%s --help` and docs/man/extra.txt:'
           % name.replace("-", " "),
           '.\\" edit those, not this file.',
           '.TH %s 1 "" "benchtrap %s" "benchtrap manual"' % (esc(name.upper()), version),
           # As --help: no hyphenation (it would split option names), ragged right.
           '.nh', '.ad l']
    unknown = [s for s in sections if s not in ORDER]
    for sec in ORDER + unknown:
        body = sections.get(sec)
        if body:
            out.append(".SH " + sec)
            out += body
    return "\n".join(out) + "\n"


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def do_man(benchtrap, extra_path, outdir, defs):
    extra = read_extra(extra_path, defs)
    version = subprocess.run([benchtrap, "--version"], stdout=subprocess.PIPE, check=True,
                             env=ENV, universal_newlines=True).stdout.split()[-1]
    cmds = commands(benchtrap)
    pages = [("benchtrap", None, "an out-of-process benchmark controller for Linux")]
    pages += [("benchtrap-" + c, c, s) for c, s in cmds]
    known = {p[0] for p in pages}
    for p in extra:
        if p not in known:
            raise SystemExit("clihelp: %s: no command for page '%s'" % (extra_path, p))
    for name, cmd, summary in pages:
        page = parse_help(run_help(benchtrap, cmd))
        write("%s/%s.1" % (outdir, name),
              man_page(name, summary, version, page, extra.get(name, [])))


def options(benchtrap, cmd):
    """The options `benchtrap [CMD] --help` names in its option lists."""
    page = parse_help(run_help(benchtrap, cmd))
    found = []
    for part in page["parts"]:
        if part[0] != "options":
            continue
        for term, _ in part[2]:
            for o in OPTION_RE.findall(term):
                if o not in found:
                    found.append(o)
    return found


# Options whose value is a file or directory, by the placeholder --help gives.
FILE_ARGS = {"FILE", "DIR"}
# Placeholders of options whose value is a word from a fixed list.
CHOICE_ARGS = {"FMT", "NAME", "MODE"}


def option_values(benchtrap, cmd):
    """{option: 'file' | 'dir' | [choices] | 'value'} for the options of cmd
    that take a value."""
    page = parse_help(run_help(benchtrap, cmd))
    vals = {}
    for part in page["parts"]:
        if part[0] != "options":
            continue
        for term, _ in part[2]:
            for m in re.finditer(r"(--[a-z][a-z0-9-]*)(?: ([A-Z][A-Z_/.]*|'[^']*'))?", term):
                opt, arg = m.group(1), m.group(2)
                if not arg or opt in vals:
                    continue
                if arg in CHOICE_ARGS:
                    vals[opt] = choices(benchtrap, cmd, opt) or "value"
                elif arg in FILE_ARGS:
                    vals[opt] = "dir" if arg == "DIR" else "file"
                else:
                    vals[opt] = "value"
            # "-o, --output FILE": the short spelling takes the same value.
            for m in re.finditer(r"(?<![\w-])(-[A-Za-z]), (--[a-z][a-z0-9-]*)", term):
                if m.group(2) in vals and m.group(1) not in vals:
                    vals[m.group(1)] = vals[m.group(2)]
    return vals


def model(benchtrap):
    """The commands, and for each its options and their values. An option
    whose value --help gives in another command only (compare's "--warmup,
    --time, ...": "as for `benchtrap run`") takes the same value here."""
    cmds = [c for c, _ in commands(benchtrap)]
    per = {c: (options(benchtrap, c), option_values(benchtrap, c)) for c in cmds}
    for c in cmds:
        opts, vals = per[c]
        for o in opts:
            if o.startswith("--") and o not in vals:
                for d in cmds:
                    if o in per[d][1]:
                        vals[o] = per[d][1][o]
                        break
    return cmds, per


def do_bash(benchtrap, path):
    cmds, per = model(benchtrap)
    out = ["# bash completion for benchtrap. Made by scripts/clihelp.py from",
           "# `benchtrap CMD --help`: edit that, not this file.",
           "",
           "_benchtrap()",
           "{",
           "\tlocal cur prev cmd i ci",
           "\tcur=${COMP_WORDS[COMP_CWORD]}",
           "\tprev=${COMP_WORDS[COMP_CWORD-1]}",
           "\t# --format=js: bash splits the word at '=' (COMP_WORDBREAKS).",
           "\tif [[ $cur == = ]]; then",
           "\t\tcur=",
           "\telif [[ $prev == = ]] && ((COMP_CWORD > 1)); then",
           "\t\tprev=${COMP_WORDS[COMP_CWORD-2]}",
           "\tfi",
           "\tCOMPREPLY=()",
           "\tcmd=",
           "\tfor ((i = 1; i < COMP_CWORD; i++)); do",
           "\t\tcase ${COMP_WORDS[i]} in",
           "\t\t-*) ;;",
           "\t\t*) cmd=${COMP_WORDS[i]}; break ;;",
           "\t\tesac",
           "\tdone",
           "\tci=$i",
           "\t# After --, the target's own arguments: files.",
           "\tfor ((i = ci + 1; i < COMP_CWORD; i++)); do",
           "\t\tif [[ ${COMP_WORDS[i]} == -- ]]; then",
           "\t\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))",
           "\t\t\treturn",
           "\t\tfi",
           "\tdone",
           "\tif [[ -z $cmd ]]; then",
           "\t\tif [[ $cur == -* ]]; then",
           "\t\t\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\"))"
           % " ".join(options(benchtrap, None)),
           "\t\telse",
           "\t\t\tCOMPREPLY=($(compgen -W '%s help' -- \"$cur\"))" % " ".join(cmds),
           "\t\tfi",
           "\t\treturn",
           "\tfi",
           "\tcase $cmd in"]
    out.append("\thelp)")
    out.append("\t\t((COMP_CWORD == ci + 1)) && COMPREPLY=($(compgen -W '%s' -- \"$cur\"))"
               % " ".join(cmds))
    out.append("\t\treturn ;;")
    for c in cmds:
        opts, vals = per[c]
        out.append("\t%s)" % c)
        out.append("\t\tcase $prev in")
        for kind in ("file", "dir", "value"):
            group = [o for o, v in vals.items() if v == kind]
            if not group:
                continue
            out.append("\t\t%s)" % "|".join(group))
            if kind == "file":
                out.append("\t\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))")
            elif kind == "dir":
                out.append("\t\t\tCOMPREPLY=($(compgen -d -- \"$cur\"))")
            out.append("\t\t\treturn ;;")
        for o, v in vals.items():
            if isinstance(v, list):
                out.append("\t\t%s)" % o)
                out.append("\t\t\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\"))" % " ".join(v))
                out.append("\t\t\treturn ;;")
        out.append("\t\tesac")
        out.append("\t\tif [[ $cur == -* ]]; then")
        out.append("\t\t\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\"))" % " ".join(opts))
        out.append("\t\telse")
        out.append("\t\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))")
        out.append("\t\tfi")
        out.append("\t\t;;")
    out += ["\tesac",
            "}",
            "complete -o filenames -F _benchtrap benchtrap",
            ""]
    write(path, "\n".join(out))


def zsh_quote(text):
    return text.replace("'", "'\\''").replace("[", "\\[").replace("]", "\\]") \
        .replace(":", "\\:")


def do_zsh(benchtrap, path):
    cmds, per = model(benchtrap)
    summaries = dict(commands(benchtrap))
    out = ["#compdef benchtrap",
           "# zsh completion for benchtrap. Made by scripts/clihelp.py from",
           "# `benchtrap CMD --help`: edit that, not this file.",
           "",
           "_benchtrap_commands()",
           "{",
           "\tlocal -a cmds",
           "\tcmds=("]
    for c in cmds:
        out.append("\t\t'%s:%s'" % (c, zsh_quote(summaries[c])))
    out += ["\t)",
            "\t_describe -t commands 'benchtrap command' cmds",
            "}",
            "",
            "_benchtrap()",
            "{",
            "\tlocal curcontext=$curcontext state line",
            "\ttypeset -A opt_args",
            "\t_arguments -C \\",
            "\t\t'(- 1 *)'{-h,--help}'[show the help]' \\",
            "\t\t'(- 1 *)'{-V,--version}'[show the version]' \\",
            "\t\t'1: :_benchtrap_commands' \\",
            "\t\t'*:: :->args' && return 0",
            "\tcase $words[1] in"]
    for c in cmds:
        opts, vals = per[c]
        out.append("\t%s)" % c)
        out.append("\t\t_arguments -S \\")
        for o in opts:
            v = vals.get(o)
            # The value of --opt is the next word or after '=' (getopt_long);
            # of -o, the next word or the rest of the word ("-oFILE").
            sep = "=" if o.startswith("--") else "+"
            if v is None:
                spec = "'%s'" % o
            elif v == "file":
                spec = "'%s%s:file:_files'" % (o, sep)
            elif v == "dir":
                spec = "'%s%s:directory:_files -/'" % (o, sep)
            elif isinstance(v, list):
                spec = "'%s%s:value:(%s)'" % (o, sep, " ".join(v))
            else:
                spec = "'%s%s:value: '" % (o, sep)
            # '*' lets an option be given again (--bench, --symbol, --filter).
            out.append("\t\t\t'*'%s \\" % spec)
        out.append("\t\t\t'*:file:_files'")
        out.append("\t\t;;")
    out += ["\thelp)",
            "\t\t_arguments '1: :_benchtrap_commands'",
            "\t\t;;",
            "\tesac",
            "}",
            "",
            '_benchtrap "$@"',
            ""]
    write(path, "\n".join(out))


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    benchtrap, what = argv[1], argv[2]
    if what == "man" and len(argv) >= 5:
        do_man(benchtrap, argv[3], argv[4], dict(a.split("=", 1) for a in argv[5:]))
    elif what == "bash" and len(argv) == 4:
        do_bash(benchtrap, argv[3])
    elif what == "zsh" and len(argv) == 4:
        do_zsh(benchtrap, argv[3])
    elif what == "options" and len(argv) in (3, 4):
        print("\n".join(options(benchtrap, argv[3] if len(argv) == 4 else None)))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
