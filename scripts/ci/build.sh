#!/usr/bin/env bash
# Build and install benchtrap from the source tree SRC into PREFIX, for the
# GitHub Action (action.yml), which caches PREFIX under the key --key prints.
# usage: scripts/ci/build.sh SRC PREFIX
#        scripts/ci/build.sh --key SRC PREFIX
# The key names the source (a hash of every file the build reads), the
# install prefix (benchtrap finds its driver library there), the machine and
# the system: another checkout of benchtrap, or another runner image, builds
# again.
set -euo pipefail
key=false
if [[ ${1:-} == --key ]]; then
	key=true
	shift
fi
if (($# != 2)); then
	echo "usage: $0 [--key] SRC PREFIX" >&2
	exit 2
fi
src=$(cd "$1" && pwd -P) prefix=$2

if $key; then
	# Every file of the tree: the build reads the sources, scripts/,
	# completions/, docs/ (man pages, installed documentation), benches/ and
	# tests/; leaving one out would restore a stale build. A git checkout
	# lists its tracked files (build directories and other untracked files
	# are no source); an unpacked archive, as the runner's copy of an
	# action is, lists every file. The contents are hashed, so a change not
	# yet committed counts too.
	if git -C "$src" rev-parse --show-toplevel 2>/dev/null | grep -qxF "$src"; then
		list() { git -C "$src" ls-files -z; }
	else
		list() { (cd "$src" && find . -path ./.git -prune -o -type f -printf '%P\0'); }
	fi
	sum=$(list | LC_ALL=C sort -z | (cd "$src" && xargs -0 sha256sum --) | sha256sum | cut -c1-16)
	os=$(. /etc/os-release && echo "$ID-$VERSION_ID")
	where=$(printf '%s' "$prefix" | sha256sum | cut -c1-8)
	echo "benchtrap-$os-$(uname -m)-$where-$sum"
	exit 0
fi
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
meson setup "$build" "$src" --prefix "$prefix" -Dbuildtype=release -Dfuzz=disabled \
	-Drustc_fixtures=disabled >/dev/null
ninja -C "$build" >/dev/null
meson install -C "$build" --quiet >/dev/null
"$prefix/bin/benchtrap" --version
