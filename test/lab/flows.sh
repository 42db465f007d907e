# test/lab/flows.sh, sourced by drills.sh and phase2.sh: traffic flows in the lab's VMs, each a
# `ping -D -O` in a VM's namespace (time-stamped by the guest's clock, every unanswered icmp_seq
# said), whose logs test/lab/flows.py turns into lost packets and gaps per event. Needs LAB_DIR.

# gnow: the guest's clock, which stamps the flows' packets (ping -D) and the events alike
gnow() { ssh -F "$LAB_DIR/ssh_config" lab 'date +%s.%N' </dev/null; }

# flows_run INTERVAL < SPEC: one flow per SPEC line "FLOW VM DST", a packet every INTERVAL s; each
# flow's log and pid under /run/lab/flows in the guest (what an earlier run left there removed)
flows_run() {
  # shellcheck disable=SC2016
  ssh -F "$LAB_DIR/ssh_config" lab 'rm -rf /run/lab/flows; mkdir -p /run/lab/flows
    while read -r f vm dst; do
      setsid sh -c "echo \$\$ > /run/lab/flows/$f.pid; exec ip netns exec vm-$vm ping -D -O -i '"$1"' $dst" \
        > /run/lab/flows/$f.log 2>&1 < /dev/null &
    done'
}

# flows_stop DIR: SIGINT to every flow (ping prints its summary), their logs copied to DIR
flows_stop() {
  ssh -F "$LAB_DIR/ssh_config" lab 'for p in /run/lab/flows/*.pid; do kill -INT "$(cat "$p")" 2>/dev/null || true; done; sleep 1' </dev/null
  rm -rf "$1"; mkdir -p "$1"
  ssh -F "$LAB_DIR/ssh_config" lab 'tar -C /run/lab/flows -cf - .' </dev/null | tar -C "$1" -xf -
  rm -f "$1/"*.pid
}
