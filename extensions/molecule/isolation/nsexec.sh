#!/bin/sh
# become_exe of the lab hypervisor host: `nsexec.sh NETNS <sudo flags> -u USER CMD...` runs CMD
# inside the private namespace NETNS (created by netlab.sh), so modules that change routes
# (transit_route) act on the lab's hypervisor and never on this machine's own namespace.
ns=$1; shift
case "$ns" in dvt-*) ;; *) echo "nsexec: refusing namespace '$ns' (lab namespaces start with dvt-)" >&2; exit 1 ;; esac
while [ $# -gt 0 ]; do
  case "$1" in -u) shift 2; break ;; *) shift ;; esac
done
exec ip netns exec "$ns" "$@"
