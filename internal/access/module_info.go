package access

// The deevnet.tenant.tenant_index_info Ansible module: which tenant holds which index, as PVE's
// own objects say (ReadClaims). It only reads. playbooks/onboard.yml asks it before allocating,
// so a lost or stale registry never hands out an index in use, and playbooks/registry.yml
// rebuilds a lost registry from it.

import (
	"context"
	"fmt"
	"time"

	"github.com/deevnet/tenant/internal/module"
	"github.com/deevnet/tenant/internal/pve"
)

// InfoOptions are tenant_index_info's options: the PVE connection only.
type InfoOptions struct {
	pve.Connection
}

// InfoModule is tenant_index_info: plugins/modules/tenant_index_info.py documents it.
func InfoModule() module.Entry {
	return module.Declare(module.Spec{
		Options:           pve.WithConnectionOptions(map[string]*module.Option{}),
		SupportsCheckMode: true,
	}, info)
}

// info is tenant_index_info's handler. It only reads, so check mode runs it unchanged.
func info(m *module.Module, o *InfoOptions) (module.Result, error) {
	c, err := o.Client(m)
	if err != nil {
		return module.Result{}, fmt.Errorf("PVE client: %w", err)
	}
	ctx, cancel := context.WithTimeout(m.Context(), time.Duration(o.Timeout)*time.Second*4)
	defer cancel()
	claims, err := ReadClaims(ctx, c)
	if err != nil {
		return module.Result{}, err
	}
	holders, err := Holders(claims)
	if err != nil {
		return module.Result{}, err
	}
	tenants := make(map[string]any, len(holders))
	for name, index := range holders {
		tenants[name] = index
	}
	rows := make([]any, len(claims))
	for i, cl := range claims {
		rows[i] = map[string]any{"tenant": cl.Tenant, "index": cl.Index, "object": cl.Object}
	}
	return module.Result{
		Msg:    fmt.Sprintf("%d tenant(s) hold an index in PVE (%d object(s))", len(holders), len(claims)),
		Values: map[string]any{"tenants": tenants, "claims": rows},
	}, nil
}
