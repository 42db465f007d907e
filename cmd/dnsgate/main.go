// Command dnsgate is the RFC 2136 gateway the substrate runs in front of PowerDNS
// (docs/adr/0017-dns-quota.md): each tenant's UPDATEs are held to its contract and quota before
// they reach the server.
package main

import (
	"os"

	"github.com/deevnet/tenant/internal/dnsgate"
)

func main() { os.Exit(dnsgate.Main(os.Args[1:], os.Stderr)) }
