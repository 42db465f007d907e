package hookcli

// watch: the node's events, not a poll (docs/adr/0016-tenant-wire.md; issue 53's unguarded
// window). A VM's port appears when its QEMU starts (qemu-server's pve-bridge), when a NIC is
// hotplugged (pve-bridge-hotplug) or when it arrives by migration; the watch then admits the port
// on the wire and puts the VM's QEMU into its tenant's group, within the debounce of the event,
// whether or not the VM has the guard as its hookscript.

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/deevnet/tenant/internal/cgroupslice"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// watchDebounce gathers the ports of one start (a VM with several NICs, the firewall's fwbr/fwpr
// pair) into one run.
const watchDebounce = 100 * time.Millisecond

// vmPort is a VM port's name as qemu-server and pve-common make it: the tap, or the firewall
// bridge's veth into the VNet.
var vmPort = regexp.MustCompile(`^(?:tap(\d+)i|fwpr(\d+)p)\d+$`)

func vmOfPort(name string) (int, bool) {
	m := vmPort.FindStringSubmatch(name)
	if m == nil {
		return 0, false
	}
	id, err := strconv.Atoi(m[1] + m[2])
	return id, err == nil
}

func watch(o options) error { return watchUntil(o, nil, nil, nil) }

// watchUntil is watch in the network namespace ns (nil: this one) until stop is closed; synced,
// when not nil, is told after each run (the tests' clock).
func watchUntil(o options, ns *netns.NsHandle, stop <-chan struct{}, synced chan<- []int) error {
	updates := make(chan netlink.LinkUpdate, 256)
	done := make(chan struct{})
	defer close(done)
	subErr := make(chan error, 1)
	err := netlink.LinkSubscribeWithOptions(updates, done, netlink.LinkSubscribeOptions{
		Namespace: ns,
		ErrorCallback: func(err error) {
			select {
			case subErr <- err:
			default:
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watch: subscribing to the node's link events: %w", err)
	}
	sync := func(started []int) {
		for _, id := range started {
			if err := placeStarted(o, id); err != nil {
				_, _ = fmt.Fprintf(o.stderr, "watch: VM %d: %v\n", id, err)
			}
		}
		if err := wireRun(o, started); err != nil {
			_, _ = fmt.Fprintf(o.stderr, "watch: %v\n", err)
		}
		if synced != nil {
			synced <- started
		}
	}
	// first the table as it should be now: ports that appeared before the watch ran
	sync(nil)
	seen := map[int]bool{} // ifindex of ports already handled
	pending := map[int]bool{}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-stop:
			return nil
		case err := <-subErr:
			return fmt.Errorf("watch: the node's link events: %w", err)
		case u, ok := <-updates:
			if !ok {
				return errors.New("watch: the node's link events ended")
			}
			idx := u.Attrs().Index
			if u.Header.Type == unix.RTM_DELLINK {
				delete(seen, idx)
				continue
			}
			id, ok := vmOfPort(u.Attrs().Name)
			if !ok || seen[idx] {
				continue
			}
			seen[idx] = true
			pending[id] = true
			timer.Reset(watchDebounce)
		case <-timer.C:
			started := slices.Sorted(maps.Keys(pending))
			clear(pending)
			sync(started)
		}
	}
}

// placeStarted puts a tenant VM whose port just appeared into its tenant's group (contain's work
// for one VM, without waiting for /cluster/resources to say it runs); a VM of no tenant, or one
// already in its group, is left.
func placeStarted(o options, id int) error {
	f, res, err := state(o)
	if err != nil {
		return err
	}
	name, _, err := f.TenantOf(res, id)
	if err != nil || name == "" {
		return err
	}
	pid, err := qemuPid(o.runDir, id)
	if err != nil {
		return err
	}
	if in, err := cgroupslice.Holds(cgroupslice.Dir(o.cgroupRoot, name), pid); err != nil || in {
		return err
	}
	return place(o, strconv.Itoa(id))
}
