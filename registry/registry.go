// Package registry is the record tether keeps of each run and session
// while it may have processes, and after it ended: Record, the states it
// goes through, the name policy (CheckName) and the errors about one
// named session (*Error, wrapping the sentinels below). A session's
// Client returns records; `tether ls --json` and `tether status --json`
// print them. Where records live on disk, and how they are written
// safely, is internal/store's.
package registry

import (
	"errors"
	"time"

	"github.com/tether-run/tether/receipt"
)

var (
	// ErrExists is returned by Claim for a name in use.
	ErrExists = errors.New("registry: name in use")
	// ErrNotFound is returned by Read for a name without a record.
	ErrNotFound = errors.New("registry: no such session")
	// ErrBadName is returned for a session or pool name outside the name
	// policy (CheckName): the caller's mistake, nothing was created.
	ErrBadName = errors.New("registry: bad session name")
	// ErrUnsafe is returned for a directory or file that is not owned by
	// the caller, is group- or world-accessible, or is a symlink. tether
	// refuses it rather than fixing it.
	ErrUnsafe = errors.New("registry: unsafe path")
	// ErrBadEnv is returned by DefaultDir for an XDG_RUNTIME_DIR or
	// XDG_STATE_HOME that cannot be the base of a state dir (relative,
	// control characters, longer than PATH_MAX): the caller's to fix.
	ErrBadEnv = errors.New("registry: bad environment")
	// ErrCorrupt is returned for a record that cannot be decoded.
	ErrCorrupt = errors.New("registry: corrupt record")
	// ErrTooLarge is returned by CheckSize, and by every write of a
	// record, for a record larger than a record is read back with (1
	// MiB): its command line or working directory is too long. Nothing
	// was written; a start should refuse the command (issue 22).
	ErrTooLarge = errors.New("registry: record too large")
	// ErrPoolFull is returned when a pool already has its maximum of live
	// members, runs and sessions together, after dead ones were left out.
	ErrPoolFull = errors.New("registry: pool is full")
)

// Session states.
const (
	StateStarting = "starting"
	StateRunning  = "running"
	StateStopping = "stopping"
	StateStopped  = "stopped" // stopped by request, owner death, TTL, or its end policy
	StateFailed   = "failed"  // failed to start
)

// Record is what the registry knows of one session.
type Record struct {
	// SchemaVersion is the version of the record format, which the
	// registry writes and checks (1).
	SchemaVersion int    `json:"schema_version"`
	Name          string `json:"name"`
	// Kind is "session" or "run" (a tether run's record, removed when
	// its stop is confirmed).
	Kind  string `json:"kind"`
	State string `json:"state"`
	// RunID is the run id of the session or run: its receipt's run_id,
	// and TETHER_RUN_ID in its command's environment.
	RunID     string    `json:"run_id"`
	Argv      []string  `json:"argv"`
	Cwd       string    `json:"cwd"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`

	// Owner is the spec given (PID, parent, session:NAME, none) and the
	// identity token of the process whose death stops the session.
	Owner      string `json:"owner"`
	OwnerToken string `json:"owner_token,omitempty"`
	// Supervisor is the token of the session's supervisor process.
	Supervisor string `json:"supervisor,omitempty"`
	Main       string `json:"main,omitempty"`
	// Marker is the fallback group's marker: every member started with
	// MarkerEnv set to it in its environment, which reap reads to find
	// the descendants of a dead owner's main process.
	Marker string `json:"marker,omitempty"`

	Mechanism string `json:"mechanism,omitempty"`
	Cgroup    string `json:"cgroup,omitempty"`
	CgroupID  uint64 `json:"cgroup_id,omitempty"`
	// V1Cgroups lists the cgroup v1 leaves the run created for its limits
	// (hybrid hosts), so that reap removes them after a crash.
	V1Cgroups []string `json:"v1_cgroups,omitempty"`

	RuntimeDir string    `json:"runtime_dir"`
	Log        string    `json:"log"`
	Profile    string    `json:"profile,omitempty"`
	Until      string    `json:"until"`
	ExpiresAt  time.Time `json:"expires_at,omitzero"`
	Pool       string    `json:"pool,omitempty"`
	// StopSignal is the first signal of the session's stop protocol
	// (SIGUSR1); empty means SIGTERM. tether reap sends it too.
	StopSignal string `json:"stop_signal,omitempty"`

	// Caveats say what the session is bound to beyond its owner (on
	// Windows: the caller's job, when that job forbids breakaway).
	Caveats []string `json:"caveats,omitempty"`

	// Set when the session ended.
	StopReason string        `json:"stop_reason,omitempty"`
	Exit       *receipt.Exit `json:"exit,omitempty"`
	Receipt    string        `json:"receipt,omitempty"`
	Error      string        `json:"error,omitempty"`

	// OutputLoss is set once the session's log could not keep all of its
	// output (kept current while the session runs, when the record can
	// be written).
	OutputLoss *receipt.OutputLoss `json:"output_loss,omitempty"`
}

// Live reports whether the record describes a session that may still have
// processes (not stopped or failed).
func (r *Record) Live() bool { return r.State != StateStopped && r.State != StateFailed }
