package session

import (
	"path/filepath"
	"strings"
	"syscall"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/store"
)

// What sessions do on Linux only: the supervisor moves into a systemd
// scope; the enclosing session is found by cgroup.

// enclosingSession finds the live session whose cgroup leaf the caller
// runs in, from its real cgroup membership (the leaf's path and id), not
// from environment variables.
func enclosingSession(reg *store.Registry) (string, bool) {
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
