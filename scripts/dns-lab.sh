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
#                         (and the site zone, updated and transferred by the key "substrate" only)
#   DNS_LAB_BIND_PORT     BIND port                (0 or unset: a free port)
#   DNS_LAB_BIND_STATS_PORT  BIND statistics channel, HTTP (0 or unset: a free port)
#   DNS_LAB_GATEWAY       1: also start the DNS gateway (dnsgate, docs/adr/0017-dns-quota.md) in front of
#                         PowerDNS, with its key "dnsgate" and an empty tenant directory   default 0
#   DNS_LAB_GATE_PORT     its port                 (0 or unset: a free port)
#   DNS_LAB_UNBOUND_INCLUDE  a directory whose *.conf Unbound reads too (made when missing; SIGHUP to
#                         $DNS_LAB_DIR/unbound/pid reloads), e.g. the snippets onboarding writes
#   DNS_LAB_SITE_ZONE     site zone                                default mobile.deevnet.net
#   DNS_LAB_TENANTS       "name:index ..."                         default "tdemo:1 tother:2"
#                         (set but empty: no tenant zones, e.g. when onboarding creates them)
# For each tenant NAME with index I it creates NAME.<site zone> and (128+I).20.10.in-addr.arpa, and the
# key tenant-NAME (hmac-sha256) allowed to update (and transfer) exactly those two zones; the key
# "substrate" may update every zone.
# Output: $DNS_LAB_DIR/env with
#   DNS_LAB_DIR, DNS_LAB_SERVER=127.0.0.1, DNS_LAB_PDNS_PORT, DNS_LAB_API_PORT, DNS_LAB_API_URL,
#   DNS_LAB_API_KEY, DNS_LAB_UNBOUND_PORT, DNS_LAB_BIND_PORT and DNS_LAB_BIND_STATS_URL (empty without
#   BIND; counters at $DNS_LAB_BIND_STATS_URL/json/v1/server), DNS_LAB_SITE_ZONE, DNS_LAB_GATE_PORT and
#   DNS_LAB_GATE_DIR (the gateway's tenant directory; both empty without it),
#   DNS_LAB_KEY_ALGORITHM=hmac-sha256, DNS_LAB_KEY_<NAME>=<base64 secret> for every key
#   (NAME upper-cased, '-' -> '_': DNS_LAB_KEY_TENANT_TDEMO, DNS_LAB_KEY_SUBSTRATE),
#   and $DNS_LAB_DIR/keys with one "algorithm:name:secret" line per key.
# Needs: pdns-server pdns-backend-sqlite3 sqlite3 unbound [bind9], go (to build bin/dnslab).
# The lab is internal/dnslab, the code the Go tests start their servers with; this script builds its
# command cmd/dnslab into bin/dnslab (again when a source is newer) and runs it.
# Safety: everything listens on 127.0.0.1 only; servers run in the foreground as children of this
# command's session (setsid), never as system services; Unbound forwards "." to the local PowerDNS, so
# nothing is ever asked off this machine; PowerDNS has no security polling.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${DNS_LAB_BIN:-$ROOT/bin/dnslab}
if [ ! -x "$BIN" ] || [ -n "$(find "$ROOT/internal/dnslab" "$ROOT/internal/dnsgate" "$ROOT/internal/dnsquota" "$ROOT/cmd/dnslab" "$ROOT/go.mod" -newer "$BIN" 2>/dev/null | head -1)" ]; then
  mkdir -p "$(dirname "$BIN")"
  # a private name, then rename: two labs starting at once never run a half-written binary
  (cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$BIN.$$" ./cmd/dnslab) && mv -f "$BIN.$$" "$BIN"
fi
exec "$BIN" "$@"
