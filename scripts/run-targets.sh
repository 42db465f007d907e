#!/usr/bin/env bash
# make test's runner: runs each make target in turn, times it, and ends with a table of the times, so
# a CI log says where its minutes went. Stops at the first failure, as make does (KEEP_GOING=1 runs
# the rest and fails at the end).
#
# TEST_LANES=2 runs the targets listed in GUEST_TARGETS (those that boot a QEMU guest) in a second
# lane beside the others. Both lanes share the Debian tree and the guest kernel, which this script
# builds first (with LANE_PREP, what both lanes' targets make first), so no two targets race on
# building them. The second lane's output goes to a log
# that is printed when the lane ends; its targets' lines are prefixed in the table.
#
# Usage: scripts/run-targets.sh MAKE TARGET...
set -uo pipefail
cd "$(dirname "$0")/.."

make_cmd=$1; shift
lanes=${TEST_LANES:-1}
keep_going=${KEEP_GOING:-0}
read -r -a guest_targets <<< "${GUEST_TARGETS:-}"
times=$(mktemp -d /tmp/dvt-run-targets.XXXXXX)
trap 'rm -rf "$times"' EXIT

# run_lane NAME TARGET...: each target with make, its time and status appended to $times/NAME.
run_lane() {
  local lane=$1 t start rc failed=0; shift
  for t in "$@"; do
    start=$(date +%s)
    echo "== make $t (lane $lane, $(date -u +%H:%M:%S))"
    $make_cmd --no-print-directory "$t"
    rc=$?
    printf '%s %s %s\n' "$t" "$(( $(date +%s) - start ))" "$rc" >> "$times/$lane"
    if [ "$rc" -ne 0 ]; then
      failed=1
      echo "== make $t failed (rc $rc)"
      [ "$keep_going" = 1 ] || return 1
    fi
  done
  return $failed
}

is_guest_target() { local g; for g in "${guest_targets[@]}"; do [ "$g" = "$1" ] && return 0; done; return 1; }

table() {
  local lane t s rc total=0
  echo
  echo "== make test: time per target"
  printf '%-22s %5s %8s  %s\n' target lane seconds result
  for lane in 1 2; do
    [ -f "$times/$lane" ] || continue
    while read -r t s rc; do
      printf '%-22s %5s %8s  %s\n' "$t" "$lane" "$s" "$([ "$rc" = 0 ] && echo ok || echo "FAILED (rc $rc)")"
    done < "$times/$lane"
  done
  echo "wall time: $(( $(date +%s) - wall_start )) s"
}

wall_start=$(date +%s)
if [ "$lanes" = 1 ] || [ ${#guest_targets[@]} -eq 0 ]; then
  run_lane 1 "$@"; rc=$?
  table
  exit $rc
fi

first=(); second=()
for t in "$@"; do if is_guest_target "$t"; then second+=("$t"); else first+=("$t"); fi; done
# What both lanes' targets build first (LANE_PREP: the binaries, the venv, the tools), once, before
# the lanes start: two makes building one venv at once would both pip-install into it.
if [ -n "${LANE_PREP:-}" ]; then
  # shellcheck disable=SC2086
  $make_cmd --no-print-directory $LANE_PREP || { echo "run-targets: make $LANE_PREP failed" >&2; exit 1; }
fi
# The tree and the kernel, once, before the lanes share them.
scripts/debian-tree.sh path >/dev/null || { echo "run-targets: building the Debian tree failed" >&2; exit 1; }
test/guest/kernel.sh >/dev/null || { echo "run-targets: fetching the guest kernel failed" >&2; exit 1; }
run_lane 2 "${second[@]}" > "$times/lane2.log" 2>&1 &
lane2=$!
run_lane 1 "${first[@]}"; rc1=$?
echo "== lane 1 done; waiting for lane 2 (${second[*]})"
wait "$lane2"; rc2=$?
echo "== lane 2 log"
cat "$times/lane2.log"
table
[ "$rc1" = 0 ] && [ "$rc2" = 0 ]
