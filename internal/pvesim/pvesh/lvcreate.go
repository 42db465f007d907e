package pvesh

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// EnvNode names the node a stand-in command acts on (a real node's lvcreate acts on its own disks;
// the simulator's nodes share one binary, so the lab's node environment names the node).
const EnvNode = "PVESIM_NODE"

// LVCreate runs `lvcreate --type thin-pool -L <size> -n <pool> <vg>` (sizes with a unit of k, m, g
// or t, binary as lvm2 reads them; no unit is MiB) against the simulated node $PVESIM_NODE: the
// one LVM call the hypervisor play makes on a node (roles/substrate tasks/thinpool.yml). It refuses
// what lvm2 refuses (a missing group, an existing pool, too little free space), with lvm2's
// message and exit status 5.
func LVCreate(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if err := lvcreate(args, getenv, stdout); err != nil {
		_, _ = fmt.Fprintln(stderr, err)
		return 5
	}
	return 0
}

func lvcreate(args []string, getenv func(string) string, stdout io.Writer) error {
	var typ, size, name, vg string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-q" || a == "--quiet" || a == "-y" || a == "--yes":
		case (a == "--type" || a == "-L" || a == "--size" || a == "-n" || a == "--name") && i+1 < len(args):
			i++
			switch a {
			case "--type":
				typ = args[i]
			case "-L", "--size":
				size = args[i]
			default:
				name = args[i]
			}
		case !strings.HasPrefix(a, "-") && vg == "":
			vg = a
		default:
			return fmt.Errorf("lvcreate: %q: pvesim's lvcreate takes --type thin-pool -L <size> -n <name> <vg> only", a)
		}
	}
	if typ != "thin-pool" || size == "" || name == "" || vg == "" {
		return fmt.Errorf("usage: lvcreate --type thin-pool -L <size> -n <name> <vg> (pvesim's lvcreate makes thin pools only)")
	}
	bytes, err := lvmSize(size)
	if err != nil {
		return err
	}
	node, base := getenv(EnvNode), getenv(EnvURL)
	if node == "" || base == "" {
		return fmt.Errorf("lvcreate: %s and %s must be set (the lab's node environment sets them)", EnvNode, EnvURL)
	}
	hc, err := client(getenv(EnvCA))
	if err != nil {
		return err
	}
	body, _ := json.Marshal(map[string]any{"vg": vg, "thinpool": name, "size": bytes, "create": true})
	resp, err := hc.Post(base+"/_sim/disks/"+url.PathEscape(node), "application/json", strings.NewReader(string(body)))
	if err != nil {
		return fmt.Errorf("lvcreate: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s", strings.TrimRight(string(raw), "\n"))
	}
	_, err = fmt.Fprintf(stdout, "  Logical volume %q created.\n", name)
	return err
}

// lvmSize reads lvcreate's -L: a number with an optional unit (b, k, m, g, t; binary), MiB by default.
func lvmSize(s string) (int64, error) {
	shift := 20
	num := strings.ToLower(s)
	if n := len(num); n > 0 {
		switch num[n-1] {
		case 'b':
			shift, num = 0, num[:n-1]
		case 'k':
			shift, num = 10, num[:n-1]
		case 'm':
			shift, num = 20, num[:n-1]
		case 'g':
			shift, num = 30, num[:n-1]
		case 't':
			shift, num = 40, num[:n-1]
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v <= 0 || v > 1<<(62-shift) {
		return 0, fmt.Errorf("lvcreate: -L %q: not a size (a whole number with an optional unit k, m, g or t)", s)
	}
	return v << shift, nil
}
