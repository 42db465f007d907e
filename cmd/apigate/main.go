// Command apigate is the API gate the substrate runs in front of PVE's API
// (docs/adr/0018-api-gate.md): each tenant's calls are held to its rate, burst and calls in
// flight before they reach pveproxy.
package main

import (
	"os"

	"github.com/deevnet/tenant/internal/apigate"
)

func main() { os.Exit(apigate.Main(os.Args[1:], os.Stdout, os.Stderr)) }
