package plan

import (
	"fmt"
	"regexp"
	"strings"
)

// format is one of PVE's named string formats (../shared/pve-api/formats.json), for the ids
// this package derives. Checking them here means a plan never yields an id that PVE refuses.
type format struct {
	name   string
	re     *regexp.Regexp
	minLen int
	maxLen int
}

var (
	fmtSDNZoneID    = format{"pve-sdn-zone-id", regexp.MustCompile(`(?i)^[a-z][a-z0-9]*[a-z0-9]$`), 2, 8}
	fmtSDNVNetID    = format{"pve-sdn-vnet-id", regexp.MustCompile(`(?i)^[a-z][a-z0-9]*[a-z0-9]$`), 2, 8}
	fmtControllerID = format{"pve-sdn-controller-id", regexp.MustCompile(`(?i)^[a-z][a-z0-9_-]*[a-z0-9]$`), 2, 64}
	fmtFabricID     = format{"pve-sdn-fabric-id", regexp.MustCompile(`(?i)^[a-z0-9][a-z0-9-]{0,6}[a-z0-9]$`), 2, 8}
	fmtPoolID       = format{"pve-poolid", regexp.MustCompile(`^[A-Za-z0-9.\-_]+(/[A-Za-z0-9.\-_]+){0,2}$`), 1, 0}
	fmtUserID       = format{"pve-userid", regexp.MustCompile(`^[^\s:/]+@[A-Za-z][A-Za-z0-9.\-_]+$`), 3, 64}
	fmtTokenID      = format{"pve-tokenid", regexp.MustCompile(`^[^\s:/]+@[A-Za-z][A-Za-z0-9.\-_]+![A-Za-z][A-Za-z0-9.\-_]+$`), 1, 0}
	fmtVMID         = format{"pve-vmid", regexp.MustCompile(`^[1-9][0-9]{2,8}$`), 3, 9}
	fmtDNSName      = format{"dns-name", regexp.MustCompile(`^(([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)\.)*([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)$`), 1, 253}
	fmtNode         = format{"pve-node", regexp.MustCompile(`^(?i:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)$`), 1, 63}
	fmtTenantName   = format{"tenant name", regexp.MustCompile(`^[a-z][a-z0-9-]*[a-z0-9]$`), 2, 20}
	fmtTSIGKeyName  = fmtDNSName
	fmtStorageID    = format{"pve-storage-id", regexp.MustCompile(`(?i)^[a-z][a-z0-9._-]*[a-z0-9]$`), 2, 0}
	// pve-storage-vgname (pve-storage Plugin.pm verify_vgname), also the thinpool's format
	fmtVGName = format{"pve-storage-vgname", regexp.MustCompile(`^[a-zA-Z0-9.+_][a-zA-Z0-9.+_-]*$`), 1, 0}
)

func checkFormat(f format, v string) error {
	if len(v) < f.minLen {
		return fmt.Errorf("%q is too short for %s (at least %d characters)", v, f.name, f.minLen)
	}
	if f.maxLen > 0 && len(v) > f.maxLen {
		return fmt.Errorf("%q is too long for %s (at most %d characters)", v, f.name, f.maxLen)
	}
	if !f.re.MatchString(v) {
		return fmt.Errorf("%q does not match %s (%s)", v, f.name, f.re)
	}
	return nil
}

// checkDNSName checks a name as a DNS name whose labels are at most 63 characters.
func checkDNSName(name string) error {
	if err := checkFormat(fmtDNSName, name); err != nil {
		return err
	}
	for _, label := range strings.Split(name, ".") {
		if len(label) > 63 {
			return fmt.Errorf("label %q of %q is longer than 63 characters", label, name)
		}
	}
	return nil
}
