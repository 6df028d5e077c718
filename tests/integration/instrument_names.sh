#!/usr/bin/env bash
# No code outside the instruments' table (controller/results/instrument.c,
# and measure/instruments.c's rows of the same instruments) compares an instrument's name: callers ask its id or a flag
# (results/instrument.h, measure/measure.h), so that an instrument is a row
# of a table and not a name spelled across the tree. Found here: a
# comparison (strcmp, strncmp, strcasecmp, ==, !=) with a name among its
# operands, and an initializer that holds two names or more (a list of
# names kept by hand, to be compared in a loop).
set -uo pipefail
: "${SOURCE_ROOT:?SOURCE_ROOT must name the source tree}"
command -v python3 >/dev/null || { echo "SKIP: no python3 to read the sources with"; exit 77; }

exec python3 - "$SOURCE_ROOT" <<'PY'
import os, re, sys
root = sys.argv[1]
table = os.path.join('controller', 'results', 'instrument.c')
# measure's rows by the same ids, whose names the unit test 'measure'
# checks against the table's.
rows = os.path.join('controller', 'measure', 'instruments.c')
names = r'"(?:walltime|callgrind|perf|memory|observe)"'
# A comparison whose call spans lines: up to its closing parenthesis.
cmp_call = re.compile(r'\b\w*(?:strn?cmp|strcasecmp|streq\w*)\s*\(([^;{}]*?)\)\s*(?:[;&|)?!=<>]|$)',
                      re.S)
eq = re.compile(r'(?:==|!=)\s*' + names + '|' + names + r'\s*(?:==|!=)')
brace = re.compile(r'=\s*\{(.*?)\};', re.S)
found = []
checked = 0
for top, dirs, files in os.walk(os.path.join(root, 'controller')):
    dirs.sort()
    for f in sorted(files):
        if not f.endswith(('.c', '.h')):
            continue
        path = os.path.join(top, f)
        rel = os.path.relpath(path, root)
        if rel in (table, rows):
            continue
        text = open(path, encoding='utf-8').read()
        # Comments and the inside of asm statements say names too.
        code = re.sub(r'/\*.*?\*/', lambda m: re.sub(r'[^\n]', ' ', m.group(0)), text, flags=re.S)
        code = re.sub(r'//[^\n]*', '', code)
        checked += 1
        line = lambda pos: code.count('\n', 0, pos) + 1
        for m in cmp_call.finditer(code):
            if re.search(names, m.group(1)):
                found.append(f'{rel}:{line(m.start())}: compares an instrument name: '
                             + ' '.join(m.group(0).split())[:100])
        for m in eq.finditer(code):
            found.append(f'{rel}:{line(m.start())}: compares an instrument name')
        for m in brace.finditer(code):
            if len(re.findall(names, m.group(1))) >= 2:
                found.append(f'{rel}:{line(m.start())}: a list of instrument names: '
                             + ' '.join(m.group(0).split())[:100])
if checked == 0:
    print('FAIL: no source file found under', os.path.join(root, 'controller'))
    sys.exit(1)
for f in found:
    print('FAIL:', f)
if found:
    print(f'{len(found)} place(s) compare instrument names outside {table}: ask the '
          'instrument\'s id or a flag of results/instrument.h instead')
    sys.exit(1)
print(f'{checked} files: no instrument name compared outside {table}')
PY
