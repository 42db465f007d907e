package cgroupslice

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Devices are the whole block devices (MAJ:MIN, sorted) that carry the device-mapper device
// named dmName, from sysfs at sysRoot (/sys): its slaves, through every device-mapper layer, to
// the first device that is not one (a disk, an md array, a loop device), a partition replaced by
// its disk (the kernel takes no io.max on a partition). For a tenant's thin pool, dmName is its
// data device (<vg>-tenant--<name>_tdata): the writes of its thin volumes reach those devices
// carrying the cgroup of the process that issued them, so io.max there holds the tenant's group.
// None when no such device exists (the pool not active on this node: nothing of the tenant's
// reaches it).
func Devices(sysRoot, dmName string) ([]string, error) {
	class := filepath.Join(sysRoot, "class", "block")
	entries, err := os.ReadDir(class)
	if err != nil {
		return nil, fmt.Errorf("listing block devices: %w", err)
	}
	top := ""
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(class, e.Name(), "dm", "name"))
		if err == nil && strings.TrimSpace(string(b)) == dmName {
			top = e.Name()
			break
		}
	}
	if top == "" {
		return nil, nil
	}
	var devs []string
	var walk func(name string, depth int) error
	walk = func(name string, depth int) error {
		if depth > 16 {
			return fmt.Errorf("%s: device-mapper stack deeper than 16 under %s", name, dmName)
		}
		dir := filepath.Join(class, name)
		if _, err := os.Stat(filepath.Join(dir, "dm")); err != nil {
			dev, err := wholeDisk(dir)
			if err != nil {
				return err
			}
			if !slices.Contains(devs, dev) {
				devs = append(devs, dev)
			}
			return nil
		}
		slaves, err := os.ReadDir(filepath.Join(dir, "slaves"))
		if err != nil {
			return fmt.Errorf("%s (under %s): its slaves: %w", name, dmName, err)
		}
		for _, s := range slaves {
			if err := walk(s.Name(), depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(top, 0); err != nil {
		return nil, err
	}
	slices.Sort(devs)
	return devs, nil
}

// wholeDisk is the MAJ:MIN of the block device at dir (/sys/class/block/<name>), or of its disk
// when it is a partition (a partition's directory sits in its disk's).
func wholeDisk(dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return "", fmt.Errorf("%s: %w", dir, err)
		}
		dir = filepath.Dir(real)
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "dev"))
	if err != nil {
		return "", fmt.Errorf("block device number: %w", err)
	}
	dev := strings.TrimSpace(string(b))
	if !devRule.MatchString(dev) {
		return "", fmt.Errorf("%s: %q is not MAJ:MIN", filepath.Join(dir, "dev"), dev)
	}
	return dev, nil
}

// DMName is the device-mapper name LVM gives vg/lv: each '-' in either doubled, joined by '-'.
func DMName(vg, lv string) string {
	return strings.ReplaceAll(vg, "-", "--") + "-" + strings.ReplaceAll(lv, "-", "--")
}
