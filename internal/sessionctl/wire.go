//go:build linux || windows || darwin

package sessionctl

import (
	"fmt"
	"time"

	"github.com/tether-run/tether/limits"
	"github.com/tether-run/tether/receipt"
)

// What Start and a supervisor tell each other, and how a malformed option
// is reported: none of it is API.

// OptionError is a malformed option: it reads as its message alone, and
// errors.Is finds ErrBadOptions.
type OptionError struct{ msg string }

func BadOption(format string, a ...any) error {
	return &OptionError{msg: fmt.Sprintf(format, a...)}
}

func (e *OptionError) Error() string { return e.msg }
func (e *OptionError) Unwrap() error { return ErrBadOptions }

// Spec is everything the supervisor needs, written by Start into the
// runtime dir (spec.json) and read back by the supervisor.
type Spec struct {
	Name             string        `json:"name"`
	RunID            string        `json:"run_id"`
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
	StopSignal       string        `json:"stop_signal,omitempty"` // SIGUSR1; empty: SIGTERM
	StopExec         []string      `json:"stop_exec"`             // null: none
	Mechanism        string        `json:"mechanism,omitempty"`
	CgroupParent     string        `json:"cgroup_parent,omitempty"`
	Limits           limits.Spec   `json:"limits"`
	BestEffortLimits bool          `json:"best_effort_limits,omitempty"`
	// Storage holds the storage ceilings with their first census, taken
	// by Start.
	Storage []receipt.Storage `json:"storage,omitempty"`
	Pool    string            `json:"pool,omitempty"`
	LogMax  int64             `json:"log_max"`
	LogKeep int               `json:"log_keep,omitempty"`
	// Max, Ready and ReadyTimeout are the start's, which the supervisor
	// does not use: kept so that a restart starts the same session.
	Max          int           `json:"max,omitempty"`
	Ready        []string      `json:"ready,omitempty"`
	ReadyTimeout time.Duration `json:"ready_timeout,omitempty"`
}

// ReadyReport is the supervisor's one-line report to Start.
type ReadyReport struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	Code  int    `json:"code,omitempty"` // 125, 126, 127 as for tether run
	// Refusal is StartError.Refusal: the start was refused and left
	// nothing.
	Refusal string `json:"refusal,omitempty"`
}
