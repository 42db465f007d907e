// Command dnslab is the DNS lab for playbooks, molecule, the demo and the hardware lab (run it as
// scripts/dns-lab.sh, which documents the interface): the servers of internal/dnslab, which the Go
// tests start too, detached on loopback.
package main

import (
	"os"

	"github.com/deevnet/tenant/internal/dnslab"
)

func main() { os.Exit(dnslab.Main(os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)) }
