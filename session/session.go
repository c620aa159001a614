// Package session runs detached, named sessions: long-lived commands (dev
// servers, tmux, browser daemons, MCP servers) that stay reachable,
// listable and stoppable after the program that started them, and the
// scratch directory it ran in, are gone.
//
// A Client starts and controls the sessions of one registry (a state
// directory; the tether command's by default):
//
//	client, err := session.Open("")
//	rec, err := client.Start(ctx, session.Options{Name: "web", Argv: argv, Owner: "parent"})
//	exit, err := client.Exec(ctx, "web", session.ExecOptions{Argv: []string{"curl", "localhost:8080"}})
//	r, err := client.Stop(ctx, "web", session.StopOptions{})
//
// Each session runs under a supervisor of its own: a small process that
// owns the session's containment (a contain.Cmd), captures its output to
// a bounded log (Client.Logs), stops it when its owner dies, its TTL
// expires or it is asked to, and records everything in the registry,
// receipt included. The supervisor is a program started again with
// special arguments; a program that embeds sessions calls MaybeSupervise
// first thing in main to be that program, or leaves it to the tether
// binary on PATH (Client.Supervisor).
//
// Sessions own sessions: a session started from inside another one is
// owned by it by default, and stopped before it.
//
// Sessions run on Linux, Windows (a Job Object) and macOS (a process
// group); Exec is Linux and Windows only for now.
package session

import (
	"errors"
	"io"
	"syscall"
	"time"

	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/internal/sessionlog"
	"github.com/tether-run/tether/registry"

	"github.com/tether-run/tether/limits"
)

var (
	// ErrOwner is returned when the owner cannot be resolved or is dead.
	ErrOwner = sessionctl.ErrOwner
	// ErrPoolFull is returned when a pool already has its maximum of live
	// members (runs and sessions) after dead ones were reclaimed; it is
	// registry.ErrPoolFull.
	ErrPoolFull = registry.ErrPoolFull
	// ErrSocketPath is returned when a socket path of the session would not
	// fit AF_UNIX's 107 bytes.
	ErrSocketPath = errors.New("session: socket path too long")
	// ErrUnsupervised is returned when acting on a session whose supervisor
	// is gone; `tether reap` reclaims such sessions.
	ErrUnsupervised = sessionctl.ErrUnsupervised
	// ErrSupervisor is returned when the supervisor failed before it could
	// report.
	ErrSupervisor = sessionctl.ErrSupervisor
	// ErrStarting is returned when stopping a session whose supervisor has
	// not recorded itself yet; try again once its start has returned.
	ErrStarting = sessionctl.ErrStarting
	// ErrStillStopping is returned by Stop and StopMany when the wait for a
	// supervisor ended (deadline, or the caller gave up) before the stop:
	// the supervisor goes on with it, and `tether wait` can follow it.
	ErrStillStopping = sessionctl.ErrStillStopping
	// ErrEnded is returned by Exec when the session has ended: nothing is
	// left to run a command beside.
	ErrEnded = errors.New("session: ended")
	// ErrBadOptions is wrapped by Start when Options are malformed (an
	// unknown Until or Profile, an owner spec of no known form): the
	// caller's mistake, nothing was created.
	ErrBadOptions = sessionctl.ErrBadOptions
)

// Until policies: when a session ends by itself.
const (
	UntilMainExit = sessionctl.UntilMainExit // the main process exits: what is left is stopped
	UntilEmpty    = sessionctl.UntilEmpty    // the group is empty (for commands that daemonize)
)

// Options describe a session to start.
type Options struct {
	Name string   // empty: <command>-<8 hex>
	Argv []string // the command
	Env  []string // the caller's environment (nil: os.Environ())
	Dir  string   // working directory (empty: the caller's)
	// Set holds KEY=VALUE pairs that stand over the variables tether sets
	// for the session (TMPDIR, the profile's): a caller's explicit value
	// wins (tether start -e). TETHER_SESSION, TETHER_SESSION_DIR and
	// TETHER_RUN_ID name the session and are refused (ErrBadOptions).
	Set []string
	// RunID names the session in its record, its receipt and its
	// command's environment (TETHER_RUN_ID). Empty: a new one.
	RunID string

	// Owner is PID, "parent", "session:NAME" or "none". Empty means the
	// session whose leaf the caller runs in, else "none".
	Owner   string
	Profile string // "", "tmux" or "playwright"
	// Until is UntilMainExit or UntilEmpty. Empty: UntilMainExit, or
	// UntilEmpty with a Profile, whose command (tmux new -d,
	// playwright-cli open) returns once its daemon runs.
	Until string
	TTL   time.Duration
	Pool  string
	Max   int // with Pool: at most this many live sessions

	Grace, KillWait time.Duration
	// StopExec is run at the start of every stop of the session, before
	// StopSignal, to end it through its own protocol (contain.Cmd's
	// StopExec). Nil: the profile's — "tmux" runs tmux kill-server (its
	// own server, by TMUX_TMPDIR), "playwright" playwright-cli close-all
	// (its own browsers, by PWTEST_SOCKETS_DIR); empty, not nil: none.
	StopExec []string
	// StopSignal is the first signal of the session's stop protocol (0:
	// SIGTERM), whoever stops it: tether stop, its owner's death, its TTL,
	// or tether reap after its supervisor died.
	StopSignal       syscall.Signal
	Mechanism        string
	CgroupParent     string
	Limits           limits.Spec
	BestEffortLimits bool
	// StorageMax are storage ceilings (tether start --storage-max):
	// Start takes a census of each first and refuses to start when a
	// path is already over its ceiling or its census cannot complete;
	// the supervisor then takes one every second and stops the session
	// (stop reason "storage") when one is crossed or fails. The receipt
	// holds the figures.
	StorageMax []limits.Storage
	// LogMax bounds each file of the log (default DefaultLogMax) and
	// LogKeep how many files are kept (default DefaultLogKeep).
	LogMax  int64
	LogKeep int

	// Ready lists checks that must all hold before Client.Start returns
	// (tether start --ready): tcp:[HOST:]PORT (connects; HOST defaults
	// to localhost), unix:PATH (connects), file:PATH (exists), log:REGEX
	// (a line of the session's log matches), exec:CMD (sh -c CMD, run
	// inside the session with its environment, exits 0). PATH may name
	// the session's variables ($TETHER_SESSION_DIR, $TMPDIR) and is
	// relative to Dir. Profile "tmux" adds exec:tmux has-session unless an exec
	// check is given. If they do not all hold within ReadyTimeout
	// (default DefaultReadyWait), or the session ends first, the session
	// is stopped and Start returns a *NotReadyError.
	Ready        []string
	ReadyTimeout time.Duration
}

// DefaultReadyTimeout bounds Client.Start's wait for the supervisor's
// report when its context has no earlier deadline.
const DefaultReadyTimeout = 2 * time.Minute

// LogOptions choose what `tether logs` prints and how.
type LogOptions struct {
	// Follow goes on printing what is appended until the session ends.
	Follow bool
	// Tail prints only the last Tail lines (then follows); negative: all.
	Tail int
	// Since skips entries older than this; zero: from the start.
	Since time.Time
	// Stream is "out" or "err" for one stream only; "" for both.
	Stream string
	// Timestamps prints each line as "TIME STREAM LINE"; JSON as JSON
	// Lines {"time","stream","line"}. Without either, the view is plain:
	// exactly the bytes the command wrote, in order.
	Timestamps, JSON bool
	// Notes receives what the view cannot show in its output: gaps (output
	// dropped, or files rotated away before they were read). Nil: none.
	Notes io.Writer
	// Run chooses one run of the name by its run id, or a prefix of it
	// that only one run's has (Client.Runs lists them); "" the newest.
	Run string
}

// view is the part of o a log view is made of.
func (o LogOptions) view() sessionlog.ViewOptions {
	return sessionlog.ViewOptions{Tail: o.Tail, Since: o.Since, Stream: o.Stream, Timestamps: o.Timestamps, JSON: o.JSON, Notes: o.Notes}
}

// StartError is a failed start, with tether run's exit code for it.
type StartError struct {
	Code int
	Err  error
	// Refusal names the check that refused the start before the command
	// ran (receipt.RefusedLimits: a limit that cannot be applied without
	// BestEffortLimits; receipt.RefusedOwnerGone: the owner died before
	// the supervisor started), "" for other failures. Nothing was left:
	// no leaf, no record.
	Refusal string
}

func (e *StartError) Error() string { return e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// Status is a record with what is true of it now.
type Status struct {
	*registry.Record
	// State adds "unsupervised" to the record's states: the record says
	// live but its supervisor is gone.
	State      string `json:"state"`
	Supervised bool   `json:"supervised"`
	OwnerAlive *bool  `json:"owner_alive,omitempty"`
	AgeMS      int64  `json:"age_ms"`
	// MainPID is the main process's pid while it may be alive (0 after).
	MainPID int `json:"main_pid,omitempty"`
	Procs   int `json:"procs"`
	// MemoryBytes is the group's memory, -1 when unknown; MemorySource
	// says where it was read: "memory.current" (the v2 leaf),
	// "memory.usage_in_bytes" (the v1 memory leaf of a run with limits on
	// a hybrid host), or "pss" (the sum of the members' proportional set
	// sizes from /proc/PID/smaps_rollup, where no memory cgroup of the
	// session's own counts it).
	MemoryBytes  int64  `json:"memory_bytes"`
	MemorySource string `json:"memory_source,omitempty"`
	CPUUsec      int64  `json:"cpu_usec"`
	// EndedAt is when the session was recorded as ended.
	EndedAt time.Time `json:"ended_at,omitzero"`
	// RuntimeDirExists says whether the runtime dir is still there (it
	// is removed once an ended session's stop is confirmed). The dir is
	// the name's: StatusOf an earlier run of a name used again sees the
	// later run's; Client.Inspect and tether ls -a say false for it.
	RuntimeDirExists bool `json:"runtime_dir_exists"`
	// Processes lists the members (tether status only, not ls): each
	// with its parent, so that they can be shown as a tree.
	Processes []Proc `json:"processes,omitempty"`
}

// Proc is one member of a session's group.
type Proc struct {
	PID  int      `json:"pid"`
	PPID int      `json:"ppid"`
	Argv []string `json:"argv"`
}

// Log bounds. A session's log is at most DefaultLogKeep (4) files of
// DefaultLogMax (8 MiB) bytes: NAME.log being written, NAME.log.1 the one
// before, up to NAME.log.(keep-1). 32 MiB in all by default: hours of a
// chatty dev server, and still small beside what the session itself
// uses. MinLogMax (64 KiB) keeps a file larger than a few whole entries,
// so that rotation always makes progress.
const (
	DefaultLogMax  = sessionlog.DefaultMax
	DefaultLogKeep = sessionlog.DefaultKeep
	MinLogMax      = sessionlog.MinMax
)
