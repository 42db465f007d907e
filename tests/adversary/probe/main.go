// Command probe is the API and DNS half of `make test-adversary` (tests/adversary/run.sh): with
// nothing but a tenant's attachment file, as deevnet.tenant.onboard writes it, it tries what the
// tenant's PVE token and TSIG key allow and everything they must not, and checks each outcome
// exactly: the HTTP status and PVE's message, or the DNS rcode. The probes are data (api.go,
// dns.go); every identifier in them is derived from the attachment's site and index and from the
// registry's other tenant by internal/plan, or read back from PVE with the tenant's own token.
//
//	probe -attachment DIR/attachments/tdemo.yml -other tother -other-index 2 -bridge vmbr0 [-tenant-ns 127.0.0.9]
//	probe -attachment DIR/attachments/tdemo.yml -phase apiflood [-conns 24]   (until SIGTERM)
//
// Output: one line per probe, "ok   <name>: <outcome>" or "FAIL <name>: got ..., want ...",
// then a summary; exit status 1 when any probe failed. No secret is printed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	att := flag.String("attachment", "", "the tenant's attachment file (onboard.yml wrote it)")
	other := flag.String("other", "", "another onboarded tenant's name (the registry's)")
	otherIndex := flag.Int("other-index", 0, "that tenant's index")
	bridge := flag.String("bridge", "", "the site's bridge (substrate_site.bridge)")
	phase := flag.String("phase", "all", "all: every probe; swept: those after the substrate's sweep (exhaust.go); apiflood: the API flood (flood.go)")
	conns := flag.Int("conns", 24, "apiflood: callers at once")
	tenantNS := flag.String("tenant-ns", "", "the address of a delegation the substrate put in the tenant's zone (quota.go): the resolver must send it nothing")
	flag.Parse()
	if *phase == "apiflood" && *att != "" {
		// until SIGTERM (run.sh stops it when the other tenant's converge ends) or 10 minutes
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		a, err := readAttachment(*att)
		if err == nil {
			err = flood(ctx, a, *conns)
		}
		cancel()
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "probe:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	if *att == "" || *other == "" || *otherIndex == 0 || *bridge == "" || (*phase != "all" && *phase != "swept") {
		fmt.Fprintln(os.Stderr, "usage: probe -attachment FILE -other NAME -other-index N -bridge BRIDGE [-phase all|swept]")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	os.Exit(run(ctx, *att, *other, *otherIndex, *bridge, *phase, *tenantNS))
}

func run(ctx context.Context, attFile, other string, otherIndex int, bridge, phase, tenantNS string) int {
	a, err := readAttachment(attFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		return 2
	}
	env, err := newEnv(ctx, a, other, otherIndex, bridge)
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		return 2
	}
	failed, total := 0, 0
	report := func(name string, err error, outcome string) {
		total++
		if err != nil {
			failed++
			fmt.Printf("FAIL %s: %v\n", name, env.mask(err.Error()))
			return
		}
		fmt.Printf("ok   %s: %s\n", name, env.mask(outcome))
	}
	if phase == "swept" {
		for _, p := range sweptProbes(env) {
			out, err := env.runAPI(ctx, p)
			report("swept "+p.name, err, out)
		}
	} else {
		for _, p := range apiProbes(env) {
			out, err := env.runAPI(ctx, p)
			report("api "+p.name, err, out)
		}
		for _, p := range exhaustionProbes(env) {
			out, err := env.runAPI(ctx, p)
			report("exhaust "+p.name, err, out)
		}
		for _, p := range dnsProbes(env) {
			out, err := env.runDNS(ctx, p)
			report("dns "+p.name, err, out)
		}
		for _, p := range quotaProbes(env, tenantNS) {
			out, err := p.run(ctx)
			report("dns quota "+p.name, err, out)
		}
	}
	fmt.Printf("probe: %d of %d probes as PVE 9 and the DNS servers answer them\n", total-failed, total)
	if failed > 0 {
		fmt.Printf("probe: %d FAILED\n", failed)
		return 1
	}
	return 0
}
