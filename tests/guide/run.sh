#!/usr/bin/env bash
# tests/guide/run.sh [DOC] -- the first-tenant guide as a test (make test-guide): a fresh demo
# (scripts/demo.sh up, in a DEMO_DIR of its own, on ports it picks), then every command of DOC's
# ```sh guide blocks (default docs/first-tenant.md; tests/guide/extract.py) as printed, in one bash
# shell started in the repository's root with none of the demo's environment (no venv on PATH, no
# ANSIBLE_COLLECTIONS_PATH): the guide's own `. env.sh` must give it. Fails naming the doc's line of
# the first command that does not work as printed (its exit status, or its block's expect="...").
# Prints the wall time from the demo's start to each command's end (GUIDE_TIMES), and the demo's
# start to the first tenant's own converge.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DOC=${1:-$ROOT/docs/first-tenant.md}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/dvt-guide.XXXXXX")
export DEMO_DIR=$WORK/demo
cleanup(){
  DEMO_DIR=$DEMO_DIR "$ROOT/scripts/demo.sh" down >/dev/null 2>&1 || true
  if [ -z "${GUIDE_KEEP:-}" ]; then rm -rf "$WORK"; else echo "guide: kept $WORK"; fi
}
trap cleanup EXIT

python3 "$ROOT/tests/guide/extract.py" "$DOC" > "$WORK/guide.sh"
t0=$(date +%s%N)
# the guide starts where `make demo` ends (README's first command; make builds what the demo runs first)
DEMO_SKIP_BUILD=${DEMO_SKIP_BUILD:-1} "$ROOT/scripts/demo.sh" up > "$WORK/demo.out" 2>&1 \
  || { cat "$WORK/demo.out"; echo "guide: scripts/demo.sh up failed" >&2; exit 1; }
echo "guide: demo up in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
# the stop line the demo printed is complete: it names this DEMO_DIR
grep -qF "Stop it: DEMO_DIR=$DEMO_DIR $ROOT/scripts/demo.sh down" "$WORK/demo.out" \
  || { cat "$WORK/demo.out"; echo "guide: the demo's stop line does not name its DEMO_DIR" >&2; exit 1; }
grep -qF "docs/first-tenant.md" "$WORK/demo.out" \
  || { cat "$WORK/demo.out"; echo "guide: the demo does not say where the guide starts" >&2; exit 1; }

cd "$ROOT"
rc=0
env -i HOME="$WORK" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM=dumb \
  DEMO_DIR="$DEMO_DIR" GUIDE_OUT="$WORK/out" GUIDE_TIMES="$WORK/times" GUIDE_T0="$t0" \
  bash "$WORK/guide.sh" > "$WORK/guide.log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
  tail -60 "$WORK/guide.log"
  exit 1
fi
grep '^guide: ' "$WORK/guide.log"
# every run from the tenant's repository finds its inventory (examples/tenant's ansible.cfg)
if grep -n 'No inventory was parsed\|provided hosts list is empty' "$WORK/guide.log"; then
  echo "guide: a run warned of no inventory (above)" >&2; exit 1
fi
echo "guide: wall time from the demo's start, by command:"
sed 's/^/  /' "$WORK/times"
# the first tenant's own converge: the guide's first `ansible-playbook site.yml`
first=$(grep -n '^\$ ansible-playbook site.yml$' "$WORK/guide.log" | head -1 | cut -d: -f1)
[ -n "$first" ] && awk -v n="$(grep -c '' <(head -"$first" "$WORK/guide.log" | grep '^== '))" 'NR==n {print "guide: from the demo'"'"'s start to the first tenant converged ("$1"): "$2" ms"}' "$WORK/times"
echo "test-guide: ok"
