#!/usr/bin/env bash
# python.sh MIN MAX: print the path of the newest Python 3 interpreter on this machine whose version
# is >= MIN and <= MAX (major.minor), looking at pyenv's versions, PATH and the usual prefixes.
# Used by mk/ansible.mk so that `make venv` needs no pyenv shell setup.
set -euo pipefail
min=${1:-3.12} max=${2:-3.99}
best= bestv=
cands=()
for d in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/*/bin /usr/local/bin /usr/bin; do
  for p in "$d"/python3 "$d"/python3.[0-9] "$d"/python3.[0-9][0-9]; do [ -x "$p" ] && cands+=("$p"); done
done
p=$(command -v python3 2>/dev/null) && cands+=("$p")
ver_key(){ awk -F. '{ printf "%03d%03d\n", $1, $2 }' <<<"$1"; }
for p in "${cands[@]}"; do
  v=$(env -u PYTHONPATH "$p" -c 'import sys, venv; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || continue
  k=$(ver_key "$v")
  [ "$k" -ge "$(ver_key "$min")" ] && [ "$k" -le "$(ver_key "$max")" ] || continue
  if [ -z "$bestv" ] || [ "$k" -gt "$bestv" ]; then best=$p bestv=$k; fi
done
if [ -z "$best" ]; then echo "tests/ansible/python.sh: no Python between $min and $max found" >&2; exit 1; fi
echo "$best"
