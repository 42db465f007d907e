package dnslab

import (
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func TestFreePort(t *testing.T) {
	a, err := FreePort()
	if err != nil || a <= 0 || a > 65535 {
		t.Fatalf("FreePort = %d, %v", a, err)
	}
}

// The lab answers for its zones, and Stop ends exactly the process it started.
func TestLabStartStop(t *testing.T) {
	lab := StartLab(t)
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(ZoneTdemo), dns.TypeSOA)
	r, _, err := (&dns.Client{Net: "tcp", Timeout: 2 * time.Second}).Exchange(m, lab.Addr())
	if err != nil || r.Rcode != dns.RcodeSuccess || !r.Authoritative || len(r.Answer) != 1 {
		t.Fatalf("SOA of %s: %v %v", ZoneTdemo, r, err)
	}
	if len(lab.Keys) != 3 || lab.Keys["tdemo"].Secret == "" {
		t.Fatalf("keys: %v", len(lab.Keys))
	}
	st, err := lab.Stats()
	if err != nil || Messages(st) < 1 {
		t.Fatalf("stats: %v %v", Messages(st), err)
	}
	pid := lab.PID()
	lab.Stop()
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("pid %d still exists after Stop", pid)
	}
}
