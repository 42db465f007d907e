#!/usr/bin/env bash
# tests/secrets/run.sh --venv DIR --collections DIR --pvesim BIN
# Runs the tenant lifecycle (onboard, fabric, tenant, verify, destroy) against pvesim and the DNS lab
# at -vvv --diff with ANSIBLE_LOG_PATH set, on success and on failure paths, then greps the whole
# output and the log for every secret the lab knows: pvesim's root token secret, each tenant's API
# token secret and TSIG key (read back from the attachment files), every TSIG key of the DNS lab.
# Any hit fails (the offending lines are shown with the secret masked).
# It also checks that destroying tdemo leaves tother exactly as it was (tests/isolation/snapshot.py).
set -uo pipefail
# shellcheck source=tests/lib/sharedlab.sh
. "$(dirname "$0")/../lib/sharedlab.sh"
sharedlab_args secrets "$@"
cleanup() { [ -n "${KEEP_WORK:-}" ] && { echo "test-secrets: kept $WORK"; cp -r "$LAB/attachments" "$WORK/" 2>/dev/null; }
  PVESIM=$PVESIM "$SHARED/lab.sh" down "$LAB" >/dev/null 2>&1; rm -rf "$LAB"; [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"; }
trap cleanup EXIT
export ANSIBLE_LOG_PATH=$WORK/ansible.log ANSIBLE_DISPLAY_SKIPPED_HOSTS=true
OUT=$WORK/output
start=$(date +%s)

PVESIM=$PVESIM LAB_DNS_TENANTS= "$SHARED/lab.sh" up "$LAB" >"$WORK/lab.out" 2>&1 || { cat "$WORK/lab.out"; exit 1; }

fails=0
# run WANT(ok|fail) LABEL ARGS...: one ansible-playbook at -vvv --diff; its rc must match WANT.
run() {
  local want=$1 label=$2 rc; shift 2
  echo "=== $label: ansible-playbook $*" >>"$OUT"
  "$VENV/bin/ansible-playbook" -vvv --diff -i "$SHARED/inventory" "$@" >>"$OUT" 2>&1; rc=$?
  if { [ "$want" = ok ] && [ $rc -ne 0 ]; } || { [ "$want" = fail ] && [ $rc -eq 0 ]; }; then
    echo "test-secrets: $label: rc $rc, expected $want"; tail -40 "$OUT" | grep -v -F -f <(secrets) ; fails=$((fails + 1))
  else echo "test-secrets: $label: rc $rc ($want, as expected)"; fi
}
# Every secret the lab knows, one a line (from the files the lab and onboarding wrote).
secrets() {
  python3 - "$LAB" "$WORK" <<'PY'
import glob, json, os, re, sys
lab, work = sys.argv[1], sys.argv[2]
out = set()
out.add(json.load(open(os.path.join(lab, "pvesim-token.json")))["api_token_secret"])
keys = os.path.join(lab, "dns", "keys")
if os.path.exists(keys):
    for line in open(keys):
        parts = line.strip().split(":", 2)
        if len(parts) == 3 and parts[2]:
            out.add(parts[2])
# The PowerDNS API key of the lab's authoritative server (the role's uri tasks send it).
for conf in glob.glob(os.path.join(lab, "**", "pdns.conf"), recursive=True):
    for m in re.finditer(r"^api-key=(\S+)", open(conf).read(), re.M):
        out.add(m.group(1))
seen = os.path.join(lab, "secrets-seen")
if os.path.exists(seen):
    out.update(l.strip() for l in open(seen) if l.strip())
# The attachment files onboarding wrote, and the drill's copy of its throwaway tenant's.
for f in glob.glob(os.path.join(lab, "attachments", "*.yml")) + glob.glob(os.path.join(work, "tmp", "*", "attachment.yml")):
    for m in re.finditer(r"^\s*(api_token_secret|key_secret):\s*['\"]?([^'\"\s]+)", open(f).read(), re.M):
        out.add(m.group(2))
for s in sorted(out):
    if len(s) >= 8:
        print(s)
PY
}
# The attachment files go away with destroy: keep what they held.
remember() { secrets >"$WORK/s" && cat "$WORK/s" >>"$LAB/secrets-seen"; }

T=$SHARED/tdemo.yml O=$SHARED/tother.yml
run ok   "onboard tdemo"            -e tenant_name=tdemo deevnet.tenant.onboard
run ok   "onboard tother"           -e tenant_name=tother deevnet.tenant.onboard
run ok   "onboard tdemo again"      -e tenant_name=tdemo deevnet.tenant.onboard
remember
run ok   "fabric"                   -e substrate_node_network=false deevnet.tenant.fabric
run ok   "tenant tdemo"             -e tenant_file="$T" deevnet.tenant.tenant
run ok   "tenant tother"            -e tenant_file="$O" deevnet.tenant.tenant
run ok   "tenant tdemo, check mode" --check -e tenant_file="$T" deevnet.tenant.tenant
run ok   "verify tdemo vs tother"   -e tenant_file="$T" -e tenant_other=tother deevnet.tenant.verify
# The rebuild drill: a copy of examples/tenant applied with its own attachment (its TMPDIR private).
mkdir -p "$WORK/tmp"
TMPDIR=$WORK/tmp run ok "drill tdrill" -e drill_name=tdrill -e tenant_registry_file="$LAB/tenants.yml" deevnet.tenant.drill
# Failure paths: a declaration the contract refuses (after the attachment is loaded), a VM the
# workload half cannot clone (the module fails holding the tenant's token), an index clash, and
# a substrate token that PVE refuses.
cat >"$WORK/bad-decl.yml" <<YML
tenant: {name: tdemo, index: 1, vms: {count: 1, cores: 0}}
YML
cat >"$WORK/bad-template.yml" <<YML
tenant: {name: tdemo, index: 1, vms: {count: 2, template: 99999}}
YML
run fail "tenant tdemo, refused declaration" -e tenant_file="$WORK/bad-decl.yml" deevnet.tenant.tenant
run fail "tenant tdemo, no such template"    -e tenant_file="$WORK/bad-template.yml" -e tenant_run_network=false deevnet.tenant.tenant
cat >"$WORK/clash.yml" <<YML
tenant: {name: tother, index: 1, vms: {count: 0}}
YML
run fail "tenant tother on tdemo's index"    -e tenant_file="$WORK/clash.yml" -e tenant_attachment_dir="$LAB/attachments" deevnet.tenant.tenant
run fail "onboard tclash on tdemo's index"   -e tenant_name=tclash -e tenant_index=1 deevnet.tenant.onboard
run fail "verify tother against a tenant never onboarded" -e tenant_file="$O" -e tenant_other=tnone deevnet.tenant.verify
remember
# Destroy removes nothing else: a full snapshot of tother (every object by its id, the fabric,
# DNS, files) before and after tdemo's destroy must be equal.
snap() { "$VENV/bin/python" "$ROOT/tests/isolation/snapshot.py" "$LAB" "$1"; }
snap tother >"$WORK/tother-before.json" 2>"$WORK/snap.err" || { cat "$WORK/snap.err"; fails=$((fails + 1)); }
run ok   "destroy tdemo"            -e tenant_file="$T" deevnet.tenant.destroy
snap tother >"$WORK/tother-after.json" 2>"$WORK/snap.err" || { cat "$WORK/snap.err"; fails=$((fails + 1)); }
if ! "$VENV/bin/python" - "$WORK/tother-before.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
empty = [k for k, v in {"zone": s["sdn"]["zone"] != "absent", "vnets": s["sdn"]["vnets"], "fabric": s["sdn"]["fabrics"] not in ("absent", [], {}),
         "pool": s["pool"] != "absent", "user": s["user"] != "absent", "tokens": s["tokens"], "acl": s["acl"], "guests": s["guests"],
         "dns zones": all(v != "absent" and v["rrsets"] for k, v in s["dns"].items() if k != "tsigkey"), "tsigkey": s["dns"]["tsigkey"] != "absent",
         "attachment": s["attachment"] != "absent", "registry": s["registry"]}.items() if not v]
sys.exit("tother's snapshot lacks: " + ", ".join(empty) if empty else 0)
PY
then echo "test-secrets: the snapshot of tother is missing parts, the isolation check would prove nothing"; fails=$((fails + 1))
elif ! diff -u "$WORK/tother-before.json" "$WORK/tother-after.json" >"$WORK/snap.diff"; then
  echo "test-secrets: destroying tdemo changed tother's objects:"; head -60 "$WORK/snap.diff"; fails=$((fails + 1))
else echo "test-secrets: tother's $(wc -l <"$WORK/tother-before.json")-line snapshot (SDN, fabric, pool, user, token, ACLs, VMs, DNS, attachment, registry) is unchanged by tdemo's destroy"; fi
run ok   "destroy tother"           -e tenant_file="$O" deevnet.tenant.destroy

secrets >"$WORK/secrets"
n=$(wc -l <"$WORK/secrets")
[ "$n" -ge 9 ] || { echo "test-secrets: only $n secrets known to the lab (want the root token, the PowerDNS API key, 3 tenant tokens and 4 TSIG keys)"; exit 1; }
lines=$(cat "$OUT" "$ANSIBLE_LOG_PATH" | wc -l)
[ -s "$ANSIBLE_LOG_PATH" ] || { echo "test-secrets: ANSIBLE_LOG_PATH $ANSIBLE_LOG_PATH is empty"; exit 1; }
hits=0
for f in "$OUT" "$ANSIBLE_LOG_PATH"; do
  if grep -n -F -f "$WORK/secrets" "$f" >"$WORK/hits"; then
    hits=$((hits + $(wc -l <"$WORK/hits")))
    echo "test-secrets: a secret appears in $(basename "$f"):"
    python3 - "$WORK/secrets" "$WORK/hits" <<'PY'
import sys
secrets = [l.strip() for l in open(sys.argv[1]) if l.strip()]
for line in list(open(sys.argv[2]))[:40]:
    for s in secrets:
        line = line.replace(s, "<SECRET>")
    print("  " + line.rstrip()[:400])
PY
  fi
done
[ "$hits" -eq 0 ] && [ "$fails" -eq 0 ] || { echo "test-secrets: FAILED ($hits lines with a secret, $fails failed checks: runs with the wrong outcome, tother changed by the destroy)"; exit 1; }
echo "test-secrets: $n secrets, none in $lines lines of -vvv --diff output and log (success and failure paths), $(( $(date +%s) - start )) s"
