#!/usr/bin/env bash
# last-release-commit.sh [--root DIR]: prints "VERSION COMMIT" of the last release recorded in DIR's
# changelogs/changelog.yaml (make test-upgrade, tests/release/deprecation.sh).
# The rule: the last release is the highest version under `releases:` in changelogs/changelog.yaml;
# its commit is the oldest commit of HEAD's history whose changelogs/changelog.yaml has that
# version's section line ("  X.Y.Z:"), i.e. the commit that `make release VERSION=X.Y.Z` and
# `git commit -m "release X.Y.Z"` made. In a shallow clone without that commit it fetches the
# history (git fetch --unshallow origin); when the commit is still missing it fails, naming the
# version: a test that needs it never skips.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
while [ $# -gt 0 ]; do case $1 in --root) root=$(cd "$2" && pwd); shift 2;; *) echo "usage: $0 [--root DIR]" >&2; exit 2;; esac; done
prev=$(sed -n '/^releases:/,$p' "$root/changelogs/changelog.yaml" | sed -n 's/^  \([0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\):$/\1/p' \
  | sort -t. -k1,1n -k2,2n -k3,3n | tail -1)
[ -n "$prev" ] || { echo "last-release-commit: changelogs/changelog.yaml records no release" >&2; exit 1; }
find_commit(){ git -C "$root" log --reverse --format=%H -G"^  ${prev//./\\.}:\$" HEAD -- changelogs/changelog.yaml | head -1; }
commit=$(find_commit)
if [ -z "$commit" ] && [ "$(git -C "$root" rev-parse --is-shallow-repository)" = true ]; then
  echo "last-release-commit: shallow clone without the commit of release $prev: git fetch --unshallow origin" >&2
  git -C "$root" fetch -q --unshallow origin >&2 || true
  commit=$(find_commit)
fi
[ -n "$commit" ] || { echo "last-release-commit: no commit in HEAD's history adds release $prev to changelogs/changelog.yaml (shallow clone: $(git -C "$root" rev-parse --is-shallow-repository)); fetch the history (git fetch --unshallow) and run again" >&2; exit 1; }
echo "$prev $commit"
