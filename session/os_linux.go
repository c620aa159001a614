package session

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/tether-run/tether/cgroup"
	"github.com/tether-run/tether/delegate"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// What sessions do on Linux only: the supervisor moves into a systemd
// scope; the enclosing session is found by cgroup.

// fdDir lists this process's open descriptors.
const fdDir = "/proc/self/fd"

// enterScope moves the supervisor, under systemd, into a transient scope
// of its own with Delegate=yes before anything starts: the session then
// outlives the unit its caller ran in (systemd stops a unit's whole
// cgroup), and its leaves can have limits. Where no scope can be had the
// supervisor stays put and contain chooses as it would anywhere (its own
// cgroup when delegated, else the fallback), which the receipt records.
func enterScope(spec *supervisorSpec, name string) {
	if spec.CgroupParent != "" || spec.Mechanism == string(receipt.MechanismFallback) || !delegate.Booted() {
		return
	}
	delegate.Prepare(context.Background(), delegate.PrepareOptions{
		Limits: !spec.Limits.IsZero(), OwnScope: true,
		Scope: delegate.Options{Description: "tether session " + name},
	})
}

// enclosingSession finds the live session whose cgroup leaf the caller
// runs in, from its real cgroup membership (the leaf's path and id), not
// from environment variables.
func enclosingSession(reg *registry.Registry) (string, bool) {
	m, err := cgroup.Mount()
	if err != nil {
		return "", false
	}
	self, err := cgroup.Self(0)
	if err != nil || self == "/" {
		return "", false
	}
	dir := filepath.Join(m, self)
	var st syscall.Stat_t
	if syscall.Stat(dir, &st) != nil {
		return "", false
	}
	recs, _ := reg.ListLive()
	for _, r := range recs {
		if r.Live() && r.Cgroup != "" && (r.Cgroup == dir || strings.HasPrefix(dir, r.Cgroup+"/")) {
			var lst syscall.Stat_t
			if syscall.Stat(r.Cgroup, &lst) == nil && lst.Ino == r.CgroupID {
				return r.Name, true
			}
		}
	}
	return "", false
}

// bindings are the caveats of a supervisor's session: none on Linux,
// where enterScope takes the session out of its caller's unit.
func bindings() []string { return nil }
