package pvesim

import (
	"fmt"
	"os"
	"time"

	"gopkg.in/yaml.v3"
)

// Config seeds the simulated cluster.
type Config struct {
	Listen       string        `yaml:"listen"`        // default 127.0.0.1:0
	InsecureHTTP bool          `yaml:"insecure_http"` // plain HTTP instead of HTTPS
	CAOut        string        `yaml:"ca_out"`        // CA PEM path; default a temp file
	StateFile    string        `yaml:"state_file"`    // JSON state kept across restarts
	Seed         uint64        `yaml:"seed"`          // MACs, pids, lock tokens; 0 = random
	Latency      time.Duration `yaml:"latency"`       // added to every API request
	TaskDuration time.Duration `yaml:"task_duration"` // how long tasks stay "running"
	// APIWorkers is how many API calls are served at once (PVE: 3 per daemon); 0 = no queue.
	APIWorkers int `yaml:"api_workers"`
	// AuthFailDelay is PVE's deliberate delay before a 401 for a bad token
	// (3 s on a real node); 0 by default so tests stay fast.
	AuthFailDelay time.Duration    `yaml:"auth_fail_delay"`
	Version       string           `yaml:"version"`
	Release       string           `yaml:"release"`
	ClusterName   string           `yaml:"cluster_name"`
	Nodes         []NodeConfig     `yaml:"nodes"`
	Storages      []StorageConfig  `yaml:"storages"`
	Templates     []TemplateConfig `yaml:"templates"`
	// Disks are thin pools (and volume groups) every node has beside the storages' own
	// backing, as the hypervisor play makes them (a tenant's pool before onboarding registers it).
	Disks      []DiskConfig `yaml:"disks"`
	RootSecret string       `yaml:"root_secret"` // secret of root@pam!sim; random when empty
	MACPrefix  string       `yaml:"mac_prefix"`  // datacenter MAC prefix, default BC:24:11
	// RenderDir receives each node's files after every SDN apply:
	// <dir>/<node>/etc/network/interfaces.d/sdn, etc/frr/frr.conf, etc/frr/daemons.pve.
	RenderDir string `yaml:"render_dir"`
	// Pvesh is an executable that acts as pvesh (package pvesim/pvesh; cmd/pvesim is one when
	// called as pvesh): a hookscript finds it on its PATH. A VM's hookscript runs from the node's
	// disk under RenderDir (<dir>/<node>/var/lib/vz/snippets/<name> for local:snippets/<name>).
	Pvesh string `yaml:"pvesh"`
	// ReloadCommand runs as `<cmd> <node> <RenderDir>/<node>` after a node's
	// files are written (no shell); exit 0 is a reloaded node. Needs RenderDir.
	ReloadCommand string        `yaml:"reload_command"`
	ReloadTimeout time.Duration `yaml:"reload_timeout"` // per node; default 2m
	// Quorum is corosync's votes, expected votes and QDevice (quorum.go); empty is one vote per node.
	Quorum QuorumConfig `yaml:"quorum"`
}

// NodeConfig is one cluster node.
type NodeConfig struct {
	// LocalIP is the node's underlay address, which a real node finds in its
	// /etc/network/interfaces: the VTEP source of an EVPN controller in
	// peers mode (fabric mode takes it from the fabric).
	LocalIP string `yaml:"local_ip,omitempty"`

	Name   string `yaml:"name"`
	MaxCPU int    `yaml:"maxcpu"`
	MaxMem int64  `yaml:"maxmem"`
	// Bridges are the node's own Linux bridges a VM NIC may use besides running VNets;
	// empty means the bridges of Network.
	Bridges []string `yaml:"bridges"`
	// Network is the node's /etc/network/interfaces as GET /nodes/{node}/network returns it
	// (nodenetwork.go); empty means the installer's eno1 and vmbr0 on it.
	Network []IfaceConfig `yaml:"network"`
}

// StorageConfig is one storage of storage.cfg; Content lists e.g. images, rootdir, iso.
type StorageConfig struct {
	ID      string   `yaml:"id" json:"id"`
	Type    string   `yaml:"type" json:"type"`
	Content []string `yaml:"content" json:"content"`
	Shared  bool     `yaml:"shared" json:"shared"`
	// Clone marks storages that support linked clones (lvmthin, zfs, qcow2 dirs).
	Clone bool `yaml:"clone" json:"clone"`
	// Nodes limits the storage to these nodes (storage.cfg "nodes"); empty is every node.
	Nodes    []string `yaml:"nodes" json:"nodes,omitempty"`
	Disable  bool     `yaml:"disable" json:"disable,omitempty"`
	VGName   string   `yaml:"vgname" json:"vgname,omitempty"`
	ThinPool string   `yaml:"thinpool" json:"thinpool,omitempty"`
	Path     string   `yaml:"path" json:"path,omitempty"`
	// Size is what each node's backing holds at start (the thin pool, the volume group or the
	// directory's file system), in bytes; 0 is 1 TiB. POST /_sim/disks/{node} changes it.
	Size int64 `yaml:"size" json:"-"`
}

// DiskConfig is one volume group, or a thin pool in it, on every node (POST /_sim/disks/{node}
// changes it on one).
type DiskConfig struct {
	VG       string `yaml:"vg"`
	VGSize   int64  `yaml:"vg_size"`
	ThinPool string `yaml:"thinpool"`
	Size     int64  `yaml:"size"`
}

// TemplateConfig is a VM (usually a template) present at start.
type TemplateConfig struct {
	VMID     int               `yaml:"vmid"`
	Node     string            `yaml:"node"`
	Name     string            `yaml:"name"`
	Template bool              `yaml:"template"`
	Pool     string            `yaml:"pool"`
	Config   map[string]string `yaml:"config"`
}

// DefaultConfig is one node dv02hyp002p02 with template 9000
// "debian-12-genericcloud" (without a NIC: ADR-0013), storages local + local-lvm, and root@pam!sim.
func DefaultConfig() Config {
	return Config{
		Listen:      "127.0.0.1:0",
		Seed:        1,
		Version:     "9.1.9",
		Release:     "9.1",
		ClusterName: "sim",
		MACPrefix:   "BC:24:11",
		Nodes: []NodeConfig{{Name: "dv02hyp002p02", MaxCPU: 16, MaxMem: 68719476736, Network: []IfaceConfig{
			// examples/substrate's host_vars as proxmox_node_network renders them
			{Iface: "enp1s0", Type: "eth"},
			{Iface: "vmbr0", Type: "bridge", BridgePorts: "enp1s0", VLANAware: true, CIDR: "10.20.10.2/24"},
			{Iface: "vmbr0.50", Type: "vlan", CIDR: "10.20.50.2/24"},
			{Iface: "vmbr0.51", Type: "vlan", CIDR: "10.20.51.2/24"},
		}}},
		Storages: []StorageConfig{
			{ID: "local", Type: "dir", Content: []string{"iso", "vztmpl", "backup", "snippets"}, Path: "/var/lib/vz"},
			{ID: "local-lvm", Type: "lvmthin", Content: []string{"images", "rootdir"}, Clone: true, VGName: "pve", ThinPool: "data"},
		},
		Templates: []TemplateConfig{{
			VMID: 9000, Node: "dv02hyp002p02", Name: "debian-12-genericcloud", Template: true,
			Config: map[string]string{
				"cores": "2", "memory": "2048", "sockets": "1", "ostype": "l26", "scsihw": "virtio-scsi-single",
				"scsi0":    "local-lvm:base-9000-disk-0,size=3G",
				"ide2":     "local-lvm:vm-9000-cloudinit,media=cdrom",
				"boot":     "order=scsi0",
				"serial0":  "socket",
				"vga":      "serial0",
				"agent":    "1",
				"template": "1",
			},
		}},
	}
}

// LoadConfig reads a YAML config file over DefaultConfig: keys that are
// given replace the defaults (lists are replaced whole).
func LoadConfig(path string) (Config, error) {
	cfg := DefaultConfig()
	b, err := os.ReadFile(path)
	if err != nil {
		return cfg, fmt.Errorf("read config: %w", err)
	}
	dec := yaml.Unmarshal
	if err := dec(b, &cfg); err != nil {
		return cfg, fmt.Errorf("parse config %s: %w", path, err)
	}
	if len(cfg.Nodes) == 0 {
		return cfg, fmt.Errorf("config %s: at least one node is needed", path)
	}
	return cfg, nil
}
