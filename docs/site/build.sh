#!/usr/bin/env bash
# build.sh --venv DIR --collections DIR --out DIR   (make docs)
# The collection's docs site, from the installed tarball (what ships), offline:
#  1. antsibull-docs writes RST for every module, filter and role (with its argument spec entry
#     points) and the collection index, failing on any docs error;
#  2. the tenant contract and the ADRs (Markdown, rendered by myst-parser) join them;
#  3. Sphinx renders OUT/html with nitpicky warnings as errors;
#  4. antsibull-docs lint-collection-docs lints the collection's docs (plugins, roles, references);
#  5. linkcheck.py checks every link inside the built site and that every shipped module, filter,
#     role, the contract and each ADR has a page reachable from index.html.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
venv= collections= out=
while [ $# -gt 0 ]; do
  case $1 in
    --venv) venv=$2; shift 2;; --collections) collections=$2; shift 2;; --out) out=$2; shift 2;;
    *) echo "usage: $0 --venv DIR --collections DIR --out DIR" >&2; exit 2;;
  esac
done
venv=$(cd "$venv" && pwd); collections=$(cd "$collections" && pwd)
coll=$collections/ansible_collections/deevnet/tenant
[ -f "$coll/MANIFEST.json" ] || { echo "no installed collection under $collections (make install-collection)" >&2; exit 1; }
export PATH="$venv/bin:$PATH" ANSIBLE_COLLECTIONS_PATH="$collections"
t0=$(date +%s%N); ms() { echo $(( ($(date +%s%N) - t0) / 1000000 )); }
rm -rf "$out"; src=$out/src; mkdir -p "$src/collection" "$src/docs"
cp "$here/conf.py" "$here/index.rst" "$here/ansible.rst" "$src/"
chmod og-w "$src/collection"   # antsibull-docs wants its output directory writable by itself only
antsibull-docs collection --use-current --squash-hierarchy --fail-on-error --cleanup everything \
  --dest-dir "$src/collection" deevnet.tenant >"$out/antsibull-docs.log" 2>&1 \
  || { cat "$out/antsibull-docs.log"; echo "FAIL  antsibull-docs collection"; exit 1; }
echo "PASS  antsibull-docs: $(find "$src/collection" -name '*.rst' | wc -l) RST files ($(ms) ms)"
cp "$coll/docs/tenant-contract.md" "$coll/docs/security.md" "$coll/docs/migrate-from-terraform.md" "$src/docs/"
cp -r "$coll/docs/adr" "$src/docs/adr"
sphinx-build -b html -W --keep-going -n -q "$src" "$out/html" 2>&1 | tee "$out/sphinx.log"
[ "${PIPESTATUS[0]}" = 0 ] || { echo "FAIL  sphinx-build (warnings are errors)"; exit 1; }
echo "PASS  sphinx-build: $(find "$out/html" -name '*.html' | wc -l) pages, no warning ($(ms) ms)"
# The linter reads the source tree (it wants galaxy.yml).
if antsibull-docs lint-collection-docs --plugin-docs --check-extra-docs-refs --validate-collection-refs all \
     --disallow-unknown-collection-refs "$root" >"$out/lint.log" 2>&1; then
  echo "PASS  antsibull-docs lint-collection-docs --plugin-docs ($(ms) ms)"
else
  cat "$out/lint.log"; echo "FAIL  antsibull-docs lint-collection-docs"; exit 1
fi
python "$here/linkcheck.py" "$out/html" "$coll"
echo "      the site: $out/html/index.html ($(ms) ms)"
