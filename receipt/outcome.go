package receipt

import (
	"os"
	"time"
)

// The outcomes of a run (Receipt.Outcome).
const (
	// OutcomeRan: the main process started.
	OutcomeRan = "ran"
	// OutcomeStartFailed: tether tried to start the command and could
	// not (not found, not executable, the containment failed).
	OutcomeStartFailed = "start_failed"
	// OutcomeNotRun: tether refused to start the command (Refusal says
	// why); nothing was started and nothing was left.
	OutcomeNotRun = "not_run"
)

// The reasons of a refusal (Refusal.Reason).
const (
	RefusedRequireFree = "require-free" // --require-free not met
	RefusedPoolFull    = "pool-full"    // the pool has its --max of live members
	RefusedLimits      = "limits"       // --limits strict: a limit cannot be applied
	RefusedStorage     = "storage"      // a storage census over its ceiling, or failed
	RefusedOwnerGone   = "owner-gone"   // the owner is not running
)

// Refusal is why tether refused to start a command.
type Refusal struct {
	Reason string `json:"reason"`
	// Detail is the refusal's message, as tether printed it.
	Detail string `json:"detail"`
}

// NotRun is the receipt of a command tether refused to start (Outcome
// OutcomeNotRun): why, and that nothing was started; runID may be empty
// (a new one is made).
func NotRun(runID string, argv []string, reason, detail string) *Receipt {
	if runID == "" {
		runID = NewRunID()
	}
	cwd, _ := os.Getwd()
	r := New(runID, argv, cwd)
	r.EndedAt = r.StartedAt
	r.Outcome = OutcomeNotRun
	r.Refusal = &Refusal{Reason: reason, Detail: detail}
	r.Stop = Stop{Reason: "not-run"}
	r.StopConfirmed = true
	r.Evidence = Evidence{Empty: true, EmptyBy: "nothing was started"}
	r.Error = detail
	return r
}

// New begins the receipt of run runID of argv in the directory cwd,
// started now: this build and host, and an exit not known yet (code 125,
// no main status), which the stop fills in.
func New(runID string, argv []string, cwd string) *Receipt {
	return &Receipt{
		SchemaVersion: SchemaVersion,
		RunID:         runID,
		Tether:        currentBuild(),
		Host:          currentHost(),
		Argv:          append([]string(nil), argv...),
		Cwd:           cwd,
		StartedAt:     time.Now().UTC(),
		Exit:          Exit{Code: 125, MainStatus: -1},
	}
}
