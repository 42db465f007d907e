package sdn

// The errors callers tell apart with errors.As: a lock held by another client, an object that
// belongs to someone else, an apply that did not reach every node.

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/deevnet/tenant/internal/pve"
)

// LockHeldError says another client holds the global SDN lock.
type LockHeldError struct {
	Age    time.Duration // 0 when PVE did not say
	Waited time.Duration // how long this client waited for it: a lower bound of its age
	Err    error
}

func (e *LockHeldError) Error() string {
	age := "PVE reports neither its holder nor its age; set lock_wait to wait for it"
	switch {
	case e.Age > 0:
		age = "held for " + e.Age.Round(time.Second).String()
	case e.Waited >= time.Second:
		age = "held for at least " + e.Waited.Round(time.Second).String() + ": waited that long for it"
	}
	return fmt.Sprintf("the SDN lock is held by another client (%s); wait for it, or break it with DELETE /cluster/sdn/lock force=1 once you know it is stale: %v", age, e.Err)
}

func (e *LockHeldError) Unwrap() error { return e.Err }

// ageRe finds a lock age PVE-like servers put in the message ("... locked since 120s" or
// "age 120s"); real PVE 9.1 does not expose it, so the age is optional.
var ageRe = regexp.MustCompile(`(?i)(?:age|since|for)[ :=]+([0-9]+(?:\.[0-9]+)?)\s*(s|sec|seconds|m|min|h)?\b`)

// classify turns PVE's "invalid lock token provided!" into a *LockHeldError, and says what a
// permission failure on an SDN write means.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var ae *pve.APIError
	if errors.As(err, &ae) && ae.Status == 403 {
		return fmt.Errorf("%w: zones, the controller, the fabric, the lock and the apply need SDN.Allocate on /sdn, which a tenant's token does not hold; run this with the substrate's credential (docs/adr/0008-sdn-apply.md)", err)
	}
	if !errors.As(err, &ae) || !ae.Contains("invalid lock token") {
		return err
	}
	le := &LockHeldError{Err: err}
	if m := ageRe.FindStringSubmatch(ae.Message); m != nil {
		f, _ := strconv.ParseFloat(m[1], 64)
		unit := time.Second
		switch m[2] {
		case "m", "min":
			unit = time.Minute
		case "h":
			unit = time.Hour
		}
		le.Age = time.Duration(f * float64(unit))
	}
	return le
}

// OwnershipError says an object belongs to someone else.
type OwnershipError struct{ Msg string }

func (e *OwnershipError) Error() string { return e.Msg }

// describeZones names zone statuses for messages.
func describeZones(zs []ZoneStatus) string {
	parts := make([]string, len(zs))
	for i, z := range zs {
		parts[i] = z.String()
	}
	return strings.Join(parts, ", ")
}

// ReloadError is an apply whose configuration was committed but did not
// reach every node (PVE still ends the apply task OK).
type ReloadError struct {
	Zones []ZoneStatus
}

func (e *ReloadError) Error() string {
	return "the SDN configuration was committed but did not reach every node: " + describeZones(e.Zones) +
		"; check the node's network (reload) task log; the next apply reloads it again"
}
