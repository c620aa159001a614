package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestUsageExitCodes: a usage error — a bad flag, a missing or extra
// argument, a bad value — exits 2 on every command but run, where it
// exits 125 as timeout(1)'s do; the message starts with "tether: " and
// nothing runs.
func TestUsageExitCodes(t *testing.T) {
	xdg := stateEnv(t)
	started := filepath.Join(t.TempDir(), "started")
	cmd := []string{"--", "touch", started}
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--bogus"}, 2, "unknown flag"},
		{[]string{"bogus"}, 2, "unknown command"},
		{append([]string{"run", "--bogus"}, cmd...), 125, "unknown flag"},
		{[]string{"run"}, 125, "missing COMMAND"},
		{append([]string{"run", "--timeout", "soon"}, cmd...), 125, `"--timeout"`},
		{append([]string{"run", "--grace", "-1"}, cmd...), 125, `"--grace"`},
		{append([]string{"run", "--signal", "NOPE"}, cmd...), 125, "--signal"},
		{append([]string{"run", "--env", "NOEQUALS"}, cmd...), 125, "--env"},
		{append([]string{"run", "--memory", "lots"}, cmd...), 125, "--memory"},
		{append([]string{"start", "--bogus"}, cmd...), 2, "unknown flag"},
		{[]string{"start"}, 2, "missing COMMAND"},
		{append([]string{"start", "--ttl", "soon"}, cmd...), 2, `"--ttl"`},
		{append([]string{"start", "--signal", "NOPE"}, cmd...), 2, "--signal"},
		{append([]string{"start", "--env", "NOEQUALS"}, cmd...), 2, "--env"},
		{append([]string{"start", "--until", "never"}, cmd...), 2, "--until"},
		{append([]string{"start", "--owner", "someone"}, cmd...), 2, "owner"},
		{append([]string{"start", "--mechanism", "magic"}, cmd...), 2, "--mechanism"},
		{append([]string{"start", "--name", "a/b"}, cmd...), 2, `session "a/b": bad name`},
		{[]string{"ls", "--bogus"}, 2, "unknown flag"},
		{[]string{"ls", "extra"}, 2, "extra"},
		{[]string{"status", "--bogus", "x"}, 2, "unknown flag"},
		{[]string{"status"}, 2, "arg"},
		{[]string{"status", "a/b"}, 2, `session "a/b": bad name`},
		{[]string{"stop", "--bogus", "x"}, 2, "unknown flag"},
		{[]string{"stop"}, 2, "--all"},
		{[]string{"stop", "--grace", "soon", "x"}, 2, `"--grace"`},
		{[]string{"stop", "a/b"}, 2, `session "a/b": bad name`},
		{[]string{"logs", "--bogus", "x"}, 2, "unknown flag"},
		{[]string{"logs"}, 2, "arg"},
		{[]string{"wait", "--bogus", "x"}, 2, "unknown flag"},
		{[]string{"wait"}, 2, "arg"},
		{[]string{"reap", "--bogus"}, 2, "unknown flag"},
		{[]string{"reap", "extra"}, 2, "extra"},
		{[]string{"reap", "--prune", "soon"}, 2, `"--prune"`},
		{[]string{"doctor", "--bogus"}, 2, "unknown flag"},
		{[]string{"doctor", "extra"}, 2, "extra"},
		{[]string{"completion", "--bogus"}, 2, "unknown flag"},
		{[]string{"completion", "tcsh"}, 2, "tcsh"},
		{[]string{"completion", "bash", "extra"}, 2, "extra"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, stderr := tetherIn(t, xdg, nil, tt.args...)
			if code != tt.code || !strings.HasPrefix(stderr, "tether: ") || !strings.Contains(stderr, tt.want) {
				t.Errorf("tether %s = %d, %q; want %d and %q", strings.Join(tt.args, " "), code, stderr, tt.code, tt.want)
			}
		})
	}
	if exists(started) {
		t.Error("a command ran")
	}
}

// TestOperationalExitCodes: a command that was used right but could not
// do its work exits 1, and says which session.
func TestOperationalExitCodes(t *testing.T) {
	xdg := stateEnv(t)
	for _, args := range [][]string{{"status", "nosuch"}, {"stop", "nosuch"}, {"logs", "nosuch"}, {"wait", "nosuch"}} {
		code, _, stderr := tetherIn(t, xdg, nil, args...)
		if want := "tether: session \"nosuch\": not found\n"; code != 1 || stderr != want {
			t.Errorf("tether %s = %d, %q; want 1, %q", strings.Join(args, " "), code, stderr, want)
		}
	}
}
