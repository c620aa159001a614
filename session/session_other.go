//go:build !linux

package session

import (
	"errors"
	"io"
	"os"
	"time"

	"github.com/tether-run/tether/identity"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// Start is not implemented on this system.
func Start(reg *registry.Registry, o Options) (*registry.Record, error) {
	return nil, errors.ErrUnsupported
}

// Supervise is not implemented on this system.
func Supervise(stateDir, name string, ready *os.File) error { return errors.ErrUnsupported }

// Supervisor is not implemented on this system.
func Supervisor(rec *registry.Record) (*identity.Handle, error) { return nil, errors.ErrUnsupported }

// Logs is not implemented on this system.
func Logs(reg *registry.Registry, name string, w io.Writer, o LogOptions) error {
	return errors.ErrUnsupported
}

// Stop is not implemented on this system.
func Stop(reg *registry.Registry, name string, grace, wait time.Duration) (*receipt.Receipt, error) {
	return nil, errors.ErrUnsupported
}

// StopMany is not implemented on this system.
func StopMany(reg *registry.Registry, names []string, req StopRequest, wait time.Duration, kill, abandon <-chan struct{}, progress func(name string, step receipt.Step)) []StopResult {
	out := make([]StopResult, len(names))
	for i, n := range names {
		out[i] = StopResult{Name: n, Err: errors.ErrUnsupported}
	}
	return out
}

// Wait is not implemented on this system.
func Wait(reg *registry.Registry, name string) (*registry.Record, error) {
	return nil, errors.ErrUnsupported
}

// Family is not implemented on this system.
func Family(reg *registry.Registry, sup string) []*registry.Record { return nil }

// Reclaim is not implemented on this system.
func Reclaim(reg *registry.Registry, rec *registry.Record) error { return errors.ErrUnsupported }

// StatusOf returns the record's own state on this system.
func StatusOf(rec *registry.Record) Status {
	return Status{Record: rec, State: rec.State, MemoryBytes: -1}
}

// Inside reports false on this system.
func Inside(rec *registry.Record) bool { return false }

// RunTracker keeps a run's record; not implemented on this system.
type RunTracker struct{}

// TrackRun is not implemented on this system.
func TrackRun(reg *registry.Registry, argv []string, cwd, runID string) (*RunTracker, error) {
	return nil, errors.ErrUnsupported
}

// Name is not implemented on this system.
func (t *RunTracker) Name() string { return "" }

// Prepared is not implemented on this system.
func (t *RunTracker) Prepared(r *receipt.Receipt) error { return nil }

// Started is not implemented on this system.
func (t *RunTracker) Started(r *receipt.Receipt) {}

// Stopping is not implemented on this system.
func (t *RunTracker) Stopping(reason string) {}

// Finish is not implemented on this system.
func (t *RunTracker) Finish(r *receipt.Receipt, err error) error { return nil }

// StatusOfAll is StatusOf for many records.
func StatusOfAll(recs []*registry.Record) []Status {
	out := make([]Status, len(recs))
	for i, r := range recs {
		out[i] = StatusOf(r)
	}
	return out
}

// Exec is not implemented on this system.
func Exec(reg *registry.Registry, name string, argv, env []string, dir string, stdio [3]*os.File, sigs <-chan os.Signal) (receipt.Exit, error) {
	return receipt.Exit{Code: 125, MainStatus: -1}, errors.ErrUnsupported
}

// StatusWithProcesses is StatusOf on this system: members are not listed.
func StatusWithProcesses(rec *registry.Record) Status { return StatusOf(rec) }
