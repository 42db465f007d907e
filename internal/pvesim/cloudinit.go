package pvesim

// The cloud-init drive: keys, regeneration, the rendered user/network/meta data.

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/deevnet/tenant/internal/pveschema"
)

// vmCloudinit lists the cloud-init keys: value for the current drive, pending for the next.
func (s *Server) vmCloudinit(r *reqCtx, vm *VM) (any, error) {
	out := []map[string]any{}
	eff := vm.effective()
	for _, k := range sortedKeys(eff) {
		if !strings.HasPrefix(k, "ipconfig") && !slices.Contains(ciKeys, k) {
			continue
		}
		v := eff[k]
		if k == "cipassword" {
			v = "**********"
		}
		out = append(out, map[string]any{"key": k, "value": v})
	}
	return out, nil
}

func (s *Server) vmCloudinitRegen(r *reqCtx, vm *VM) (any, error) {
	if vm.Lock != "" {
		return nil, plainErr("VM is locked (%s)", vm.Lock)
	}
	return nil, nil
}

// vmCloudinitDump renders the generated user/network/meta data (nocloud).
func (s *Server) vmCloudinitDump(r *reqCtx, vm *VM) (any, error) {
	c := vm.effective()
	var b strings.Builder
	switch r.params.Str("type") {
	case "user":
		b.WriteString("#cloud-config\n")
		fmt.Fprintf(&b, "hostname: %s\nmanage_etc_hosts: true\n", firstNonEmpty(c["name"], "VM"+strconv.Itoa(vm.VMID)))
		if u := c["ciuser"]; u != "" {
			fmt.Fprintf(&b, "user: %s\n", u)
		}
		if c["cipassword"] != "" {
			fmt.Fprintf(&b, "password: %s\n", c["cipassword"])
		}
		if k := c["sshkeys"]; k != "" {
			dec, _ := url.PathUnescape(k)
			b.WriteString("ssh_authorized_keys:\n")
			for _, l := range strings.Split(dec, "\n") {
				if strings.TrimSpace(l) != "" {
					fmt.Fprintf(&b, "  - %s\n", strings.TrimSpace(l))
				}
			}
		}
		b.WriteString("chpasswd:\n  expire: False\n")
	case "network":
		b.WriteString("version: 1\nconfig:\n")
		for _, k := range sortedKeys(c) {
			if !netKeyRe.MatchString(k) {
				continue
			}
			idx := strings.TrimPrefix(k, "net")
			f := parseNet(c[k])
			fmt.Fprintf(&b, "    - type: physical\n      name: eth%s\n      mac_address: '%s'\n", idx, strings.ToLower(f["macaddr"]))
			ipc := map[string]string{}
			for _, part := range strings.Split(c["ipconfig"+idx], ",") {
				if kk, vv, ok := strings.Cut(part, "="); ok {
					ipc[kk] = vv
				}
			}
			if ip := ipc["ip"]; ip != "" && ip != "dhcp" {
				fmt.Fprintf(&b, "      subnets:\n      - type: static\n        address: '%s'\n", ip)
				if gw := ipc["gw"]; gw != "" {
					fmt.Fprintf(&b, "        gateway: '%s'\n", gw)
				}
			} else {
				b.WriteString("      subnets:\n      - type: dhcp4\n")
			}
		}
		if ns := c["nameserver"]; ns != "" {
			b.WriteString("    - type: nameserver\n      address:\n")
			for _, a := range pveschema.SplitList(ns) {
				fmt.Fprintf(&b, "      - '%s'\n", a)
			}
			if sd := c["searchdomain"]; sd != "" {
				b.WriteString("      search:\n")
				for _, d := range pveschema.SplitList(sd) {
					fmt.Fprintf(&b, "      - '%s'\n", d)
				}
			}
		}
	default:
		fmt.Fprintf(&b, "instance-id: %s\n", vmDigest(c))
	}
	return b.String(), nil
}
