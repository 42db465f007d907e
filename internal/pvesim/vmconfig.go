package pvesim

// VM config reads: current and pending config, digests, typed rendering.

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

func (s *Server) vmConfigGet(r *reqCtx, vm *VM) (any, error) {
	c := vm.effective()
	if r.params.Bool("current") {
		c = vm.Config
	}
	out := s.renderConfig(c)
	out["digest"] = vmDigest(vm.Config)
	if vm.Lock != "" {
		out["lock"] = vm.Lock
	}
	return out, nil
}

func (s *Server) vmPending(r *reqCtx, vm *VM) (any, error) {
	keys := map[string]bool{}
	for k := range vm.Config {
		keys[k] = true
	}
	for k := range vm.Pending {
		keys[k] = true
	}
	cur := s.renderConfig(vm.Config)
	pend := s.renderConfig(vm.Pending)
	var out []map[string]any
	for _, k := range sortedKeys(keys) {
		o := map[string]any{"key": k}
		if v, ok := cur[k]; ok {
			o["value"] = v
		}
		if v, ok := pend[k]; ok {
			o["pending"] = v
		}
		if slices.Contains(vm.PendDel, k) {
			o["delete"] = 1
		}
		out = append(out, o)
	}
	return out, nil
}

func vmDigest(c map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(c) {
		fmt.Fprintf(&b, "%s: %s\n", k, c[k])
	}
	h := sha1.Sum([]byte(b.String()))
	return hex.EncodeToString(h[:])
}

// renderConfig turns stored strings into PVE's JSON types using the config schema.
func (s *Server) renderConfig(c map[string]string) map[string]any {
	mi := s.schema.Method("/nodes/{node}/qemu/{vmid}/config", "POST")
	out := map[string]any{}
	for k, v := range c {
		p := mi.Parameters.Lookup(k)
		switch {
		case k == "cipassword":
			out[k] = "**********"
		case p != nil && (p.Type == "integer" || p.Type == "boolean"):
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				out[k] = n
			} else {
				out[k] = v
			}
		case p != nil && p.Type == "number":
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				out[k] = f
			} else {
				out[k] = v
			}
		default:
			out[k] = v
		}
	}
	return out
}

// effective is the config with pending changes applied (GET config default).
func (vm *VM) effective() map[string]string {
	c := map[string]string{}
	for k, v := range vm.Config {
		c[k] = v
	}
	for k, v := range vm.Pending {
		c[k] = v
	}
	for _, k := range vm.PendDel {
		delete(c, k)
	}
	return c
}
