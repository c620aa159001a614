//go:build linux || windows || darwin

package sessionctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// SupervisorOf returns a verified handle to a live session's supervisor, or
// an error wrapping ErrUnsupervised.
func SupervisorOf(rec *registry.Record) (*identity.Handle, error) {
	tok, err := identity.Parse(rec.Supervisor)
	if err != nil {
		return nil, registry.Errorf(rec.Name, ErrUnsupervised, "unsupervised: no supervisor recorded")
	}
	h, err := identity.Open(tok)
	if err != nil {
		e := registry.Errorf(rec.Name, ErrUnsupervised, "unsupervised: its supervisor is gone; `tether reap` reclaims it")
		e.Cause = err
		return nil, e
	}
	return h, nil
}

// WaitEnd waits until the session has ended and returns its record.
func WaitEnd(ctx context.Context, reg *store.Registry, name string) (*registry.Record, error) {
	for {
		rec, err := reg.Read(name)
		if err != nil || !rec.Live() {
			return rec, err
		}
		h, err := SupervisorOf(rec)
		if err != nil {
			// It may have ended since the read: a supervisor records the
			// end before it exits.
			if again, rerr := reg.Read(name); rerr == nil && !again.Live() {
				return again, nil
			}
			return rec, err
		}
		// In slices, so that ctx is seen within a quarter second.
		for !h.WaitExit(250 * time.Millisecond) {
			if ctx.Err() != nil {
				h.Close()
				return rec, ctx.Err()
			}
		}
		h.Close()
	}
}

// maxReceipt bounds a receipt file (a stop of thousands of members is
// well under it).
const maxReceipt = 64 << 20

// ReadReceipt reads a session's receipt through the registry's checks: a
// FIFO, link or another user's file in its place is refused, not
// followed or waited on.
func ReadReceipt(reg *store.Registry, rec *registry.Record) (*receipt.Receipt, error) {
	if rec.Receipt == "" {
		return nil, registry.Errorf(rec.Name, nil, "ended without a receipt (%s)", rec.Error)
	}
	b, err := reg.ReadFile(rec.Receipt, maxReceipt)
	if err != nil {
		return nil, err
	}
	var r receipt.Receipt
	if err := json.Unmarshal(b, &r); err != nil {
		e := registry.Errorf(rec.Name, nil, "receipt %s: %v", rec.Receipt, err)
		e.Cause = err
		return nil, e
	}
	return &r, nil
}

// Family returns the live sessions owned, directly or through others, by
// the session with supervisor token sup, children before parents.
func Family(reg *store.Registry, sup string) []*registry.Record {
	recs, _ := reg.ListLive()
	var out []*registry.Record
	var walk func(tok string)
	walk = func(tok string) {
		for _, r := range recs {
			if r.Live() && r.OwnerToken == tok && r.Supervisor != "" && r.Supervisor != tok {
				walk(r.Supervisor)
				out = append(out, r)
			}
		}
	}
	walk(sup)
	return out
}

// AdmitPool refuses a new member when max live sessions of pool exist,
// after reclaiming members whose supervisor is provably dead.
func AdmitPool(reg *store.Registry, pool string, max int) error {
	if max <= 0 {
		return nil
	}
	recs, _ := reg.ListLive()
	live := 0
	for _, r := range recs {
		if r.Pool != pool || !r.Live() {
			continue
		}
		if r.Kind == "run" {
			// A run (tether run --pool) holds its slot while its tether
			// runs; a dead one's is free, its group the watcher's and
			// reap's to stop.
			if h, err := SupervisorOf(r); err == nil {
				h.Close()
				live++
			}
			continue
		}
		if h, err := SupervisorOf(r); err == nil {
			// A member whose owner is provably dead is being stopped by
			// its supervisor (within a second): give it that moment.
			if ownerDead(r) && h.WaitExit(5*time.Second) {
				h.Close()
				continue
			}
			h.Close()
			live++
			continue
		}
		if r.State == registry.StateStarting && time.Since(r.CreatedAt) < time.Minute {
			live++ // still starting: its supervisor has not recorded itself yet
			continue
		}
		if err := Reclaim(reg, r); err != nil {
			live++ // could not prove it gone: it keeps its slot
		}
	}
	if live >= max {
		return fmt.Errorf("%w: %q has %d live members (--max %d)", registry.ErrPoolFull, pool, live, max)
	}
	return nil
}

// ownerDead reports whether a session's recorded owner is provably gone.
func ownerDead(r *registry.Record) bool {
	err := identity.Check(r.OwnerToken)
	return errors.Is(err, identity.ErrGone) || errors.Is(err, identity.ErrMismatch)
}
