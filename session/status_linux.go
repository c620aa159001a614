package session

import (
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tether-run/tether/internal/par"

	"github.com/tether-run/tether/cgroup"
	"github.com/tether-run/tether/identity"
	"github.com/tether-run/tether/internal/procfs"
	"github.com/tether-run/tether/registry"
)

// StatusOf reads the live facts of a session: supervisor and owner
// liveness through verified pidfds, and the leaf's counters (only after
// checking that the leaf is still the recorded one).
func StatusOf(rec *registry.Record) Status {
	s := Status{Record: rec, State: rec.State, MemoryBytes: -1, AgeMS: time.Since(rec.CreatedAt).Milliseconds()}
	if rec.Live() {
		if h, err := Supervisor(rec); err == nil {
			h.Close()
			s.Supervised = true
		} else if rec.State != registry.StateStarting {
			s.State = "unsupervised"
		}
		if rec.OwnerToken != "" {
			alive := identity.Check(rec.OwnerToken) == nil
			s.OwnerAlive = &alive
		}
	}
	if rec.Cgroup != "" && rec.Live() && sameLeaf(rec.Cgroup, rec.CgroupID) {
		if b, err := procfs.ReadFile(filepath.Join(rec.Cgroup, "cgroup.procs")); err == nil {
			s.Procs = len(strings.Fields(string(b)))
		}
		if b, err := procfs.ReadFile(filepath.Join(rec.Cgroup, "memory.current")); err == nil {
			s.MemoryBytes, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		}
		if b, err := procfs.ReadFile(filepath.Join(rec.Cgroup, "cpu.stat")); err == nil {
			if st, err := cgroup.ParseCPUStat(b); err == nil {
				s.CPUUsec = int64(st.UsageUsec)
			}
		}
	}
	return s
}

func sameLeaf(path string, id uint64) bool {
	var st syscall.Stat_t
	return syscall.Stat(path, &st) == nil && st.Ino == id
}

// Inside reports whether the calling process runs inside rec's leaf, by
// its real cgroup membership.
func Inside(rec *registry.Record) bool {
	if rec.Cgroup == "" || !sameLeaf(rec.Cgroup, rec.CgroupID) {
		return false
	}
	m, err := cgroup.Mount()
	if err != nil {
		return false
	}
	self, err := cgroup.Self(0)
	if err != nil {
		return false
	}
	dir := filepath.Join(m, self)
	return dir == rec.Cgroup || strings.HasPrefix(dir, rec.Cgroup+"/")
}

// StatusOfAll is StatusOf for many records, in parallel: each one is a few
// independent system calls.
func StatusOfAll(recs []*registry.Record) []Status {
	out := make([]Status, len(recs))
	par.For(len(recs), func(i int) { out[i] = StatusOf(recs[i]) })
	return out
}
