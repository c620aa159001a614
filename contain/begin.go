package contain

import (
	"fmt"
	"os"
	"slices"

	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
)

// begin marks c started and opens its receipt: what start does first on
// every system, before anything exists that a failure must undo.
func (c *Cmd) begin() error {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return ErrStarted
	}
	c.started = true
	c.chans()
	c.mu.Unlock()

	cwd := c.Dir
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	if c.RunID == "" {
		c.RunID = receipt.NewRunID()
	}
	c.rec = *receipt.New(c.RunID, c.Args, cwd)
	c.rec.Storage = slices.Clone(c.hooks.Storage)
	return nil
}

// startRun is how every system's start begins and fails: it opens the
// receipt and the record, then runs sys (the system's own start); on any
// error after begin, failStart undoes what was started.
func (c *Cmd) startRun(sys func() error) (err error) {
	if err := c.begin(); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			c.failStart(err)
		}
	}()
	if c.Err != nil {
		return c.Err
	}
	if err := c.openRecord(); err != nil {
		return err
	}
	return sys()
}

// openRecord prepares the run's record when a StateDir is set; it is
// written by prepared, once the containment exists.
func (c *Cmd) openRecord() error {
	if c.StateDir == "" {
		return nil
	}
	reg, owned := c.hooks.Store, false
	if reg == nil || reg.Dir != c.StateDir {
		var err error
		if reg, err = store.Open(c.StateDir); err != nil {
			return fmt.Errorf("%w: %w", ErrRecord, err)
		}
		owned = true
	}
	t, err := newTracker(reg, &c.rec)
	if err != nil {
		if owned {
			reg.Close()
		}
		return fmt.Errorf("%w: %w", ErrRecord, err)
	}
	t.owned = owned
	c.track = t
	if c.hooks.Pool != "" {
		if err := c.admitPool(t); err != nil {
			return err
		}
	}
	return nil
}

// prepared is called once the containment exists and before the command
// is spawned: the record is written with where the run will be, then the
// hook runs.
func (c *Cmd) prepared() error {
	if err := c.track.prepared(&c.rec, c.marker); err != nil {
		return fmt.Errorf("%w: %w", ErrRecord, err)
	}
	if c.hooks.Prepared != nil {
		return c.hooks.Prepared(&c.rec, c.marker)
	}
	return nil
}

// startedMain is called once the command runs and is identified.
func (c *Cmd) startedMain() {
	if c.rec.Main != nil {
		cache := c.StateDir
		if cache == "" {
			cache = c.hooks.ExeCache
		}
		c.exe = identifyExe(c.rec.Main.PID, c.Path, cache)
	}
	c.rec.Outcome = receipt.OutcomeRan
	c.track.started(&c.rec)
	if c.hooks.Started != nil {
		c.hooks.Started(&c.rec)
	}
}
