package vm

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Change is one key whose stored value differs from the desired one. Before and After are
// human-readable (sshkeys decoded, secrets masked), for the diff and the result.
type Change struct {
	Key    string `json:"key"`
	Before any    `json:"before"`
	After  any    `json:"after"`
}

// Delta is what Compare found for one existing VM.
type Delta struct {
	Changes  []Change
	Params   map[string]any // body of PUT config, in PVE's wire form; empty: nothing to write
	Resize   *DiskVolume    // disk to grow, Size is the new size
	Warnings []string
}

// Masked stands for a secret in a diff.
const Masked = "********"

// Compare lists, key by key, what must change in cur (the VM's config with pending values
// applied, as strings) to reach d. It follows PVE's normalisation: net0's MAC and extra keys
// are kept, sshkeys are compared decoded, tags as a set, memory from its property string,
// the disk only grows.
func Compare(d Desired, cur map[string]string) Delta {
	c := &comparison{cur: cur, dl: Delta{Params: map[string]any{}}}
	c.hardware(d)
	c.cloudInit(d)
	c.meta(d)
	c.disk(d)
	return c.dl
}

// comparison is one Compare in progress: the VM's config and what it found.
type comparison struct {
	cur map[string]string
	dl  Delta
}

// set records a change of key and the value PUT config sends for it (wire).
func (c *comparison) set(key string, before, after any, wire any) {
	c.dl.Changes = append(c.dl.Changes, Change{Key: key, Before: before, After: after})
	c.dl.Params[key] = wire
}

// str is key's current value, nil when the VM has none.
func (c *comparison) str(k string) any {
	if v, ok := c.cur[k]; ok {
		return v
	}
	return nil
}

// hardware compares the name, CPU cores, memory and the NIC.
func (c *comparison) hardware(d Desired) {
	cur := c.cur
	if d.Name != "" && cur["name"] != d.Name {
		c.set("name", c.str("name"), d.Name, d.Name)
	}
	if d.Cores > 0 {
		have, err := strconv.Atoi(cur["cores"])
		if _, ok := cur["cores"]; !ok {
			have, err = 1, nil // PVE's default
		}
		if err != nil || have != d.Cores {
			c.set("cores", c.str("cores"), d.Cores, d.Cores)
		}
	}
	if d.Memory > 0 {
		have, err := ParseMemory(cur["memory"])
		if _, ok := cur["memory"]; !ok {
			have, err = 512, nil // PVE's default
		}
		if err != nil || have != d.Memory {
			c.set("memory", c.str("memory"), d.Memory, strconv.Itoa(d.Memory))
		}
	}
	if d.Bridge != "" {
		have := ParseNIC(cur["net0"])
		want := have // keeps the MAC and the keys the module does not own (firewall, tag, ...)
		if d.Model != "" {
			want.Model = d.Model
		}
		if want.Model == "" {
			want.Model = "virtio"
		}
		want.Bridge = d.Bridge
		if _, ok := cur["net0"]; !ok || have.Model != want.Model || have.Bridge != want.Bridge {
			c.set("net0", c.str("net0"), want.String(), want.String())
		}
	}
}

// cloudInit compares what cloud-init hands the guest: address, resolver, user, keys, password.
func (c *comparison) cloudInit(d Desired) {
	cur := c.cur
	if len(d.IPConfig0) > 0 {
		have := ParseProps(cur["ipconfig0"])
		if !maps.Equal(have, d.IPConfig0) {
			v := d.IPConfig0.Format("ip", "gw", "ip6", "gw6")
			c.set("ipconfig0", c.str("ipconfig0"), v, v)
		}
	}
	if d.Nameserver != nil {
		if !slices.Equal(NormalizeAddressList(cur["nameserver"]), d.Nameserver) {
			v := strings.Join(d.Nameserver, " ")
			c.set("nameserver", c.str("nameserver"), v, v)
		}
	}
	if d.SearchDomain != "" && strings.TrimSpace(cur["searchdomain"]) != d.SearchDomain {
		c.set("searchdomain", c.str("searchdomain"), d.SearchDomain, d.SearchDomain)
	}
	if d.CIUser != "" && cur["ciuser"] != d.CIUser {
		c.set("ciuser", c.str("ciuser"), d.CIUser, d.CIUser)
	}
	if d.SSHKeys != nil {
		want := normalizeKeyLines(d.SSHKeys)
		have := DecodeSSHKeys(cur["sshkeys"])
		if _, ok := cur["sshkeys"]; !ok || !slices.Equal(have, want) {
			var before any
			if _, ok := cur["sshkeys"]; ok {
				before = have
			}
			c.set("sshkeys", before, want, EncodeSSHKeys(want))
		}
	}
	if d.CIPassword != "" {
		// PVE returns the password masked (and stores it hashed), so it cannot be compared:
		// it is set when the VM has none, and left alone afterwards.
		if _, ok := cur["cipassword"]; !ok {
			c.set("cipassword", nil, Masked, d.CIPassword)
		}
	}
}

// meta compares the tags and the description.
func (c *comparison) meta(d Desired) {
	cur := c.cur
	if d.Tags != nil {
		have := ParseTags(cur["tags"])
		if !slices.Equal(have, d.Tags) {
			v := strings.Join(d.Tags, ";")
			var before any
			if _, ok := cur["tags"]; ok {
				before = strings.Join(have, ";")
			}
			c.set("tags", before, v, v)
		}
	}
	if d.Description != "" && strings.TrimRight(cur["description"], " \n") != strings.TrimRight(d.Description, " \n") {
		c.set("description", c.str("description"), d.Description, d.Description)
	}
}

// disk compares the boot disk's size: it only grows.
func (c *comparison) disk(d Desired) {
	cur := c.cur
	if d.Disk > 0 {
		disk, ok := BootDisk(cur)
		switch {
		case !ok:
			c.dl.Warnings = append(c.dl.Warnings, fmt.Sprintf("VM %s: disk: the VM has no disk to resize", d.Name))
		case disk.Size < d.Disk:
			c.dl.Changes = append(c.dl.Changes, Change{Key: "disk", Before: FormatSize(disk.Size), After: FormatSize(d.Disk)})
			grown := disk
			grown.Size = d.Disk
			c.dl.Resize = &grown
		case disk.Size > d.Disk:
			c.dl.Warnings = append(c.dl.Warnings, fmt.Sprintf("VM %s: disk: %s is %s, larger than the %s asked for; disks only grow, left as it is",
				d.Name, disk.Key, FormatSize(disk.Size), FormatSize(d.Disk)))
		}
	}
}

// Values renders the managed keys of cur for a diff: secrets masked, sshkeys decoded.
func Values(d Desired, cur map[string]string) map[string]any {
	out := map[string]any{}
	if cur == nil {
		return out
	}
	keys := []string{"name", "cores", "memory", "net0", "ipconfig0", "nameserver", "searchdomain", "ciuser", "tags", "description"}
	for _, k := range keys {
		if v, ok := cur[k]; ok {
			out[k] = v
		}
	}
	if v, ok := cur["sshkeys"]; ok {
		out["sshkeys"] = DecodeSSHKeys(v)
	}
	if _, ok := cur["cipassword"]; ok {
		out["cipassword"] = Masked
	}
	if disk, ok := BootDisk(cur); ok {
		out["disk"] = FormatSize(disk.Size) // the boot disk, whatever its bus key
	}
	return out
}
