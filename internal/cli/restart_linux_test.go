package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tether-run/tether/registry"
	"github.com/tether-run/tether/session"
)

// inspectOf is tether inspect NAME's document.
func inspectOf(t *testing.T, xdg, name string) session.Inspection {
	t.Helper()
	code, out, stderr := tetherIn(t, xdg, nil, "inspect", name)
	var in session.Inspection
	if err := json.Unmarshal([]byte(out), &in); code != 0 || err != nil {
		t.Fatalf("tether inspect %s = %d, %v: %s", name, code, err, stderr)
	}
	return in
}

// TestRestart (issue 27): restart stops a running session and starts it
// again as it was started — command, -e environment, --signal, --ttl and
// --ready checks — as a new run, keeping the earlier run's log; it starts
// an ended one again; it refuses, before stopping anything, when the
// owner process is gone, unless --owner is given; and nothing is left.
func TestRestart(t *testing.T) {
	cgroupParent(t)
	xdg := stateEnv(t)
	flag := filepath.Join(t.TempDir(), "flag")
	// The second start of this command is never ready: the restart must
	// wait for --ready again, and say so. The others must print their
	// line within --ready-timeout, which counts from their start: 10 s,
	// not 2, which sh's start under TCG on a loaded host could come near.
	// The restart that is never ready waits it out.
	script := `if [ -e "$FLAG" ]; then sleep 1000; else touch "$FLAG"; echo "ready $FOO"; sleep 1000; fi`
	mustStart(t, xdg, nil, "-q", "--name", "web", "-e", "FOO=bar", "-e", "FLAG="+flag, "--signal", "INT", "--ttl", "1h",
		"--ready", "log:ready bar", "--ready-timeout", "10s", "--", "sh", "-c", script)
	first := inspectOf(t, xdg, "web")

	code, out, stderr := tetherIn(t, xdg, nil, "restart", "web")
	if code != 1 || !strings.Contains(stderr, "stopped \"web\" (run "+first.RunID[:12]+")") || !strings.Contains(stderr, "not ready") {
		t.Fatalf("tether restart web (never ready the second time) = %d, %q (%s); want the old run stopped and exit 1 not ready", code, out, stderr)
	}
	os.Remove(flag)
	code, out, stderr = tetherIn(t, xdg, nil, "restart", "web")
	if code != 0 || out != "web\n" {
		t.Fatalf("tether restart web = %d, %q (%s)", code, out, stderr)
	}
	second := inspectOf(t, xdg, "web")
	if second.RunID == first.RunID || second.State != registry.StateRunning || second.Config == nil ||
		strings.Join(second.Config.Argv, " ") != "sh -c "+script || second.Config.StopSignal != "SIGINT" || second.Config.TTLMS != 3600000 {
		t.Errorf("after restart: run %s state %s config %+v; want a new run of the same command, SIGINT, ttl 1h", second.RunID, second.State, second.Config)
	}
	if !strings.Contains(strings.Join(second.Config.Env, "\n"), "FOO=bar") {
		t.Errorf("after restart the environment lacks FOO=bar")
	}
	if _, text, _ := tetherIn(t, xdg, nil, "status", "web"); !strings.Contains(text, "\nrun:        "+second.RunID+"\n") {
		t.Errorf("tether status web does not show the new run's id %s:\n%s", second.RunID, text)
	}
	if code, out, _ := tetherIn(t, xdg, nil, "logs", "--run", first.RunID, "web"); code != 0 || out != "ready bar\n" {
		t.Errorf("tether logs --run <first> web = %d, %q; want the first run's log kept", code, out)
	}

	// An ended session starts again.
	if code, _, stderr := tetherIn(t, xdg, nil, "stop", "web"); code != 0 {
		t.Fatalf("tether stop web = %d: %s", code, stderr)
	}
	os.Remove(flag)
	if code, _, stderr := tetherIn(t, xdg, nil, "restart", "-q", "web"); code != 0 || stderr != "" {
		t.Errorf("tether restart -q web (ended) = %d, %q", code, stderr)
	}

	// A process owner that is gone: refused before anything is stopped.
	owner := exec.Command("sleep", "1000")
	if err := startCmd(owner); err != nil {
		t.Fatal(err)
	}
	mustStart(t, xdg, nil, "-q", "--name", "owned", "--owner", strconv.Itoa(owner.Process.Pid), "--", "sleep", "1000")
	if code, _, _ := tetherIn(t, xdg, nil, "stop", "owned"); code != 0 {
		t.Fatal("stop owned")
	}
	owner.Process.Kill()
	owner.Wait()
	if code, _, stderr := tetherIn(t, xdg, nil, "restart", "owned"); code != 1 || !strings.Contains(stderr, "is gone: give --owner") {
		t.Errorf("tether restart owned (owner dead) = %d (%s), want 1 saying to give --owner", code, stderr)
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "restart", "-q", "--owner", "none", "owned"); code != 0 {
		t.Errorf("tether restart --owner none owned = %d (%s)", code, stderr)
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "stop", "web", "owned"); code != 0 {
		t.Fatalf("tether stop web owned = %d: %s", code, stderr)
	}
	assertNoSurvivors(t)
}
