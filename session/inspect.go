//go:build linux || windows || darwin

package session

import (
	"errors"
	"os"

	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/limits"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// Inspection is all tether knows of one run of a session, as `tether
// inspect` prints it (issue 27; docker inspect's counterpart): its record
// with what is true of it now (Status), the configuration it was started
// with, and its receipt once it has one.
type Inspection struct {
	SchemaVersion int `json:"schema_version"`
	Status
	// Config is what the run was started with; nil when it is no longer
	// known (a supervisor killed before the end kept none).
	Config *Config `json:"config"`
	// Receipt is the run's stop receipt; nil until the run has ended, or
	// when it ended without one.
	Receipt *receipt.Receipt `json:"receipt"`
	// Problems say why Config or Receipt is missing when it should not be.
	Problems []string `json:"problems,omitempty"`
}

// Config is the configuration a session's run was started with (its
// Options as the supervisor ran them), durations in milliseconds.
type Config struct {
	Argv             []string    `json:"argv"`
	Env              []string    `json:"env"`
	Dir              string      `json:"dir"`
	Owner            string      `json:"owner"`
	Profile          string      `json:"profile,omitempty"`
	Until            string      `json:"until"`
	TTLMS            int64       `json:"ttl_ms"`
	GraceMS          int64       `json:"grace_ms"`
	KillWaitMS       int64       `json:"kill_wait_ms"`
	StopSignal       string      `json:"stop_signal"`
	StopExec         []string    `json:"stop_exec,omitempty"`
	Mechanism        string      `json:"mechanism,omitempty"`
	CgroupParent     string      `json:"cgroup_parent,omitempty"`
	Limits           limits.Spec `json:"limits"`
	BestEffortLimits bool        `json:"best_effort_limits"`
	Pool             string      `json:"pool,omitempty"`
	LogMaxBytes      int64       `json:"log_max_bytes"`
	LogKeep          int         `json:"log_keep"`
	Max              int         `json:"max,omitempty"`
	Ready            []string    `json:"ready,omitempty"`
	ReadyTimeoutMS   int64       `json:"ready_timeout_ms,omitempty"`
}

// Runs returns the runs of session name on record, newest first: the
// one Status and Logs show by default, then the earlier ones a name used
// again keeps (each with its own run id, log and receipt).
func (c *Client) Runs(name string) ([]*registry.Record, []error) { return c.reg.Runs(name) }

// Inspect returns all that is on record of session name's run run (its
// run id, or a prefix only one of its runs has; "": the newest).
func (c *Client) Inspect(name, run string) (*Inspection, error) {
	rec, err := c.reg.Read(name)
	if run != "" {
		rec, err = c.reg.FindRun(name, run)
	}
	if err != nil {
		return nil, err
	}
	in := &Inspection{SchemaVersion: 1, Status: statusWithProcesses(rec)}
	if run != "" && in.RuntimeDirExists && !rec.Live() && !c.reg.Current(rec) {
		in.RuntimeDirExists = false // the dir is a later run's of the name
	}
	spec, err := c.config(rec)
	switch {
	case err == nil:
		in.Config = configOf(spec)
	case !errors.Is(err, os.ErrNotExist):
		in.Problems = append(in.Problems, "config: "+err.Error())
	}
	if rec.Receipt != "" {
		if in.Receipt, err = sessionctl.ReadReceipt(c.reg, rec); err != nil {
			in.Problems = append(in.Problems, "receipt: "+err.Error())
		}
	}
	return in, nil
}

// config reads the spec of rec's run: the one its supervisor kept when
// the run ended, else, while it runs, the one in its runtime dir.
func (c *Client) config(rec *registry.Record) (*sessionctl.Spec, error) {
	b, err := c.reg.ReadFile(c.reg.ConfigPath(rec.Name, rec.RunID), sessionctl.MaxSpec)
	if err == nil {
		return sessionctl.DecodeSpec(b, rec.Name)
	}
	if !errors.Is(err, os.ErrNotExist) || !rec.Live() {
		return nil, err
	}
	spec, err := sessionctl.ReadSpec(c.reg, rec)
	if err == nil && spec.RunID != rec.RunID {
		return nil, os.ErrNotExist // a later run's
	}
	return spec, err
}

func configOf(s *sessionctl.Spec) *Config {
	cfg := &Config{
		Argv: s.Argv, Env: s.Env, Dir: s.Dir, Owner: s.Owner, Profile: s.Profile, Until: s.Until,
		TTLMS: s.TTL.Milliseconds(), GraceMS: s.Grace.Milliseconds(), KillWaitMS: s.KillWait.Milliseconds(),
		StopSignal: s.StopSignal, StopExec: s.StopExec, Mechanism: s.Mechanism, CgroupParent: s.CgroupParent, Limits: s.Limits,
		BestEffortLimits: s.BestEffortLimits, Pool: s.Pool, LogMaxBytes: s.LogMax, LogKeep: s.LogKeep,
		Max: s.Max, Ready: s.Ready, ReadyTimeoutMS: s.ReadyTimeout.Milliseconds(),
	}
	if cfg.StopSignal == "" {
		cfg.StopSignal = "SIGTERM"
	}
	if cfg.Env == nil {
		cfg.Env = []string{}
	}
	if cfg.LogMaxBytes == 0 {
		cfg.LogMaxBytes = DefaultLogMax
	}
	if cfg.LogKeep == 0 {
		cfg.LogKeep = DefaultLogKeep
	}
	return cfg
}
