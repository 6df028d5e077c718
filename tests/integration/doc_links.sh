#!/usr/bin/env bash
# Links between the pages of the manual: every relative link of README.md
# and docs/*.md, `[text](page.md#anchor)`, names a file that exists and, for
# a page, a heading of it (the anchor as GitHub makes it from the heading's
# text). Links inside fenced code blocks and links to web addresses are
# not checked.
set -uo pipefail
: "${SOURCE_ROOT:?SOURCE_ROOT must name the source tree}"
command -v python3 >/dev/null || { echo "SKIP: no python3 to read the pages with"; exit 77; }

exec python3 - "$SOURCE_ROOT" <<'PY'
import os, re, sys
root = sys.argv[1]
files = [os.path.join(root, 'README.md')] + sorted(
    os.path.join(root, 'docs', f) for f in os.listdir(os.path.join(root, 'docs')) if f.endswith('.md'))

# GitHub's anchor of a heading: its text (a link's text alone), lowercase,
# without punctuation but '-' and '_', spaces made '-'; a repeated heading
# gets '-1', '-2'...
def slug(h):
    h = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', h)
    h = h.strip().lower()
    h = re.sub(r'[^\w\- ]', '', h)
    return h.replace(' ', '-')

def lines_outside_code(path):
    fence = False
    for n, line in enumerate(open(path, encoding='utf-8'), 1):
        if line.lstrip().startswith('```'):
            fence = not fence
            continue
        if not fence:
            yield n, line

anchors = {}
def anchors_of(path):
    if path not in anchors:
        seen, out = {}, set()
        for _, line in lines_outside_code(path):
            m = re.match(r'#{1,6}\s+(.*?)\s*#*\s*$', line)
            if not m:
                continue
            s = slug(m.group(1))
            k = seen.get(s, 0)
            seen[s] = k + 1
            out.add(s if k == 0 else f'{s}-{k}')
        anchors[path] = out
    return anchors[path]

bad = 0
count = 0
for f in files:
    for n, line in lines_outside_code(f):
        # Code spans are text, not links; a link's text may be one.
        line = re.sub(r'``.*?``|`[^`]*`', '', line)
        for target in re.findall(r'\]\(([^)\s]+)\)', line):
            if re.match(r'[a-z]+:', target):
                continue
            count += 1
            path, _, anchor = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            rel = os.path.relpath(f, root)
            if not os.path.exists(dest):
                print(f'FAIL: {rel}:{n}: {target}: no file {os.path.relpath(dest, root)}')
                bad += 1
            elif anchor and dest.endswith('.md') and anchor not in anchors_of(dest):
                print(f'FAIL: {rel}:{n}: {target}: no heading #{anchor} in {os.path.relpath(dest, root)}')
                bad += 1
print(f'{count} links, {bad} broken', file=sys.stderr)
sys.exit(1 if bad else 0)
PY
