#!/usr/bin/env bash
# check.sh --venv DIR --tarball FILE [--update]
# The collection ships exactly what tests/manifest/expected.txt lists (make test-manifest):
#  1. the tarball `make collection` built from this tree;
#  2. a tarball built from a copy of the tree (tracked files + the built binaries) into which stray
#     files are dropped: one for every .gitignore entry, and in every directory of the tree a file
#     without an extension (stray_build_output_probe), a hidden one, an editor's backup and one of
#     each kind the collection ships (.yml .md .py .j2 .txt .json) unless that directory already
#     ships a file of that kind. galaxy.yml's manifest (an allow-list) must keep every one out.
# Any file more or less fails, with the difference. --update rewrites expected.txt from (1).
# Also the sizes (docs/adr/0011-binary-selection.md, Size): the tarball at most MAX_TARBALL bytes
# (12 MB, issue 28: with 4 platforms and the binaries xz-compressed it is 10.2 MB; Galaxy refuses more
# than 20 MB), transit_route, copied unpacked to the hypervisor on every task, at most MAX_ROUTE.
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
venv=$(cd "$venv" && pwd)
[ -f "$tarball" ] || { echo "no tarball $tarball (make collection)" >&2; exit 1; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# Files only (directories follow from them), without the version in any name.
list() { tar -tzf "$1" | grep -v '/$' | LC_ALL=C sort; }

list "$tarball" >"$work/tree.txt"
if [ $update = 1 ]; then cp "$work/tree.txt" "$expected"; echo "wrote $expected ($(wc -l <"$expected") files)"; exit 0; fi

fail=0
MAX_TARBALL=${MAX_TARBALL:-12000000} MAX_ROUTE=${MAX_ROUTE:-3145728}
size=$(stat -c %s "$tarball")
if [ "$size" -le "$MAX_TARBALL" ]; then echo "PASS  tarball $size bytes <= $MAX_TARBALL"
else echo "FAIL  tarball $size bytes > $MAX_TARBALL"; fail=1; fi
tar -xzf "$tarball" -C "$work" --wildcards 'plugins/modules/__bin/transit_route_*' plugins/plugin_utils/binary_cache.py
for f in "$work"/plugins/modules/__bin/transit_route_*; do
  # The size the binary has once unpacked, as the xz index records it (the shipped reader).
  size=$("$venv/bin/python" "$work/plugins/plugin_utils/binary_cache.py" id "$f" | cut -d' ' -f2)
  if [ "$size" -le "$MAX_ROUTE" ]; then echo "PASS  $(basename "$f") unpacks to $size bytes <= $MAX_ROUTE"
  else echo "FAIL  $(basename "$f") unpacks to $size bytes > $MAX_ROUTE"; fail=1; fi
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

# (2) A clean copy: tracked files and the built binaries, then the strays.
copy=$work/tree
mkdir -p "$copy"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 -I{} sh -c 'test -e "{}" && printf "%s\0" "{}"' \
  | tar --null -T - -cf -) | tar -xf - -C "$copy"
(cd "$root" && tar -cf - plugins/modules/__bin) | tar -xf - -C "$copy"
strays=()
drop() { # drop PATH: a stray file (never over a real one)
  [ -e "$copy/$1" ] && return 0
  mkdir -p "$(dirname "$copy/$1")"; printf 'stray\n' >"$copy/$1"; strays+=("$1")
}
# (a) one per .gitignore entry
while IFS= read -r pat; do
  case $pat in ''|'#'*|'!'*) continue;; esac
  p=${pat#/}; dir=0
  case $p in */) dir=1; p=${p%/};; esac
  p=${p//\*/dvtstray}
  # An entry without a slash inside matches at any depth: put one at the root and one deeper.
  for where in "" "roles/tenant/"; do
    [ -n "$where" ] && case $pat in /*|*/?*) continue;; esac
    if [ $dir = 1 ]; then drop "$where$p/dvtstray.bin"; else drop "$where$p"; fi
  done
done <"$root/.gitignore"
# (b) anywhere: every directory of the copy (the root, plugins/, roles/x/, docs/, ...)
while IFS= read -r d; do
  d=${d#./}; [ "$d" = . ] && d=; pre=${d:+$d/}
  drop "${pre}stray_build_output_probe"
  drop "${pre}.dvtstray.yml"
  drop "${pre}dvtstray.yml.orig"
  # the plain binary beside its .xz (make build writes it into bin/modules; an old tree has it here)
  [ "$d" = plugins/modules/__bin ] && drop "${pre}tenant_modules_linux_amd64"
  for ext in yml md py j2 txt json; do
    # A directory that ships a .yml takes a new .yml as a new file of the same kind (a task file,
    # a group_vars file): that is the allow-list's pattern at work, not a stray.
    grep -Eq "^${pre//./\\.}[^/]*\.${ext}\$" "$expected" && continue
    drop "${pre}dvtstray.$ext"
  done
done < <(cd "$copy" && find . -type d -not -path './.git' -not -path './.git/*' | LC_ALL=C sort)
echo "      ${#strays[@]} strays dropped into the copy, in $(printf '%s\n' "${strays[@]}" | sed 's|/[^/]*$||;t;s|.*|.|' | sort -u | wc -l) directories (e.g. ${strays[0]}, plugins/dvtstray.py, roles/tenant/dvtstray.yml, docs/dvtstray.txt)"
for must in stray_build_output_probe plugins/dvtstray.py plugins/modules/__bin/stray_build_output_probe plugins/modules/__bin/tenant_modules_linux_amd64 roles/tenant/dvtstray.yml docs/dvtstray.txt docs/adr/stray_build_output_probe; do
  [ -e "$copy/$must" ] || { echo "FAIL  the stray $must was not dropped (the test itself is broken)"; fail=1; }
done
(cd "$copy" && "$venv/bin/ansible-galaxy" collection build --force --output-path "$work/out" . >/dev/null)
list "$work"/out/*.tar.gz >"$work/copy.txt"
compare "a copy with ${#strays[@]} stray files (.gitignore entries, every directory)" "$work/copy.txt"
exit $fail
