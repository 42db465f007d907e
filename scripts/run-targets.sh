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
# TEST_JOBS=N (N > 1, one lane): the targets not in ALONE_TARGETS (default: GUEST_TARGETS) run first,
# N at a time, each job taking the next target from one queue in the order given; then the
# ALONE_TARGETS run one after another with nothing beside them (the labs' timings are what load
# breaks). Job N's makes get
# JOB_VARS with %N replaced by N (make test: a collections path of its own, since
# install-collection empties the directory it installs into). A job prints a target's output when
# the target ends, in one piece; the table says which job ran it. LANE_PREP and the Debian tree and
# guest kernel are made first, as for two lanes.
#
# LANE_PREP is made once, before any target: every target's make then gets `-o T` for each target T
# of LANE_PREP, so that it does not make T again (the tree does not change while make test runs).
#
# ALONE_BESIDE=1 (with TEST_JOBS): the ALONE_TARGETS do not wait for the jobs: they run in lane 1
# from the start, at normal priority, and every job's make runs at SCHED_IDLE (chrt --idle, and the
# lowest best-effort I/O priority), so a job gets only the CPU the lab leaves: the labs' timings are
# what load breaks, nice 10 did not keep phase 2's FRR restart from failing beside the other
# targets, and SCHED_IDLE is weaker than any nice level. Lane 1's output is printed when it ends.
#
# RETRY_TARGETS: targets run a second time when they fail (the labs: TCG timing under a CI
# machine's load). The first failure's lines are printed before the second attempt and again after
# the table, and the table says which target passed on its second attempt: a retry is reported,
# never silent.
#
# Usage: scripts/run-targets.sh MAKE TARGET...
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

# MAKE is a command line ("make -f x.mk"): split into words where it is run
read -r -a make_cmd <<< "$1"; shift
lanes=${TEST_LANES:-1}
jobs=${TEST_JOBS:-1}
keep_going=${KEEP_GOING:-0}
read -r -a guest_targets <<< "${GUEST_TARGETS:-}"
read -r -a retry_targets <<< "${RETRY_TARGETS:-}"
# the targets TEST_JOBS runs alone, after the jobs (default: GUEST_TARGETS)
read -r -a alone_targets <<< "${ALONE_TARGETS-${GUEST_TARGETS:-}}"
times=$(mktemp -d /tmp/dvt-run-targets.XXXXXX)
trap 'rm -rf "$times"' EXIT

# run_target LANE TARGET [MAKEVAR...]: make TARGET, its output teed into $times/target-TARGET.log,
# then "target seconds rc attempts" appended to $times/LANE; returns make's rc. A target in
# RETRY_TARGETS that fails is run once more, after its failure's lines (why_failed) are printed;
# the table says so. Lane 1 runs its makes under lane1_wrap (a command prefix; set, not exported,
# when two lanes run: an exported one would reach the runs of this script that the tests make).
lane1_wrap=()
job_wrap=()
prepped=()
run_target() {
  local lane=$1 t=$2 start rc attempts=1; shift 2
  local -a wrap=()
  [ "$lane" != 1 ] || wrap=("${lane1_wrap[@]}")
  [ "${lane#j}" = "$lane" ] || wrap=("${job_wrap[@]}")
  start=$(date +%s)
  echo "== make $t (lane $lane, $(date -u +%H:%M:%S))"
  "${wrap[@]}" "${make_cmd[@]}" --no-print-directory "${prepped[@]}" "$@" "$t" 2>&1 | tee "$times/target-$t.log"
  rc=${PIPESTATUS[0]}
  if [ "$rc" -ne 0 ] && is_retried "$t"; then
    mv "$times/target-$t.log" "$times/target-$t.first.log"
    echo "== make $t failed (rc $rc) on its first attempt, at $(date -u +%H:%M:%S); why:"
    failure_lines "$times/target-$t.first.log"
    echo "== make $t: second attempt"
    attempts=2
    "${wrap[@]}" "${make_cmd[@]}" --no-print-directory "${prepped[@]}" "$@" "$t" 2>&1 | tee "$times/target-$t.log"
    rc=${PIPESTATUS[0]}
  fi
  printf '%s %s %s %s\n' "$t" "$(( $(date +%s) - start ))" "$rc" "$attempts" >> "$times/$lane"
  [ "$rc" -eq 0 ] || echo "== make $t failed (rc $rc)"
  return "$rc"
}

# run_lane NAME TARGET...: each target in turn; stops at the first failure unless KEEP_GOING=1
run_lane() {
  local lane=$1 t failed=0; shift
  for t in "$@"; do
    run_target "$lane" "$t" && continue
    failed=1
    [ "$keep_going" = 1 ] || return 1
  done
  return $failed
}

# job N: takes the next target from $times/queue until it is empty, or until a failure stops the
# run (without KEEP_GOING: the running targets end, no new one starts); each make gets JOB_VARS
# with %N as N. A target's output is printed when it ends, in one piece (a lock: two jobs' logs
# never interleave).
job() {
  local n=$1 t failed=0
  local -a vars=()
  [ -z "${JOB_VARS:-}" ] || read -r -a vars <<< "${JOB_VARS//%N/$n}"
  while [ ! -e "$times/stop" ]; do
    # a lock file of its own: sed -i replaces the queue file, and a lock on the old one locks nothing
    # shellcheck disable=SC2016  # $1 is sh's
    t=$(flock "$times/queue.lock" sh -c 'head -n 1 "$1"; sed -i 1d "$1"' _ "$times/queue")
    [ -n "$t" ] || break
    echo "== make $t started (job $n, $(date -u +%H:%M:%S))"
    if ! run_target "j$n" "$t" "${vars[@]}" > "$times/job-$t.out" 2>&1; then
      failed=1
      [ "$keep_going" = 1 ] || : > "$times/stop"
    fi
    flock "$times/print.lock" cat "$times/job-$t.out"
  done
  return $failed
}

is_guest_target() { local g; for g in "${guest_targets[@]}"; do [ "$g" = "$1" ] && return 0; done; return 1; }
is_alone() { local g; for g in "${alone_targets[@]}"; do [ "$g" = "$1" ] && return 0; done; return 1; }
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

# lanes_run: the lanes that ran targets, in the order they ran: the jobs, then lanes 1 and 2
lanes_run() { (cd "$times" && { find . -maxdepth 1 -name 'j[0-9]*' -printf '%f\n' | sort -V; for l in 1 2; do [ -f "$l" ] && echo "$l"; done; }); }

table() {
  local lane t s rc
  echo
  echo "== make test: time per target"
  printf '%-22s %5s %8s  %s\n' target lane seconds result
  for lane in $(lanes_run); do
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
  for lane in $(lanes_run); do
    while read -r t s rc n; do
      if [ "$n" = 2 ]; then
        echo; echo "== why the first attempt of make $t failed"; failure_lines "$times/target-$t.first.log"
      fi
      [ "$rc" = 0 ] && continue
      echo; echo "== why make $t failed"; failure_lines "$times/target-$t.log"
    done < "$times/$lane"
  done
}

# prep: what every lane's or job's targets make first (LANE_PREP: the binaries, the venvs, the
# tools), once, before they run side by side: two makes building one venv at once would both
# pip-install into it. Then the Debian tree and the guest kernel (LANE_GUEST_PREP=0: not, for the
# runner's own tests).
prep() {
  if [ -n "${LANE_PREP:-}" ]; then
    # shellcheck disable=SC2086  # LANE_PREP is a list of targets
    "${make_cmd[@]}" --no-print-directory $LANE_PREP || { echo "run-targets: make $LANE_PREP failed" >&2; return 1; }
    # made once: every target's make is told not to make them again (make -o, which no sub-make
    # inherits): each make otherwise linked every binary again, built the tarball again and
    # rebuilt the tools, 5-9 s a target, about 25 targets a run, while the tree cannot change
    local p
    for p in $LANE_PREP; do prepped+=(-o "$p"); done
  fi
  if [ "${LANE_GUEST_PREP:-1}" = 1 ]; then
    scripts/debian-tree.sh path >/dev/null || { echo "run-targets: building the Debian tree failed" >&2; return 1; }
    test/guest/kernel.sh >/dev/null || { echo "run-targets: fetching the guest kernel failed" >&2; return 1; }
  fi
}

wall_start=$(date +%s)
if [ "$lanes" = 1 ] && [ "$jobs" -gt 1 ]; then
  first=(); second=()
  for t in "$@"; do if is_alone "$t"; then second+=("$t"); else first+=("$t"); fi; done
  prep || exit 1
  printf '%s\n' "${first[@]}" > "$times/queue"
  beside=
  if [ "${ALONE_BESIDE:-0}" = 1 ] && [ ${#second[@]} -gt 0 ]; then
    job_wrap=(chrt --idle 0 ionice -c 2 -n 7)
    echo "== in lane 1 from the start: ${second[*]}; the jobs at SCHED_IDLE"
    run_lane 1 "${second[@]}" > "$times/lane1.log" 2>&1 &
    beside=$!
  fi
  echo "== ${#first[@]} targets, $jobs at a time: ${first[*]}"
  pids=()
  for ((n = 1; n <= jobs; n++)); do job "$n" & pids+=($!); done
  rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  echo "== the $jobs jobs done in $(( $(date +%s) - wall_start )) s"
  if [ -n "$beside" ]; then
    wait "$beside" || rc=1
    echo "== lane 1 (${second[*]}) done in $(( $(date +%s) - wall_start )) s; its log:"
    cat "$times/lane1.log"
  elif [ "$rc" = 0 ] || [ "$keep_going" = 1 ]; then
    [ ${#second[@]} -eq 0 ] || { echo "== then, alone: ${second[*]}"; run_lane 1 "${second[@]}" || rc=1; }
  fi
  table
  why_failed
  exit $rc
fi

if [ "$lanes" = 1 ] || [ ${#guest_targets[@]} -eq 0 ]; then
  run_lane 1 "$@"; rc=$?
  table
  why_failed
  exit $rc
fi

first=(); second=()
for t in "$@"; do if is_guest_target "$t"; then second+=("$t"); else first+=("$t"); fi; done
prep || exit 1
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
