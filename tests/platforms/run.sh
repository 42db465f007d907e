#!/usr/bin/env bash
# run.sh --bin-dir DIR --pvesim FILE --venv DIR
# The binaries of the other platforms, from the built plugins/modules/__bin (make test-platforms),
# each <binary>.xz unpacked first by the action plugin's own code (plugins/plugin_utils/binary_cache.py)
# into a private cache:
#  - linux/arm64, executed under qemu-user (qemu-aarch64-static): tenant_plan; pve_tenant_access
#    against pvesim (converge, then a no-op second run); nsupdate_tsig against the DNS lab's
#    PowerDNS (converge, the record read back with dig, a no-op second run); transit_route's
#    argument check (it refuses before touching netlink: nothing runs in this namespace);
#  - darwin/amd64 and darwin/arm64: Mach-O 64-bit executables for the right CPU (header read here).
# Without qemu-aarch64-static it skips, except in CI (CI set), where it fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
bin= pvesim= venv=
while [ $# -gt 0 ]; do
  case $1 in --bin-dir) bin=$2; shift 2;; --pvesim) pvesim=$2; shift 2;; --venv) venv=$2; shift 2;;
    *) echo "usage: $0 --bin-dir DIR --pvesim FILE --venv DIR" >&2; exit 2;; esac
done
pass=0 fail=0
ok(){ pass=$((pass+1)); echo "PASS  $*"; }
ko(){ fail=$((fail+1)); echo "FAIL  $*"; }
work=$(mktemp -d /tmp/dvt-platforms.XXXXXX)
cleanup() {
  [ -n "${sim_pid:-}" ] && kill "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null
  [ -f "$work/dns/env" ] && DNS_LAB_DIR=$work/dns "$root/scripts/dns-lab.sh" down >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
py=$venv/bin/python

# Unpack every shipped .xz as the action plugin does; $unpacked/<binary> links to the cache entry.
unpacked=$work/bin
mkdir -p "$unpacked"
for f in "$bin"/*.xz; do
  [ -e "$f" ] || { ko "no .xz binary in $bin (make build-all)"; break; }
  if p=$("$py" "$root/plugins/plugin_utils/binary_cache.py" unpack "$f" "$work/cache" 2>"$work/unpack.err"); then
    ln -s "$p" "$unpacked/$(basename "$f" .xz)"
  else cat "$work/unpack.err"; ko "unpacking $(basename "$f")"; fi
done
bin=$unpacked

# A module run as Ansible runs it: one args file in, one JSON object out.
runmod() { # runmod BINARY MODULE ARGS_JSON -> stdout: the result
  "$py" -c 'import json,sys; a=json.loads(sys.argv[1]); a["_deevnet_tenant_module"]="deevnet.tenant."+sys.argv[2]; open(sys.argv[3],"w").write(json.dumps(a))' \
    "$3" "$2" "$work/args.json"
  "${qemu[@]}" "$1" "$work/args.json" || true
}
field() { "$py" -c 'import json,sys; r=json.load(sys.stdin); print(eval(sys.argv[1], {}, {"r": r}))' "$1"; }

# Mach-O: magic 0xfeedfacf (little-endian), cputype x86_64 0x01000007 / arm64 0x0100000c, filetype 2 (executable).
for arch in amd64 arm64; do
  for f in "$bin"/*_darwin_$arch; do
    [ -e "$f" ] || { ko "no darwin/$arch binary in $bin"; continue; }
    got=$("$py" - "$f" <<'PY'
import struct, sys
magic, cpu, sub, ftype = struct.unpack('<IiiI', open(sys.argv[1], 'rb').read(16))
print('%s %s %s' % ('macho64' if magic == 0xfeedfacf else hex(magic), {0x01000007: 'amd64', 0x0100000c: 'arm64'}.get(cpu, hex(cpu)), 'exec' if ftype == 2 else ftype))
PY
)
    if [ "$got" = "macho64 $arch exec" ]; then ok "$(basename "$f"): Mach-O 64-bit executable for $arch"
    else ko "$(basename "$f"): $got, want macho64 $arch exec"; fi
  done
done

qemu_bin=$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)
if [ -z "$qemu_bin" ]; then
  if [ -n "${CI:-}" ]; then ko "qemu-aarch64-static missing (scripts/install-deps.sh installs qemu-user-static)"
  else echo "SKIP  linux/arm64 runs: no qemu-aarch64-static (scripts/install-deps.sh)"; fi
  echo "test-platforms: $pass passed, $fail failed"; [ $fail = 0 ]; exit
fi
qemu=("$qemu_bin")
multi=$bin/tenant_modules_linux_arm64 route=$bin/transit_route_linux_arm64
for f in "$multi" "$route"; do [ -x "$f" ] || { ko "missing $f (make build-all)"; }; done
echo "      $(file -bL "$multi" | cut -c1-60) under $qemu_bin"

out=$(runmod "$multi" tenant_plan '{"name": "tdemo", "index": 1}')
if [ "$(echo "$out" | field 'r["tenant"]["subnet"]')" = 10.20.129.0/24 ]; then ok "linux/arm64 tenant_plan: tdemo's subnet 10.20.129.0/24"
else echo "$out" | head -c 600; ko "linux/arm64 tenant_plan"; fi

# pvesim on loopback (a free port), then pve_tenant_access twice.
"$pvesim" -listen 127.0.0.1:0 -token-out "$work/token.json" -ca-out "$work/ca.pem" >"$work/sim.out" 2>&1 &
sim_pid=$!
for _ in $(seq 100); do grep -q 'pvesim ready' "$work/sim.out" && break; sleep 0.1; done
conn=$("$py" -c 'import json,sys; t=json.load(open(sys.argv[1])); print(json.dumps({k: t[k] for k in ("api_host","api_port","api_user","api_token_id","api_token_secret","ca_path","validate_certs")}))' "$work/token.json")
args=$("$py" -c 'import json,sys; a=json.loads(sys.argv[1]); a.update(name="tdemo", index=1); print(json.dumps(a))' "$conn")
first=$(runmod "$multi" pve_tenant_access "$args")
second=$(runmod "$multi" pve_tenant_access "$args")
if [ "$(echo "$first" | field '(r["failed"], r["changed"])')" = "(False, True)" ] && \
   [ "$(echo "$second" | field '(r["failed"], r["changed"])')" = "(False, False)" ]; then
  ok "linux/arm64 pve_tenant_access against pvesim: created, then a no-op"
else echo "$first" | head -c 600; echo; echo "$second" | head -c 600; ko "linux/arm64 pve_tenant_access against pvesim"; fi

# The DNS lab in a private directory (free ports), then nsupdate_tsig twice and dig.
if DNS_LAB_DIR=$work/dns "$root/scripts/dns-lab.sh" up >"$work/dns.out" 2>&1; then
  set -a; . "$work/dns/env"; set +a
  args=$("$py" -c 'import json,os; print(json.dumps({"server": "127.0.0.1", "port": int(os.environ["DNS_LAB_PDNS_PORT"]), "zone": "tdemo.mobile.deevnet.net", "key_name": "tenant-tdemo", "key_secret": os.environ["DNS_LAB_KEY_TENANT_TDEMO"], "owner": "tdemo", "records": [{"record": "arm64", "values": "10.20.129.64"}]}))')
  first=$(runmod "$multi" nsupdate_tsig "$args")
  second=$(runmod "$multi" nsupdate_tsig "$args")
  got=$(dig @127.0.0.1 -p "$DNS_LAB_PDNS_PORT" +short arm64.tdemo.mobile.deevnet.net A)
  if [ "$(echo "$first" | field '(r["failed"], r["changed"])')" = "(False, True)" ] && [ "$got" = 10.20.129.64 ] && \
     [ "$(echo "$second" | field '(r["failed"], r["changed"])')" = "(False, False)" ]; then
    ok "linux/arm64 nsupdate_tsig against PowerDNS: written, read back with dig ($got), then a no-op"
  else echo "$first" | head -c 600; echo; echo "dig: $got"; ko "linux/arm64 nsupdate_tsig against PowerDNS"; fi
else cat "$work/dns.out"; ko "scripts/dns-lab.sh up"; fi

out=$(runmod "$route" transit_route '{"routes": [{"dest": "not-a-prefix"}]}')
if echo "$out" | field 'r["failed"] and "routes" in r["msg"]' | grep -qx True; then ok "linux/arm64 transit_route: runs, refuses a bad route before any change"
else echo "$out" | head -c 600; ko "linux/arm64 transit_route"; fi

echo "test-platforms: $pass passed, $fail failed"
[ $fail = 0 ]
