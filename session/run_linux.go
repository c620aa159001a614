package session

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"time"

	"github.com/tether-run/tether/identity"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// RunTracker keeps the registry record (a nil *RunTracker does nothing) of a `tether run`, so that a crash
// of tether at any point leaves something `tether reap` can act on. The
// record is written before the containment exists, completed before the
// command is spawned, marked at each later step, and deleted once the
// stop is confirmed.
type RunTracker struct {
	reg *registry.Registry
	rec registry.Record
}

// TrackRun writes the starting record of a run of argv, named by runID
// (the receipt's run_id).
func TrackRun(reg *registry.Registry, argv []string, cwd, runID string) (*RunTracker, error) {
	self, err := identity.OpenPID(os.Getpid())
	if err != nil {
		return nil, err
	}
	self.Close()
	var b [6]byte
	rand.Read(b[:])
	now := time.Now().UTC()
	t := &RunTracker{reg: reg, rec: registry.Record{
		Name: "run-" + hex.EncodeToString(b[:]), Kind: "run", State: registry.StateStarting, RunID: runID,
		Argv: argv, Cwd: cwd, CreatedAt: now, UpdatedAt: now, Owner: "none",
		Supervisor: self.Token.String(), Until: UntilMainExit,
	}}
	return t, reg.Write(&t.rec)
}

// Name returns the run's record name.
func (t *RunTracker) Name() string {
	if t == nil {
		return ""
	}
	return t.rec.Name
}

func (t *RunTracker) write() error {
	t.rec.UpdatedAt = time.Now().UTC()
	return t.reg.Write(&t.rec)
}

// Prepared records the containment before the command is spawned.
func (t *RunTracker) Prepared(r *receipt.Receipt) error {
	if t == nil {
		return nil
	}
	t.rec.Mechanism = string(r.Mechanism)
	if r.Cgroup != nil {
		t.rec.Cgroup, t.rec.CgroupID = r.Cgroup.Path, r.Cgroup.ID
	}
	if r.Limits != nil {
		t.rec.V1Cgroups = r.Limits.V1Leaves
	}
	return t.write()
}

// Started records the main process.
func (t *RunTracker) Started(r *receipt.Receipt) {
	if t == nil {
		return
	}
	t.rec.State = registry.StateRunning
	if r.Main != nil {
		t.rec.Main = r.Main.Token
	}
	t.write()
}

// Stopping marks the stop protocol's start.
func (t *RunTracker) Stopping(reason string) {
	if t == nil {
		return
	}
	t.rec.State, t.rec.StopReason = registry.StateStopping, reason
	t.write()
}

// Finish deletes the record of a confirmed stop, or keeps it marked with
// what went wrong for `tether reap`.
func (t *RunTracker) Finish(r *receipt.Receipt, err error) error {
	if t == nil {
		return nil
	}
	if r != nil && r.StopConfirmed {
		return t.reg.Delete(t.rec.Name)
	}
	t.rec.State = registry.StateStopping
	if err != nil {
		t.rec.Error = err.Error()
	}
	return t.write()
}
