package corosync

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/deevnet/tenant/internal/module"
)

// DefaultPath is the cluster's corosync.conf on a PVE node: pmxcfs shares it and copies it to
// every node's /etc/corosync/corosync.conf.
const DefaultPath = "/etc/pve/corosync.conf"

// Options are corosync_qdevice's options (spec declares their rules).
type Options struct {
	Path      string `opt:"path"`
	State     string `opt:"state"`
	Host      string `opt:"host"`
	Algorithm string `opt:"algorithm"`
	Votes     *int   `opt:"votes"`
	TLS       string `opt:"tls"`
}

// Module is corosync_qdevice: the quorum device in corosync.conf, as `pvecm qdevice setup`
// writes it. plugins/modules/corosync_qdevice.py documents it.
func Module() module.Entry { return module.Declare(spec(), handle) }

func spec() module.Spec {
	return module.Spec{
		Options: map[string]*module.Option{
			"path":      {Type: module.TypePath, Default: DefaultPath},
			"state":     {Type: module.TypeStr, Default: "present", Choices: []any{"present", "absent"}},
			"host":      {Type: module.TypeStr},
			"algorithm": {Type: module.TypeStr, Default: "ffsplit", Choices: []any{"ffsplit", "lms"}},
			"votes":     {Type: module.TypeInt},
			"tls":       {Type: module.TypeStr, Default: "on", Choices: []any{"on", "off", "required"}},
		},
		RequiredIf:        []module.RequiredIf{{Key: "state", Value: "present", Requires: []string{"host"}}},
		SupportsCheckMode: true,
	}
}

func handle(m *module.Module, o *Options) (module.Result, error) {
	before, mode, err := read(o.Path)
	if err != nil {
		return module.Result{}, err
	}
	conf, err := Parse(before)
	if err != nil {
		return module.Result{}, fmt.Errorf("path: %s: %w", o.Path, err)
	}
	var e Edit
	if o.State == "absent" {
		e, err = conf.RemoveDevice()
	} else {
		d := Device{Host: o.Host, Algorithm: o.Algorithm, TLS: o.TLS}
		switch {
		case o.Votes != nil:
			d.Votes = *o.Votes
		case d.Algorithm == "ffsplit":
			d.Votes = 1 // pvecm's: the one vote ffsplit gives
		}
		e, err = conf.SetDevice(d)
	}
	if err != nil {
		return module.Result{}, fmt.Errorf("%s: %w", o.Path, err)
	}
	after := conf.Render()
	if e.Changed && !m.CheckMode {
		if err := write(o.Path, after, mode); err != nil {
			return module.Result{}, err
		}
	}
	res := module.Result{
		Changed: e.Changed,
		Values: map[string]any{
			"path":             o.Path,
			"cluster_name":     conf.ClusterName(),
			"config_version":   e.ConfigVersion,
			"two_node_removed": e.TwoNodeRemoved,
			"device":           deviceValue(conf.CurrentDevice()),
		},
		Diffs: []module.Diff{{Before: before, After: after, BeforeHeader: o.Path, AfterHeader: o.Path}},
	}
	res.Msg = message(o, e, m.CheckMode)
	return res, nil
}

func message(o *Options, e Edit, check bool) string {
	if !e.Changed {
		if o.State == "absent" {
			return "no quorum device in " + o.Path
		}
		return fmt.Sprintf("quorum device net (%s on %s) already in %s", o.Algorithm, o.Host, o.Path)
	}
	verb := "set"
	if o.State == "absent" {
		verb = "removed"
	}
	if check {
		verb = "would be " + verb
	}
	msg := fmt.Sprintf("quorum device %s in %s, config_version %d", verb, o.Path, e.ConfigVersion)
	if e.TwoNodeRemoved {
		msg += "; two_node removed (votequorum refuses it beside a quorum device)"
	}
	return msg
}

func deviceValue(d *Device) map[string]any {
	if d == nil {
		return nil
	}
	return map[string]any{"model": "net", "host": d.Host, "algorithm": d.Algorithm, "votes": d.Votes, "tls": d.TLS}
}

func read(path string) (string, fs.FileMode, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", 0, fmt.Errorf("path: %s does not exist: this node is not in a cluster yet (pvecm create / pvecm add make the file)", path)
	}
	if err != nil {
		return "", 0, fmt.Errorf("path: %w", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", 0, fmt.Errorf("path: %w", err)
	}
	return string(b), st.Mode().Perm(), nil
}

// write replaces path through path.new and a rename in the same directory, as PVE's
// atomic_write_conf does (pmxcfs then copies the whole new file to every node at once).
func write(path, text string, mode fs.FileMode) error {
	tmp := filepath.Join(filepath.Dir(path), filepath.Base(path)+".new")
	if err := os.WriteFile(tmp, []byte(text), mode); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("activate %s: %w", path, err)
	}
	return nil
}
