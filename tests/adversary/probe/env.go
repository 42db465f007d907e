package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/deevnet/tenant/internal/envelope"
	"github.com/deevnet/tenant/internal/plan"
	"github.com/deevnet/tenant/internal/pve"
	"github.com/deevnet/tenant/internal/vm"
)

// attachment is the part of ADR-0006's attachment file the probes read.
type attachment struct {
	Name  string         `yaml:"name"`
	Index int            `yaml:"index"`
	Site  map[string]any `yaml:"site"`
	PVE   struct {
		Host     string `yaml:"api_host"`
		Port     int    `yaml:"api_port"`
		User     string `yaml:"api_user"`
		TokenID  string `yaml:"api_token_id"`
		Secret   string `yaml:"api_token_secret"`
		Validate bool   `yaml:"validate_certs"`
		CAPath   string `yaml:"ca_path"`
	} `yaml:"pve"`
	DNS struct {
		Server    string   `yaml:"server"`
		Port      int      `yaml:"port"`
		KeyName   string   `yaml:"key_name"`
		Algorithm string   `yaml:"key_algorithm"`
		Secret    string   `yaml:"key_secret"`
		Zones     []string `yaml:"zones"`
	} `yaml:"dns"`
	Resolver struct {
		Server string `yaml:"server"`
		Port   int    `yaml:"port"`
	} `yaml:"resolver"`
	// the substrate's envelope (ADR-0014): what the exhaustion probes expect the guard to hold,
	// and the DNS quota the gateway holds the key to (ADR-0017)
	Envelope struct {
		VMs    int `yaml:"vms"`
		Cores  int `yaml:"cores"`
		Memory int `yaml:"memory"`
		Disk   int `yaml:"disk"`
	} `yaml:"envelope"`
	// beside the envelope (docs/tenant-contract.md): the DNS quota among them
	UsageLimits struct {
		DNSRecords int `yaml:"dns_records"`
		DNSUpdates int `yaml:"dns_updates"`
	} `yaml:"usage_limits"`
}

func readAttachment(path string) (attachment, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return attachment{}, fmt.Errorf("reading the attachment: %w", err)
	}
	var doc struct {
		A attachment `yaml:"tenant_attachment"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return attachment{}, fmt.Errorf("%s: %w", path, err)
	}
	if doc.A.Name == "" || doc.A.PVE.Secret == "" || doc.A.DNS.Secret == "" {
		return attachment{}, fmt.Errorf("%s: no tenant_attachment with a token and a TSIG key", path)
	}
	return doc.A, nil
}

// env is what the probes know: the attachment, both tenants' plans, and what the tenant's own
// token reads back (its VM's node and MAC, the template, the nodes).
type env struct {
	att        attachment
	site       plan.Site
	own, other plan.Tenant
	api        *pve.Client
	node       string // where the tenant's first VM lives
	mac        string // its net0 MAC
	template   int    // the template the token may clone
	bridge     string // the site's VLAN-aware bridge (substrate_site.bridge, from the inventory)
	// what the tenant's pool runs before the probes (VMs, and vCPUs as the guard counts them)
	running, runningCores int
}

func newEnv(ctx context.Context, a attachment, other string, otherIndex int, bridge string) (*env, error) {
	site, err := plan.SiteFromMap(a.Site)
	if err != nil {
		return nil, fmt.Errorf("attachment site: %w", err)
	}
	own, err := site.Tenant(a.Name, a.Index, 2, 1)
	if err != nil {
		return nil, err
	}
	oth, err := site.Tenant(other, otherIndex, 2, 1)
	if err != nil {
		return nil, err
	}
	api, err := pve.New(pve.Config{Host: a.PVE.Host, Port: a.PVE.Port, User: a.PVE.User, TokenID: a.PVE.TokenID,
		TokenSecret: a.PVE.Secret, ValidateCerts: a.PVE.Validate, CAPath: a.PVE.CAPath, Retries: 1,
		PollInterval: 20 * time.Millisecond})
	if err != nil {
		return nil, err
	}
	e := &env{att: a, site: site, own: own, other: oth, api: api, bridge: bridge}
	inv, err := vm.ReadInventory(ctx, api)
	if err != nil {
		return nil, fmt.Errorf("with the tenant's token: %w", err)
	}
	first, ok := inv.VMs[own.VMs[0].VMID]
	if !ok {
		return nil, fmt.Errorf("the tenant's VM %d is not visible to its token: converge the tenant first", own.VMs[0].VMID)
	}
	e.node = first.Node
	for id, o := range inv.VMs {
		if o.Template && (e.template == 0 || id < e.template) {
			e.template = id
		}
	}
	if e.template == 0 {
		return nil, fmt.Errorf("the tenant's token sees no template")
	}
	cfg, _, err := vm.ReadConfig(ctx, api, e.node, first.VMID)
	if err != nil {
		return nil, err
	}
	e.mac = vm.ParseNIC(cfg["net0"]).MAC
	for _, o := range inv.VMs {
		if o.Pool != own.Pool || o.Status != "running" {
			continue
		}
		c, _, err := vm.ReadConfig(ctx, api, o.Node, o.VMID)
		if err != nil {
			return nil, err
		}
		m := make(map[string]any, len(c))
		for k, v := range c {
			m[k] = v
		}
		g, err := envelope.GuestFromConfig(m, true)
		if err != nil {
			return nil, fmt.Errorf("VM %d: %w", o.VMID, err)
		}
		e.running, e.runningCores = e.running+1, e.runningCores+g.Cores
	}
	if a.Envelope.VMs == 0 {
		return nil, fmt.Errorf("the attachment has no envelope: onboard the tenant again")
	}
	return e, nil
}

// mask keeps the attachment's secrets out of anything printed.
func (e *env) mask(s string) string {
	for _, secret := range []string{e.att.PVE.Secret, e.att.DNS.Secret} {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "********")
		}
	}
	return s
}
