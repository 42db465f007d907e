#!/usr/bin/env bash
# dns-lab.sh up|down|env|status -- a throw-away DNS substrate on 127.0.0.1 for playbooks and molecule:
# PowerDNS (sqlite, RFC 2136 + TSIG, HTTP API), Unbound in front of it, optionally BIND.
#
# Interface (stable; the lifecycle roles and molecule scenarios rely on it):
#   up      stop a previous lab in the same DNS_LAB_DIR, start the servers, create the zones and keys,
#           write $DNS_LAB_DIR/env (mode 0600), print it with the secrets left out. Exit 0 only when
#           every server answers.
#   down    stop the servers this lab started (by the PIDs in $DNS_LAB_DIR/*/pid), keep the files.
#   env     print $DNS_LAB_DIR/env (shell syntax: `eval "$(scripts/dns-lab.sh env)"` or `source`).
#   status  exit 0 when every started server still runs.
# Input (environment, all optional):
#   DNS_LAB_DIR           state directory                         default /tmp/dvt-dns-lab
#   DNS_LAB_PDNS_PORT     PowerDNS DNS port        (0 or unset: a free port)
#   DNS_LAB_API_PORT      PowerDNS HTTP API port   (0 or unset: a free port)
#   DNS_LAB_UNBOUND_PORT  Unbound port             (0 or unset: a free port)
#   DNS_LAB_BIND          1: also start BIND with the same zones and keys   default 0
#   DNS_LAB_BIND_PORT     BIND port                (0 or unset: a free port)
#   DNS_LAB_BIND_STATS_PORT  BIND statistics channel, HTTP (0 or unset: a free port)
#   DNS_LAB_SITE_ZONE     site zone                                default mobile.deevnet.net
#   DNS_LAB_TENANTS       "name:index ..."                         default "tdemo:1 tother:2"
#                         (set but empty: no tenant zones, e.g. when onboarding creates them)
# For each tenant NAME with index I it creates NAME.<site zone> and (128+I).20.10.in-addr.arpa, and the
# key tenant-NAME (hmac-sha256) allowed to update (and transfer) exactly those two zones; the key
# "substrate" may update every zone.
# Output: $DNS_LAB_DIR/env with
#   DNS_LAB_DIR, DNS_LAB_SERVER=127.0.0.1, DNS_LAB_PDNS_PORT, DNS_LAB_API_PORT, DNS_LAB_API_URL,
#   DNS_LAB_API_KEY, DNS_LAB_UNBOUND_PORT, DNS_LAB_BIND_PORT and DNS_LAB_BIND_STATS_URL (empty without
#   BIND; counters at $DNS_LAB_BIND_STATS_URL/json/v1/server), DNS_LAB_SITE_ZONE,
#   DNS_LAB_KEY_ALGORITHM=hmac-sha256, DNS_LAB_KEY_<NAME>=<base64 secret> for every key
#   (NAME upper-cased, '-' -> '_': DNS_LAB_KEY_TENANT_TDEMO, DNS_LAB_KEY_SUBSTRATE),
#   and $DNS_LAB_DIR/keys with one "algorithm:name:secret" line per key.
# Needs: pdns-server pdns-backend-sqlite3 sqlite3 unbound bind9-dnsutils (dig) [bind9], python3.
# Safety: everything listens on 127.0.0.1 only; servers run in the foreground as children of this
# script's session (setsid), never as system services; Unbound forwards "." to the local PowerDNS, so
# nothing is ever asked off this machine; PowerDNS has no security polling.
set -uo pipefail
DIR=${DNS_LAB_DIR:-/tmp/dvt-dns-lab}
SITE=${DNS_LAB_SITE_ZONE:-mobile.deevnet.net}
TENANTS=${DNS_LAB_TENANTS-tdemo:1 tother:2}
API_KEY=dvt-lab-api-key
ALG=hmac-sha256
PATH=$PATH:/usr/sbin:/sbin
PY=$(command -v /usr/bin/python3 || command -v python3)   # not a pyenv shim: those take a second to start

die(){ echo "dns-lab: $*" >&2; exit 1; }
fail(){ echo "dns-lab: $*" >&2; return 1; }   # inside the *_up functions: up() stops what started
free_port(){ "$PY" -S -c 'import socket
for _ in range(50):
    t=socket.socket(); t.bind(("127.0.0.1",0)); p=t.getsockname()[1]
    u=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)
    try:
        u.bind(("127.0.0.1",p)); u.close(); t.close(); print(p); break
    except OSError: t.close()'; }
port_or_free(){ if [ -n "${1:-}" ] && [ "$1" != 0 ]; then echo "$1"; else free_port; fi; }
alive(){ local st; st=$(ps -o stat= -p "$1" 2>/dev/null); [ -n "$st" ] && [ "${st:0:1}" != Z ]; }
wait_dns(){ # port name [dig flag]: until the server answers NOERROR for name's SOA (10 s)
  for _ in $(seq 1 500); do
    dig @127.0.0.1 -p "$1" +time=1 +tries=1 ${3:-+norecurse} "$2" SOA 2>/dev/null | grep -q 'status: NOERROR' && return 0
    sleep 0.02; done; return 1; }
wait_up(){ # port: until the server answers at all (dig exits 0 on any reply, REFUSED included)
  for _ in $(seq 1 500); do
    dig @127.0.0.1 -p "$1" +time=1 +tries=1 . SOA >/dev/null 2>&1 && return 0
    sleep 0.02; done; return 1; }
T0=$(date +%s%N)
say(){ echo "dns-lab: $* (+$(( ($(date +%s%N) - T0) / 1000000 )) ms)" >&2; }
keyvar(){ echo "DNS_LAB_KEY_$(echo "$1" | tr 'a-z-' 'A-Z_')"; }

zones_of(){ # tenant index -> "forward reverse"
  echo "$1.$SITE $((128 + $2)).20.10.in-addr.arpa"; }

pdns_up(){
  local d=$DIR/pdns; mkdir -p "$d/run"; rm -f "$d/pdns.sqlite3"
  sqlite3 "$d/pdns.sqlite3" < /usr/share/pdns-backend-sqlite3/schema/schema.sqlite3.sql || { fail "sqlite schema"; return 1; }
  cat > "$d/pdns.conf" <<CONF
launch=gsqlite3
gsqlite3-database=$d/pdns.sqlite3
gsqlite3-dnssec=yes
local-address=127.0.0.1:$PDNS_PORT
daemon=no
guardian=no
disable-syslog=yes
loglevel=4
socket-dir=$d/run
security-poll-suffix=
zone-cache-refresh-interval=0
cache-ttl=0
negquery-cache-ttl=0
query-cache-ttl=0
default-soa-content=ns1.$SITE. hostmaster.@ 0 10800 3600 604800 3600
dnsupdate=yes
allow-dnsupdate-from=127.0.0.0/8
allow-axfr-ips=127.0.0.0/8
api=yes
api-key=$API_KEY
webserver=yes
webserver-address=127.0.0.1
webserver-port=$API_PORT
webserver-allow-from=127.0.0.0/8
CONF
  setsid pdns_server --config-dir="$d" > "$d/pdns.log" 2>&1 < /dev/null & echo $! > "$d/pid"
  say "pdns_server started, pid $(cat "$d/pid")"
  local P="pdnsutil --config-dir=$d" all="" t i f r
  $P generate-tsig-key substrate $ALG >/dev/null || { fail "pdnsutil generate-tsig-key"; return 1; }
  for t in $TENANTS; do
    i=${t#*:}; t=${t%%:*}; read -r f r <<<"$(zones_of "$t" "$i")"
    $P generate-tsig-key "tenant-$t" $ALG >/dev/null
    for z in $f $r; do
      $P create-zone "$z" "ns1.$SITE" >/dev/null 2>&1 || { fail "create-zone $z"; return 1; }
      $P set-meta "$z" TSIG-ALLOW-DNSUPDATE "tenant-$t" substrate >/dev/null
      $P set-meta "$z" TSIG-ALLOW-AXFR "tenant-$t" substrate >/dev/null
      all="$all $z"
    done
  done
  say "zones and keys created"
  $P list-tsig-keys | awk '{sub(/\.$/,"",$1); sub(/\.$/,"",$2); print $2":"$1":"$3}' > "$DIR/keys"
  chmod 600 "$DIR/keys"
  wait_up "$PDNS_PORT" || { fail "PowerDNS does not answer; log: $d/pdns.log"; return 1; }
  for z in $all; do wait_dns "$PDNS_PORT" "$z" || { fail "PowerDNS does not serve $z; log: $d/pdns.log"; return 1; }; done
  ZONES=$all
  say "PowerDNS serves$all on 127.0.0.1:$PDNS_PORT"
}

unbound_up(){
  local d=$DIR/unbound z; mkdir -p "$d"
  { cat <<CONF
server:
    interface: 127.0.0.1
    port: $UNBOUND_PORT
    do-ip6: no
    do-daemonize: no
    chroot: ""
    username: ""
    directory: "$d"
    pidfile: ""
    use-syslog: no
    logfile: ""
    access-control: 127.0.0.0/8 allow
    do-not-query-localhost: no
    module-config: "iterator"
    cache-max-ttl: 0
    cache-max-negative-ttl: 0
    local-zone: "10.in-addr.arpa." nodefault
    domain-insecure: "$SITE"
    domain-insecure: "20.10.in-addr.arpa"
stub-zone:
    name: "$SITE"
    stub-addr: 127.0.0.1@$PDNS_PORT
stub-zone:
    name: "20.10.in-addr.arpa"
    stub-addr: 127.0.0.1@$PDNS_PORT
forward-zone:
    name: "."
    forward-addr: 127.0.0.1@$PDNS_PORT
CONF
  } > "$d/unbound.conf"
  setsid unbound -d -c "$d/unbound.conf" > "$d/unbound.log" 2>&1 < /dev/null & echo $! > "$d/pid"
  wait_up "$UNBOUND_PORT" || { fail "Unbound does not answer; log: $d/unbound.log"; return 1; }
  for z in $ZONES; do wait_dns "$UNBOUND_PORT" "$z" +recurse || fail "Unbound does not resolve $z; log: $d/unbound.log" || return 1; done
  say "Unbound resolves on 127.0.0.1:$UNBOUND_PORT, pid $(cat "$d/pid")"
}

bind_up(){
  local d=$DIR/bind z t i f r; mkdir -p "$d/data"
  : > "$d/named.conf"
  cat >> "$d/named.conf" <<CONF
options {
    directory "$d/data";
    pid-file "$d/named.pid";
    session-keyfile "$d/session.key";
    listen-on port $BIND_PORT { 127.0.0.1; };
    listen-on-v6 { none; };
    recursion no;
    notify no;
    dnssec-validation no;
    allow-query { 127.0.0.0/8; };
};
controls { };
statistics-channels { inet 127.0.0.1 port $BIND_STATS_PORT allow { 127.0.0.1; }; };
CONF
  # the same keys and secrets as PowerDNS, so one env file serves both
  awk -F: '{printf "key \"%s\" { algorithm %s; secret \"%s\"; };\n", $2, $1, $3}' "$DIR/keys" >> "$d/named.conf"
  for t in $TENANTS; do
    i=${t#*:}; t=${t%%:*}; read -r f r <<<"$(zones_of "$t" "$i")"
    for z in $f $r; do
      printf '$TTL 300\n@ IN SOA ns1.%s. hostmaster.%s. 1 3600 600 86400 60\n@ IN NS ns1.%s.\n' "$SITE" "$SITE" "$SITE" > "$d/data/$z.zone"
      echo "zone \"$z\" { type primary; file \"$z.zone\"; allow-transfer { key tenant-$t; key substrate; }; update-policy { grant tenant-$t zonesub ANY; grant substrate zonesub ANY; }; };" >> "$d/named.conf"
    done
  done
  named-checkconf -z "$d/named.conf" >/dev/null || { fail "named-checkconf failed"; return 1; }
  setsid named -4 -g -c "$d/named.conf" > "$d/named.log" 2>&1 < /dev/null & echo $! > "$d/pid"
  wait_up "$BIND_PORT" || { fail "BIND does not answer; log: $d/named.log"; return 1; }
  for z in $ZONES; do wait_dns "$BIND_PORT" "$z" || { fail "BIND does not serve $z; log: $d/named.log"; return 1; }; done
  say "BIND serves on 127.0.0.1:$BIND_PORT, pid $(cat "$d/pid")"
}

write_env(){
  local e=$DIR/env
  { echo "DNS_LAB_DIR=$DIR"
    echo "DNS_LAB_SERVER=127.0.0.1"
    echo "DNS_LAB_PDNS_PORT=$PDNS_PORT"
    echo "DNS_LAB_API_PORT=$API_PORT"
    echo "DNS_LAB_API_URL=http://127.0.0.1:$API_PORT/api/v1/servers/localhost"
    echo "DNS_LAB_API_KEY=$API_KEY"
    echo "DNS_LAB_UNBOUND_PORT=$UNBOUND_PORT"
    echo "DNS_LAB_BIND_PORT=${BIND_PORT:-}"
    echo "DNS_LAB_BIND_STATS_URL=${BIND_PORT:+http://127.0.0.1:$BIND_STATS_PORT}"
    echo "DNS_LAB_SITE_ZONE=$SITE"
    echo "DNS_LAB_KEY_ALGORITHM=$ALG"
    while IFS=: read -r alg name secret; do echo "$(keyvar "$name")=$secret"; done < "$DIR/keys"
  } > "$e.tmp"
  chmod 600 "$e.tmp"; mv "$e.tmp" "$e"
}

down(){
  local s f p pids=""
  for s in unbound bind pdns; do
    f=$DIR/$s/pid; [ -f "$f" ] || continue; p=$(cat "$f"); rm -f "$f"
    alive "$p" && { kill "$p" 2>/dev/null; pids="$pids $p"; }
  done
  for p in $pids; do
    for _ in $(seq 1 250); do alive "$p" || break; sleep 0.02; done
    alive "$p" && { echo "dns-lab: $p still running, SIGKILL" >&2; kill -9 "$p"; }
  done
  return 0
}

up(){
  for b in pdns_server pdnsutil sqlite3 unbound dig python3; do command -v "$b" >/dev/null || die "missing $b (apt-get install pdns-server pdns-backend-sqlite3 sqlite3 unbound bind9-dnsutils)"; done
  [ "${DNS_LAB_BIND:-0}" = 1 ] && { command -v named >/dev/null || die "missing named (apt-get install bind9)"; }
  down; mkdir -p "$DIR"; rm -f "$DIR/env"
  PDNS_PORT=$(port_or_free "${DNS_LAB_PDNS_PORT:-}")
  API_PORT=$(port_or_free "${DNS_LAB_API_PORT:-}")
  UNBOUND_PORT=$(port_or_free "${DNS_LAB_UNBOUND_PORT:-}")
  BIND_PORT=
  BIND_STATS_PORT=
  if [ "${DNS_LAB_BIND:-0}" = 1 ]; then
    BIND_PORT=$(port_or_free "${DNS_LAB_BIND_PORT:-}"); BIND_STATS_PORT=$(port_or_free "${DNS_LAB_BIND_STATS_PORT:-}")
  fi
  pdns_up || { down; exit 1; }
  unbound_up || { down; exit 1; }
  if [ -n "$BIND_PORT" ]; then bind_up || { down; exit 1; }; fi
  write_env
  # Secrets stay in the 0600 env file; what `up` prints may end up in a CI log.
  sed -E '/^DNS_LAB_KEY_ALGORITHM=/!s/^((DNS_LAB_KEY_[A-Z0-9_]+|DNS_LAB_API_KEY)=).*/\1<secret: see '"${DIR//\//\\/}"'\/env>/' "$DIR/env"
}

status(){
  local s f rc=0
  for s in pdns unbound bind; do
    f=$DIR/$s/pid; [ -f "$f" ] || continue
    if alive "$(cat "$f")"; then echo "$s running (pid $(cat "$f"))"; else echo "$s NOT running"; rc=1; fi
  done
  [ -f "$DIR/env" ] || { echo "no lab in $DIR"; rc=1; }
  return $rc
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  env) [ -f "$DIR/env" ] || die "no lab in $DIR (run: $0 up)"; cat "$DIR/env" ;;
  status) status ;;
  *) echo "usage: $0 up|down|env|status   (interface documented at the top of this file)" >&2; exit 2 ;;
esac
