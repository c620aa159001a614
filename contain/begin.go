package contain

import (
	"os"
	"time"

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
	c.rec = receipt.Receipt{
		SchemaVersion: receipt.SchemaVersion,
		RunID:         c.RunID,
		Tether:        receipt.CurrentBuild(),
		Host:          receipt.CurrentHost(),
		Argv:          append([]string(nil), c.Args...),
		Cwd:           cwd,
		StartedAt:     time.Now().UTC(),
		Exit:          receipt.Exit{Code: 125, MainStatus: -1},
	}
	return nil
}
