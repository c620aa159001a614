package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-run/tether/registry"
)

// TestKill: tether kill signals a session's main process (or with --all
// every member) without stopping the session; a signal its main process
// dies of ends the session by its end policy (issue 27).
func TestKill(t *testing.T) {
	xdg := stateEnv(t)
	dir := t.TempDir()
	// The main process and a child each note the signals they get.
	script := `trap 'touch "$0/main-$1"' HUP USR1
sh -c 'trap "touch \"$0/child-usr1\"" USR1; touch "$0/child"; while :; do sleep 0.05; done' "$0" &
while :; do sleep 0.05; done`
	mustStart(t, xdg, nil, "-q", "--name", "k", "--", "sh", "-c", script, dir, "x")
	awaitFile(t, filepath.Join(dir, "child"), nil)

	if code, _, stderr := tetherIn(t, xdg, nil, "kill", "-s", "HUP", "k"); code != 0 {
		t.Fatalf("tether kill -s HUP = %d: %s", code, stderr)
	}
	awaitFile(t, filepath.Join(dir, "main-x"), nil)
	if s := statusOf(t, xdg, "k"); s.State != registry.StateRunning {
		t.Fatalf("after kill -s HUP: state %s, want running (no stop)", s.State)
	}
	if exists(filepath.Join(dir, "child-usr1")) {
		t.Fatal("the child got a signal meant for the main process")
	}

	if code, _, stderr := tetherIn(t, xdg, nil, "kill", "--all", "-s", "USR1", "k"); code != 0 {
		t.Fatalf("tether kill --all -s USR1 = %d: %s", code, stderr)
	}
	awaitFile(t, filepath.Join(dir, "child-usr1"), nil)
	if s := statusOf(t, xdg, "k"); s.State != registry.StateRunning {
		t.Fatalf("after kill --all: state %s, want running (no stop)", s.State)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"kill", "-s", "NOSUCH", "k"}, 2, "no such signal"},
		{[]string{"kill", "nosuch"}, 1, "nosuch"},
		{[]string{"kill"}, 2, "arg"},
	} {
		if code, _, stderr := tetherIn(t, xdg, nil, tc.args...); code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("tether %s = %d, %q; want %d and %q", strings.Join(tc.args, " "), code, stderr, tc.code, tc.want)
		}
	}

	// SIGTERM (the default) ends the main process (sh runs no trap for
	// it); the session then ends by its end policy, its child stopped.
	if code, _, stderr := tetherIn(t, xdg, nil, "kill", "k"); code != 0 {
		t.Fatalf("tether kill = %d: %s", code, stderr)
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "wait", "k"); code != 128+15 {
		t.Errorf("tether wait after kill = %d (%s), want 143", code, stderr)
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "kill", "k"); code != 1 || !strings.Contains(stderr, "ended") {
		t.Errorf("tether kill of an ended session = %d, %q; want 1, ended", code, stderr)
	}
}

// TestKillAllFallback: --all needs the session's leaf; the fallback has
// none, and says so.
func TestKillAllFallback(t *testing.T) {
	xdg := stateEnv(t)
	mustStart(t, xdg, nil, "-q", "--name", "f", "--mechanism", "fallback", "--", "sleep", "1000")
	if code, _, stderr := tetherIn(t, xdg, nil, "kill", "--all", "f"); code != 1 || !strings.Contains(stderr, "leaf") {
		t.Errorf("tether kill --all of a fallback session = %d, %q; want 1 and why", code, stderr)
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "stop", "f"); code != 0 {
		t.Errorf("tether stop = %d: %s", code, stderr)
	}
}
