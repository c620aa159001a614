package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// stubborn is a session command that ignores SIGTERM (sleep inherits the
// ignored disposition) and touches $D/NAME once it does.
func stubborn(dir, name string) []string {
	return []string{"sh", "-c", `trap "" TERM; touch "` + filepath.Join(dir, name) + `"; exec sleep 1000`}
}

// startStubborn starts a TERM-ignoring session and waits until it ignores
// TERM.
func startStubborn(t *testing.T, xdg, name string, args ...string) {
	t.Helper()
	dir := t.TempDir()
	argv := append(append([]string{"--name", name, "--owner", "none"}, args...), "--")
	mustStart(t, xdg, nil, append(argv, stubborn(dir, "ready")...)...)
	awaitFile(t, filepath.Join(dir, "ready"), nil)
}

// stopJSON starts `tether stop --json ARGS` and returns its exit channel
// and stdout.
func stopJSON(t *testing.T, xdg string, args ...string) (*exec.Cmd, <-chan int, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd, out, errb := tetherCmd(t, append([]string{"stop", "--json"}, args...)...)
	cmd.Env = append(withoutEnv(cmd.Env, "XDG_RUNTIME_DIR"), "XDG_RUNTIME_DIR="+xdg)
	return cmd, startTether(t, cmd), out, errb
}

// receiptsOf decodes the receipts of `tether stop --json`.
func receiptsOf(t *testing.T, out string) []*receipt.Receipt {
	t.Helper()
	var doc struct {
		Receipts []*receipt.Receipt `json:"receipts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("stop --json: %v\n%s", err, out)
	}
	return doc.Receipts
}

// awaitExit waits for a tether started with startTether; the bound is a
// hang guard, not a timing assertion.
func awaitExit(t *testing.T, what string, done <-chan int) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(runDeadline + 5*time.Second):
		t.Fatalf("%s did not end", what)
		return -1
	}
}

// TestStopJoinsStopUnderWay is the regression test for two concurrent
// `tether stop` of one session: the second used to cut the first one's
// grace short (any second signal killed at once). Now it joins: both wait
// for the same end, report the same receipt, and the grace is served.
func TestStopJoinsStopUnderWay(t *testing.T) {
	xdg := stateEnv(t)
	startStubborn(t, xdg, "joined", "--grace", "2s")
	_, first, out1, err1 := stopJSON(t, xdg, "joined")
	awaitState(t, xdg, "joined", registry.StateStopping)
	_, second, out2, err2 := stopJSON(t, xdg, "joined")
	if c := awaitExit(t, "first stop", first); c != 0 {
		t.Fatalf("first stop = %d: %s", c, err1)
	}
	if c := awaitExit(t, "second stop", second); c != 0 {
		t.Fatalf("second stop = %d: %s", c, err2)
	}
	r1, r2 := receiptsOf(t, out1.String()), receiptsOf(t, out2.String())
	if len(r1) != 1 || len(r2) != 1 || !r1[0].EndedAt.Equal(r2[0].EndedAt) {
		t.Fatalf("receipts differ: the stops did not report the same stop\n%s\n%s", out1, out2)
	}
	if !hasStep(r1[0], "grace", "still populated after 2s") || !r1[0].StopConfirmed {
		t.Errorf("grace not served in full (confirmed %t):%s", r1[0].StopConfirmed, stepList(r1[0]))
	}
	assertNoSurvivors(t)
}

// TestStopKillEscalates: a later `stop --kill` or `--grace 0` is what cuts
// a stop under way short, and the first stop reports the same end.
func TestStopKillEscalates(t *testing.T) {
	for _, flag := range []string{"--kill", "--grace=0"} {
		t.Run(flag, func(t *testing.T) {
			xdg := stateEnv(t)
			startStubborn(t, xdg, "esc", "--grace", "1h")
			_, first, out1, err1 := stopJSON(t, xdg, "esc")
			awaitState(t, xdg, "esc", registry.StateStopping)
			_, second, _, err2 := stopJSON(t, xdg, flag, "esc")
			if c := awaitExit(t, "stop "+flag, second); c != 0 {
				t.Fatalf("stop %s = %d: %s", flag, c, err2)
			}
			if c := awaitExit(t, "first stop", first); c != 0 {
				t.Fatalf("first stop = %d: %s", c, err1)
			}
			r := receiptsOf(t, out1.String())[0]
			if !hasStep(r, "grace", "cut short") || !r.StopConfirmed {
				t.Errorf("grace not cut short by %s (confirmed %t):%s", flag, r.StopConfirmed, stepList(r))
			}
			assertNoSurvivors(t)
		})
	}
}

// TestStopGraceZeroDuringTTLStop is the regression test for `tether stop
// --grace 0` during a TTL stop, which was ignored: the watcher wrote Grace
// (racing the grace wait, which had read it already) and the TTL's grace
// of an hour was waited out. The stop signal is SIGWINCH, which sleep and
// sh ignore from their start: the TTL's second counts from the start, and
// a SIGTERM before the workload's trap (sh's start under TCG can take
// that long) ended it with no kill and no ready file.
func TestStopGraceZeroDuringTTLStop(t *testing.T) {
	xdg := stateEnv(t)
	startStubborn(t, xdg, "ttl", "--ttl", "1s", "--grace", "1h", "--signal", "WINCH")
	awaitState(t, xdg, "ttl", registry.StateStopping)
	_, done, out, errb := stopJSON(t, xdg, "--grace", "0", "ttl")
	if c := awaitExit(t, "stop --grace 0", done); c != 0 {
		t.Fatalf("stop --grace 0 = %d: %s", c, errb)
	}
	r := receiptsOf(t, out.String())[0]
	if !r.StopConfirmed || !r.Evidence.KillUsed || hasStep(r, "grace", "after 1h") {
		t.Errorf("receipt confirmed %t kill %t:%s", r.StopConfirmed, r.Evidence.KillUsed, stepList(r))
	}
	// The TTL began the stop; the request joined it and renames nothing.
	if s := statusOf(t, xdg, "ttl"); r.Stop.Reason != "ttl" || s.StopReason != "ttl" {
		t.Errorf("stop reason: receipt %q, record %q; want ttl in both", r.Stop.Reason, s.StopReason)
	}
	assertNoSurvivors(t)
}

// stoppedTogether fails t unless every stop began (its term step) before
// any of them ended: serial stops end one before the next begins.
func stoppedTogether(t *testing.T, rs []*receipt.Receipt) {
	t.Helper()
	var lastTerm, firstEnd time.Time
	for _, r := range rs {
		for _, s := range r.Stop.Steps {
			if s.Name == "term" && s.At.After(lastTerm) {
				lastTerm = s.At
			}
		}
		if firstEnd.IsZero() || r.EndedAt.Before(firstEnd) {
			firstEnd = r.EndedAt
		}
	}
	if !lastTerm.Before(firstEnd) {
		t.Errorf("stops ran one after another: last SIGTERM at %s, first end at %s", lastTerm.Format(time.RFC3339Nano), firstEnd.Format(time.RFC3339Nano))
	}
}

// TestStopAllAtOnce is the regression test for `stop --all` stopping one
// session at a time (each waiting out its grace before the next began).
func TestStopAllAtOnce(t *testing.T) {
	xdg := stateEnv(t)
	for i := range 3 {
		startStubborn(t, xdg, fmt.Sprintf("all%d", i), "--grace", "1s")
	}
	_, done, out, errb := stopJSON(t, xdg, "--all")
	if c := awaitExit(t, "stop --all", done); c != 0 {
		t.Fatalf("stop --all = %d: %s", c, errb)
	}
	rs := receiptsOf(t, out.String())
	if len(rs) != 3 {
		t.Fatalf("stop --all gave %d receipts, want 3", len(rs))
	}
	stoppedTogether(t, rs)
	assertNoSurvivors(t)
}

// TestStopFamilyAtOnce: a session's supervisor stops the sessions it owns
// together, not one by one with up to 2 min each.
func TestStopFamilyAtOnce(t *testing.T) {
	xdg := stateEnv(t)
	mustStart(t, xdg, nil, "--name", "fam", "--owner", "none", "--", "sleep", "1000")
	var rs []*receipt.Receipt
	for i := range 3 {
		dir := t.TempDir()
		name := fmt.Sprintf("kid%d", i)
		mustStart(t, xdg, nil, append([]string{"--name", name, "--owner", "session:fam", "--grace", "1s", "--"}, stubborn(dir, "ready")...)...)
		awaitFile(t, filepath.Join(dir, "ready"), nil)
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "stop", "fam"); code != 0 {
		t.Fatalf("stop fam = %d: %s", code, stderr)
	}
	for i := range 3 {
		s := statusOf(t, xdg, fmt.Sprintf("kid%d", i))
		r, _ := readReceipt(t, s.Receipt)
		rs = append(rs, r)
	}
	stoppedTogether(t, rs)
	assertNoSurvivors(t)
}

// TestStopSignals: the first SIGINT to a waiting `tether stop` kills what
// is still stopping, as --kill would; the stop then ends with receipts.
func TestStopSignals(t *testing.T) {
	xdg := stateEnv(t)
	startStubborn(t, xdg, "sig0", "--grace", "1h")
	startStubborn(t, xdg, "sig1", "--grace", "1h")
	cmd, done, out, errb := stopJSON(t, xdg, "--all")
	awaitState(t, xdg, "sig0", registry.StateStopping)
	awaitState(t, xdg, "sig1", registry.StateStopping)
	cmd.Process.Signal(syscall.SIGINT)
	if c := awaitExit(t, "stop --all after SIGINT", done); c != 0 {
		t.Fatalf("stop --all after SIGINT = %d: %s", c, errb)
	}
	for _, r := range receiptsOf(t, out.String()) {
		if !r.StopConfirmed || !hasStep(r, "grace", "cut short") {
			t.Errorf("receipt confirmed %t:%s", r.StopConfirmed, stepList(r))
		}
	}
	assertNoSurvivors(t)
}

// TestStopKillReachesFamily: a `stop --kill` of a session whose stop is
// waiting for the sessions it owns kills those too, instead of waiting up
// to their grace (here an hour).
func TestStopKillReachesFamily(t *testing.T) {
	xdg := stateEnv(t)
	mustStart(t, xdg, nil, "--name", "elder", "--owner", "none", "--", "sleep", "1000")
	dir := t.TempDir()
	mustStart(t, xdg, nil, append([]string{"--name", "younger", "--owner", "session:elder", "--grace", "1h", "--"}, stubborn(dir, "ready")...)...)
	awaitFile(t, filepath.Join(dir, "ready"), nil)
	_, first, _, err1 := stopJSON(t, xdg, "elder")
	awaitState(t, xdg, "younger", registry.StateStopping)
	if code, _, stderr := tetherIn(t, xdg, nil, "stop", "--kill", "elder"); code != 0 {
		t.Fatalf("stop --kill elder = %d: %s", code, stderr)
	}
	if c := awaitExit(t, "first stop", first); c != 0 {
		t.Fatalf("first stop = %d: %s", c, err1)
	}
	s := statusOf(t, xdg, "younger")
	r, _ := readReceipt(t, s.Receipt)
	if !r.StopConfirmed || !hasStep(r, "grace", "cut short") {
		t.Errorf("owned session: confirmed %t:%s", r.StopConfirmed, stepList(r))
	}
	t.Logf("owned session's stop: %s", stepList(r))
	assertNoSurvivors(t)
}

// TestStopSecondSignalStopsWaiting: the second SIGINT to a waiting `tether
// stop` ends the wait (the supervisor, here SIGSTOPped, goes on later).
func TestStopSecondSignalStopsWaiting(t *testing.T) {
	xdg := stateEnv(t)
	mustStart(t, xdg, nil, "--name", "halted", "--owner", "none", "--", "sleep", "1000")
	s := statusOf(t, xdg, "halted")
	tok, err := identity.Parse(s.Supervisor)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(tok.PID, syscall.SIGSTOP)
	defer syscall.Kill(tok.PID, syscall.SIGCONT)
	requests := func() int {
		m, _ := filepath.Glob(filepath.Join(xdg, "tether", "requests", "stop-*.json"))
		return len(m)
	}
	cmd, done, _, errb := stopJSON(t, xdg, "halted")
	for requests() < 1 {
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	for requests() < 2 { // the kill request the first SIGINT sends
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	if c := awaitExit(t, "stop after two SIGINTs", done); c != 1 || !strings.Contains(errb.String(), "still stopping") {
		t.Errorf("stop after two SIGINTs = %d, %q; want 1, still stopping", c, errb)
	}
	syscall.Kill(tok.PID, syscall.SIGCONT)
	awaitState(t, xdg, "halted", registry.StateStopped)
	assertNoSurvivors(t)
}
