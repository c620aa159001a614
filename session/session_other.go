//go:build !linux && !windows && !darwin

package session

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// Start is not implemented on this system.
func start(ctx context.Context, reg *store.Registry, exe string, o Options) (*registry.Record, error) {
	return nil, errors.ErrUnsupported
}

// Supervise is not implemented on this system.
func supervise(stateDir, name string, ready *os.File) error { return errors.ErrUnsupported }

// Logs is not implemented on this system.
func logs(ctx context.Context, reg *store.Registry, name string, w io.Writer, o LogOptions) error {
	return errors.ErrUnsupported
}

// StopMany is not implemented on this system.
func stopMany(reg *store.Registry, names []string, req stopRequest, wait time.Duration, kill, abandon <-chan struct{}, progress func(name string, step receipt.Step)) []StopResult {
	out := make([]StopResult, len(names))
	for i, n := range names {
		out[i] = StopResult{Name: n, Err: errors.ErrUnsupported}
	}
	return out
}

// Wait is not implemented on this system.
func waitEnd(ctx context.Context, reg *store.Registry, name string) (*registry.Record, error) {
	return nil, errors.ErrUnsupported
}

// family is not implemented on this system.
func family(reg *store.Registry, sup string) []*registry.Record { return nil }

// StatusOf returns the record's own state on this system.
func StatusOf(rec *registry.Record) Status {
	return Status{Record: rec, State: rec.State, MemoryBytes: -1}
}

// Inside reports false on this system.
func Inside(rec *registry.Record) bool { return false }

// StatusOfAll is StatusOf for many records.
func StatusOfAll(recs []*registry.Record) []Status {
	out := make([]Status, len(recs))
	for i, r := range recs {
		out[i] = StatusOf(r)
	}
	return out
}

// Exec is not implemented on this system.
func execIn(reg *store.Registry, name string, o ExecOptions, stdio [3]*os.File, sigs <-chan os.Signal) (receipt.Exit, error) {
	return receipt.Exit{Code: 125, MainStatus: -1}, errors.ErrUnsupported
}

// statusWithProcesses is StatusOf on this system: members are not listed.
func statusWithProcesses(rec *registry.Record) Status { return StatusOf(rec) }

// readyFile is nil on this system: there is no supervisor.
func readyFile() *os.File { return nil }
