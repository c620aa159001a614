package cli_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-run/tether/receipt"
)

// TestStopExecRun (issue 25 item 4): --stop-exec runs at the start of the
// stop, before any signal, in the run's environment; a group it ends is
// never signalled (the term step finds no member, no kill), and the
// receipt's stop-exec step holds its exit code and output.
func TestStopExecRun(t *testing.T) {
	cgroupParent(t)
	dir := t.TempDir()
	rpath := filepath.Join(dir, "r.json")
	// The main process ignores the stop signal; only the stop-exec ends it.
	// The stop-exec waits for the pid the main writes once it ignores the
	// signal (bounded by the grace, 10 s): the timeout's 300 ms could pass
	// before sh has run so far under TCG, and a stop-exec that found no pid
	// failed, leaving the main to the TERM.
	code, _, stderr := tether(t, "run", "-q", "--timeout", "0.3", "--receipt", rpath, "-e", "D="+dir,
		"--stop-exec", `until [ -s "$D/pid" ]; do sleep 0.01; done; echo "closing $D"; kill -KILL "$(cat "$D/pid")"`,
		"--", "sh", "-c", `trap "" TERM; echo $$ > "$D/pid"; while :; do sleep 0.05; done`)
	r, _ := readReceipt(t, rpath)
	if code != 124 && code != 137 {
		t.Errorf("tether run --timeout --stop-exec = %d (%s), want a timeout's code", code, stderr)
	}
	if len(r.Stop.Steps) == 0 || r.Stop.Steps[0].Name != "stop-exec" || r.Stop.Steps[0].StopExec == nil {
		t.Fatalf("first step = %+v, want stop-exec", r.Stop.Steps)
	}
	x := r.Stop.Steps[0]
	if x.StopExec.ExitCode != 0 || x.StopExec.Output != "closing "+dir+"\n" || !strings.Contains(x.Observed, "the group ended on it") {
		t.Errorf("stop-exec step = %+v (%+v), want exit 0, its output, the group ended on it", x, x.StopExec)
	}
	if r.Evidence.KillUsed || !r.StopConfirmed || r.Stop.Steps[1].Name != "term" || !strings.Contains(r.Stop.Steps[1].Observed, "no member") {
		t.Errorf("after the stop-exec: steps %+v, kill used %t, confirmed %t; want no member left to signal", r.Stop.Steps, r.Evidence.KillUsed, r.StopConfirmed)
	}
	assertNoSurvivors(t)
}

// TestStopExecTmux (issue 25 item 4): a tmux session of --profile tmux is
// stopped by its own server's kill-server — the receipt's stop-exec step
// says so and no member needed a signal — and nothing of tmux is left.
func TestStopExecTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skipf("tmux not installed: %v", err)
	}
	cgroupParent(t)
	xdg := stateEnv(t)
	mustStart(t, xdg, nil, "-q", "--name", "tm", "--profile", "tmux", "--until", "empty", "--",
		"tmux", "-f", "/dev/null", "new-session", "-d", "-s", "work", "sleep 1000")
	code, out, stderr := tetherIn(t, xdg, nil, "stop", "--json", "tm")
	var doc struct{ Receipts []receipt.Receipt }
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || len(doc.Receipts) != 1 {
		t.Fatalf("tether stop --json tm = %d, %v: %s %s", code, err, out, stderr)
	}
	r := doc.Receipts[0]
	if len(r.Stop.Steps) < 2 || r.Stop.Steps[0].Name != "stop-exec" || r.Stop.Steps[0].StopExec == nil {
		t.Fatalf("steps = %+v, want stop-exec first", r.Stop.Steps)
	}
	x := r.Stop.Steps[0]
	if strings.Join(x.StopExec.Argv, " ") != "tmux kill-server" || x.StopExec.ExitCode != 0 || !strings.Contains(x.Observed, "the group ended on it") {
		t.Errorf("stop-exec step = %+v (%+v), want tmux kill-server exiting 0 and ending the group", x, x.StopExec)
	}
	if r.Evidence.KillUsed || !r.StopConfirmed || !strings.Contains(r.Stop.Steps[1].Observed, "no member") {
		t.Errorf("steps %+v, kill used %t, confirmed %t; want no signal needed", r.Stop.Steps, r.Evidence.KillUsed, r.StopConfirmed)
	}
	assertNoSurvivors(t)
}
