package session

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/registry"
)

// ownEnv is what tether sets in a session's environment, over the
// caller's: the session's name and runtime dir, a TMPDIR of its own (so
// that sockets daemons put under TMPDIR outlive the caller's scratch),
// its run id, and the variables of its profile.
func ownEnv(name, rt, profile, runID string) map[string]string {
	own := map[string]string{
		"TETHER_SESSION":     name,
		"TETHER_SESSION_DIR": rt,
		"TMPDIR":             filepath.Join(rt, "tmp"),
	}
	if runID != "" {
		own[contain.RunIDEnv] = runID
	}
	sock := filepath.Join(rt, "sock")
	switch profile {
	case "tmux":
		own["TMUX_TMPDIR"] = sock
	case "playwright":
		own["PWTEST_SOCKETS_DIR"] = sock
		own["PWTEST_DAEMON_SESSION_DIR"] = filepath.Join(rt, "pw")
	}
	return own
}

// profileStopExec is each profile's stop-exec: its daemon's own way to
// end, reaching the session's own daemon through the variables ownEnv
// sets.
var profileStopExec = map[string][]string{
	"tmux":       {"tmux", "kill-server"},
	"playwright": {"playwright-cli", "close-all"},
}

// namingVars are the variables that name a session: a caller cannot set
// them (Options.Set), for tether finds the session by them.
var namingVars = []string{"TETHER_SESSION", "TETHER_SESSION_DIR", contain.RunIDEnv}

// recordEnv returns the variables tether set in the live session's
// environment, as sorted KEY=VALUE pairs: what reaches the session's
// daemons (`tether env`), and what `tether exec` sets over the caller's
// environment. A value the session's start was given over tether's own
// (Options.Set: TMPDIR=…) is the one its spec holds.
func recordEnv(reg *store.Registry, rec *registry.Record) []string {
	own := ownEnv(rec.Name, rec.RuntimeDir, rec.Profile, rec.RunID)
	if spec, err := sessionctl.ReadSpec(reg, rec); err == nil && spec.RunID == rec.RunID {
		for _, kv := range spec.Env {
			if k, v, _ := strings.Cut(kv, "="); own[k] != "" && !slices.Contains(namingVars, k) {
				own[k] = v
			}
		}
	}
	var env []string
	for k, v := range own {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

// overlay returns base with the KEY=VALUE pairs of over set, replacing
// what base had for the same keys.
func overlay(base, over []string) []string {
	keys := map[string]bool{}
	for _, kv := range over {
		keys[key(kv)] = true
	}
	out := make([]string, 0, len(base)+len(over))
	for _, kv := range base {
		if !keys[key(kv)] {
			out = append(out, kv)
		}
	}
	return append(out, over...)
}

func key(kv string) string {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i]
		}
	}
	return kv
}
