package corosync

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Device is the quorum device corosync-qdevice's model net provides (man corosync-qdevice(8)),
// as `pvecm qdevice setup` writes it (pve-cluster src/PVE/CLI/pvecm.pm, setup_qdevice): model net,
// votes 1 with ffsplit, net { tls on, host, algorithm }.
type Device struct {
	Host      string
	Algorithm string
	// Votes is 0 for lms, which gives (sum of node votes - 1) itself, as pvecm leaves it unset.
	Votes int
	TLS   string
}

// Algorithms corosync-qdevice's model net knows (and pvecm picks: ffsplit for an even node
// count, lms only when forced).
var Algorithms = []string{"ffsplit", "lms"}

// TLSModes are model net's tls values.
var TLSModes = []string{"on", "off", "required"}

// Validate checks d as corosync-qdevice would before it starts, naming the option and the rule.
func (d Device) Validate() error {
	if d.Host == "" {
		return fmt.Errorf("host: required: the address or name of the host running corosync-qnetd")
	}
	if strings.ContainsAny(d.Host, " \t\r\n{}#") {
		return fmt.Errorf("host: %q: one address or DNS name (no blanks, braces or '#', which corosync.conf's syntax would misread)", d.Host)
	}
	if !slices.Contains(Algorithms, d.Algorithm) {
		return fmt.Errorf("algorithm: %q: one of %s", d.Algorithm, strings.Join(Algorithms, ", "))
	}
	if !slices.Contains(TLSModes, d.TLS) {
		return fmt.Errorf("tls: %q: one of %s", d.TLS, strings.Join(TLSModes, ", "))
	}
	switch {
	case d.Algorithm == "ffsplit" && d.Votes != 1:
		// corosync-qdevice(8): "ffsplit ... requires exactly one vote"
		return fmt.Errorf("votes: %d: the ffsplit algorithm gives exactly 1 vote (corosync-qdevice refuses any other)", d.Votes)
	case d.Votes < 0:
		return fmt.Errorf("votes: %d: at least 0 (0 leaves it to the algorithm, as lms does)", d.Votes)
	}
	return nil
}

// Edit is what SetDevice or RemoveDevice changed.
type Edit struct {
	Changed bool
	// TwoNodeRemoved: quorum.two_node was set, which votequorum refuses beside a device
	// ("two_node and quorum device cannot be configured at the same time!").
	TwoNodeRemoved bool
	// ConfigVersion is totem.config_version after the edit (bumped by one when Changed).
	ConfigVersion int
}

// SetDevice makes quorum.device d, leaving any other key of the device section alone, and
// bumps totem.config_version when the file changes, as PVE::Corosync::atomic_write_conf does.
func (c *Conf) SetDevice(d Device) (Edit, error) {
	if err := d.Validate(); err != nil {
		return Edit{}, err
	}
	version, err := c.configVersion()
	if err != nil {
		return Edit{}, err
	}
	quorum, err := c.votequorum()
	if err != nil {
		return Edit{}, err
	}
	if d.Algorithm == "ffsplit" {
		if err := c.oneVoteEach(); err != nil {
			return Edit{}, err
		}
	}
	e := Edit{ConfigVersion: version}
	e.TwoNodeRemoved = Unset(quorum, "two_node")
	dev := Subsection(quorum, "device", true)
	changed := Set(dev, "model", "net")
	if d.Votes > 0 {
		changed = Set(dev, "votes", strconv.Itoa(d.Votes)) || changed
	} else {
		changed = Unset(dev, "votes") || changed
	}
	net := Subsection(dev, "net", true)
	changed = Set(net, "tls", d.TLS) || changed
	changed = Set(net, "host", d.Host) || changed
	changed = Set(net, "algorithm", d.Algorithm) || changed
	e.Changed = changed || e.TwoNodeRemoved
	if e.Changed {
		e.ConfigVersion = version + 1
		Set(c.Section("totem"), "config_version", strconv.Itoa(e.ConfigVersion))
	}
	return e, nil
}

// RemoveDevice removes quorum.device (pvecm qdevice remove), bumping the version if there was one.
func (c *Conf) RemoveDevice() (Edit, error) {
	version, err := c.configVersion()
	if err != nil {
		return Edit{}, err
	}
	e := Edit{ConfigVersion: version}
	quorum := c.Section("quorum")
	if quorum == nil || !RemoveSection(quorum, "device") {
		return e, nil
	}
	e.Changed, e.ConfigVersion = true, version+1
	Set(c.Section("totem"), "config_version", strconv.Itoa(e.ConfigVersion))
	return e, nil
}

// CurrentDevice is the quorum device the file configures, or nil.
func (c *Conf) CurrentDevice() *Device {
	dev := c.Section("quorum", "device")
	if dev == nil {
		return nil
	}
	d := &Device{}
	if v, ok := Get(dev, "votes"); ok {
		d.Votes, _ = strconv.Atoi(v)
	}
	net := Subsection(dev, "net", false)
	d.Host, _ = Get(net, "host")
	d.Algorithm, _ = Get(net, "algorithm")
	d.TLS, _ = Get(net, "tls")
	return d
}

// ClusterName is totem.cluster_name.
func (c *Conf) ClusterName() string {
	v, _ := Get(c.Section("totem"), "cluster_name")
	return v
}

// configVersion is totem.config_version, which PVE refuses to write without ("invalid corosync
// config: unable to read config version") and corosync uses to refuse an older file on reload.
func (c *Conf) configVersion() (int, error) {
	totem := c.Section("totem")
	if totem == nil {
		return 0, fmt.Errorf("totem: no totem section: not a cluster's corosync.conf")
	}
	v, ok := Get(totem, "config_version")
	if !ok {
		return 0, fmt.Errorf("totem.config_version: missing: a cluster's file carries it, and the edit must raise it so that corosync takes the new file on reload")
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("totem.config_version: %q: not a whole number", v)
	}
	return n, nil
}

// votequorum is the quorum section, which must select corosync_votequorum for a device to vote.
func (c *Conf) votequorum() (*Node, error) {
	q := c.Section("quorum")
	if q == nil {
		return nil, fmt.Errorf("quorum: no quorum section: a quorum device needs quorum { provider: corosync_votequorum }")
	}
	if p, _ := Get(q, "provider"); p != "corosync_votequorum" {
		return nil, fmt.Errorf("quorum.provider: %q: a quorum device votes through corosync_votequorum only", p)
	}
	return q, nil
}

// oneVoteEach: ffsplit needs every node to have exactly one vote (corosync-qdevice(8)).
func (c *Conf) oneVoteEach() error {
	list := c.Section("nodelist")
	if list == nil {
		return fmt.Errorf("nodelist: no nodelist section: the ffsplit algorithm counts the nodes it lists")
	}
	for _, n := range c.Sections(list, "node") {
		if v, ok := Get(n, "quorum_votes"); ok && v != "1" {
			name, _ := Get(n, "name")
			return fmt.Errorf("nodelist: node %s has quorum_votes %s: the ffsplit algorithm needs one vote per node", name, v)
		}
	}
	return nil
}
