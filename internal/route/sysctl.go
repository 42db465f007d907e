package route

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/vishvananda/netns"
)

// Sysctl reads and writes net.ipv4.conf.<iface>.forwarding.
type Sysctl interface {
	Forwarding(iface string) (bool, error)
	SetForwarding(iface string, on bool) error
}

// ProcSys is the Sysctl of the calling thread's network namespace, through /proc/sys.
// Root defaults to /proc/sys.
type ProcSys struct{ Root string }

func (p ProcSys) path(iface string) (string, error) {
	if err := ValidIfName(iface); err != nil { // never let a name walk out of conf/
		return "", err
	}
	root := p.Root
	if root == "" {
		root = "/proc/sys"
	}
	return filepath.Join(root, "net", "ipv4", "conf", iface, "forwarding"), nil
}

// Forwarding reports whether forwarding is on for iface.
func (p ProcSys) Forwarding(iface string) (bool, error) {
	path, err := p.path(iface)
	if err != nil {
		return false, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("read forwarding of %s: %w", iface, err)
	}
	return string(bytes.TrimSpace(b)) == "1", nil
}

// SetForwarding writes 1 or 0.
func (p ProcSys) SetForwarding(iface string, on bool) error {
	path, err := p.path(iface)
	if err != nil {
		return err
	}
	v := "0\n"
	if on {
		v = "1\n"
	}
	// O_WRONLY without O_CREATE: a missing interface is an error, not a new file.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("set forwarding of %s: %w", iface, err)
	}
	if _, err := f.WriteString(v); err != nil {
		_ = f.Close()
		return fmt.Errorf("set forwarding of %s: %w", iface, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("set forwarding of %s: %w", iface, err)
	}
	return nil
}

// NetnsSysctl is the Sysctl of another network namespace. /proc/sys/net belongs to the
// namespace of the thread that opens it, so each call pins its goroutine to a thread, enters
// NS, does the one file operation and returns before anything else can run on that thread.
type NetnsSysctl struct {
	NS   netns.NsHandle
	Proc ProcSys
}

func (n NetnsSysctl) in(f func() error) error {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("current netns: %w", err)
	}
	defer func() { _ = orig.Close() }()
	if err := netns.Set(n.NS); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter netns: %w", err)
	}
	ferr := f()
	if err := netns.Set(orig); err != nil {
		// The thread stays locked, so the runtime destroys it with the goroutine: it can
		// never carry the foreign namespace into other code.
		return fmt.Errorf("return to original netns: %w", err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// Forwarding reports whether forwarding is on for iface in NS.
func (n NetnsSysctl) Forwarding(iface string) (on bool, err error) {
	err = n.in(func() error {
		var e error
		on, e = n.Proc.Forwarding(iface)
		return e
	})
	return on, err
}

// SetForwarding writes forwarding for iface in NS.
func (n NetnsSysctl) SetForwarding(iface string, on bool) error {
	return n.in(func() error { return n.Proc.SetForwarding(iface, on) })
}
