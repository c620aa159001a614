//go:build windows || darwin

package reap

import (
	"errors"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/registry"
)

// Run reaps the registry reg on Windows and macOS, where there are no
// leaves (so no orphan-leaf scan) and identity is all reap can prove. On
// Windows a job is closed with its holder (KILL_ON_JOB_CLOSE: the kernel
// kills every member however the supervisor or tether died), so what a
// dead one leaves is its record and runtime dir; on macOS a dead tether
// run's main process may still run. Reap proves the supervisor dead by
// its token, proves the main process gone by its token (or kills it
// through a handle proven to be it; on macOS what it started cannot be
// proven and is left alone, as in Linux's fallback), then ends the record
// and frees the name.
func Run(reg *store.Registry, o Options) *Report {
	t0 := time.Now()
	rep, o := newReport(o)
	names, err := reg.Names("records")
	if err != nil {
		rep.Actions = append(rep.Actions, Action{Class: Unresolvable, Plan: "read the records directory", Error: err.Error()})
	}
	for _, name := range names {
		a, rec := classifyIdentity(reg, name)
		if a.Class == Supervised && o.Quick {
			continue
		}
		if (rec != nil || a.Class == Corrupt) && !o.DryRun {
			actIdentity(reg, rec, &a)
		}
		rep.Actions = append(rep.Actions, a)
	}
	rep.DurationMS = time.Since(t0).Milliseconds()
	return rep
}

// classifyIdentity decides what the live record name is. It returns the
// record when reap is to act on it.
func classifyIdentity(reg *store.Registry, name string) (Action, *registry.Record) {
	rec, a, ok := readRecord(reg, name)
	if !ok {
		return a, nil
	}
	sup := identity.Check(rec.Supervisor)
	switch {
	case sup == nil:
		a.Class, a.Plan = Supervised, "leave it: its supervisor is alive"
		return a, nil
	case rec.Supervisor != "" && !errors.Is(sup, identity.ErrGone) && !errors.Is(sup, identity.ErrMismatch):
		a.Class, a.Plan, a.Error = Unresolvable, "leave it: its supervisor cannot be checked", sup.Error()
		return a, nil
	case rec.Supervisor == "" && time.Since(rec.UpdatedAt) < StaleAge:
		a.Class, a.Plan = Supervised, "leave it: still starting (no supervisor recorded yet)"
		return a, nil
	}
	if t, err := identity.Parse(rec.Supervisor); err == nil {
		if boot, _ := identity.BootID(); t.BootID != boot {
			a.Class, a.Plan = OtherBoot, "clean the record and runtime dir: nothing of an earlier boot runs"
			return a, rec
		}
	}
	if rec.Main != "" && identity.Check(rec.Main) == nil {
		a.Class, a.Plan = DeadFallback, "kill the recorded main process (token checked), then clean the record and runtime dir"
		return a, rec
	}
	a.Class, a.Plan = DeadEmpty, deadEmptyPlan
	return a, rec
}

// actIdentity carries out a's plan for rec (nil for a corrupt record).
func actIdentity(reg *store.Registry, rec *registry.Record, a *Action) {
	var err error
	switch a.Class {
	case Corrupt:
		err = quarantine(reg, a.Name, a.Error)
	case OtherBoot:
		err = finishRecord(reg, rec, "reboot", nil)
	case DeadEmpty:
		err = finishRecord(reg, rec, "supervisor-died", nil)
	case DeadFallback:
		if err = identity.End(rec.Main, 10*time.Second); err == nil {
			err = finishRecord(reg, rec, "reaped", nil)
		}
	default:
		return
	}
	a.Done = err == nil
	if err != nil {
		a.Error = err.Error()
	}
}

// classifyOne is classifyIdentity for one record, outside a Run.
func classifyOne(reg *store.Registry, name string, _ Options) (Action, *registry.Record) {
	return classifyIdentity(reg, name)
}

// actOne is actIdentity for one record, outside a Run.
func actOne(reg *store.Registry, rec *registry.Record, a *Action, _ Options) {
	actIdentity(reg, rec, a)
}
