package pvesim

// Parameters PVE keeps to root@pam on the VM calls a tenant's token may make, and the storage
// check of a resize (qemu-server src/PVE/API2/Qemu.pm).

import (
	"strings"
)

// rootParams refuses, for any caller but root@pam, each of names that is set (Perl-true), in
// PVE's order, with its 400 "Only root may use this option." (Qemu.pm:2823 destroy_vm,
// 3565-3581 vm_start, 3735-3743 vm_stop, 3839 vm_reset, 3910-3914 vm_shutdown, 5997 resize_vm).
// Root's tokens are not root@pam either.
func rootParams(h handlerFunc, names ...string) handlerFunc {
	return func(r *reqCtx) (any, error) {
		if !r.who.isRoot() {
			for _, n := range names {
				if v := r.params.Str(n); v != "" && v != "0" {
					return nil, paramErr(map[string]string{n: "Only root may use this option."})
				}
			}
		}
		return h(r)
	}
}

// rootPowerParams are rootParams of each power action.
var rootPowerParams = map[string][]string{
	"start":    {"stateuri", "skiplock", "migratedfrom", "migration_type", "migration_network", "targetstorage", "force-cpu", "with-conntrack-state", "nets-host-mtu"},
	"stop":     {"skiplock", "keepActive", "migratedfrom"},
	"shutdown": {"skiplock", "keepActive"},
	"reset":    {"skiplock"},
}

// vmResizeChecked is resize_vm's checks before the resize itself: skiplock is root's, and the
// disk's storage needs Datastore.AllocateSpace (Qemu.pm:6025); the disk's own errors (missing, a
// CD-ROM) come first, from vmResize.
func (s *Server) vmResizeChecked(r *reqCtx, vm *VM) (any, error) {
	return rootParams(func(r *reqCtx) (any, error) {
		volid, f := driveFile(vm.Config[r.params.Str("disk")])
		if volid != "" && f["media"] != "cdrom" {
			sid, _, _ := strings.Cut(volid, ":")
			if err := s.st.check(r.who, "/storage/"+sid, []string{"Datastore.AllocateSpace"}, false); err != nil {
				return nil, err
			}
		}
		return s.vmResize(r, vm)
	}, "skiplock")(r)
}
