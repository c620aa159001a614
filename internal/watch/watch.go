// Package watch stops a group when the process that owns it dies.
//
// Linux has no KILL_ON_JOB_CLOSE: a cgroup leaf outlives the program that
// made it, and so does everything in it. A watcher is a process of the
// same user, outside every group it watches, that each owner — `tether
// run`, a program using contain, a session's supervisor — holds a
// connection to for as long as it has a group running. Before a command
// is spawned its owner tells the watcher what the group is (its record:
// leaf and cgroup id, or main process token, stop signal); once the
// owner's own stop is over it says so. When the connection ends with a
// group not done, the owner is dead (the kernel closes a dead process's
// descriptors, SIGKILL included), and the watcher stops the group with
// the protocol through what the record proves (reap.Stop), writes the
// receipt (stop reason "owner-died") and ends the record.
//
// One watcher serves every owner of a user's state dir: it listens on
// watch.sock there, and an owner that finds none starts one (the running
// program re-executed; contain's init serves it) with its first
// connection already made. It exits once no owner is connected, after
// Linger (TETHER_WATCH_LINGER, default 5s) so that a burst of runs pays
// its start once, and a drain of 100 ms after it unlinks its socket for
// the owners that connected just before.
package watch

import (
	"time"

	"github.com/tether-run/tether/registry"
)

// Env, set in a process's environment, makes it a watcher of the state
// dir it names (see Serve).
const Env = "TETHER_WATCH_SERVE"

// LingerEnv sets how long an idle watcher waits for a new owner before
// it exits (a Go duration; tests set 0).
const LingerEnv = "TETHER_WATCH_LINGER"

// DefaultLinger is an idle watcher's wait when LingerEnv is not set.
const DefaultLinger = 5 * time.Second

// Grace bounds the grace an owner's death gives the group: the group is
// to be gone within a second of its owner (issue 24).
const Grace = 500 * time.Millisecond

// Group is what a watcher needs to stop a group whose owner died.
type Group struct {
	// Registry, if set, is the state dir that holds the group's record,
	// named Name: the watcher reads it when the owner dies (so it is the
	// record as the owner last wrote it) and ends it there.
	Registry string `json:"registry,omitempty"`
	Name     string `json:"name,omitempty"`
	// Record describes a group that has no record in a registry (a
	// program using contain without one): its leaf (Cgroup, CgroupID) or
	// main process (Main), StopSignal, RunID, Argv.
	Record *registry.Record `json:"record,omitempty"`
	// Receipt, if set, is a file the receipt is also written to (tether
	// run --receipt FILE).
	Receipt string `json:"receipt,omitempty"`
	// GraceMS is the grace after the stop signal, in milliseconds, at
	// most Grace.
	GraceMS int64 `json:"grace_ms"`
	// Reason is the stop reason of the receipt and the record (default
	// "owner-died"; a session's supervisor says "supervisor-died").
	Reason string `json:"reason,omitempty"`
}

// message is one line of the protocol: an owner adds a group or says it
// is done.
type message struct {
	// V is the protocol's version: a watcher closes a connection that
	// speaks another, and its owner starts a watcher of its own.
	V     int    `json:"v"`
	Op    string `json:"op"` // "add", "done"
	ID    uint64 `json:"id"`
	Group *Group `json:"group,omitempty"`
}

// version is the protocol version of this build.
const version = 1
