package sdn

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/deevnet/tenant/internal/pve"
)

// API reads and writes SDN objects through a pve.Client.
type API struct {
	C *pve.Client
	// LockWait is how long a lock held by another client is waited for (0: fail at once).
	// PVE refuses a write under a foreign lock before it takes effect, so retrying is safe.
	LockWait time.Duration
	// Settle is how long a node whose SDN status is pending is waited for
	// after an apply (0: 30 s).
	Settle time.Duration
	// Maintenance are the nodes the operator took out: offline, an apply leaves them pending
	// instead of failing (nodes.go).
	Maintenance []string
}

// waitLock retries try while it fails with a held lock and LockWait allows; the final
// *LockHeldError records how long it waited, a lower bound of the lock's age.
func (a API) waitLock(ctx context.Context, try func() error) error {
	start := time.Now()
	backoff := 250 * time.Millisecond
	for {
		err := try()
		var le *LockHeldError
		if !errors.As(err, &le) {
			return err
		}
		waited := time.Since(start)
		remaining := a.LockWait - waited
		if remaining <= 0 {
			le.Waited = waited
			return err
		}
		// The last try lands at lock_wait, so the whole allowance is used even when the
		// tries themselves are slow.
		if !pve.Sleep(ctx, min(backoff, remaining)) {
			le.Waited = waited
			return err
		}
		if backoff < 2*time.Second {
			backoff *= 2
		}
	}
}

// pendingView asks PVE for the staged (pending) state; a new map each time, as url.Values is mutable.
func pendingView() url.Values { return url.Values{"pending": {"1"}} }

// The lists' paths; listRead is a list's GET, for pve.Client.Prefetch.
const (
	zonesPath       = "/cluster/sdn/zones"
	vnetsPath       = "/cluster/sdn/vnets"
	controllersPath = "/cluster/sdn/controllers"
	fabricsPath     = "/cluster/sdn/fabrics/all"
)

func subnetsPath(vnet string) string { return vnetsPath + "/" + url.PathEscape(vnet) + "/subnets" }

func listRead(path string) pve.Read { return pve.Read{Path: path, Query: pendingView()} }

func (a API) list(ctx context.Context, k Kind, parent, path string) ([]Observed, error) {
	var rows []map[string]any
	if err := a.C.Get(ctx, path, pendingView(), &rows); err != nil {
		return nil, fmt.Errorf("reading %ss: %w", k, err)
	}
	return ParseView(k, parent, rows)
}

// Zones reads the pending view of every zone.
func (a API) Zones(ctx context.Context) ([]Observed, error) {
	return a.list(ctx, KindZone, "", zonesPath)
}

// VNets reads the pending view of every vnet.
func (a API) VNets(ctx context.Context) ([]Observed, error) {
	return a.list(ctx, KindVNet, "", vnetsPath)
}

// Subnets reads the pending view of one vnet's subnets. PVE has no cluster-wide subnet list,
// and a vnet that is deleted but not applied answers 500, so callers ask only for live vnets.
func (a API) Subnets(ctx context.Context, vnet string) ([]Observed, error) {
	return a.list(ctx, KindSubnet, vnet, subnetsPath(vnet))
}

// Controllers reads the pending view of every controller.
func (a API) Controllers(ctx context.Context) ([]Observed, error) {
	return a.list(ctx, KindController, "", controllersPath)
}

// Fabrics reads the pending view of every fabric and fabric node in one request.
func (a API) Fabrics(ctx context.Context) (fabrics, nodes []Observed, err error) {
	var all struct {
		Fabrics []map[string]any `json:"fabrics"`
		Nodes   []map[string]any `json:"nodes"`
	}
	if err := a.C.Get(ctx, fabricsPath, pendingView(), &all); err != nil {
		return nil, nil, fmt.Errorf("reading fabrics: %w", err)
	}
	if fabrics, err = ParseView(KindFabric, "", all.Fabrics); err != nil {
		return nil, nil, err
	}
	if nodes, err = ParseView(KindFabricNode, "", all.Nodes); err != nil {
		return nil, nil, err
	}
	return fabrics, nodes, nil
}

// Stage sends ops in order, with the lock token when one is held. It stops at the first
// failure and returns how many ops were staged.
func (a API) Stage(ctx context.Context, ops []Op, token string) (int, error) {
	for i, op := range ops {
		r := op.Request(token)
		err := a.waitLock(ctx, func() error {
			var err error
			switch r.Method {
			case "POST":
				err = a.C.Post(ctx, r.Path, r.Body, nil)
			case "PUT":
				err = a.C.Put(ctx, r.Path, r.Body, nil)
			case "DELETE":
				err = a.C.Delete(ctx, r.Path, r.Query, nil)
			}
			return classify(err)
		})
		if err != nil {
			return i, fmt.Errorf("%s %s: %w", op.Action, op.Object.Key(), err)
		}
	}
	return len(ops), nil
}

// Lock takes the global SDN lock and returns its token. Without allowPending PVE refuses when
// anything is pending, which proves that every change made under the lock is ours.
func (a API) Lock(ctx context.Context, allowPending bool) (string, error) {
	body := map[string]any{}
	if allowPending {
		body["allow-pending"] = 1
	}
	var token string
	err := a.waitLock(ctx, func() error { return classify(a.C.Post(ctx, "/cluster/sdn/lock", body, &token)) })
	if err != nil {
		return "", fmt.Errorf("taking the SDN lock: %w", err)
	}
	if token == "" {
		return "", errors.New("taking the SDN lock: PVE returned no token")
	}
	return token, nil
}

// Unlock releases a lock this client holds.
func (a API) Unlock(ctx context.Context, token string) error {
	if err := a.C.Delete(ctx, "/cluster/sdn/lock", url.Values{"lock-token": {token}}, nil); err != nil {
		return fmt.Errorf("releasing the SDN lock: %w", err)
	}
	return nil
}

// Rollback discards every pending change and releases the lock.
func (a API) Rollback(ctx context.Context, token string) error {
	if err := a.C.Post(ctx, "/cluster/sdn/rollback", map[string]any{"lock-token": token, "release-lock": 1}, nil); err != nil {
		return fmt.Errorf("rolling back SDN: %w", err)
	}
	return nil
}

// Apply commits all pending changes (PUT /cluster/sdn, releasing the lock on success) and
// waits for the reload task; the task must end "OK".
func (a API) Apply(ctx context.Context, token string) (string, error) {
	body := map[string]any{}
	if token != "" {
		body["lock-token"] = token
		body["release-lock"] = 1
	}
	var upid string
	if err := a.C.Put(ctx, "/cluster/sdn", body, &upid); err != nil {
		return "", fmt.Errorf("applying SDN: %w", classify(err))
	}
	if err := a.C.WaitTask(ctx, upid); err != nil {
		return upid, fmt.Errorf("SDN apply task: %w", err)
	}
	// The task ends OK even when a node failed to reload: ask the nodes.
	bad, err := a.Unsettled(ctx)
	if err != nil {
		return upid, fmt.Errorf("SDN apply: %w", err)
	}
	if len(bad) > 0 {
		return upid, &ReloadError{Zones: bad}
	}
	return upid, nil
}
