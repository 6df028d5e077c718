#!/usr/bin/env bash
# Post a pull-request comment written by scripts/ci/compare.sh, or update
# the one posted before: the comment whose first line is the same marker,
# <!-- benchtrap: ID -->, and whose author is the workflow's token
# (BT_COMMENT_AUTHOR, default github-actions[bot]). Another workflow's or
# job's comment, or a person's, has another marker or author and is left
# alone. Uses gh api (GH_TOKEN in the environment).
# usage: scripts/ci/post-comment.sh OWNER/REPO PR_NUMBER COMMENT_FILE
set -euo pipefail
if (($# != 3)); then
	echo "usage: $0 OWNER/REPO PR_NUMBER COMMENT_FILE" >&2
	exit 2
fi
repo=$1 pr=$2 file=$3
author=${BT_COMMENT_AUTHOR:-github-actions[bot]}
[[ $pr =~ ^[0-9]+$ ]] || { echo "post-comment: '$pr' is not a pull-request number" >&2; exit 2; }
marker=$(head -n1 -- "$file")
if [[ $marker != '<!-- benchtrap: '*' -->' ]]; then
	echo "post-comment: $file does not start with a <!-- benchtrap: ID --> marker" >&2
	exit 2
fi

# A JSON string of s, for the jq filter.
json_string() {
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"}
	printf '"%s"' "$s"
}

filter=".[] | select(.user.login == $(json_string "$author"))"
filter+=" | select((.body // \"\") | split(\"\\n\")[0] | rtrimstr(\"\\r\") == $(json_string "$marker"))"
filter+=" | .id"
id=$(gh api --paginate "repos/$repo/issues/$pr/comments?per_page=100" --jq "$filter" | sed -n 1p)
if [[ -n $id ]]; then
	gh api --method PATCH "repos/$repo/issues/comments/$id" -F "body=@$file" >/dev/null
	echo "post-comment: updated comment $id of #$pr"
else
	gh api --method POST "repos/$repo/issues/$pr/comments" -F "body=@$file" >/dev/null
	echo "post-comment: commented on #$pr"
fi
