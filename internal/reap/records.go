//go:build linux || windows || darwin

package reap

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// newReport is an empty report for o, and o with its defaults.
func newReport(o Options) (*Report, Options) {
	if o.Grace == 0 {
		o.Grace = 2 * time.Second
	}
	return &Report{SchemaVersion: 1, DryRun: o.DryRun, Actions: []Action{}, OrphanLeaves: []OrphanLeaf{}}, o
}

// readRecord reads the record name; when it cannot be, the action says
// why and what reap does: a corrupt one is quarantined, an unsafe or
// unreadable one left alone.
func readRecord(reg *store.Registry, name string) (*registry.Record, Action, bool) {
	a := Action{Name: name}
	rec, err := reg.Read(name)
	switch {
	case errors.Is(err, registry.ErrCorrupt), errors.Is(err, registry.ErrBadName):
		a.Class, a.Plan, a.Error = Corrupt, "quarantine the record (rename it with the reason beside it)", err.Error()
	case errors.Is(err, registry.ErrUnsafe):
		a.Class, a.Plan, a.Error = Unsafe, "leave it: not this user's, or open to others, or a symlink", err.Error()
	case err != nil:
		a.Class, a.Plan, a.Error = Unresolvable, "leave it: the record cannot be read", err.Error()
	default:
		a.Kind = rec.Kind
		return rec, a, true
	}
	return nil, a, false
}

// finishRecord ends a record: a run's is deleted (its receipt kept), a
// session's marked stopped; runtime dirs go once the stop is confirmed.
func finishRecord(reg *store.Registry, rec *registry.Record, why string, r *receipt.Receipt) error {
	var errs []error
	if r != nil {
		if rec.Kind == "session" {
			r.Name = rec.Name
		}
		b, _ := r.JSON()
		p, err := reg.WriteReceipt(rec.Name, rec.RunID, b)
		errs = append(errs, err)
		if err == nil {
			rec.Receipt = p
		}
		rec.Exit = &r.Exit
	}
	if r != nil && !r.StopConfirmed {
		return errors.Join(append(errs, fmt.Errorf("reap: stop of %q not confirmed; record kept", rec.Name))...)
	}
	if rec.Kind == "run" {
		return errors.Join(append(errs, reg.Delete(rec.Name))...)
	}
	rec.State, rec.StopReason, rec.UpdatedAt = registry.StateStopped, why, time.Now().UTC()
	errs = append(errs, reg.Write(rec), reg.Release(rec.Name))
	return errors.Join(errs...)
}

// quarantine renames a corrupt record out of the way, with the reason in
// a file beside it. Nothing is deleted.
func quarantine(reg *store.Registry, name, why string) error {
	q := filepath.Join(reg.Dir, "quarantine")
	if err := reg.EnsureDir(q); err != nil { // a planted quarantine/ is refused
		return err
	}
	stamp := time.Now().UTC().Format("20060102T150405.000000000")
	dst := filepath.Join(q, name+".json."+stamp)
	src := filepath.Join(reg.Dir, "records", name+".json")
	if _, err := os.Lstat(src); err != nil {
		src = filepath.Join(reg.Dir, "ended", name+".json")
	}
	if err := os.Rename(src, dst); err != nil {
		return err
	}
	return os.WriteFile(dst+".reason", []byte(why+"\n"), 0o600)
}
