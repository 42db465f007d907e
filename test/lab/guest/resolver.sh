#!/bin/sh
# resolver.sh up PDNS_PORT | reload (inside the lab guest): the resolver host (namespace resolver,
# 10.20.99.1). Unbound answers the tenants on 10.20.99.1:53 with the stub zones onboarding wrote
# (lab.sh copies LAB_DIR/unbound.d, the substrate_unbound_conf_dir, to conf.d and runs reload).
# The authoritative server is the controller's PowerDNS on its loopback: the stub files name it
# 127.0.0.1@PDNS_PORT (substrate_pdns as the lab inventory gives it), so inside the resolver host a
# relay listens on 127.0.0.1:PDNS_PORT and carries each TCP connection to /run/lab/pdns.sock, the
# controller's `ssh -R` forward to 127.0.0.1:PDNS_PORT on this machine (TCP only, hence
# tcp-upstream: yes; nothing in the guest reaches the machine otherwise).
set -eu
D=/var/lib/lab/resolver
start() { ip netns exec resolver unbound -c "$D/unbound.conf"; }
stop() { kill "$(cat "$D/unbound.pid" 2>/dev/null)" 2>/dev/null || true
  i=0; while [ $i -lt 50 ] && kill -0 "$(cat "$D/unbound.pid" 2>/dev/null)" 2>/dev/null; do sleep 0.1; i=$((i+1)); done
  rm -f "$D/unbound.pid"; }
case $1 in
  up)
    port=$2
    # also again on a lab whose controller side restarted (lab.sh wipe): the old Unbound and relay go
    stop; kill "$(cat "$D/relay.pid" 2>/dev/null)" 2>/dev/null || true
    mkdir -p "$D/conf.d"
    cat > "$D/unbound.conf" <<CONF
server:
    interface: 10.20.99.1
    port: 53
    access-control: 10.20.0.0/16 allow
    username: ""
    chroot: ""
    directory: "$D"
    pidfile: "$D/unbound.pid"
    logfile: "$D/unbound.log"
    use-syslog: no
    do-ip6: no
    tcp-upstream: yes
    do-not-query-localhost: no
    verbosity: 1
include: "$D/conf.d/*.conf"
CONF
    ip netns exec resolver ip link set lo up
    ip netns exec resolver setsid python3 -c '
import socket, sys, threading
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    finally:
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", int(sys.argv[1]))); l.listen(64)
while True:
    c, _ = l.accept()
    u = socket.socket(socket.AF_UNIX)
    try:
        u.connect("/run/lab/pdns.sock")
    except OSError:
        c.close(); continue
    threading.Thread(target=pipe, args=(c, u), daemon=True).start()
    threading.Thread(target=pipe, args=(u, c), daemon=True).start()
' "$port" > "$D/relay.log" 2>&1 < /dev/null &
    echo $! > "$D/relay.pid"
    start;;
  reload)
    # conf.d arrives on stdin as a tar of the stub files (the directory's whole content)
    rm -rf "$D/conf.d.new"; mkdir -p "$D/conf.d.new"; tar -C "$D/conf.d.new" -xf -
    rm -rf "$D/conf.d"; mv "$D/conf.d.new" "$D/conf.d"
    stop; start;;
esac
