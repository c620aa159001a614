package cli_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/delegate"
	"github.com/tether-run/tether/registry"
)

// TestSessionOutlivesCallerUnit: under systemd, a session started from a
// transient service outlives that service (systemd kills a unit's whole
// cgroup when it stops), because its supervisor takes a scope of its own;
// it then stops clean. Hosts without systemd have no units to outlive:
// there the test checks that nothing was asked of a manager.
func TestSessionOutlivesCallerUnit(t *testing.T) {
	xdg := stateEnv(t)
	if !delegate.Booted() {
		name := mustStart(t, xdg, nil, "--owner", "none", "--", "sleep", "1000")
		if s := statusOf(t, xdg, name); strings.Contains(s.Cgroup, ".scope/") {
			t.Errorf("without systemd the session's leaf is %s, want no scope", s.Cgroup)
		}
		tetherIn(t, xdg, nil, "stop", name)
		assertNoSurvivors(t)
		return
	}
	if _, err := exec.LookPath("systemd-run"); err != nil {
		t.Skipf("systemd-run not installed: %v", err)
	}
	cmd, _, _ := tetherCmd(t, "start", "--name", "outlive", "--owner", "none", "--", "sh", "-c", "setsid sleep 1000 & sleep 1000")
	args := []string{"--pipe", "--wait", "--quiet"}
	for _, kv := range append(withoutEnv(cmd.Env, "XDG_RUNTIME_DIR"), "XDG_RUNTIME_DIR="+xdg) {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "TETHER_") || k == "XDG_RUNTIME_DIR" || k == "PATH" {
			args = append(args, "--setenv="+kv)
		}
	}
	if os.Geteuid() != 0 {
		args = append(args, "--user")
	}
	out, err := exec.Command("systemd-run", append(append(args, cmd.Path), cmd.Args[1:]...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-run tether start: %v: %s", err, out)
	}
	// The transient service has ended; the session must not have. Start
	// returns once the main process runs, which may be before sh has
	// forked its setsid'd child (seen on a slow guest: 1 process): the
	// count is read again for a while, and a session the unit's end
	// killed never gets its processes back.
	s := statusOf(t, xdg, "outlive")
	for deadline := time.Now().Add(10 * time.Second); s.State == registry.StateRunning && s.Procs < 2 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		s = statusOf(t, xdg, "outlive")
	}
	if s.State != registry.StateRunning || s.Procs < 2 || !strings.Contains(s.Cgroup, ".scope/") {
		t.Fatalf("after its caller's unit ended: state %s, %d processes, leaf %s; want running, 2, in a scope", s.State, s.Procs, s.Cgroup)
	}
	code, out2, stderr := tetherIn(t, xdg, nil, "stop", "outlive")
	if code != 0 || !strings.Contains(out2, "; confirmed; receipt ") {
		t.Errorf("tether stop = %d, %q, %q; want 0, confirmed", code, out2, stderr)
	}
	assertNoSurvivors(t)
}
