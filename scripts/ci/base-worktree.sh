#!/usr/bin/env bash
# Check out REF of the repository in the current directory as a worktree at
# DIR, for building the base of a pull request beside its head.
# usage: scripts/ci/base-worktree.sh DIR REF
#
# Idempotent, for CI workspaces that are reused between jobs (GitLab's
# fetch strategy, self-hosted GitHub runners): a worktree left at DIR by an
# earlier job is removed first (even a locked one), as is one left by an
# earlier clone of the repository (GitLab's clone strategy recreates the
# project directory but not a sibling ../base), and a registration whose
# directory is gone is pruned: the second run does what the first did.
# A directory at DIR that is not a worktree of this repository is left
# alone: the script says so and exits 2.
set -euo pipefail
if (($# != 2)); then
	echo "usage: $0 DIR REF" >&2
	exit 2
fi
dir=$1 ref=$2

# A worktree's path as git registers it: absolute, symlinks resolved.
mkdir -p "$(dirname "$dir")"
abs=$(cd "$(dirname "$dir")" && pwd -P)/$(basename "$dir")

registered() {
	git worktree list --porcelain | grep -qxF "worktree $abs"
}

# Whether DIR is a worktree left behind by a clone of this repository that
# is gone (the workspace was cloned again): its .git file names an
# administrative directory that no longer exists, or one of ours.
stale() {
	local line gitdir common
	[[ -f $abs/.git ]] || return 1
	line=$(head -n1 "$abs/.git")
	[[ $line == "gitdir: "*/worktrees/* ]] || return 1
	gitdir=${line#gitdir: }
	common=$(cd "$(git rev-parse --git-common-dir)" && pwd -P)
	[[ ! -e $gitdir || $gitdir == "$common/worktrees/"* ]]
}

git worktree prune
if registered; then
	git worktree remove --force --force "$abs"
elif stale; then
	rm -rf -- "$abs"
fi
if [[ -e $abs ]] && [[ -n $(ls -A "$abs" 2>/dev/null) || ! -d $abs ]]; then
	echo "base-worktree: $abs exists and is not a worktree of $(pwd -P): remove it or choose another DIR" >&2
	exit 2
fi
git worktree add --quiet --force --detach "$abs" "$ref"
echo "base-worktree: $ref at $abs"
