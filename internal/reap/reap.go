// Package reap reclaims what crashed tethers left behind. It walks this
// user's records (runs and sessions), classifies each one, and acts only
// on identity it can prove: a leaf held anew whose cgroup id matches the
// record, or a process whose boot id, pid and start time match through a
// pidfd. Everything else is reported and left alone; a corrupt record is
// quarantined (renamed, with the reason), never deleted.
package reap

import (
	"time"

	"github.com/tether-run/tether/receipt"
)

// Class is what reap decided a record is.
type Class string

const (
	// Supervised: its supervisor (or tether run) is alive. Left alone.
	Supervised Class = "supervised"
	// Ended: the record says it ended; leftovers (runtime dir) are swept.
	Ended Class = "ended"
	// DeadLeaf: the supervisor is gone and the recorded leaf, held anew
	// and proven by its cgroup id, is stopped.
	DeadLeaf Class = "dead-supervisor-leaf"
	// DeadFallback: the supervisor is gone and there is no leaf; only the
	// recorded main process, proven by its token, is stopped.
	DeadFallback Class = "dead-supervisor-fallback"
	// DeadEmpty: the supervisor is gone and nothing of the group is left.
	DeadEmpty Class = "dead-supervisor-empty"
	// OtherBoot: the record is from an earlier boot; nothing of it can be
	// running. The record and its dirs are cleaned.
	OtherBoot Class = "other-boot"
	// Unresolvable: identity cannot be verified (a different cgroup at the
	// recorded path, an unreadable process). Reported, never signalled.
	Unresolvable Class = "unresolvable"
	// Corrupt: the record cannot be decoded. Quarantined by rename.
	Corrupt Class = "corrupt"
	// Unsafe: the record or a dir is not the user's, or too open, or a
	// symlink. Reported, never acted on.
	Unsafe Class = "unsafe"
	// Stale: a runtime dir without a record (a start killed between
	// claiming the name and writing the record) or a temp file of an
	// interrupted record write. Removed once older than StaleAge, so that
	// a start or write in flight is never disturbed; reported before.
	Stale Class = "stale"
)

// StaleAge is how old a stale runtime dir or temp file must be before
// reap removes it.
const StaleAge = time.Minute

// Action is the plan for one record and, unless dry-run, its outcome.
type Action struct {
	Name string `json:"name"`
	// Kind is the record's kind (run, session), or what else was found:
	// refusal (a refused start's receipt), request (a stop request file,
	// or the temp file of one's write), log (a log no run owns).
	Kind    string           `json:"kind,omitempty"`
	Class   Class            `json:"class"`
	Plan    string           `json:"plan"`
	Done    bool             `json:"done"`
	Receipt *receipt.Receipt `json:"receipt,omitempty"`
	Error   string           `json:"error,omitempty"`
}

// OrphanLeaf is a tether leaf that no record refers to. Nothing proves
// whose it is, so reap never kills one: it removes it only when empty and
// older than StaleAge (with Options.OrphanLeaves), and reports the rest.
type OrphanLeaf struct {
	Path string `json:"path"`
	// Hierarchy is "v2", or "v1 memory" (pids, cpu) for a leaf of the
	// limits of hybrid hosts.
	Hierarchy string `json:"hierarchy"`
	ID        uint64 `json:"id"`
	Procs     int    `json:"procs"`
	Populated bool   `json:"populated"`
	Plan      string `json:"plan"`
	Removed   bool   `json:"removed"`
	Error     string `json:"error,omitempty"`
}

// Report is the result of one reap.
type Report struct {
	SchemaVersion int          `json:"schema_version"`
	DryRun        bool         `json:"dry_run"`
	Actions       []Action     `json:"actions"`
	OrphanLeaves  []OrphanLeaf `json:"orphan_leaves"`
	DurationMS    int64        `json:"duration_ms"`
}

// NoGrace as Options.Grace kills at once, without a grace: the same
// value as contain.NoGrace (reap cannot import contain, which starts the
// watcher that stops through reap).
const NoGrace time.Duration = -1

// Options tune a reap.
type Options struct {
	DryRun bool
	// OrphanLeaves removes tether leaves no record refers to when they
	// are empty and older than StaleAge. Populated ones are only
	// reported: nothing proves who made them, so they are never killed.
	OrphanLeaves bool
	// Quick reclaims only provably dead records (the cheap pass tether
	// start and tether run make before admission): no sweeping, no
	// orphan-leaf scan.
	Quick bool
	// Grace is how long members get after the stop signal: 0 means the
	// default (2s), NoGrace (any negative) none — contain.Cmd's rule.
	Grace time.Duration
	// Prune deletes ended records (with their logs and receipts) older
	// than this; 0 keeps them.
	Prune time.Duration
	// Reason is the stop reason a receipt of a stop made here records
	// (default "reap"); the record's stop reason is then "reaped".
	Reason string
}
