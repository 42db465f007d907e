package access

import (
	"context"
	"testing"
)

// An envelope below what the tenant's pool already holds is refused before any write, naming the
// field; one it fits passes; a stopped VM's vCPUs and memory do not count (only what runs does),
// its disk does.
func TestEnvelopeBelowUseRefused(t *testing.T) {
	srv := startSim(t)
	ctx := context.Background()
	env := func(vms, cores, memory, disk int) map[string]any {
		return map[string]any{"name": "tdemo", "index": 1,
			"envelope": map[string]any{"vms": vms, "cores": cores, "memory": memory, "disk": disk}}
	}
	if res := run(t, srv, env(8, 16, 32768, 256)); res["failed"] == true {
		t.Fatalf("onboard: %v", res["msg"])
	}
	root := rootClient(t, srv)
	if err := task(ctx, root, "POST", "/nodes/"+node+"/qemu/9000/clone", map[string]any{"newid": 10101, "pool": "tenant-tdemo", "full": 1}); err != nil {
		t.Fatal(err)
	}
	if err := root.Put(ctx, "/nodes/"+node+"/qemu/10101/config", map[string]any{"cores": 4, "memory": 4096}, nil); err != nil {
		t.Fatal(err)
	}
	if err := task(ctx, root, "POST", "/nodes/"+node+"/qemu/10101/status/start", nil); err != nil {
		t.Fatal(err)
	}
	refused(t, srv, env(8, 2, 32768, 256), "4 running vCPUs, over the envelope's 2 (envelope.cores)")
	refused(t, srv, env(8, 16, 1024, 256), "4096 MiB of running memory, over the envelope's 1024 (envelope.memory)")
	refused(t, srv, env(8, 16, 32768, 2), "3 GiB of disk, over the envelope's 2 (envelope.disk)")
	refused(t, srv, env(0, 16, 32768, 256), "envelope.vms 0 must be at least 1")
	if res := run(t, srv, env(1, 4, 4096, 3)); res["failed"] == true {
		t.Fatalf("an envelope the use fits: %v", res["msg"])
	}
	if err := task(ctx, root, "POST", "/nodes/"+node+"/qemu/10101/status/stop", nil); err != nil {
		t.Fatal(err)
	}
	if res := run(t, srv, env(1, 1, 512, 3)); res["failed"] == true {
		t.Fatalf("a stopped VM's vCPUs and memory counted: %v", res["msg"])
	}
}
