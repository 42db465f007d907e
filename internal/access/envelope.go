package access

// The envelope at onboarding (ADR-0014): a new envelope below what the tenant's pool already holds
// is refused before any write. A converge never stops what runs (the substrate refuses growth and
// reports; it does not kill a tenant), so such an envelope could only be reported over from its
// first day; the operator lowers the tenant's use first, or keeps the larger envelope.

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/deevnet/tenant/internal/envelope"
)

// poolUse adds up what the pool's guests hold, as verify's envelope check does
// (envelope.GuestFromConfig for each VM's config). A pool that does not exist holds nothing.
func (a Access) poolUse(ctx context.Context, pool string) (envelope.Use, error) {
	var p struct {
		Members []struct {
			Type   string `json:"type"`
			VMID   int    `json:"vmid"`
			Node   string `json:"node"`
			Status string `json:"status"`
		} `json:"members"`
	}
	if err := a.C.Get(ctx, "/pools/"+url.PathEscape(pool), nil, &p); err != nil {
		if notFound(err) {
			return envelope.Use{}, nil
		}
		return envelope.Use{}, fmt.Errorf("envelope: reading pool %s's guests (GET /pools/%s): %w", pool, pool, err)
	}
	var guests []envelope.Guest
	for _, m := range p.Members {
		if m.Type != "qemu" {
			continue
		}
		var cfg map[string]any
		path := fmt.Sprintf("/nodes/%s/qemu/%d/config", url.PathEscape(m.Node), m.VMID)
		if err := a.C.Get(ctx, path, nil, &cfg); err != nil {
			return envelope.Use{}, fmt.Errorf("envelope: reading VM %d's configuration (GET %s): %w", m.VMID, path, err)
		}
		g, err := envelope.GuestFromConfig(cfg, m.Status == "running")
		if err != nil {
			return envelope.Use{}, fmt.Errorf("envelope: VM %d: %w", m.VMID, err)
		}
		guests = append(guests, g)
	}
	return envelope.UseOf(guests), nil
}

// checkEnvelope refuses env when the tenant's pool already goes over it.
func (a Access) checkEnvelope(ctx context.Context, tenant, pool string, env envelope.Envelope) error {
	if err := env.Validate("envelope"); err != nil {
		return err
	}
	use, err := a.poolUse(ctx, pool)
	if err != nil {
		return err
	}
	if over := env.Over(use); len(over) > 0 {
		return fmt.Errorf("envelope: tenant %s's pool %s already holds %s: %s; an envelope below what the tenant holds is refused before any change, and a converge stops nothing that runs: stop or shrink its VMs first, or keep a larger envelope (substrate_tenant_envelopes[%s])",
			tenant, pool, use, strings.Join(over, "; "), tenant)
	}
	return nil
}
