package session

import (
	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/identity"
	"github.com/tether-run/tether/registry"
)

// groupFacts adds to s what the session's job says — its processes,
// their commit charge and CPU time — read through the job's name
// while its supervisor, which created the job and holds it, is proven
// alive before and after. It lists no pids: tether status --processes
// reads Linux's /proc.
func groupFacts(rec *registry.Record, s *Status) []int {
	if u, ok := jobUsage(rec, s.Supervised); ok {
		s.Procs, s.CPUUsec = u.Processes, u.CPU.Microseconds()
		s.MemoryBytes, s.MemorySource = u.CommitBytes, "commit charge"
	}
	return nil
}

// jobUsage reads rec's job, if its supervisor is alive (supervised: seen
// alive just before) and still alive after the read.
func jobUsage(rec *registry.Record, supervised bool) (contain.JobUsage, bool) {
	if !supervised || rec.RunID == "" {
		return contain.JobUsage{}, false
	}
	u, err := contain.ReadJobUsage(rec.RunID)
	if err != nil || identity.Check(rec.Supervisor) != nil {
		return contain.JobUsage{}, false
	}
	return u, true
}

// Inside reports whether the calling process runs in rec's job.
func Inside(rec *registry.Record) bool {
	u, ok := jobUsage(rec, rec.Live() && identity.Check(rec.Supervisor) == nil)
	return ok && u.Inside
}
