#!/usr/bin/env bash
# check.sh --venv DIR --tarball FILE [--update]
# The collection ships exactly what tests/manifest/expected.txt lists (make test-manifest):
#  1. the tarball `make collection` built from this tree;
#  2. a tarball built from a copy of the tree (tracked files + the built binaries) into which one
#     stray file is dropped for every .gitignore entry: galaxy.yml's build_ignore must keep each out.
# Any file more or less fails, with the difference. --update rewrites expected.txt from (1).
# Also the sizes (docs/adr/0011-binary-selection.md): the tarball at most MAX_TARBALL bytes (Galaxy
# refuses more than 20 MB), transit_route, copied to the hypervisor on every task, at most MAX_ROUTE.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
venv= tarball= update=0
while [ $# -gt 0 ]; do
  case $1 in
    --venv) venv=$2; shift 2;; --tarball) tarball=$2; shift 2;; --update) update=1; shift;;
    *) echo "usage: $0 --venv DIR --tarball FILE [--update]" >&2; exit 2;;
  esac
done
expected=$here/expected.txt
[ -f "$tarball" ] || { echo "no tarball $tarball (make collection)" >&2; exit 1; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# Files only (directories follow from them), without the version in any name.
list() { tar -tzf "$1" | grep -v '/$' | LC_ALL=C sort; }

list "$tarball" >"$work/tree.txt"
if [ $update = 1 ]; then cp "$work/tree.txt" "$expected"; echo "wrote $expected ($(wc -l <"$expected") files)"; exit 0; fi

fail=0
MAX_TARBALL=${MAX_TARBALL:-15000000} MAX_ROUTE=${MAX_ROUTE:-3145728}
size=$(stat -c %s "$tarball")
if [ "$size" -le "$MAX_TARBALL" ]; then echo "PASS  tarball $size bytes <= $MAX_TARBALL"
else echo "FAIL  tarball $size bytes > $MAX_TARBALL"; fail=1; fi
tar -xzf "$tarball" -C "$work" --wildcards 'plugins/modules/__bin/transit_route_*'
for f in "$work"/plugins/modules/__bin/transit_route_*; do
  size=$(stat -c %s "$f")
  if [ "$size" -le "$MAX_ROUTE" ]; then echo "PASS  $(basename "$f") $size bytes <= $MAX_ROUTE"
  else echo "FAIL  $(basename "$f") $size bytes > $MAX_ROUTE"; fail=1; fi
done

compare() { # compare NAME LISTFILE
  if diff -u --label expected.txt --label "$1" "$expected" "$2" >"$work/diff"; then
    echo "PASS  $1: the $(wc -l <"$2") files of tests/manifest/expected.txt, nothing else"
  else
    echo "FAIL  $1 differs from tests/manifest/expected.txt (+ ships but is not expected, - expected but missing):"
    sed -n '3,$p' "$work/diff" | grep '^[-+]'
    fail=1
  fi
}
compare "$(basename "$tarball")" "$work/tree.txt"

# (2) A clean copy: tracked files and the built binaries, then one stray per .gitignore entry.
copy=$work/tree
mkdir -p "$copy"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 -I{} sh -c 'test -e "{}" && printf "%s\0" "{}"' \
  | tar --null -T - -cf -) | tar -xf - -C "$copy"
(cd "$root" && tar -cf - plugins/modules/__bin) | tar -xf - -C "$copy"
strays=
while IFS= read -r pat; do
  case $pat in ''|'#'*|'!'*) continue;; esac
  p=${pat#/}; dir=0
  case $p in */) dir=1; p=${p%/};; esac
  p=${p//\*/dvtstray}
  # An entry without a slash inside matches at any depth: put one at the root and one deeper.
  for where in "" "roles/tenant/"; do
    [ -n "$where" ] && case $pat in /*|*/?*) continue;; esac
    f=$copy/$where$p
    if [ $dir = 1 ]; then mkdir -p "$f"; f=$f/dvtstray.bin; fi
    mkdir -p "$(dirname "$f")"; [ -e "$f" ] || { printf 'stray\n' >"$f"; strays="$strays ${f#$copy/}"; }
  done
done <"$root/.gitignore"
echo "      strays dropped into the copy:$strays"
(cd "$copy" && "$venv/bin/ansible-galaxy" collection build --force --output-path "$work/out" . >/dev/null)
list "$work"/out/*.tar.gz >"$work/copy.txt"
compare "a copy with a stray file for every .gitignore entry" "$work/copy.txt"
exit $fail
