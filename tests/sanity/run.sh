#!/usr/bin/env bash
# run.sh --venv DIR
# `ansible-test sanity` with the ansible-core of one venv (make test-sanity runs it for the newest and
# the oldest admitted), on a copy of the source tree (files git tracks or would track) at
# <tmp>/ansible_collections/deevnet/tenant, as ansible-test requires. The Go binaries under
# plugins/modules/__bin are build outputs and stay out: validate-modules reads every file in
# plugins/modules as text and dies on them (UnicodeDecodeError), which no ignore entry prevents.
#
# Offline but for PyPI: ansible-test makes a venv per sanity test and installs its pinned requirements
# from PyPI, but first bootstraps pip with a get-pip.py it downloads from ci-files.testing.ansible.com.
# That script is only a carrier of pip: the stand-in written here runs pip from a pip wheel fetched
# from PyPI, at the path ansible-test reads it from (~/.ansible/test/cache/get_pip_<version>.py).
#
# shellcheck is skipped: it is not one of this collection's checks (scripts are bash, checked by use).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
venv=
while [ $# -gt 0 ]; do
  case $1 in --venv) venv=$2; shift 2;; *) echo "usage: $0 --venv DIR" >&2; exit 2;; esac
done
venv=$(cd "$venv" && pwd)
[ -x "$venv/bin/ansible-test" ] || { echo "no ansible-test in $venv (make venv / venv-oldest)" >&2; exit 1; }
py=$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
version=$("$venv/bin/python" -c 'from ansible.release import __version__; print(__version__)')

# The pip version ansible-test bootstraps into its venvs.
pip_version=$("$venv/bin/python" - "$py" <<'PY'
import sys, types
from ansible_test._internal.python_requirements import get_venv_packages
print(get_venv_packages(types.SimpleNamespace(version=sys.argv[1]))['pip'])
PY
)
cache=$HOME/.ansible/test/cache
shim=$cache/get_pip_${pip_version//./_}.py
mkdir -p "$cache"
if ! ls "$cache"/pip-"$pip_version"-*.whl >/dev/null 2>&1; then
  "$venv/bin/python" -m pip download -q --disable-pip-version-check --no-deps --only-binary :all: -d "$cache" "pip==$pip_version"
fi
cat >"$shim.tmp" <<PY
# Written by deevnet.tenant tests/sanity/run.sh: a stand-in for get-pip.py that runs
# "pip install <args>" from the pip wheel beside it (fetched from PyPI).
import glob, os, runpy, sys
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, glob.glob(os.path.join(here, 'pip-$pip_version-*.whl'))[0])
sys.argv = ['pip', 'install', '--find-links', here] + [a for a in sys.argv[1:] if a not in ('--no-setuptools', '--no-wheel')]
runpy.run_module('pip', run_name='__main__', alter_sys=True)
PY
mv "$shim.tmp" "$shim"

work=$(mktemp -d /tmp/dvt-sanity.XXXXXX); trap 'rm -rf "$work"' EXIT
coll=$work/ansible_collections/deevnet/tenant
mkdir -p "$coll"
(cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 -I{} sh -c 'test -e "{}" && printf "%s\0" "{}"' | tar --null -T - -cf -) | tar -xf - -C "$coll"
cd "$coll"
echo "ansible-test sanity, ansible-core $version, Python $py"
{ "$venv/bin/ansible-test" sanity --list-tests 2>/dev/null || true; } | grep -vx shellcheck | tr "\n" " "; echo
rc=0
"$venv/bin/ansible-test" sanity --python "$py" --color no --skip-test shellcheck >"$work/sanity.log" 2>&1 || rc=$?
grep -E '^(ERROR|FATAL|WARNING: (Skipping|Reviewing))' "$work/sanity.log" | grep -v 'Using locale' || true
if [ $rc = 0 ]; then echo "PASS  [$version] ansible-test sanity"; else tail -20 "$work/sanity.log"; echo "FAIL  [$version] ansible-test sanity"; fi
exit $rc
