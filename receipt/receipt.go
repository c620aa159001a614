// Package receipt defines the JSON evidence of a contained run: what ran,
// how it ended, every step of the stop protocol with what was observed, and
// whether the kernel confirmed that nothing is left.
package receipt

import (
	"encoding/json"
	"time"

	"github.com/tether-run/tether/internal/atomicfile"
)

// SchemaVersion is the version of the receipt format. It changes when a
// field is removed or changes meaning; adding fields does not change it.
const SchemaVersion = 1

// Mechanism names how a group is contained.
type Mechanism string

const (
	// MechanismCgroup is a fresh cgroup v2 leaf entered before exec; the
	// kernel holds every descendant and cgroup.kill stops them all.
	MechanismCgroup Mechanism = "cgroup"
	// MechanismFallback is child subreaper + own process group + parent
	// death signal, with descendants found by walking the process tree.
	MechanismFallback Mechanism = "fallback"
	// MechanismJobObject is a Windows Job Object the command is created in
	// (PROC_THREAD_ATTRIBUTE_JOB_LIST), with breakaway denied and
	// KILL_ON_JOB_CLOSE; TerminateJobObject stops every member.
	MechanismJobObject Mechanism = "job-object"
	// MechanismPgroup is macOS: the command in a session and process
	// group of its own, its processes found in the process table.
	MechanismPgroup Mechanism = "pgroup"
)

// Receipt is the record of one run.
type Receipt struct {
	SchemaVersion int `json:"schema_version"`
	// RunID names this run or session, uniquely: it is also in the
	// registry record and in the command's environment as TETHER_RUN_ID.
	RunID string `json:"run_id"`
	// Name is the session's name (tether start --name); a run has none.
	Name   string `json:"name,omitempty"`
	Tether Tether `json:"tether"`
	Host   Host   `json:"host"`

	Argv       []string  `json:"argv"`
	Cwd        string    `json:"cwd"`
	StartedAt  time.Time `json:"started_at"`
	EndedAt    time.Time `json:"ended_at"`
	DurationMS int64     `json:"duration_ms"`
	// Outcome is OutcomeRan once the main process started,
	// OutcomeStartFailed when its start failed, OutcomeNotRun when tether
	// refused to start it (Refusal says why).
	Outcome string   `json:"outcome"`
	Refusal *Refusal `json:"refusal,omitempty"`

	Mechanism Mechanism `json:"mechanism"`
	// Caveats says what the mechanism in force cannot guarantee.
	Caveats []string `json:"caveats"`
	// FallbackReason says why the fallback mechanism is in force when it
	// was chosen automatically (no usable cgroup v2 parent, a kernel
	// without CLONE_INTO_CGROUP); empty otherwise.
	FallbackReason string  `json:"fallback_reason,omitempty"`
	Cgroup         *Cgroup `json:"cgroup,omitempty"`
	Job            *Job    `json:"job,omitempty"`

	Limits *Limits `json:"limits,omitempty"`
	// Storage holds the census of each storage ceiling (--storage-max).
	Storage []Storage `json:"storage,omitempty"`
	// Scratch is the private scratch dir the command had as its TMPDIR
	// (--scratch).
	Scratch *Scratch `json:"scratch,omitempty"`

	Main *Process `json:"main,omitempty"`
	// Executable is the main process's program file, with its digest.
	Executable *Executable `json:"executable,omitempty"`
	Exit       Exit        `json:"exit"`

	TimedOut        bool     `json:"timed_out"`
	SignalsReceived []Signal `json:"signals_received"`

	Stop       Stop      `json:"stop"`
	Stragglers []Process `json:"stragglers"`
	// StragglersTotal counts all stragglers; Stragglers lists at most
	// MaxListed of them.
	StragglersTotal int `json:"stragglers_total"`

	StopConfirmed bool     `json:"stop_confirmed"`
	Evidence      Evidence `json:"evidence"`

	// OutputLoss is set when a session's output could not all be kept.
	OutputLoss *OutputLoss `json:"output_loss,omitempty"`
	// Logs lists every generation of a session's log, oldest first, with
	// the digest of what was written to it, so a kept file can be checked
	// and a rotated-away one is still accounted for.
	Logs []LogFile `json:"logs,omitempty"`
	// LogsOmitted counts the oldest generations (all rotated away) that
	// Logs leaves out to list at most MaxListed, and their bytes.
	LogsOmitted      int   `json:"logs_omitted,omitempty"`
	LogsOmittedBytes int64 `json:"logs_omitted_bytes,omitempty"`

	Error string `json:"error,omitempty"`
}

// OutputLoss is output a session's command wrote that its log could not
// keep (a full or read-only state disk). The command was not disturbed:
// its output went on being read, and what could not be written was
// dropped and counted here.
type OutputLoss struct {
	DroppedBytes int64 `json:"dropped_bytes"`
	// DroppedLines counts the newlines in what was dropped.
	DroppedLines int64     `json:"dropped_lines"`
	FirstAt      time.Time `json:"first_at"`
	// Error is the first write error; LastError the latest, if different.
	Error     string `json:"error"`
	LastError string `json:"last_error,omitempty"`
}

// LogFile is one generation of a session's log as its supervisor wrote
// it: Size and SHA256 are of the file's bytes (tether's log format, not
// the raw output).
type LogFile struct {
	// Path is where the file is now; Removed says it was deleted because
	// the log keeps a bounded number of files.
	Path    string `json:"path"`
	Seq     int    `json:"seq"`
	Size    int64  `json:"size"`
	SHA256  string `json:"sha256"`
	Removed bool   `json:"removed,omitempty"`
}

// MaxListed bounds the process lists in a receipt.
const MaxListed = 100

// Cgroup describes the leaf the run was contained in.
type Cgroup struct {
	Path     string `json:"path"`
	ID       uint64 `json:"id"`
	Parent   string `json:"parent"`
	CPU      *CPU   `json:"cpu,omitempty"`
	Removed  bool   `json:"removed"`
	Verified string `json:"placement_verified_by"`
	// Delegation says how the parent was proven ours to write: "named"
	// (given by the caller), "own-scope", "systemd-xattr", "user-xattr",
	// "unit-property" or "no-manager" (a host without systemd); see
	// docs/hosts.md, "Under systemd", for what each establishes.
	Delegation string `json:"delegation,omitempty"`
	// Scope is the systemd scope tether took for the run, if any.
	Scope string `json:"scope,omitempty"`
}

// Job describes the Windows Job Object the run was contained in.
type Job struct {
	// Flags are the limit flags set on the job, by name.
	Flags []string `json:"flags"`
	// Nested says tether itself ran inside a job (a CI runner's, say), so
	// the run's job is nested in it.
	Nested bool `json:"nested"`
	// TotalProcesses counts every process that was ever in the job, and
	// ActiveProcesses those still in it when the job was closed, as the
	// job's basic accounting reported them.
	TotalProcesses  uint32 `json:"total_processes"`
	ActiveProcesses uint32 `json:"active_processes"`
	// Closed says tether closed its handle to the job.
	Closed bool `json:"closed"`
	// Wine is the Wine version the run happened under, empty on Windows.
	Wine string `json:"wine,omitempty"`
}

// CPU is the CPU time used by the whole group.
type CPU struct {
	UsageUsec  uint64 `json:"usage_usec"`
	UserUsec   uint64 `json:"user_usec"`
	SystemUsec uint64 `json:"system_usec"`
}

// Process identifies one process of the group.
type Process struct {
	PID       int       `json:"pid"`
	Token     string    `json:"token"`
	Argv      []string  `json:"argv"`
	StartedAt time.Time `json:"started_at"`
}

// Exit is how the main process ended. Code is the exit status tether
// passes on (128+n for signal n, 124 for a timeout).
type Exit struct {
	Code       int    `json:"code"`
	MainStatus int    `json:"main_status"` // exit status, -1 if killed by a signal or never started
	Signal     string `json:"signal,omitempty"`
	OOMKilled  bool   `json:"oom_killed,omitempty"`
}

// Signal is a signal tether itself received.
type Signal struct {
	Name string    `json:"name"`
	At   time.Time `json:"at"`
	// Action is what tether did: "stop" (began the protocol), "skip-grace",
	// or "absorbed".
	Action string `json:"action"`
}

// Stop is the stop protocol as it ran.
type Stop struct {
	// Reason is why the protocol ran: main-exit, timeout, signal, error,
	// request.
	Reason string `json:"reason"`
	// Signal is the first signal sent to every member (SIGTERM unless
	// chosen otherwise: --signal).
	Signal string `json:"signal,omitempty"`
	Steps  []Step `json:"steps"`
}

// Step is one step of the stop protocol.
type Step struct {
	Name string `json:"name"` // stop-exec, term, grace, kill, kill-wait, reap, remove
	// At is when the step ended, except for kill, where it is when the
	// kill phase began. ElapsedMS is At relative to the protocol's start.
	At        time.Time `json:"at"`
	ElapsedMS int64     `json:"elapsed_ms"`
	// Observed is what the step saw, in words a person can read.
	Observed string `json:"observed"`
	Members  int    `json:"members,omitempty"`
	Error    string `json:"error,omitempty"`
	// StopExec is what the stop-exec step ran, and how it ended.
	StopExec *StopExec `json:"stop_exec,omitempty"`
}

// StopExec is a command run at the start of a stop to end the group
// through its own protocol (tether run/start --stop-exec: tmux
// kill-server), before any signal.
type StopExec struct {
	Argv []string `json:"argv"`
	// ExitCode is its exit status (128+n for signal n); 124 when the grace
	// ran out first and it was killed; 125-127 when it could not run.
	ExitCode int `json:"exit_code"`
	// Output is the tail of its stdout and stderr, interleaved.
	Output string `json:"output"`
}

// Evidence is what StopConfirmed rests on.
type Evidence struct {
	// Empty says the group was seen empty; EmptyBy says how: "cgroup.events
	// populated 0" (the kernel) or "process-tree walk" (fallback).
	Empty   bool      `json:"empty"`
	EmptyBy string    `json:"empty_by,omitempty"`
	EmptyAt time.Time `json:"empty_at,omitzero"`
	// MembersSeen counts the distinct members identified during the stop.
	MembersSeen int `json:"members_seen"`
	// Signalled counts members sent SIGTERM through a verified pidfd.
	Signalled int  `json:"signalled"`
	KillUsed  bool `json:"kill_used"`
	// MainReaped: the main process's exit status was collected.
	MainReaped bool `json:"main_reaped"`
	// Reaped counts orphaned members reaped by tether as subreaper.
	Reaped int `json:"reaped"`
	// ConfirmedGone counts identified members whose pidfd reported exit.
	ConfirmedGone int `json:"confirmed_gone"`
	// Unconfirmed lists tokens of members not confirmed gone.
	Unconfirmed []string `json:"unconfirmed"`
	LeafRemoved bool     `json:"leaf_removed"`
}

// Normalize replaces nil slices with empty ones so that JSON never carries
// null for a list.
func (r *Receipt) Normalize() {
	if r.Argv == nil {
		r.Argv = []string{}
	}
	if r.Caveats == nil {
		r.Caveats = []string{}
	}
	if r.SignalsReceived == nil {
		r.SignalsReceived = []Signal{}
	}
	if r.Stop.Steps == nil {
		r.Stop.Steps = []Step{}
	}
	if r.Stragglers == nil {
		r.Stragglers = []Process{}
	}
	for i := range r.Stragglers {
		if r.Stragglers[i].Argv == nil {
			r.Stragglers[i].Argv = []string{}
		}
	}
	if r.Main != nil && r.Main.Argv == nil {
		r.Main.Argv = []string{}
	}
	if r.Evidence.Unconfirmed == nil {
		r.Evidence.Unconfirmed = []string{}
	}
	if l := r.Limits; l != nil {
		if l.Applied == nil {
			l.Applied = []LimitSet{}
		}
		if l.NotApplied == nil {
			l.NotApplied = []LimitUnset{}
		}
		if l.Outcome != nil && l.Outcome.Sources == nil {
			l.Outcome.Sources = []string{}
		}
	}
}

// JSON encodes the receipt, indented, with a trailing newline.
func (r *Receipt) JSON() ([]byte, error) {
	r.Normalize()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// WriteFile writes the receipt atomically, with the mode os.WriteFile
// gives a new file of 0666: less the umask.
func (r *Receipt) WriteFile(path string) error {
	b, err := r.JSON()
	if err != nil {
		return err
	}
	return atomicfile.WriteFileUmask(path, b, 0o666)
}
