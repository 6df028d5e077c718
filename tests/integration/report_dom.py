#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks of benchtrap report's pages for tests/integration/report.sh.

  report_dom.py png SHOT.png [--colour RRGGBB]...
      the screenshot is not blank: more than one colour, at least 5 % of its
      pixels other than the background (its most common colour), and at
      least 40 pixels of each --colour given (a plot's bars, a verdict's)
  report_dom.py offline PAGE.html
      the page loads nothing: no src, href or url() to another place, no
      @import, no <link>, also inside the flame graphs' srcdoc
  report_dom.py dom DUMP.html [--run LABEL FILE.json]... [--observe LABEL FILE.json]...
                [--compare HEAD_LABEL COMPARE.json]... [--flamegraph NAME]...
                [--history SHOW.json CHECK.json]
      the DOM Chromium dumped (--dump-dom): no script error recorded; for
      each results file, a plot per benchmark in order, with its name, its
      number of samples and every sample in a bin; for a comparison (the
      JSON of `benchtrap compare --format json`), a row per benchmark in
      its order with its verdict; a flame graph's frame for each NAME; for a
      history (`history show '*' --format json`, `history check --format
      json`), a series per series with its runs' commits and the change
      points `history check` finds

PNG is decoded here with zlib alone (8-bit RGB or RGBA, not interlaced, as
Chromium writes its screenshots). Exits 1 with the first failed check.
"""
import html
import html.parser
import json
import math
import re
import struct
import sys
import zlib


def fail(msg):
    sys.exit("report_dom: " + msg)


# ---- PNG ---------------------------------------------------------------------

def png_pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("%s is not a PNG" % path)
    pos, idat, hdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        fail("%s: unsupported PNG (depth %d, colour type %d)" % (path, depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def check_png(path, colours):
    w, h, bpp, rows = png_pixels(path)
    counts = {}
    for row in rows:
        for i in range(0, len(row), bpp):
            px = row[i:i + 3]
            counts[px] = counts.get(px, 0) + 1
    total = w * h
    bg, nbg = max(counts.items(), key=lambda kv: kv[1])
    other = total - nbg
    print("%s: %dx%d, %d colours, %.1f %% not background #%s" %
          (path, w, h, len(counts), 100.0 * other / total, bg.hex()))
    if len(counts) < 2:
        fail("%s is one colour (#%s): blank" % (path, bg.hex()))
    if other < 0.05 * total:
        fail("%s: only %.2f %% of the pixels are not background" % (path, 100.0 * other / total))
    for c in colours:
        want = bytes.fromhex(c)
        if counts.get(want, 0) < 40:
            fail("%s: %d pixels of #%s (a plot's colour), expected 40 or more" %
                 (path, counts.get(want, 0), c))


# ---- offline -----------------------------------------------------------------

REMOTE = [
    re.compile(r"""(?:\s|^)(?:src|href|xlink:href|action|poster|data|srcset|background)\s*=\s*["']?\s*(?:[a-z][a-z0-9+.-]*:)?//""", re.I),
    re.compile(r"""url\(\s*["']?\s*(?:[a-z][a-z0-9+.-]*:)?//""", re.I),
    re.compile(r"@import", re.I),
    re.compile(r"<link\b", re.I),
    re.compile(r"<script[^>]*\ssrc\s*=", re.I),
]


def check_offline(path):
    text = open(path, encoding="utf-8").read()
    # The flame graphs' documents are in srcdoc attributes, escaped: check
    # them unescaped too.
    for t in (text, html.unescape(text)):
        for r in REMOTE:
            m = r.search(t)
            if m:
                fail("%s would load something: ...%s..." % (path, t[max(0, m.start() - 40):m.end() + 40]))
    if "Content-Security-Policy" not in text or "default-src 'none'" not in text:
        fail("%s has no Content-Security-Policy forbidding requests" % path)
    print("%s: nothing to load (%d bytes)" % (path, len(text)))


# ---- the DOM -----------------------------------------------------------------

class Dom(html.parser.HTMLParser):
    """Every element with a data-kind, with the section it is in and, for
    elements inside a plot, that plot."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = {}
        self.elements = []
        self.section = None
        self.svg = None
        self.depth = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "html":
            self.root = a
        if tag == "section":
            self.section = a
        if tag == "svg":
            self.depth += 1
            if self.depth == 1:
                self.svg = {"attrs": a, "commits": []}
        if self.svg is not None and "data-commit" in a and "tabindex" in a:
            self.svg["commits"].append(a["data-commit"])
        if "data-kind" in a:
            self.elements.append({"tag": tag, "attrs": a, "section": self.section,
                                  "svg": self.svg if tag == "svg" else None})

    def handle_endtag(self, tag):
        if tag == "section":
            self.section = None
        if tag == "svg":
            self.depth -= 1
            if self.depth == 0:
                self.svg = None


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def plots_of(dom, kind, label):
    return [e for e in dom.elements if e["attrs"].get("data-kind") == kind and e["section"]
            and e["section"].get("data-file") == label]


def check_file(dom, label, path, kind):
    doc = json.load(open(path))
    benches = doc["benchmarks"]
    plots = plots_of(dom, kind, label)
    if len(plots) != len(benches):
        fail("%s: %d plots of kind %s, %d benchmarks" % (label, len(plots), kind, len(benches)))
    for p, b in zip(plots, benches):
        a = p["attrs"]
        raw = [x for x in b.get("raw_samples") or []]
        finite = [x for x in raw if x is not None and math.isfinite(x)]
        if a.get("data-bench") != b["name"]:
            fail("%s: plot of %r where %r was expected" % (label, a.get("data-bench"), b["name"]))
        if int(a["data-n"]) != len(raw):
            fail("%s: %s: data-n %s, %d raw samples" % (label, b["name"], a["data-n"], len(raw)))
        if not finite:
            if p["tag"] != "div":
                fail("%s: %s has no samples but a plot" % (label, b["name"]))
            continue
        if p["tag"] != "svg":
            fail("%s: %s has samples but no plot" % (label, b["name"]))
        if kind == "samples":
            binned = sum(int(x) for x in a["data-bins"].split())
            lo, hi = float(a["data-lo"]), float(a["data-hi"])
            if lo > min(finite) or hi < max(finite):
                fail("%s: %s: axis %g..%g misses samples %g..%g" %
                     (label, b["name"], lo, hi, min(finite), max(finite)))
        else:
            binned = sum(int(x.split(":")[1]) for x in a["data-buckets"].split())
        if binned != len(finite):
            fail("%s: %s: %d samples in the bins, %d in the file" % (label, b["name"], binned, len(finite)))
        s = b.get("stats") or {}
        for key, attr in (("median", "data-median"), ("ci_low", "data-ci-low"), ("ci_high", "data-ci-high")):
            if s.get(key) is not None and not close(float(a[attr]), s[key]):
                fail("%s: %s: %s %s, the file says %r" % (label, b["name"], attr, a[attr], s[key]))
    print("%s: %d %s plots, every sample in them" % (label, len(plots), kind))


def check_compare(dom, head_label, path):
    cmp = json.load(open(path))
    rows = [e["attrs"] for e in dom.elements if e["attrs"].get("data-kind") == "change"
            and e["section"] and e["section"].get("data-head") == head_label]
    want = [(b["name"], b["verdict"]) for b in cmp["benchmarks"]]
    got = [(r["data-bench"], r["data-verdict"]) for r in rows]
    if got != want:
        fail("comparison of %s: rows %r, benchtrap compare says %r" % (head_label, got, want))
    tables = [e for e in dom.elements if e["attrs"].get("data-kind") == "comparison"
              and e["section"] and e["section"].get("data-head") == head_label]
    if len(tables) != 1 or not close(float(tables[0]["attrs"]["data-threshold"]),
                                     cmp["threshold_pct"] / 100.0):
        fail("comparison of %s: no table with the threshold %g %%" % (head_label, cmp["threshold_pct"]))
    print("comparison of %s: %d rows, verdicts as benchtrap compare's" % (head_label, len(rows)))


def check_flamegraph(dom, name):
    frames = [e["attrs"] for e in dom.elements if e["attrs"].get("data-kind") == "flamegraph"
              and e["attrs"].get("data-bench") == name]
    if not frames:
        fail("no flame graph of %s" % name)
    doc = frames[0].get("srcdoc", "")
    if "<svg" not in doc or 'class="f"' not in doc or "sandbox" not in frames[0]:
        fail("the flame graph of %s is not its SVG in a sandboxed frame" % name)
    print("flame graph of %s: inlined (%d bytes)" % (name, len(doc)))


def check_history(dom, show_path, check_path):
    show = json.load(open(show_path))["series"]
    check = {(s["name"], s["instrument"], s["machine"]): s for s in json.load(open(check_path))["series"]}
    plots = [e for e in dom.elements if e["attrs"].get("data-kind") == "history"]
    if len(plots) != len(show):
        fail("history: %d series drawn, %d in the history" % (len(plots), len(show)))
    found = 0
    for p, s in zip(plots, show):
        a = p["attrs"]
        key = (s["name"], s["instrument"], s["machine"])
        if (a["data-bench"], a["data-instrument"], a["data-machine"]) != key:
            fail("history: series %r where %r was expected" % (a["data-bench"], key))
        commits = [pt["commit"] for pt in s["points"]]
        if int(a["data-n"]) != len(commits):
            fail("history: %s: data-n %s, %d runs" % (s["name"], a["data-n"], len(commits)))
        if p["tag"] == "svg" and p["svg"]["commits"] != commits:
            fail("history: %s: the runs' commits %r, expected %r" % (s["name"], p["svg"]["commits"], commits))
        at = [int(x) for x in a.get("data-changepoints", "").split()]
        want = [c["commit"] for c in check[key]["change_points"]] if key in check else []
        if [commits[k] for k in at] != want:
            fail("history: %s: change points at %r, history check says %r" %
                 (s["name"], [commits[k] for k in at], want))
        found += len(at)
    print("history: %d series, %d change points as history check's" % (len(plots), found))


def check_dom(path, args):
    dom = Dom()
    dom.feed(open(path, encoding="utf-8").read())
    if dom.root.get("data-errors") != "0":
        fail("%s: script errors: %s (%s)" % (path, dom.root.get("data-errors"), dom.root.get("data-error")))
    i = 0
    while i < len(args):
        opt = args[i]
        if opt in ("--run", "--observe"):
            check_file(dom, args[i + 1], args[i + 2], "samples" if opt == "--run" else "observed")
            i += 3
        elif opt == "--compare":
            check_compare(dom, args[i + 1], args[i + 2])
            i += 3
        elif opt == "--flamegraph":
            check_flamegraph(dom, args[i + 1])
            i += 2
        elif opt == "--history":
            check_history(dom, args[i + 1], args[i + 2])
            i += 3
        else:
            fail("unknown option %s" % opt)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    if argv[1] == "png":
        colours = [argv[i + 1] for i in range(3, len(argv) - 1) if argv[i] == "--colour"]
        check_png(argv[2], colours)
    elif argv[1] == "offline":
        check_offline(argv[2])
    elif argv[1] == "dom":
        check_dom(argv[2], argv[3:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
