package dnslab

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/deevnet/tenant/internal/dnsgate"
)

// Main is cmd/dnslab, the command behind scripts/dns-lab.sh: up|down|env|status on the site lab
// configured by the DNS_LAB_* variables (lookup), as that script documents. It returns the exit
// status: 0 done, 1 failed, 2 usage.
func Main(args []string, lookup func(string) (string, bool), stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "gate" {
		// the site lab's DNS gateway, which `up` starts as this binary (DNS_LAB_GATEWAY=1)
		return dnsgate.Main(args[1:], stderr)
	}
	c, err := SiteConfigFromEnv(lookup)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "dns-lab: %v\n", err)
		return 1
	}
	cmd := ""
	if len(args) == 1 {
		cmd = args[0]
	}
	switch cmd {
	case "up":
		c.Log = stderr
		env, err := SiteUp(c)
		if err != nil {
			_, _ = fmt.Fprintf(stderr, "dns-lab: %v\n", err)
			return 1
		}
		_, _ = fmt.Fprintln(stdout, strings.Join(MaskSecrets(env, c.Dir), "\n"))
	case "down":
		SiteDown(c.Dir, stderr)
	case "env":
		b, err := os.ReadFile(c.Dir + "/env")
		if err != nil {
			_, _ = fmt.Fprintf(stderr, "dns-lab: no lab in %s (run: dns-lab.sh up)\n", c.Dir)
			return 1
		}
		_, _ = stdout.Write(b)
	case "status":
		if err := SiteStatus(c.Dir, stdout); err != nil {
			return 1
		}
	default:
		_, _ = fmt.Fprintln(stderr, "usage: dns-lab.sh up|down|env|status   (interface documented at the top of scripts/dns-lab.sh)")
		return 2
	}
	return 0
}
