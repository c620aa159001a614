//go:build linux || windows || darwin

package session

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// RestartOptions say how to restart a session.
type RestartOptions struct {
	// Stop is how a running session is stopped first.
	Stop StopOptions
	// Owner, if set, replaces the owner the session was started with
	// (PID, "parent", "session:NAME" or "none").
	Owner string
}

// Restart starts session name again as its newest run was started —
// the same command, environment, directory, owner, profile, end policy,
// TTL, stop signal, limits, pool, log bounds and readiness checks — as a
// new run with an id of its own, stopping it first if it runs (with the
// stop protocol, as Stop does; stop is its receipt, nil if it had ended).
// The earlier run's log and receipt stay (Runs lists them).
//
// An owner that was a process (a PID, or "parent") is kept if that very
// process still runs (its identity is proven, not its pid reused);
// otherwise Restart fails wrapping ErrOwner before stopping anything,
// unless o.Owner gives one.
func (c *Client) Restart(ctx context.Context, name string, o RestartOptions) (stop *receipt.Receipt, rec *registry.Record, err error) {
	cur, err := c.reg.Read(name)
	if err != nil {
		return nil, nil, err
	}
	spec, err := c.config(cur)
	if err != nil {
		return nil, nil, registry.Errorf(name, nil, "restart: its configuration is not on record (%v)", err)
	}
	opts := optionsOf(spec)
	if o.Owner != "" {
		opts.Owner = o.Owner
	} else if opts.Owner, err = sameOwner(name, spec); err != nil {
		return nil, nil, err
	}
	if cur.Live() {
		if stop, err = c.Stop(ctx, name, o.Stop); err != nil {
			return nil, nil, err
		}
	}
	rec, err = c.Start(ctx, opts)
	return stop, rec, err
}

// optionsOf is the Options a run's spec was made from, with a new run id.
func optionsOf(s *sessionctl.Spec) Options {
	o := Options{
		Name: s.Name, Argv: s.Argv, Env: s.Env, Dir: s.Dir, Profile: s.Profile, Until: s.Until,
		TTL: s.TTL, Pool: s.Pool, Max: s.Max, Grace: s.Grace, KillWait: s.KillWait,
		Mechanism: s.Mechanism, CgroupParent: s.CgroupParent, Limits: s.Limits,
		BestEffortLimits: s.BestEffortLimits, LogMax: s.LogMax, LogKeep: s.LogKeep,
		Ready: s.Ready, ReadyTimeout: s.ReadyTimeout, Owner: s.Owner, StopExec: s.StopExec,
	}
	if o.StopExec == nil {
		o.StopExec = []string{} // none, as the spec says: not the profile's
	}
	if s.StopSignal != "" {
		o.StopSignal = syscall.Signal(sessionctl.SignalNum(s.StopSignal))
	}
	if o.Env == nil {
		o.Env = []string{}
	}
	return o
}

// sameOwner is the owner a restart of a run started with spec gets: a
// process owner only while that very process runs, by its pid now; a
// session owner or none as it was.
func sameOwner(name string, spec *sessionctl.Spec) (string, error) {
	if spec.Owner == "none" || spec.Owner == "" || strings.HasPrefix(spec.Owner, "session:") {
		return spec.Owner, nil
	}
	tok, err := identity.Parse(spec.OwnerToken)
	if err == nil {
		var h *identity.Handle
		if h, err = identity.Open(tok); err == nil {
			h.Close()
			return strconv.Itoa(tok.PID), nil
		}
	}
	e := registry.Errorf(name, ErrOwner, "restart: its owner (%s, %s) is gone: give --owner (a PID, parent, session:NAME or none)", spec.Owner, spec.OwnerToken)
	if !errors.Is(err, os.ErrProcessDone) {
		e.Cause = err
	}
	return "", e
}
