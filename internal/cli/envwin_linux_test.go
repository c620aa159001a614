package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOperatorValuesWin (issue 25 item 6): a variable the caller gives
// with -e stands over the one tether sets for a session or its profile
// (TMPDIR, PWTEST_SOCKETS_DIR), tether says so, and tether env and exec
// hand the same value on; the command is found on the PATH -e gives it,
// for run and start alike; the variables that name a run or session are
// refused.
func TestOperatorValuesWin(t *testing.T) {
	cgroupParent(t)
	xdg := stateEnv(t)
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "only-here"), []byte("#!/bin/sh\necho \"found $TMPDIR $PWTEST_SOCKETS_DIR\"\nexec sleep \"${NAP:-1000}\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + bin + ":/usr/bin:/bin"

	// NAP=0: the run ends by itself (a --timeout of 0.2 s once ended it
	// before a loaded TCG guest's shell had printed anything).
	if code, out, stderr := tether(t, "run", "-q", "-e", path, "-e", "TMPDIR=/mine", "-e", "NAP=0", "--", "only-here"); code != 0 || out != "found /mine \n" {
		t.Errorf("tether run -e %s -e TMPDIR=/mine -- only-here = %d, %q (%s); want it found on that PATH", path, code, out, stderr)
	}

	code, _, stderr := tetherIn(t, xdg, nil, "start", "--name", "pw", "--profile", "playwright", "-e", path,
		"-e", "TMPDIR=/mine", "-e", "PWTEST_SOCKETS_DIR=/socks", "--ready", "log:found", "--", "only-here")
	if code != 0 || strings.Count(stderr, "as given stands over the session's own") != 2 {
		t.Fatalf("tether start -e TMPDIR=/mine -e PWTEST_SOCKETS_DIR=/socks = %d (%s); want a note for each", code, stderr)
	}
	if _, out, _ := tetherIn(t, xdg, nil, "logs", "pw"); out != "found /mine /socks\n" {
		t.Errorf("the session's command saw %q, want the values given", out)
	}
	_, env, _ := tetherIn(t, xdg, nil, "env", "pw")
	if !strings.Contains(env, "TMPDIR='/mine'") || !strings.Contains(env, "PWTEST_SOCKETS_DIR='/socks'") {
		t.Errorf("tether env pw = %s, want the values given", env)
	}
	if _, out, _ := tetherIn(t, xdg, nil, "exec", "pw", "--", "sh", "-c", `echo "$TMPDIR $PWTEST_SOCKETS_DIR"`); out != "/mine /socks\n" {
		t.Errorf("tether exec pw sees %q, want the values given", out)
	}

	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"run", "-e", "TETHER_RUN_ID=mine", "--", "true"}, 125},
		{[]string{"start", "-e", "TETHER_SESSION=other", "--", "true"}, 2},
		{[]string{"exec", "-e", "TETHER_SESSION_DIR=/x", "pw", "--", "true"}, 125},
	} {
		if code, _, stderr := tetherIn(t, xdg, nil, c.args...); code != c.code || !strings.Contains(stderr, "names the run or session") {
			t.Errorf("tether %s = %d (%s), want %d refusing it", strings.Join(c.args, " "), code, stderr, c.code)
		}
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "stop", "pw"); code != 0 {
		t.Fatalf("tether stop pw = %d: %s", code, stderr)
	}
	assertNoSurvivors(t)
}
