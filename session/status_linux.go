package session

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tether-run/tether/cgroup"
	"github.com/tether-run/tether/identity"
	"github.com/tether-run/tether/registry"
)

// Status is a record with what is true of it now.
type Status struct {
	*registry.Record
	// State adds "unsupervised" to the record's states: the record says
	// live but its supervisor is gone.
	State       string `json:"state"`
	Supervised  bool   `json:"supervised"`
	OwnerAlive  *bool  `json:"owner_alive,omitempty"`
	AgeMS       int64  `json:"age_ms"`
	Procs       int    `json:"procs"`
	MemoryBytes int64  `json:"memory_bytes"` // -1 when the leaf has no memory controller
	CPUUsec     int64  `json:"cpu_usec"`
}

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
			alive := false
			if tok, err := identity.Parse(rec.OwnerToken); err == nil {
				if h, err := identity.Open(tok); err == nil {
					h.Close()
					alive = true
				}
			}
			s.OwnerAlive = &alive
		}
	}
	if rec.Cgroup != "" && rec.Live() && sameLeaf(rec.Cgroup, rec.CgroupID) {
		if b, err := os.ReadFile(filepath.Join(rec.Cgroup, "cgroup.procs")); err == nil {
			s.Procs = len(strings.Fields(string(b)))
		}
		if b, err := os.ReadFile(filepath.Join(rec.Cgroup, "memory.current")); err == nil {
			s.MemoryBytes, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		}
		if b, err := os.ReadFile(filepath.Join(rec.Cgroup, "cpu.stat")); err == nil {
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
