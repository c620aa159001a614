// Package session runs detached, named sessions: a command under a small
// per-session supervisor (the tether binary re-executed) that owns its
// containment, captures its output to a bounded log, stops it when its
// owner dies, its TTL expires, or it is asked to, and records everything
// in the registry, so that the session stays reachable after the caller
// and the caller's scratch directory are gone.
package session

import (
	"errors"
	"time"

	"github.com/tether-run/tether/registry"

	"github.com/tether-run/tether/limits"
)

var (
	// ErrOwner is returned when the owner cannot be resolved or is dead.
	ErrOwner = errors.New("session: owner")
	// ErrPoolFull is returned when a pool already has its maximum of live
	// sessions after dead members were reclaimed.
	ErrPoolFull = errors.New("session: pool is full")
	// ErrSocketPath is returned when a socket path of the session would not
	// fit AF_UNIX's 107 bytes.
	ErrSocketPath = errors.New("session: socket path too long")
	// ErrUnsupervised is returned when acting on a session whose supervisor
	// is gone; `tether reap` reclaims such sessions.
	ErrUnsupervised = errors.New("session: unsupervised")
	// ErrSupervisor is returned when the supervisor failed before it could
	// report.
	ErrSupervisor = errors.New("session: supervisor failed")
)

// Until policies: when a session ends by itself.
const (
	UntilMainExit = "main-exit" // the main process exits: what is left is stopped
	UntilEmpty    = "empty"     // the group is empty (for commands that daemonize)
)

// Spec is everything the supervisor needs, written by Start into the
// runtime dir (spec.json) and read back by the supervisor.
type Spec struct {
	Name             string        `json:"name"`
	Argv             []string      `json:"argv"`
	Env              []string      `json:"env"`
	Dir              string        `json:"dir"`
	Owner            string        `json:"owner"`
	OwnerToken       string        `json:"owner_token,omitempty"`
	Profile          string        `json:"profile,omitempty"`
	Until            string        `json:"until"`
	TTL              time.Duration `json:"ttl"`
	Grace            time.Duration `json:"grace"`
	KillWait         time.Duration `json:"kill_wait"`
	Mechanism        string        `json:"mechanism,omitempty"`
	CgroupParent     string        `json:"cgroup_parent,omitempty"`
	Limits           limits.Spec   `json:"limits"`
	BestEffortLimits bool          `json:"best_effort_limits,omitempty"`
	Pool             string        `json:"pool,omitempty"`
	LogMax           int64         `json:"log_max"`
}

// Ready is the supervisor's one-line report to Start.
type Ready struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	Code  int    `json:"code,omitempty"` // 125, 126, 127 as for tether run
}

// Options describe a session to start.
type Options struct {
	Name string   // empty: <command>-<8 hex>
	Argv []string // the command
	Env  []string // the caller's environment (nil: os.Environ())
	Dir  string   // working directory (empty: the caller's)

	// Owner is PID, "parent", "session:NAME" or "none". Empty means the
	// session whose leaf the caller runs in, else "parent".
	Owner   string
	Profile string // "", "tmux" or "playwright"
	Until   string // UntilMainExit (default) or UntilEmpty
	TTL     time.Duration
	Pool    string
	Max     int // with Pool: at most this many live sessions

	Grace, KillWait  time.Duration
	Mechanism        string
	CgroupParent     string
	Limits           limits.Spec
	BestEffortLimits bool
	LogMax           int64

	// Exe is the tether binary that runs the supervisor (default: this
	// executable, which must then be tether).
	Exe string
	// ReadyTimeout bounds the wait for the supervisor's report (default
	// DefaultReadyTimeout). A supervisor that has not reported by then is
	// killed before the start fails.
	ReadyTimeout time.Duration
}

// DefaultReadyTimeout is how long Start waits for the supervisor's report.
const DefaultReadyTimeout = 2 * time.Minute

// StartError is a failed start, with tether run's exit code for it.
type StartError struct {
	Code int
	Err  error
}

func (e *StartError) Error() string { return e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }

// Status is a record with what is true of it now.
type Status struct {
	*registry.Record
	// State adds "unsupervised" to the record's states: the record says
	// live but its supervisor is gone.
	State       string `json:"state"`
	Supervised  bool   `json:"supervised"`
	OwnerAlive  *bool  `json:"owner_alive,omitempty"`
	AgeMS       int64  `json:"age_ms"`
	Procs       int    `json:"procs"`
	MemoryBytes int64  `json:"memory_bytes"` // -1 when the leaf has no memory controller
	CPUUsec     int64  `json:"cpu_usec"`
}
