//go:build linux || windows || darwin

package session

import (
	"os"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/par"
	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/registry"
)

// StatusOf reads the live facts of a session: supervisor and owner
// liveness through verified pidfds, and the leaf's counters (only after
// checking that the leaf is still the recorded one).
func StatusOf(rec *registry.Record) Status {
	s, _ := status(rec)
	return s
}

// statusWithProcesses is StatusOf with the members listed.
func statusWithProcesses(rec *registry.Record) Status {
	s, pids := status(rec)
	s.Processes = describe(pids)
	return s
}

// status is StatusOf, with the members' pids it read (none without a
// live leaf).
func status(rec *registry.Record) (Status, []int) {
	s := Status{Record: rec, State: rec.State, MemoryBytes: -1, AgeMS: time.Since(rec.CreatedAt).Milliseconds()}
	if _, err := os.Lstat(rec.RuntimeDir); err == nil {
		s.RuntimeDirExists = true
	}
	if !rec.Live() {
		s.EndedAt = rec.UpdatedAt
		return s, nil
	}
	if h, err := sessionctl.SupervisorOf(rec); err == nil {
		h.Close()
		s.Supervised = true
	} else if rec.State != registry.StateStarting {
		s.State = "unsupervised"
	}
	if rec.OwnerToken != "" {
		alive := identity.Check(rec.OwnerToken) == nil
		s.OwnerAlive = &alive
	}
	if t, err := identity.Parse(rec.Main); err == nil && identity.Check(rec.Main) == nil {
		s.MainPID = t.PID
	}
	pids := groupFacts(rec, &s)
	return s, pids
}

// StatusOfAll is StatusOf for many records, in parallel: each one is a few
// independent system calls.
func StatusOfAll(recs []*registry.Record) []Status {
	out := make([]Status, len(recs))
	par.For(len(recs), func(i int) { out[i] = StatusOf(recs[i]) })
	return out
}
