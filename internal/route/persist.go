package route

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// DefaultHookPath is where the persistence hook goes on a PVE node. ifupdown2 runs every
// executable in /etc/network/if-up.d/ (with IFACE set) after it brings an interface up, at boot
// and on every `ifreload -a` (which PVE runs when SDN changes are applied), provided
// addon_scripts_support=1 in /etc/network/ifupdown2/ifupdown2.conf. See
// docs/adr/0003-egress-persistence.md.
const DefaultHookPath = "/etc/network/if-up.d/deevnet-transit-route"

// DefaultIfupdown2Conf is read to warn when ifupdown2 would not run the hook.
const DefaultIfupdown2Conf = "/etc/network/ifupdown2/ifupdown2.conf"

// RenderHook returns the shell hook that re-installs cfg's routes and forwarding. Every value in
// it has passed Validate (prefixes, addresses, interface names of [A-Za-z0-9_.@-]), so nothing
// needs quoting. The hook is idempotent (`ip route replace`), ignores failures of single lines
// (at boot a VRF may not exist yet when an earlier interface comes up; the hook runs again when
// it does) and acts only when IFACE is one of the interfaces it depends on.
func RenderHook(cfg Config) (string, error) {
	if err := cfg.Validate(); err != nil {
		return "", err
	}
	if cfg.State != Present {
		return "", fmt.Errorf("state: a hook is only written for state=present")
	}
	ifaces := map[string]bool{}
	var lines []string
	for _, ifn := range cfg.Forwarding {
		ifaces[ifn] = true
		lines = append(lines, fmt.Sprintf("echo 1 > /proc/sys/net/ipv4/conf/%s/forwarding 2>/dev/null || rc=1", ifn))
	}
	for _, r := range cfg.Routes {
		fam := "-4"
		if r.Dest.Addr().Is6() {
			fam = "-6"
		}
		var b strings.Builder
		fmt.Fprintf(&b, "$IP %s route replace %s", fam, r.Dest)
		if r.Gateway.IsValid() {
			fmt.Fprintf(&b, " via %s", r.Gateway)
		}
		if r.Device != "" {
			fmt.Fprintf(&b, " dev %s", r.Device)
			ifaces[r.Device] = true
		}
		fmt.Fprintf(&b, " metric %d", r.Metric)
		if n, isNum, _ := TableNumber(r.Table); isNum {
			fmt.Fprintf(&b, " table %d", n)
		} else {
			// by name: ifupdown2's `vrf-table auto` may give the VRF another table after a reload
			fmt.Fprintf(&b, " vrf %s", r.Table)
			ifaces[r.Table] = true
		}
		fmt.Fprintf(&b, " proto %d 2>/dev/null || rc=1", int(Protocol))
		lines = append(lines, b.String())
	}
	names := make([]string, 0, len(ifaces))
	for n := range ifaces {
		names = append(names, n)
	}
	sort.Strings(names)
	trigger := "--all"
	if len(names) > 0 {
		trigger += "|" + strings.Join(names, "|")
	}
	var out strings.Builder
	out.WriteString("#!/bin/sh\n")
	out.WriteString("# Managed by deevnet.tenant.transit_route (ADR-0003): changes are overwritten.\n")
	out.WriteString("# ifupdown2 runs this after bringing up an interface (boot, ifup, ifreload -a);\n")
	out.WriteString("# it re-installs the tenant egress routes, which do not survive a reboot or a reload.\n")
	out.WriteString("# Run by hand with IFACE=--all.\n")
	out.WriteString("IP=${DEEVNET_IP:-/sbin/ip}\n")
	out.WriteString("case \"${IFACE:---all}\" in\n")
	fmt.Fprintf(&out, "  %s) ;;\n", trigger)
	out.WriteString("  *) exit 0 ;;\n")
	out.WriteString("esac\n")
	out.WriteString("rc=0\n")
	for _, l := range lines {
		out.WriteString(l + "\n")
	}
	// never fail ifup: a missing VRF at this moment is normal during boot
	out.WriteString("[ \"${IFACE:---all}\" = --all ] && exit $rc\n")
	out.WriteString("exit 0\n")
	return out.String(), nil
}

// HookChange is the persistence part of a run: the hook file's content before and after
// ("" = no file).
type HookChange struct {
	Path          string
	Before, After string
}

// Changed reports whether the file must be written or removed.
func (h HookChange) Changed() bool { return h.Before != h.After }

// PlanHook compares the hook at path with what cfg needs. For state=absent the hook is removed.
func PlanHook(path string, cfg Config) (HookChange, error) {
	hc := HookChange{Path: path}
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		hc.Before = string(b)
	case errors.Is(err, fs.ErrNotExist):
	default:
		return hc, fmt.Errorf("persist_path: read %s: %w", path, err)
	}
	if cfg.State == Present {
		if hc.After, err = RenderHook(cfg); err != nil {
			return hc, err
		}
	}
	return hc, nil
}

// ApplyHook writes (atomically, mode 0755) or removes the hook.
func ApplyHook(hc HookChange) error {
	if !hc.Changed() {
		return nil
	}
	if hc.After == "" {
		if err := os.Remove(hc.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("persist_path: remove %s: %w", hc.Path, err)
		}
		return nil
	}
	dir := filepath.Dir(hc.Path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(hc.Path)+".tmp*")
	if err != nil {
		return fmt.Errorf("persist_path: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // no-op after the rename
	if _, err := tmp.WriteString(hc.After); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("persist_path: write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Chmod(0o755); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("persist_path: chmod: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("persist_path: close: %w", err)
	}
	if err := os.Rename(tmp.Name(), hc.Path); err != nil {
		return fmt.Errorf("persist_path: %w", err)
	}
	return nil
}

// ScriptsDisabled reports whether an ifupdown2.conf does not enable the if-up.d scripts the hook
// depends on (addon_scripts_support must be 1). A missing file is not reported: without
// ifupdown2 there is nothing to tell.
func ScriptsDisabled(conf string) (bool, error) {
	b, err := os.ReadFile(conf)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", conf, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if ok && strings.TrimSpace(k) == "addon_scripts_support" {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			return err != nil || n != 1, nil
		}
	}
	return true, nil
}
