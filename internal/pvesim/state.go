package pvesim

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"time"
)

// state is everything the simulated cluster knows; it is saved as JSON.
type state struct {
	Nodes    []NodeConfig             `json:"nodes"`
	Storages map[string]StorageConfig `json:"storages"`
	Users    map[string]*User         `json:"users"`
	Groups   map[string]*Group        `json:"groups,omitempty"`
	Roles    map[string][]string      `json:"roles"`
	ACLs     []ACL                    `json:"acls"`
	Pools    map[string]*Pool         `json:"pools"`
	VMs      map[int]*VM              `json:"vms"`
	SDN      *sdnState                `json:"sdn"`
	Tasks    map[string]*Task         `json:"tasks"`
	TaskSeq  []string                 `json:"task_seq"`
	NextPID  int                      `json:"next_pid"`
	// Disks are each node's volume groups, thin pools and file systems (storagecap.go).
	Disks map[string]*nodeDisks `json:"disks,omitempty"`
	// Offline are the members out of the membership (nodestate.go).
	Offline map[string]*offlineNode `json:"offline,omitempty"`
	// QDeviceDown: the QDevice's host (corosync-qnetd) is down (quorum.go).
	QDeviceDown bool `json:"qdevice_down,omitempty"`
}

// User is a PVE user with its API tokens.
type User struct {
	Enable  bool              `json:"enable"`
	Comment string            `json:"comment,omitempty"`
	Email   string            `json:"email,omitempty"`
	Expire  int64             `json:"expire"`
	Groups  []string          `json:"groups,omitempty"`
	Tokens  map[string]*Token `json:"tokens"`
	// Password is the salted SHA-256 of the password a ticket login checks (ticket.go), "" for
	// none: such a user logs in only with a token.
	Password string `json:"password,omitempty"`
}

// Token is an API token. The secret is kept to authenticate and never listed.
type Token struct {
	Secret  string `json:"secret"`
	Privsep bool   `json:"privsep"`
	Expire  int64  `json:"expire"`
	Comment string `json:"comment,omitempty"`
}

// Pool is a resource pool; VM membership lives on the VM.
type Pool struct {
	Comment string `json:"comment,omitempty"`
	// Storage is the pool's storage members: their /storage/<id> get the pool's roles.
	Storage []string `json:"storage,omitempty"`
}

// VM is a qemu guest.
type VM struct {
	VMID     int               `json:"vmid"`
	Node     string            `json:"node"`
	Status   string            `json:"status"` // running|stopped
	Pool     string            `json:"pool,omitempty"`
	Lock     string            `json:"lock,omitempty"`
	Config   map[string]string `json:"config"`
	Pending  map[string]string `json:"pending,omitempty"`
	PendDel  []string          `json:"pending_delete,omitempty"`
	Started  int64             `json:"started,omitempty"`
	Template bool              `json:"template"`
}

// Task is a worker task with a UPID.
type Task struct {
	UPID       string   `json:"upid"`
	Node       string   `json:"node"`
	PID        int      `json:"pid"`
	PStart     int      `json:"pstart"`
	StartTime  int64    `json:"starttime"`
	Type       string   `json:"type"`
	ID         string   `json:"id"`
	User       string   `json:"user"`
	TokenID    string   `json:"tokenid,omitempty"`
	Status     string   `json:"status"`
	ExitStatus string   `json:"exitstatus,omitempty"`
	EndTime    int64    `json:"endtime,omitempty"`
	Log        []string `json:"log"`

	endAt  time.Time
	finish func() error // runs when the task ends; an error is the exitstatus
	abort  func()       // undoes the task's setup when an injected fault fails it
	busy   bool         // work runs outside the server lock; the task cannot end yet
}

func atoiSafe(s string) int { n, _ := strconv.Atoi(s); return n }

func newState(cfg Config, rootSecret string) *state {
	st := &state{
		Nodes:    cfg.Nodes,
		Storages: map[string]StorageConfig{},
		Users: map[string]*User{"root@pam": {Enable: true, Comment: "root", Tokens: map[string]*Token{
			"sim": {Secret: rootSecret, Privsep: false},
		}}},
		Groups:  map[string]*Group{},
		Roles:   builtinRoles(),
		Pools:   map[string]*Pool{},
		VMs:     map[int]*VM{},
		SDN:     newSDNState(),
		Tasks:   map[string]*Task{},
		NextPID: 0x1000,
	}
	for _, s := range cfg.Storages {
		st.Storages[s.ID] = s
	}
	st.seedDisks(cfg.Storages)
	for _, d := range cfg.Disks {
		for _, n := range st.Nodes {
			nd := st.disksOf(n.Name)
			vg := nd.VGs[d.VG]
			if vg == nil {
				vg = &volGroup{ThinPools: map[string]*backing{}}
				nd.VGs[d.VG] = vg
			}
			if d.ThinPool != "" {
				vg.ThinPools[d.ThinPool] = &backing{Size: d.Size}
			}
			vg.Size = max(vg.Size, d.VGSize, vg.thinSum())
		}
	}
	for _, t := range cfg.Templates {
		c := map[string]string{}
		for k, v := range t.Config {
			c[k] = v
		}
		if t.Name != "" {
			c["name"] = t.Name
		}
		if t.Template {
			c["template"] = "1"
		}
		node := t.Node
		known := false
		for _, n := range cfg.Nodes {
			known = known || n.Name == node
		}
		if !known { // e.g. a config that renames the nodes but keeps the default template
			node = cfg.Nodes[0].Name
		}
		if t.Pool != "" {
			st.Pools[t.Pool] = &Pool{}
		}
		st.VMs[t.VMID] = &VM{VMID: t.VMID, Node: node, Status: "stopped", Pool: t.Pool, Config: c, Template: t.Template}
	}
	return st
}

func (st *state) save(path string) error {
	b, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return nil
}

func loadState(path string) (*state, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	st := &state{}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("parse state %s: %w", path, err)
	}
	if st.SDN == nil {
		st.SDN = newSDNState()
	}
	if st.Groups == nil { // a state file from before groups
		st.Groups = map[string]*Group{}
	}
	if st.Disks == nil { // a state file from before disks: each storage's default backing
		st.seedDisks(slices.Collect(maps.Values(st.Storages)))
	}
	for _, nf := range st.SDN.NodeFiles {
		if nf.Reload == "running" { // the reload died with the old process
			nf.Reload, nf.Error = "error", "reload interrupted by a simulator restart"
		}
	}
	for _, t := range st.Tasks {
		if t.Status == "running" { // the worker died with the old process
			t.Status, t.ExitStatus = "stopped", "unexpected status"
		}
	}
	return st, nil
}
