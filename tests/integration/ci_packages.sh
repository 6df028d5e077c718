#!/usr/bin/env bash
# The packages the build needs against the lists that install them, so that
# a runner installs what the build asks for:
# - every dependency() of the meson build files that is required, every
#   required cc.find_library() and cc.has_header(), is in a package (dpkg
#   says which holds its pkg-config file, library or header) that the
#   GitHub Action's install step installs, the step run as GitHub runs it
#   with apt-get and sudo recording what they were asked;
# - scripts/setup installs every package the action does (both read
#   scripts/packages);
# - every package of scripts/packages is one this system's apt knows.
. "$(dirname "$0")/lib.sh"
: "${SOURCE_ROOT:?}"
for tool in dpkg dpkg-query pkg-config gcc; do
	command -v $tool >/dev/null || { echo "skip: no $tool: the packages are Debian's"; exit 77; }
done
PY=
for py in /usr/bin/python3 python3; do
	if "$py" -c 'import yaml' 2>/dev/null; then PY=$py; break; fi
done
[[ $PY ]] || { echo "skip: no python3 with the yaml module (Debian: python3-yaml)"; exit 77; }

# apt-get, sudo, dpkg-query (nothing installed), meson and ninja that only
# record or pretend.
FAKE=$TMP/bin
mkdir -p "$FAKE"
cat >"$FAKE/apt-get" <<'SH'
#!/bin/sh
echo "$*" >>"$APT_LOG"
SH
cat >"$FAKE/sudo" <<'SH'
#!/bin/sh
exec "$@"
SH
printf '#!/bin/sh\nexit 1\n' >"$FAKE/dpkg-query"
printf '#!/bin/sh\n[ "$1" = setup ] && mkdir -p "$2"\nexit 0\n' >"$FAKE/meson"
printf '#!/bin/sh\nexit 0\n' >"$FAKE/ninja"
chmod +x "$FAKE"/*
# installed LOG: the packages of LOG's install lines, one a line.
installed() {
	awk '{ for (i = 1; i <= NF; i++) if (seen) { if ($i !~ /^-/) print $i } else if ($i == "install") seen = 1; seen = 0 }' "$1" | sort -u
}

# ---- the action's install step ---------------------------------------------
"$PY" - "$SOURCE_ROOT/action.yml" >"$TMP/install-step.sh" <<'PY' || fail "action.yml has no install step"
import sys, yaml
for s in yaml.safe_load(open(sys.argv[1]))["runs"]["steps"]:
    if "apt-get install" in s.get("run", ""):
        print(s["run"])
        sys.exit(0)
sys.exit(1)
PY
APT_LOG=$TMP/action-apt.log SRC=$SOURCE_ROOT ACTION=$SOURCE_ROOT PATH=$FAKE:$PATH \
	bash -e "$TMP/install-step.sh" >"$TMP/out" 2>"$TMP/err" ||
	fail "the install step: $(cat "$TMP/out" "$TMP/err")"
installed "$TMP/action-apt.log" >"$TMP/action.list"
checks=$((checks + 1))
[[ -s $TMP/action.list ]] || fail "the install step installed nothing: $(cat "$TMP/action-apt.log")"

# ---- scripts/setup ------------------------------------------------------------
APT_LOG=$TMP/setup-apt.log PATH=$FAKE:$PATH "$SOURCE_ROOT/scripts/setup" "$TMP/setup-build" \
	>"$TMP/out" 2>"$TMP/err" || fail "scripts/setup: $(cat "$TMP/out" "$TMP/err")"
installed "$TMP/setup-apt.log" >"$TMP/setup.list"
checks=$((checks + 1))
missing=$(comm -23 "$TMP/action.list" "$TMP/setup.list" | tr '\n' ' ')
[[ -z $missing ]] || fail "scripts/setup does not install what the action does: $missing"

# ---- what the build asks for ----------------------------------------------------
# KIND NAME lines: pkg NAME for a required dependency('NAME'), lib NAME for
# a required cc.find_library('NAME'), header NAME for cc.has_header('NAME');
# meson's own 'threads' and the project's own (override_dependency) left out.
"$PY" - "$SOURCE_ROOT" >"$TMP/needs" <<'PY'
import os, re, sys
root = sys.argv[1]
texts = []
for d, dirs, files in os.walk(root):
    dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
    if "meson.build" in files:
        texts.append(open(os.path.join(d, "meson.build")).read())
text = "\n".join(re.sub(r"#.*", "", t) for t in texts)
own = set(re.findall(r"override_dependency\(\s*'([^']+)'", text)) | {"threads"}

def calls(fn):
    for m in re.finditer(r"\b%s\(" % re.escape(fn), text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        args = text[m.end():i - 1]
        name = re.match(r"\s*'([^']+)'", args)
        if name and not re.search(r"required\s*:\s*false", args):
            yield name.group(1)

for n in sorted(set(calls("dependency")) - own):
    print("pkg", n)
for n in sorted(set(calls("find_library"))):
    print("lib", n)
for n in sorted(set(calls("has_header"))):
    print("header", n)
PY
checks=$((checks + 1))
grep -q '^pkg libseccomp$' "$TMP/needs" || fail "the scan of the build files did not find dependency('libseccomp'): $(cat "$TMP/needs")"
while read -r kind name; do
	case $kind in
	pkg)
		dir=$(pkg-config --variable=pcfiledir "$name" 2>/dev/null) ||
			fail "dependency('$name'): pkg-config does not know it"
		file=$(realpath "$dir/$name.pc")
		;;
	lib)
		file=$(gcc -print-file-name="lib$name.so")
		[[ $file == /* ]] || file=$(gcc -print-file-name="lib$name.a")
		[[ $file == /* ]] || fail "find_library('$name'): gcc finds no lib$name"
		file=$(realpath "$file")
		;;
	header)
		file=$(echo "#include <$name>" | gcc -E -M -x c - 2>/dev/null | tr ' \\' '\n\n' | grep -m1 "/$name\$") ||
			fail "has_header('$name'): gcc finds no $name"
		file=$(realpath "$file")
		;;
	esac
	# dpkg knows the path as installed, which may be through /usr's
	# merged /lib.
	pkg=$(dpkg -S "$file" 2>/dev/null || dpkg -S "${file#/usr}" 2>/dev/null) ||
		fail "$kind $name: no package holds $file"
	pkg=${pkg%%:*}
	checks=$((checks + 1))
	grep -qxF "$pkg" "$TMP/action.list" ||
		fail "$kind $name ($file) is in $pkg, which the action does not install (scripts/packages: mark it build)"
	echo "$kind $name: $pkg"
done <"$TMP/needs"

# ---- the names ------------------------------------------------------------------
if command -v apt-cache >/dev/null; then
	# One read of apt's names for all of them: a call of apt-cache per
	# package takes seconds each where apt knows two architectures.
	apt-cache pkgnames | sort -u >"$TMP/known" || fail "apt-cache pkgnames failed"
	while read -r p _; do
		[[ -z $p || $p == \#* ]] && continue
		checks=$((checks + 1))
		grep -qxF -- "$p" "$TMP/known" || fail "scripts/packages: apt here knows no package $p"
	done <"$SOURCE_ROOT/scripts/packages"
else
	echo "note: no apt-cache: the names of scripts/packages are not checked"
fi
done_ok
