#!/usr/bin/env bash
# make test's runner: runs each make target in turn, times it, and ends with a table of the times, so
# a CI log says where its minutes went. Stops at the first failure, as make does (KEEP_GOING=1 runs
# the rest and fails at the end).
#
# TEST_LANES=2 runs the targets listed in GUEST_TARGETS (those that boot a QEMU guest) in a second
# lane beside the others. Both lanes share the Debian tree and the guest kernel, which this script
# builds first (with LANE_PREP, what both lanes' targets make first), so no two targets race on
# building them. The second lane's output goes to a log
# that is printed when the lane ends; its targets' lines are prefixed in the table. The other lane
# runs at LANE1_NICE (default 10, and the lowest best-effort I/O priority): the labs' FRR, BFD and
# TCG timings are what load breaks, and the unit, pvesim and ansible tests have no such timings, so
# they take what the labs leave. Niced or not, phase 2 has failed beside them (make test's default
# is one lane; Makefile).
#
# RETRY_TARGETS: targets run a second time when they fail (the labs: TCG timing under a CI
# machine's load). The first failure's lines are printed before the second attempt and again after
# the table, and the table says which target passed on its second attempt: a retry is reported,
# never silent.
#
# Usage: scripts/run-targets.sh MAKE TARGET...
set -uo pipefail
cd "$(dirname "$0")/.."

make_cmd=$1; shift
lanes=${TEST_LANES:-1}
keep_going=${KEEP_GOING:-0}
read -r -a guest_targets <<< "${GUEST_TARGETS:-}"
read -r -a retry_targets <<< "${RETRY_TARGETS:-}"
times=$(mktemp -d /tmp/dvt-run-targets.XXXXXX)
trap 'rm -rf "$times"' EXIT

# run_lane NAME TARGET...: each target with make, its time, status and attempts appended to
# $times/NAME. A target in RETRY_TARGETS that fails is run once more, after its failure's lines
# (why_failed) are printed; the table says so.
# Lane 1 runs its makes under lane1_wrap (a command prefix; set, not exported, when two lanes run:
# an exported one would reach the runs of this script that the tests make).
lane1_wrap=()
run_lane() {
  local lane=$1 t start rc failed=0 attempts; shift
  local -a wrap=()
  [ "$lane" != 1 ] || wrap=("${lane1_wrap[@]}")
  for t in "$@"; do
    start=$(date +%s); attempts=1
    echo "== make $t (lane $lane, $(date -u +%H:%M:%S))"
    "${wrap[@]}" $make_cmd --no-print-directory "$t" 2>&1 | tee "$times/target-$t.log"
    rc=${PIPESTATUS[0]}
    if [ "$rc" -ne 0 ] && is_retried "$t"; then
      mv "$times/target-$t.log" "$times/target-$t.first.log"
      echo "== make $t failed (rc $rc) on its first attempt, at $(date -u +%H:%M:%S); why:"
      failure_lines "$times/target-$t.first.log"
      echo "== make $t: second attempt"
      attempts=2
      "${wrap[@]}" $make_cmd --no-print-directory "$t" 2>&1 | tee "$times/target-$t.log"
      rc=${PIPESTATUS[0]}
    fi
    printf '%s %s %s %s\n' "$t" "$(( $(date +%s) - start ))" "$rc" "$attempts" >> "$times/$lane"
    if [ "$rc" -ne 0 ]; then
      failed=1
      echo "== make $t failed (rc $rc)"
      [ "$keep_going" = 1 ] || return 1
    fi
  done
  return $failed
}

is_guest_target() { local g; for g in "${guest_targets[@]}"; do [ "$g" = "$1" ] && return 0; done; return 1; }
is_retried() { local g; for g in "${retry_targets[@]}"; do [ "$g" = "$1" ] && return 0; done; return 1; }

# failure_lines LOG: the lines of a target's log that say why it failed (ansible's fatal and failed
# lines, molecule's and the lab's errors, go test's FAIL), colours stripped, each with the lines
# molecule wrapped it onto ("  │   ...") joined to it and cut to 600 characters, at most 20; then the
# lab's state if the target printed it (lab.sh state)
failure_lines() {
  sed 's/\x1b\[[0-9;]*m//g' "$1" > "$times/plain.log"
  awk -v pat='fatal: \\[|failed: \\[|FAILED!|^ERROR|ERROR +[A-Z]|^--- FAIL|^FAIL|: FAIL|FAILED:|Error [0-9]+$|^lab: ' '
    function flush() { if (buf != "") print buf; buf = "" }
    $0 ~ pat { flush(); buf = $0; next }
    buf != "" && /^ *│   / { l = $0; sub(/^ *│ +/, "", l); buf = buf " " l; next }
    { flush() }
    END { flush() }' "$times/plain.log" | grep -v '^lab: state ' | cut -c1-600 | tail -n 20
  grep '^lab: state ' "$times/plain.log" | cut -c1-300 | tail -n 24
}

table() {
  local lane t s rc total=0
  echo
  echo "== make test: time per target"
  printf '%-22s %5s %8s  %s\n' target lane seconds result
  for lane in 1 2; do
    [ -f "$times/$lane" ] || continue
    while read -r t s rc n; do
      printf '%-22s %5s %8s  %s%s\n' "$t" "$lane" "$s" "$([ "$rc" = 0 ] && echo ok || echo "FAILED (rc $rc)")" \
        "$([ "$n" = 2 ] && echo " on its second attempt (the first failed; see why above and below)")"
    done < "$times/$lane"
  done
  echo "wall time: $(( $(date +%s) - wall_start )) s"
}

# why_failed: after the table, why each failed target failed, and why a retried target's first
# attempt failed (failure_lines). A CI page shows a log's last lines only, and the cause of a
# failure in a 20-minute target is otherwise thousands of lines above the table.
why_failed() {
  local lane t s rc n
  for lane in 1 2; do
    [ -f "$times/$lane" ] || continue
    while read -r t s rc n; do
      if [ "$n" = 2 ]; then
        echo; echo "== why the first attempt of make $t failed"; failure_lines "$times/target-$t.first.log"
      fi
      [ "$rc" = 0 ] && continue
      echo; echo "== why make $t failed"; failure_lines "$times/target-$t.log"
    done < "$times/$lane"
  done
}

wall_start=$(date +%s)
if [ "$lanes" = 1 ] || [ ${#guest_targets[@]} -eq 0 ]; then
  run_lane 1 "$@"; rc=$?
  table
  why_failed
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
# The tree and the kernel, once, before the lanes share them (LANE_GUEST_PREP=0: not, for the
# runner's own tests).
if [ "${LANE_GUEST_PREP:-1}" = 1 ]; then
  scripts/debian-tree.sh path >/dev/null || { echo "run-targets: building the Debian tree failed" >&2; exit 1; }
  test/guest/kernel.sh >/dev/null || { echo "run-targets: fetching the guest kernel failed" >&2; exit 1; }
fi
run_lane 2 "${second[@]}" > "$times/lane2.log" 2>&1 &
lane2=$!
lane1_wrap=(nice -n "${LANE1_NICE:-10}" ionice -c 2 -n 7)
run_lane 1 "${first[@]}"; rc1=$?
echo "== lane 1 done; waiting for lane 2 (${second[*]})"
wait "$lane2"; rc2=$?
echo "== lane 2 log"
cat "$times/lane2.log"
table
why_failed
[ "$rc1" = 0 ] && [ "$rc2" = 0 ]
