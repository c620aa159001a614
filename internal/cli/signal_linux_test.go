package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tether-run/tether/receipt"
)

// politeScript ignores SIGTERM (its sleep inherits that) and exits on
// SIGUSR1 (its sleep dies of it); $1 is touched once both are set up and
// sleep runs: until its exec, the forked shell still has the USR1 trap,
// and a SIGUSR1 caught then is lost with the trap at exec (seen under
// -race), leaving a sleep that only the kill ends.
const politeScript = `trap "" TERM; trap "exit 0" USR1; sleep 1000 & p=$!
while [ "$(cat /proc/$p/comm)" != sleep ]; do :; done; : > "$1"; wait`

// TestRunStopSignal: --signal USR1 is what the stop protocol sends first,
// so a tree that ignores SIGTERM but ends on SIGUSR1 ends within the
// grace without a kill; without it, the same tree needs the kill. Both
// mechanisms, and the receipt names the signal sent.
func TestRunStopSignal(t *testing.T) {
	for _, tc := range []struct {
		name, signal, want string
		grace              string
		kill               bool
	}{
		{"usr1", "USR1", "SIGUSR1", "20", false},
		{"number", "10", "SIGUSR1", "20", false},
		{"default", "", "SIGTERM", "0.3", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forMechanisms(t, func(t *testing.T, mech string) {
				dir := t.TempDir()
				ready, rcpt := filepath.Join(dir, "ready"), filepath.Join(dir, "receipt.json")
				args := []string{"run", "--mechanism", mech, "--grace", tc.grace, "--receipt", rcpt}
				if tc.signal != "" {
					args = append(args, "--signal", tc.signal)
				}
				cmd, _, stderr := tetherCmd(t, append(append(args, "--"), sh(politeScript, ready)...)...)
				done := startTether(t, cmd)
				awaitFile(t, ready, done)
				cmd.Process.Signal(syscall.SIGINT)
				if code := <-done; code != 130 {
					t.Errorf("tether %s, then SIGINT = exit %d, want 130; stderr:\n%s", strings.Join(args, " "), code, stderr)
				}
				r, _ := readReceipt(t, rcpt)
				checkSignalled(t, r, tc.want, tc.kill)
				checkStopped(t, r, mech)
			})
		})
	}
}

func checkSignalled(t *testing.T, r *receipt.Receipt, signal string, kill bool) {
	t.Helper()
	if r.Stop.Signal != signal || r.Evidence.KillUsed != kill || r.Evidence.Signalled < 2 {
		t.Errorf("receipt stop.signal, evidence.kill_used, evidence.signalled = %q, %t, %d, want %q, %t, >= 2", r.Stop.Signal, r.Evidence.KillUsed, r.Evidence.Signalled, signal, kill)
	}
	if len(r.Stop.Steps) == 0 || !strings.Contains(r.Stop.Steps[0].Observed, signal+" (and SIGCONT) sent to") {
		t.Errorf("receipt stop.steps = %+v, want the first to say %s was sent", r.Stop.Steps, signal)
	}
}

// TestStartStopSignal: a session started with --signal USR1 is stopped
// with it by tether stop, in the polite phase.
func TestStartStopSignal(t *testing.T) {
	xdg := stateEnv(t)
	ready := filepath.Join(t.TempDir(), "ready")
	name := mustStart(t, xdg, nil, append([]string{"--owner", "none", "--grace", "20", "--signal", "SIGUSR1", "--"}, sh(politeScript, ready)...)...)
	awaitFile(t, ready, nil)
	code, out, stderr := tetherIn(t, xdg, nil, "stop", "--json", name)
	if code != 0 {
		t.Fatalf("tether stop %s = %d: %s", name, code, stderr)
	}
	var got struct{ Receipts []*receipt.Receipt }
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Receipts) != 1 {
		t.Fatalf("tether stop --json = %v, %q; want one receipt", err, out)
	}
	checkSignalled(t, got.Receipts[0], "SIGUSR1", false)
	if !got.Receipts[0].StopConfirmed {
		t.Errorf("receipt stop_confirmed = false, want true")
	}
}

// TestSignalBad: a signal that does not exist is a usage error naming
// the flag (125 for run, 2 for start) and nothing runs.
func TestSignalBad(t *testing.T) {
	started := filepath.Join(t.TempDir(), "started")
	for _, tc := range []struct {
		cmd  string
		code int
	}{{"run", 125}, {"start", 2}} {
		for _, sig := range []string{"BOGUS", "0", "999", ""} {
			code, _, stderr := tether(t, tc.cmd, "--signal", sig, "--", "touch", started)
			if code != tc.code || !strings.Contains(stderr, "--signal") {
				t.Errorf("tether %s --signal %q = %d, %q; want %d naming --signal", tc.cmd, sig, code, stderr, tc.code)
			}
		}
	}
	if _, err := os.Stat(started); err == nil {
		t.Error("the command ran")
	}
}
