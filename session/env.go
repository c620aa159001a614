package session

import (
	"path/filepath"
	"slices"

	"github.com/tether-run/tether/contain"
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

// recordEnv returns the variables tether set in the session's environment, as
// sorted KEY=VALUE pairs: what reaches the session's daemons (`tether
// env`), and what `tether exec` sets over the caller's environment.
func recordEnv(rec *registry.Record) []string {
	var env []string
	for k, v := range ownEnv(rec.Name, rec.RuntimeDir, rec.Profile, rec.RunID) {
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
