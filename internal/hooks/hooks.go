// Package hooks lets tether's own packages attach callbacks to a
// contain.Cmd that are not part of contain's public API: the session
// supervisor needs them, an embedder does not.
package hooks

import (
	"time"

	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
)

// Hooks are called at fixed points of a contain.Cmd's life. Each may be
// nil.
type Hooks struct {
	// OwnProcessGroup puts the main process in a process group of its
	// own even with a cgroup leaf (the fallback always does). A session's
	// supervisor sets it: sharing the supervisor's group, a command's
	// `kill -HUP 0` (or TERM, INT) stopped its own session (issue 22).
	OwnProcessGroup bool
	// WatchRegistry and WatchRecord name the record a watcher ends if
	// this program dies while the group runs (a session's, which the
	// supervisor keeps itself); WatchReceipt is a file it writes the
	// receipt to as well (tether run --receipt FILE). See internal/watch.
	WatchRegistry, WatchRecord, WatchReceipt string
	// ExeCache is a state dir whose digest cache (hashes/) the receipt's
	// program files are hashed through when Cmd.StateDir is empty (a
	// session's supervisor keeps its record itself): without it every
	// session start hashed tether's own 8 MB binary again, about 5 ms of
	// CPU beside the start on two cores (issue 30).
	ExeCache string
	// Prepared is called once the containment exists (leaf created,
	// limits written) and before the command is spawned, with the receipt
	// so far and the fallback's group marker ("" with a leaf); an error
	// aborts the start. What is written here survives a crash at any
	// later point.
	Prepared func(r *receipt.Receipt, marker string) error
	// Started is called once the command runs and is identified.
	Started func(r *receipt.Receipt)
	// Store, if set, is Cmd.StateDir already opened by the caller (tether
	// run opened it for its quick reap): the run's record is kept there,
	// and the caller closes it.
	Store *store.Registry
	// BeforeStop is called with the reason once the run's end is decided
	// and before the stop protocol touches the group; kill is closed when
	// Kill is called, so work done here can cut itself short too.
	BeforeStop func(reason string, kill <-chan struct{})
	// Storage holds the run's storage ceilings with their first census
	// (census.Admit, taken before the start): while the command runs a
	// census of each is taken every StorageEvery (0: census.Every), and
	// one over its ceiling, or one that cannot complete, stops the group
	// (contain.ReasonStorage); the last is taken after the stop. The
	// figures go in the receipt.
	Storage      []receipt.Storage
	StorageEvery time.Duration
	// Pool makes the run a member of a pool (tether run --pool): it is
	// admitted only while fewer than PoolMax live members (runs and
	// sessions) of the pool exist, waiting up to PoolWait for a slot, and
	// refused with registry.ErrPoolFull after. Needs Cmd.StateDir.
	Pool     string
	PoolMax  int
	PoolWait time.Duration
}

// Set attaches h to cmd, a *contain.Cmd, before its Start. Package
// contain assigns it when it is initialized.
var Set func(cmd any, h Hooks)
