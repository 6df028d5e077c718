#!/usr/bin/env bash
# What `meson install` puts where: the executable, the driver libraries,
# the manual pages, the completions, the docs and LICENSE, and target-stub
# (header, library, pkg-config file); installed into a scratch DESTDIR. Then
# a project that has benchtrap as a subproject for the stub
# (tests/fixtures/subproject): installing it installs nothing of the stub,
# unless it asks (-Dbenchtrap:stub_install=enabled).
. "$(dirname "$0")/lib.sh"

[[ -f $BUILD_ROOT/docs/man/benchtrap.1 ]] ||
	{ echo "SKIP: no manual pages in the build (python3 missing or a cross build)"; exit 77; }

# Installed files, relative to the prefix, sorted; $1 is the DESTDIR.
installed() {
	(cd "$1$2" && find . -type f -o -type l) | sed 's|^\./||' | sort
}
prefix=$(meson introspect --buildoptions "$BUILD_ROOT" |
	python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "prefix"))')
libdir=$(meson introspect --buildoptions "$BUILD_ROOT" |
	python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "libdir"))')

status=0 out= err=
meson install -C "$BUILD_ROOT" --no-rebuild --destdir "$TMP/dest" >"$TMP/log" 2>&1 ||
	{ err=$(tail -20 "$TMP/log"); fail "meson install failed"; }
files=$(installed "$TMP/dest" "$prefix")
out=$files

cmds=$("$BENCHTRAP" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
# docs/ but docs/man/ (the sources of the manual pages).
docs=$(cd "$SOURCE_ROOT/docs" && find . -path ./man -prune -o -type f -print | sed 's|^\./||')
want=$( {
	echo bin/benchtrap
	echo "$libdir/benchtrap/libbenchtrap-driver.so"
	echo "$libdir/benchtrap/libbenchtrap-driver-memory.so"
	echo share/man/man1/benchtrap.1
	for c in $cmds; do echo "share/man/man1/benchtrap-$c.1"; done
	echo share/bash-completion/completions/benchtrap
	echo share/zsh/site-functions/_benchtrap
	echo share/doc/benchtrap/README.md
	echo share/doc/benchtrap/LICENSE
	for d in $docs; do echo "share/doc/benchtrap/docs/$d"; done
	echo include/benchtrap.h
	echo "$libdir/libbenchtrap-stub.a"
	echo "$libdir/pkgconfig/benchtrap-stub.pc"
} | sort)
checks=$((checks + 1))
[[ $files == "$want" ]] ||
	fail "installed files differ: $(diff <(echo "$want") <(echo "$files") | grep '^[<>]' | tr '\n' ' ')"

# What was installed works from there.
dest=$TMP/dest$prefix
checks=$((checks + 1))
cmp -s "$dest/share/doc/benchtrap/LICENSE" "$SOURCE_ROOT/LICENSE" || fail "LICENSE differs"
checks=$((checks + 1))
grep -q '^\.SH OPTIONS' "$dest/share/man/man1/benchtrap-run.1" || fail "benchtrap-run.1 has no OPTIONS"
checks=$((checks + 1))
[[ $("$dest/bin/benchtrap" --version) == "$("$BENCHTRAP" --version)" ]] ||
	fail "the installed benchtrap does not run"
checks=$((checks + 1))
bash -c '. "$1"; complete -p benchtrap' _ "$dest/share/bash-completion/completions/benchtrap" \
	>/dev/null || fail "the installed bash completion does not load"

# A project with benchtrap as a subproject for the stub.
command -v cc >/dev/null || { echo "note: no C compiler: the subproject case is not checked"; done_ok; exit 0; }
parent=$TMP/parent
mkdir -p "$parent/subprojects"
cp "$SOURCE_ROOT/tests/fixtures/subproject/meson.build" \
	"$SOURCE_ROOT/tests/fixtures/subproject/stub_user.c" "$parent/"
ln -s "$SOURCE_ROOT" "$parent/subprojects/benchtrap"
meson setup "$parent/build" "$parent" --prefix=/usr >"$TMP/log" 2>&1 ||
	{ err=$(tail -20 "$TMP/log"); fail "meson setup of the parent project failed"; }
meson compile -C "$parent/build" >"$TMP/log" 2>&1 ||
	{ err=$(tail -20 "$TMP/log"); fail "the parent project does not build"; }
# Its program carries the stub's registration: benchtrap finds the benchmark.
run list "$parent/build/stub-user"
expect_status 0
expect_out '^square_of_seven '

meson install -C "$parent/build" --no-rebuild --destdir "$TMP/pdest" >"$TMP/log" 2>&1 ||
	{ err=$(tail -20 "$TMP/log"); fail "meson install of the parent project failed"; }
out=$(installed "$TMP/pdest" /usr)
checks=$((checks + 1))
[[ $out == bin/stub-user ]] || fail "a parent project installs more than its program"

# Asked for, the stub is installed into the parent's prefix.
meson configure "$parent/build" -Dbenchtrap:stub_install=enabled >"$TMP/log" 2>&1 ||
	{ err=$(tail -20 "$TMP/log"); fail "meson configure -Dbenchtrap:stub_install=enabled failed"; }
meson install -C "$parent/build" --destdir "$TMP/pdest2" >"$TMP/log" 2>&1 ||
	{ err=$(tail -20 "$TMP/log"); fail "meson install with stub_install=enabled failed"; }
out=$(installed "$TMP/pdest2" /usr)
for f in bin/stub-user include/benchtrap.h 'lib/.*libbenchtrap-stub\.a' 'lib/.*pkgconfig/benchtrap-stub\.pc'; do
	expect_out "^$f\$"
done
checks=$((checks + 1))
[[ $(wc -l <<<"$out") -eq 4 ]] || fail "stub_install=enabled installs more than the stub"

done_ok
