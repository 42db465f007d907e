#!/usr/bin/env bash
# bench.sh --venv DIR --collections DIR [--records N]
# N records in one zone, against one PowerDNS from scripts/dns-lab.sh, in one run:
#   A) one deevnet.tenant.nsupdate_tsig task (records: list) with the default read (auto), then the
#      same task again (no-op)
#   B) the same with read: query (one question per set), and C) with read: axfr
#   D) a loop of N community.general.nsupdate tasks, then the same loop again (no-op)
# first against PowerDNS, then against BIND (same records, same key, hmac-sha256 for both modules:
# community.general.nsupdate defaults to hmac-md5, which both servers reject).
# For each: wall time of ansible-playbook and the DNS messages PowerDNS received (udp+tcp queries,
# of which dnsupdate), read from its statistics API before and after, and the messages per zone (all
# records are in one zone; the goal of issue 17 is <= 2 per zone on a normal converge).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/../.." && pwd)
VENV= COLLECTIONS= N=200
while [ $# -gt 0 ]; do
  case $1 in
    --venv) VENV=$2; shift 2 ;; --collections) COLLECTIONS=$2; shift 2 ;; --records) N=$2; shift 2 ;;
    *) echo "usage: $0 --venv DIR --collections DIR [--records N]" >&2; exit 2 ;;
  esac
done
[ -x "$VENV/bin/ansible-playbook" ] || { echo "missing $VENV/bin/ansible-playbook (make venv-bench)" >&2; exit 1; }
VENV=$(cd "$VENV" && pwd); COLLECTIONS=$(cd "$COLLECTIONS" && pwd)
export DNS_LAB_DIR
DNS_LAB_DIR=$(mktemp -d /tmp/dvt-dns-bench.XXXXXX)
trap '"$ROOT/scripts/dns-lab.sh" down; rm -rf "$DNS_LAB_DIR"' EXIT
DNS_LAB_BIND=1 "$ROOT/scripts/dns-lab.sh" up >/dev/null 2>&1
set -a; . "$DNS_LAB_DIR/env"; set +a
# Our collection first, then what the ansible package bundles (community.general).
export ANSIBLE_COLLECTIONS_PATH=$COLLECTIONS ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=true
export ANSIBLE_LOCALHOST_WARNING=false ANSIBLE_INVENTORY_UNPARSED_WARNING=false ANSIBLE_NOCOLOR=1
export ANSIBLE_PYTHON_INTERPRETER=$VENV/bin/python ANSIBLE_DEPRECATION_WARNINGS=false
W=$DNS_LAB_DIR; cd "$W"   # no ansible.cfg from the caller's directory

# Playbooks per server: auto-1..N for nsupdate_tsig (default read), go-1..N with read: query,
# axfr-1..N with read: axfr, cg-1..N for
# community.general.nsupdate; all in tdemo.mobile.deevnet.net with the key tenant-tdemo.
"$VENV/bin/python" - "$N" "$W" "$DNS_LAB_PDNS_PORT" "$DNS_LAB_BIND_PORT" <<'PY'
import sys, json
n, w, ports = int(sys.argv[1]), sys.argv[2], {"pdns": int(sys.argv[3]), "bind": int(sys.argv[4])}
def recs(prefix):
    return [{"record": f"{prefix}-{i}", "values": f"10.20.{129 + i // 250}.{i % 250 + 1}", "ttl": 300} for i in range(1, n + 1)]
def play(name, tasks):
    return [{"name": name, "hosts": "localhost", "gather_facts": False, "tasks": tasks}]
for srv, port in ports.items():
    conn = {"server": "127.0.0.1", "port": port, "zone": "tdemo.mobile.deevnet.net",
            "key_name": "tenant-tdemo", "key_secret": "{{ lookup('env', 'DNS_LAB_KEY_TENANT_TDEMO') }}",
            "key_algorithm": "hmac-sha256"}
    au = dict(conn, records=recs("auto"))
    go = dict(conn, records=recs("go"), read="query")
    ax = dict(conn, records=recs("axfr"), read="axfr")
    cg = [{"name": "community.general.nsupdate loop", "community.general.nsupdate": dict(conn, record="{{ item.record }}", type="A",
           value="{{ item['values'] }}", ttl="{{ item.ttl }}", protocol="tcp"), "loop": recs("cg")}]
    for fn, p in (("auto", play("nsupdate_tsig", [{"name": "one task", "deevnet.tenant.nsupdate_tsig": au}])),
                  ("go", play("nsupdate_tsig read=query", [{"name": "one task", "deevnet.tenant.nsupdate_tsig": go}])),
                  ("axfr", play("nsupdate_tsig axfr", [{"name": "one task", "deevnet.tenant.nsupdate_tsig": ax}])),
                  ("cg", play("community.general.nsupdate", cg))):
        json.dump(p, open(f"{w}/{srv}-{fn}.yml", "w"), indent=1)
PY

# stat SERVER -> "messages updates" the server has received so far
stat(){
  if [ "$1" = pdns ]; then
    curl -s -H "X-API-Key: $DNS_LAB_API_KEY" "$DNS_LAB_API_URL/statistics" | "$VENV/bin/python" -c '
import json, sys
s = {i["name"]: int(i["value"]) for i in json.load(sys.stdin) if i.get("type") == "StatisticItem"}
print(s["udp4-queries"] + s["udp6-queries"] + s["tcp4-queries"] + s["tcp6-queries"], s["dnsupdate-queries"])'
  else
    curl -s "$DNS_LAB_BIND_STATS_URL/json/v1/server" | "$VENV/bin/python" -c '
import json, sys
d = json.load(sys.stdin); ns = d.get("nsstats", {})
print(ns.get("Requestv4", 0) + ns.get("Requestv6", 0), d.get("opcodes", {}).get("UPDATE", 0))'
  fi; }
secs(){ "$VENV/bin/python" -c "print('%.2f' % (($2 - $1) / 1e9))"; }
row(){ # server playbook run label
  local bq bu aq au t0 t1 rc=0 res
  read -r bq bu <<<"$(stat "$1")"; t0=$(date +%s%N)
  "$VENV/bin/ansible-playbook" -i localhost, -c local "$W/$1-$2.yml" >"$W/$1-$2.$3.log" 2>&1 || rc=$?
  t1=$(date +%s%N); read -r aq au <<<"$(stat "$1")"
  res=$(grep -oE 'changed=[0-9]+ +unreachable=[0-9]+ +failed=[0-9]+' "$W/$1-$2.$3.log" | tail -1 | sed 's/ *unreachable=[0-9]* */ /')
  if [ $rc != 0 ]; then
    res="$res FAILED: $(grep -oE '"msg": "[^"]*"' "$W/$1-$2.$3.log" | sort | uniq -c | sort -rn | head -1 | sed 's/^ *//')"
  fi
  # One zone: messages per zone = messages.
  printf '%-6s %-42s %8s s %9d %8d %9d   %s\n' "$1" "$4 ($3)" "$(secs "$t0" "$t1")" $((aq-bq)) $((au-bu)) $((aq-bq)) "$res"
}
echo "bench-dns: $N A records in tdemo.mobile.deevnet.net; PowerDNS 4.7 and BIND 9.18 on 127.0.0.1; $("$VENV/bin/ansible" --version 2>/dev/null | sed -n 1p), community.general $("$VENV/bin/ansible-galaxy" collection list community.general 2>/dev/null | awk '$1=="community.general"{print $2; exit}')"
printf '%-6s %-42s %10s %9s %8s %9s   %s\n' server case wall messages updates msgs/zone result
for srv in pdns bind; do
  row $srv auto first  "nsupdate_tsig, 1 task, read=auto (default)"
  row $srv auto second "nsupdate_tsig, 1 task, read=auto (default)"
  row $srv go   first  "nsupdate_tsig, 1 task, read=query"
  row $srv go   second "nsupdate_tsig, 1 task, read=query"
  row $srv axfr first  "nsupdate_tsig, 1 task, read=axfr"
  row $srv axfr second "nsupdate_tsig, 1 task, read=axfr"
  row $srv cg   first  "community.general.nsupdate, $N tasks"
  row $srv cg   second "community.general.nsupdate, $N tasks"
done
