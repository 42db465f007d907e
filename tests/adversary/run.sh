#!/usr/bin/env bash
# tests/adversary/run.sh --venv DIR --collections DIR --pvesim BIN        (make test-adversary)
# A tenant is an adversary (issue 24, docs/security.md). Against the built-in substrate (pvesim and
# the DNS lab on 127.0.0.1, started by extensions/molecule/shared/lab.sh), onboard tdemo and tother
# and converge both with the playbooks; then, with nothing but tdemo's attachment file as onboard
# wrote it, tests/adversary/probe tries what tdemo's token and TSIG key allow and everything they
# must not (the tables in probe/api.go and probe/dns.go: each outcome exactly, status and PVE's
# message or rcode). Its squat of tother's vmid (which PVE allows) must then be named by the pool
# that holds it: by tdemo's tenant_vm (a warning), by tother's tenant_vm (refused), by verify
# (fails for tdemo) and by the site report (both rows). The playbooks install the envelope guard
# (extensions/molecule/shared/guard: pvesim's node disks), so the exhaustion probes (probe/exhaust.go)
# meet it; the VM the probe makes without the template is swept by the next tenant converge, put into
# tdemo's cgroup group on its node while it runs, and its next start refused (probe -phase swept).
# The DNS quota (docs/adr/0017-dns-quota.md): the lab runs the DNS gateway and Unbound reads the
# snippets onboarding writes (LAB_DNS_QUOTA=1); probe/quota.go floods tdemo's zone, publishes a
# delegation, a DNAME, a 2 KB TXT, a TTL of 1 (each refused whole), and asks the resolver for a name
# under a delegation the substrate put in tdemo's zone (nothing may reach 127.0.0.9:53); onboarding
# with a DNS quota below what the zone holds, or a rate of 0, is refused before any write; verify
# records each zone's records against the quota in the site report.
# The control: ADVERSARY_NO_GUARD=1 runs every playbook without the envelope guard; the exhaustion
# probes must then fail (PVE starts every bigger VM), the others pass as before.
# ADVERSARY_NO_DNS_GATEWAY=1 runs the lab without the DNS gateway (onboarding then lets the tenant's key
# update PowerDNS directly, as before issue 53): the quota and record probes must then fail.
set -uo pipefail
# shellcheck source=tests/lib/sharedlab.sh
. "$(dirname "$0")/../lib/sharedlab.sh"
sharedlab_args adversary "$@"
cleanup() { [ -n "${gate_pid:-}" ] && kill "$gate_pid" 2>/dev/null; PVESIM=$PVESIM "$SHARED/lab.sh" down "$LAB" >/dev/null 2>&1; rm -rf "$LAB"
  [ -n "${KEEP_WORK:-}" ] && echo "test-adversary: kept $WORK" || rm -rf "$WORK"; }
trap cleanup EXIT
start=$(date +%s)
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$WORK/probe" ./tests/adversary/probe) || exit 1
PVESIM=$PVESIM LAB_DNS_TENANTS= LAB_DNS_QUOTA=$([ -n "${ADVERSARY_NO_DNS_GATEWAY:-}" ] && echo 0 || echo 1) "$SHARED/lab.sh" up "$LAB" >"$WORK/lab.out" 2>&1 || { cat "$WORK/lab.out"; exit 1; }

fails=0
fail() { echo "test-adversary: FAIL $*"; fails=$((fails + 1)); }
# play WANT(ok|fail) LABEL ARGS...: one ansible-playbook; its rc must match WANT; output in $WORK/<n>.out.
n=0
play() {
  local want=$1 label=$2 rc; shift 2; n=$((n + 1)); OUT=$WORK/$n.out
  "$VENV/bin/ansible-playbook" -i "$SHARED/inventory" -i "$SHARED/guard" ${ADVERSARY_NO_GUARD:+-e substrate_envelope_guard=false} "$@" >"$OUT" 2>&1; rc=$?
  if { [ "$want" = ok ] && [ $rc -ne 0 ]; } || { [ "$want" = fail ] && [ $rc -eq 0 ]; }; then
    fail "$label: rc $rc, expected $want"; tail -30 "$OUT"
  else echo "test-adversary: $label: rc $rc ($want, as expected)"; fi
}
# says LABEL TEXT: the last play's output must hold TEXT.
says() { grep -qF -- "$2" "$OUT" && echo "test-adversary: $1: says \"$2\"" || { fail "$1: output lacks \"$2\""; grep -E 'FAILED|WARNING|msg' "$OUT" | tail -8; }; }

T=$SHARED/tdemo.yml O=$SHARED/tother.yml
play ok "onboard tdemo"  -e tenant_name=tdemo deevnet.tenant.onboard
play ok "onboard tother" -e tenant_name=tother deevnet.tenant.onboard
play ok "fabric"         -e substrate_node_network=false deevnet.tenant.fabric
play ok "tenant tdemo"   -e tenant_file="$T" deevnet.tenant.tenant
play ok "tenant tother"  -e tenant_file="$O" deevnet.tenant.tenant

# Bad DNS quotas are refused before any write, naming the field and the rule (before the probe: its
# squat makes every later onboarding of tdemo stop earlier): one below what tdemo's zone holds, a rate
# of 0; the registry and the attachment stay as they were.
before=$(cat "$LAB/tenants.yml" "$LAB/attachments/tdemo.yml" | sha256sum)
play fail "onboard tdemo with dns_records 1" -e tenant_name=tdemo -e '{"substrate_tenant_envelopes": {"tdemo": {"dns_records": 1}}}' deevnet.tenant.onboard
says "the quota below what the zone holds" "the DNS quota of 1 records (envelope.dns_records, substrate_tenant_envelope"
says "the quota below what the zone holds" "is below what zone tdemo."
play fail "onboard tdemo with dns_updates 0" -e tenant_name=tdemo -e '{"substrate_tenant_envelopes": {"tdemo": {"dns_updates": 0}}}' deevnet.tenant.onboard
says "a rate of 0" "dns_updates must each be a whole number of at least 1"
play fail "onboard tdemo with a gateway without its key" -e tenant_name=tdemo -e '{"substrate_dns_gateway": {"server": "127.0.0.1"}}' deevnet.tenant.onboard
says "a gateway without its key" "substrate_dns_gateway: key_name, tenant_dir must each be given"
play fail "onboard tdemo with an API gateway without its host" -e tenant_name=tdemo -e '{"substrate_api_gateway": {"api_port": 8007}}' deevnet.tenant.onboard
says "an API gateway without its host" "substrate_api_gateway: api_host must be given"
[ "$(cat "$LAB/tenants.yml" "$LAB/attachments/tdemo.yml" | sha256sum)" = "$before" ] && echo "test-adversary: the refused onboardings left the registry and tdemo's attachment as they were" \
  || fail "a refused onboarding changed the registry or tdemo's attachment"

# The API (issue 53, docs/adr/0018-api-gate.md). pvesim serves as PVE does, three calls at a time
# (pveproxy's workers), here 100 ms each, and counts what each user's calls waited for a worker.
# tother's no-op converge (its own token and the substrate's) runs alone, under tdemo's flood of its
# own token straight at the API (what PVE leaves open: no limit per token), and under the same flood
# through the API gate, both tenants onboarded behind it (their attachments name the gate). The check
# is on what the converge's calls waited (pvesim's count, not this machine's CPU); the wall times are
# the figures. Then tdemo's attachment is put back as it was, for the probes below; tother stays
# behind the gate. ADVERSARY_NO_API_GATE=1 floods through a gate that binds nothing (the control:
# the check must then fail).
api_port=$("$VENV/bin/python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["api_port"])' "$LAB/pvesim-token.json")
sim() { curl -sf --cacert "$LAB/pvesim-ca.pem" ${2:+-X POST -H 'Content-Type: application/json' -d "$2"} "https://127.0.0.1:$api_port/_sim/$1"; }
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=apigate \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$WORK/apigate.key" -out "$WORK/apigate.pem" 2>/dev/null || fail "openssl: the gate's certificate"
limit='{rate: 20, burst: 40, concurrent: 1}'
[ -n "${ADVERSARY_NO_API_GATE:-}" ] && limit='{rate: 100000, burst: 100000, concurrent: 1000}'
cat >"$WORK/apigate.yml" <<YML
listen: 127.0.0.1:0
upstream: https://127.0.0.1:$api_port
upstream_ca: $LAB/pvesim-ca.pem
cert: $WORK/apigate.pem
key: $WORK/apigate.key
tenants: $limit
others: {rate: 5, burst: 10, concurrent: 1}
unverified: {rate: 5, burst: 20, concurrent: 2}
exempt: [root@pam]
YML
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$WORK/apigate" ./cmd/apigate) || fail "build apigate"
"$WORK/apigate" -check -config "$WORK/apigate.yml" >/dev/null || fail "apigate -check refuses the gate's file"
"$WORK/apigate" -config "$WORK/apigate.yml" >"$WORK/apigate.out" 2>"$WORK/apigate.log" & gate_pid=$!
for _ in $(seq 100); do grep -q '^apigate ready' "$WORK/apigate.out" && break; sleep 0.1; done
gate_port=$(sed -n 's/^apigate ready listen=127.0.0.1:\([0-9]*\) .*/\1/p' "$WORK/apigate.out")
[ -n "$gate_port" ] || { fail "apigate did not start"; cat "$WORK/apigate.log"; }
# timed LABEL FLOOD(none|on) NAME: tother's no-op converge, with tdemo's flood at whatever its
# attachment names; its seconds and what pvesim counted into $WORK/NAME.time and $WORK/NAME.json
timed() {
  local fp= t0 t1
  sim faults '{"api_workers": 3, "latency_ms": 100}' >/dev/null || fail "pvesim: PVE's three workers"
  if [ "$2" = on ]; then
    "$WORK/probe" -phase apiflood -attachment "$LAB/attachments/tdemo.yml" -conns 32 >"$WORK/flood.out" 2>&1 & fp=$!
    sleep 2
  fi
  t0=$(date +%s.%N)
  play ok "tenant tother no-op, $1" -e tenant_file="$O" deevnet.tenant.tenant
  t1=$(date +%s.%N)
  sim api-workers >"$WORK/$3.json" || fail "pvesim: GET /_sim/api-workers"
  [ -n "$fp" ] && { kill -TERM "$fp"; wait "$fp"; echo "test-adversary: $1: $(cat "$WORK/flood.out")"; }
  "$VENV/bin/python" -c 'import sys; print(f"{float(sys.argv[2]) - float(sys.argv[1]):.1f}")' "$t0" "$t1" >"$WORK/$3.time"
}
timed alone none alone
timed "tdemo flooding the API" on flood
cp "$LAB/attachments/tdemo.yml" "$WORK/tdemo-attachment.yml"
gw="{\"substrate_api_gateway\": {\"api_host\": \"127.0.0.1\", \"api_port\": ${gate_port:-0}, \"ca_path\": \"$WORK/apigate.pem\"}}"
play ok "onboard tdemo behind the API gate"  -e tenant_name=tdemo -e "$gw" deevnet.tenant.onboard
play ok "onboard tother behind the API gate" -e tenant_name=tother -e "$gw" deevnet.tenant.onboard
att_api=$("$VENV/bin/python" -c 'import sys,yaml; print(yaml.safe_load(open(sys.argv[1]))["tenant_attachment"]["pve"]["api_port"])' "$LAB/attachments/tother.yml")
[ "$att_api" = "$gate_port" ] && echo "test-adversary: tother's attachment names the API gate (port $gate_port)" \
  || fail "tother's attachment names API port $att_api, not the gate's $gate_port"
timed "tdemo flooding the API through the gate" on gate
sim faults '{"api_workers": 0, "latency_ms": 0}' >/dev/null || fail "pvesim: back to no queue"
cp "$WORK/tdemo-attachment.yml" "$LAB/attachments/tdemo.yml"
"$VENV/bin/python" - "$WORK" <<'PY' || fail "the API gate: tother's converge waits for PVE's workers under tdemo's flood"
import json, sys
work = sys.argv[1]
def run(name):
    st = json.load(open(f"{work}/{name}.json"))["data"]
    calls = sum(n for u, n in st["calls"].items() if u != "tenant-tdemo@pve")
    waited = sum(w for u, w in st["waited_seconds"].items() if u != "tenant-tdemo@pve")
    return float(open(f"{work}/{name}.time").read()), calls, waited, st["calls"].get("tenant-tdemo@pve", 0)
(ta, ca, wa, _), (tf, cf, wf, df), (tg, cg, wg, dg) = run("alone"), run("flood"), run("gate")
print(f"test-adversary: the API: tother's no-op converge ({ca} calls of tother and the substrate) alone: {ta} s, its calls waited {wa:.1f} s for a worker;"
      f" under tdemo's flood straight at the API ({df} of tdemo's calls served): {tf} s ({tf / ta:.2f}x), waited {wf:.1f} s;"
      f" through the gate ({dg} served): {tg} s ({tg / ta:.2f}x), waited {wg:.1f} s")
# the control: the flood must matter without the gate, else the check proves nothing
if wf < wa + 5:
    sys.exit(f"the flood straight at the API made tother's calls wait only {wf - wa:.1f} s more: it proves nothing")
# through the gate tdemo holds one worker at most: tother's calls wait a tenth of what they did without it
if wg > wa + (wf - wa) / 10:
    sys.exit(f"through the gate tother's calls waited {wg:.1f} s (alone {wa:.1f} s, without the gate {wf:.1f} s)")
PY
grep -q 'refused: tenant tdemo is over its API rate\|refused: tenant tdemo has 1 API calls in flight' "$WORK/apigate.log" \
  && echo "test-adversary: the gate's log names tdemo's refusals" || [ -n "${ADVERSARY_NO_API_GATE:-}" ] || fail "the gate's log names no refusal of tdemo"

# The probes: tdemo's attachment, the other tenant as the registry has it, the site's bridge as
# the inventory declares it.
other_index=$(python3 -c 'import sys,yaml; print(yaml.safe_load(open(sys.argv[1]))["tenants"]["tother"])' "$LAB/tenants.yml" 2>/dev/null \
  || "$VENV/bin/python" -c 'import sys,yaml; print(yaml.safe_load(open(sys.argv[1]))["tenants"]["tother"])' "$LAB/tenants.yml")
bridge=$("$VENV/bin/ansible-inventory" -i "$SHARED/inventory" --host localhost 2>/dev/null \
  | "$VENV/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["substrate_site"]["bridge"])')
# The DNS quota (docs/adr/0017-dns-quota.md): onboarding pointed tdemo's attachment at the gateway;
# the substrate publishes the issue's delegation in tdemo's zone through the PowerDNS API (as a
# record from before the rule: the gateway refuses it from the tenant), so the probe can show that
# the resolver, with the snippet onboarding wrote, sends nothing to the tenant's address.
gate_port=$(sed -n 's/^DNS_LAB_GATE_PORT=//p' "$LAB/dns/env")
att_port=$("$VENV/bin/python" -c 'import sys,yaml; print(yaml.safe_load(open(sys.argv[1]))["tenant_attachment"]["dns"]["port"])' "$LAB/attachments/tdemo.yml")
[ -n "$gate_port" ] && [ "$att_port" = "$gate_port" ] && echo "test-adversary: tdemo's attachment names the DNS gateway (port $gate_port)" \
  || fail "tdemo's attachment names DNS port $att_port, not the gateway's ${gate_port:-(none)}"
(. "$LAB/dns/env"; curl -sf -o /dev/null -X PATCH -H "X-API-Key: $DNS_LAB_API_KEY" "$DNS_LAB_API_URL/zones/tdemo.$DNS_LAB_SITE_ZONE." \
  -d "{\"rrsets\": [{\"name\": \"sub.tdemo.$DNS_LAB_SITE_ZONE.\", \"type\": \"NS\", \"ttl\": 300, \"changetype\": \"REPLACE\", \"records\": [{\"content\": \"ns.sub.tdemo.$DNS_LAB_SITE_ZONE.\", \"disabled\": false}]},
       {\"name\": \"ns.sub.tdemo.$DNS_LAB_SITE_ZONE.\", \"type\": \"A\", \"ttl\": 300, \"changetype\": \"REPLACE\", \"records\": [{\"content\": \"127.0.0.9\", \"disabled\": false}]}]}") \
  || fail "publishing the delegation through the PowerDNS API"
echo "test-adversary: probing as tdemo (other tenant tother, index $other_index; site bridge $bridge)"
"$WORK/probe" -attachment "$LAB/attachments/tdemo.yml" -other tother -other-index "$other_index" -bridge "$bridge" -tenant-ns 127.0.0.9 | tee "$WORK/probe.out"
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "probe: $(grep -c '^FAIL' "$WORK/probe.out") probes did not get PVE's or the DNS server's answer"

# The VM the probe made without the template starts unguarded until a sweep: the next tenant converge's
# hypervisor play sweeps it (the guard becomes its hookscript, nothing is stopped), and its next start is refused.
# The same play's contain puts it, still running, into tdemo's cgroup group on its node: each node's disk gets
# a QEMU pid file for it where qemu-server keeps one, and a directory laid out like cgroupfs (pvesim runs no QEMU).
bare=$(grep -o 'made without the template (vmid [0-9]*)' "$WORK/probe.out" | head -1 | grep -o '[0-9]*')
for d in "$LAB"/nodes/*/; do
  mkdir -p "$d/var/run/qemu-server" "$d/sys/fs/cgroup"
  echo "cpuset cpu io memory pids" > "$d/sys/fs/cgroup/cgroup.controllers"
  echo "4${bare:-0}" > "$d/var/run/qemu-server/${bare:-0}.pid"
done
play ok "tenant tdemo: the sweep after the probe" -e tenant_file="$T" -e tenant_run_network=false -e tenant_run_verify=false deevnet.tenant.tenant
says "the sweep" "tenant tdemo: VM ${bare:-?}: hookscript local:snippets/deevnet-envelope-guard, was none; it runs unguarded until its next start (not stopped)"
says "the contain" "tenant tdemo: VM ${bare:-?} (pid 4${bare:-?}) ran outside its tenant's group: placed in $LAB/nodes/"
if grep -qx "4${bare:-?}" "$LAB"/nodes/*/sys/fs/cgroup/deevnet.slice/tenant-tdemo.slice/cgroup.procs 2>/dev/null; then
  echo "test-adversary: the contain: VM $bare's QEMU is in tenant-tdemo.slice ($(cat "$LAB"/nodes/*/sys/fs/cgroup/deevnet.slice/tenant-tdemo.slice/memory.max) bytes)"
else fail "the contain: VM ${bare:-?}'s pid is in no tenant-tdemo.slice"; fi
"$WORK/probe" -phase swept -attachment "$LAB/attachments/tdemo.yml" -other tother -other-index "$other_index" -bridge "$bridge" | tee "$WORK/swept.out"
[ "${PIPESTATUS[0]}" -eq 0 ] || fail "probe -phase swept: $(grep -c '^FAIL' "$WORK/swept.out") probes did not get the guard's answer"

# The squat the probe left (tother's second vmid in tdemo's pool, tagged by nobody) is named by
# the pool that holds it.
squat=$(grep -o 'squat vmid [0-9]*' "$WORK/probe.out" | head -1 | grep -o '[0-9]*$')
[ -n "$squat" ] || { fail "the probe made no squat"; squat=0; }
play ok "tenant tdemo's workload after the squat" -e tenant_file="$T" -e tenant_run_network=false -e tenant_run_verify=false deevnet.tenant.tenant
says "tdemo's tenant_vm" "vmid $squat (\"squat\") is held by tenant tdemo's pool, in index $other_index's range"
cat >"$WORK/tother-2.yml" <<YML
tenant: {name: tother, index: $other_index, vms: {count: 2}}
YML
play fail "tenant tother with two VMs" -e tenant_file="$WORK/tother-2.yml" -e tenant_run_network=false deevnet.tenant.tenant
says "tother's tenant_vm" "vmid $squat is taken by a VM this token cannot see"
play fail "verify tdemo (the squatter)" -e tenant_file="$T" deevnet.tenant.verify
says "tdemo's verify" "Pool's VMs in the tenant's own vmid range tenant-tdemo"
play fail "verify tother (two VMs declared)" -e tenant_file="$WORK/tother-2.yml" deevnet.tenant.verify
report=$(ls "$LAB"/reports/*.md 2>/dev/null | head -1)
for want in "| tdemo | DNS records within the quota | tdemo.$(sed -n 's/^DNS_LAB_SITE_ZONE=//p' "$LAB/dns/env") | ✅ pass |" \
            "| tdemo | Pool's VMs in the tenant's own vmid range | tenant-tdemo | ❌ **FAIL** | vmid $squat (\"squat\") is held by tenant tdemo's pool, in index $other_index's range" \
            "vmid $squat is held by tenant tdemo's pool (pool tenant-tdemo), not tenant-tother" \
            "vmid $squat (\"squat\") is held by tenant tdemo's pool, in index $other_index's range"; do
  if [ -n "$report" ] && grep -qF -- "$want" "$report"; then echo "test-adversary: site report: says \"$want\""
  else fail "site report ${report:-(none)} lacks \"$want\""; fi
done

echo "test-adversary: $(grep -c '^ok' "$WORK/probe.out") probes as PVE and the DNS servers answer them, $fails failed checks, $(( $(date +%s) - start )) s"
[ "$fails" -eq 0 ]
