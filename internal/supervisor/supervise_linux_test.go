package supervisor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/leakcheck"
	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/internal/watch"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// The tests here start this test binary as a real supervisor, with the
// command line a client gives one (Args), and talk to it only as a client
// does: through the registry and the session's runtime dir.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == SuperviseArg {
		if err := Main(os.Args[2:]); err != nil {
			fmt.Fprintf(os.Stderr, "supervisor: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(leakcheck.Main(m))
}

// launched is a supervisor a test started, and what it reported.
type launched struct {
	reg     *store.Registry
	rt      string
	cmd     *exec.Cmd
	report  sessionctl.ReadyReport
	exited  chan struct{}
	waitErr error // once exited is closed
}

// spawn starts this test binary as the supervisor of session name of reg,
// as a client does (Args, a session of its own, the report pipe as fd 3),
// with stdin as its hand-off, and returns it with the report pipe's read
// end. It is killed and waited for at t's end if it still runs.
func spawn(t *testing.T, reg *store.Registry, name string, stdin io.Reader, stderr io.Writer) (*launched, *os.File) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	l := &launched{reg: reg, exited: make(chan struct{})}
	l.cmd = &exec.Cmd{Path: exe, Args: Args(exe, reg.Dir, name), Env: os.Environ(), Stdin: stdin, Stderr: stderr,
		ExtraFiles: []*os.File{wr}, SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	err = l.cmd.Start()
	wr.Close()
	if err != nil {
		rd.Close()
		t.Fatal(err)
	}
	go func() { l.waitErr = l.cmd.Wait(); close(l.exited) }()
	t.Cleanup(func() {
		select {
		case <-l.exited:
		default:
			l.cmd.Process.Kill()
			<-l.exited
		}
	})
	return l, rd
}

// launch writes session name's spec and starting record, as a client's
// start does, starts the supervisor for it and reads its one report. The
// supervisor is killed and waited for at t's end if it still runs.
func launch(t *testing.T, reg *store.Registry, spec sessionctl.Spec) *launched {
	t.Helper()
	spec.RunID = receipt.NewRunID()
	if spec.Until == "" {
		spec.Until = sessionctl.UntilMainExit
	}
	spec.LogMax, spec.LogKeep = 1<<20, 2
	rt, err := reg.Claim(spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(spec)
	if err := os.WriteFile(filepath.Join(rt, "spec.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	rec := &registry.Record{Name: spec.Name, Kind: "session", State: registry.StateStarting, RunID: spec.RunID,
		Argv: spec.Argv, Owner: spec.Owner, OwnerToken: spec.OwnerToken, RuntimeDir: rt,
		Log: reg.LogPath(spec.Name, spec.RunID), Until: spec.Until, CreatedAt: now, UpdatedAt: now}
	if err := reg.Write(rec); err != nil {
		t.Fatal(err)
	}
	l, rd := spawn(t, reg, spec.Name, handOff(b), os.Stderr)
	defer rd.Close()
	l.rt = rt
	line, err := bufio.NewReader(rd).ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &l.report) != nil {
		t.Fatalf("supervisor's report %q: %v", line, err)
	}
	return l
}

// handOff is what a client's hand-off sends a supervisor whose start
// goes on: the spec, then the word.
func handOff(spec []byte) io.Reader {
	var b bytes.Buffer
	SendSpec(&b, spec)
	SendGo(&b)
	return &b
}

// ended waits up to d for the supervisor to exit.
func (l *launched) ended(d time.Duration) bool {
	select {
	case <-l.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// newRegistry opens a state dir of the test's, whose watcher (the
// supervisor's guard against its own death) is awaited at t's end.
func newRegistry(t *testing.T) *store.Registry {
	state := t.TempDir()
	os.Chmod(state, 0o700)
	leakcheck.AwaitAtCleanup(t, watch.Env, state)
	reg, err := store.Open(state)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	return reg
}

// daemon is a main process that ends on SIGTERM beside a daemon that
// ignores it: the stop needs its grace and then the kill. The daemon
// creates the file ready once it ignores SIGTERM (a stop before that
// would need no kill: a loaded machine took more than 100 ms once).
func daemon(ready string) []string {
	return []string{"sh", "-c", `(trap "" TERM; : > "$1"; exec sleep 1000) & exec sleep 1000`, "sh", ready}
}

// daemonReady waits for daemon's file ready.
func daemonReady(t *testing.T, ready string) {
	t.Helper()
	waitFor(t, func() bool { _, err := os.Stat(ready); return err == nil }, "daemon ignoring SIGTERM")
}

// TestSuperviseStopRequest: a supervisor records its session running,
// ignores a stop request addressed to another supervisor (a file left for
// an earlier session of the name: here one asking to kill at once, so the
// wake-up alone is a plain request and the whole grace runs), lets a
// client's StopMany join its stop, and ends with a confirmed receipt, the
// TERM-ignoring daemon killed after the grace, the record stopped and the
// runtime dir removed.
func TestSuperviseStopRequest(t *testing.T) {
	reg := newRegistry(t)
	const grace = 300 * time.Millisecond
	ready := filepath.Join(t.TempDir(), "ready")
	l := launch(t, reg, sessionctl.Spec{Name: "s", Argv: daemon(ready), Owner: "none", Grace: grace})
	if !l.report.OK {
		t.Fatalf("report %+v, want OK", l.report)
	}
	rec, err := reg.Read("s")
	if err != nil || rec.State != registry.StateRunning || rec.Supervisor == "" || rec.Main == "" {
		t.Fatalf("record after the report: %+v, %v; want running, naming its supervisor and main", rec, err)
	}
	sup, err := sessionctl.SupervisorOf(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	if sup.Token.PID != l.cmd.Process.Pid {
		t.Fatalf("recorded supervisor %s, want pid %d", rec.Supervisor, l.cmd.Process.Pid)
	}
	daemonReady(t, ready)

	// A kill request for another supervisor, under our prefix (read, and
	// ignored for its token) and under its own (not ours to take).
	stranger := sessionctl.StopRequest{Reason: "request", Kill: true, Supervisor: "1-2-3"}
	b, _ := json.Marshal(stranger)
	theirs := filepath.Join(reg.RequestsDir(), sessionctl.RequestPrefix(stranger.Supervisor)+"0.json")
	for _, p := range []string{filepath.Join(reg.RequestsDir(), sessionctl.RequestPrefix(rec.Supervisor)+"0-stranger.json"), theirs} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := sessionctl.Wake(sup, false); err != nil {
		t.Fatal(err)
	}
	res := sessionctl.StopMany(reg, []string{"s"}, sessionctl.StopRequest{Reason: "request"}, time.Minute, nil, nil, nil)
	r, err := res[0].Receipt, res[0].Err
	if err != nil {
		t.Fatalf("StopMany = %v", err)
	}
	if !r.StopConfirmed || r.Evidence.MembersSeen < 2 || !r.Evidence.KillUsed {
		t.Errorf("receipt: confirmed %t, evidence %+v; want confirmed, main and daemon seen, the kill used", r.StopConfirmed, r.Evidence)
	}
	for _, s := range r.Stop.Steps {
		if s.Name == "grace" && (strings.Contains(s.Observed, "cut short") || strings.Contains(s.Observed, "no grace")) {
			t.Errorf("grace step %q: the stranger's kill request was obeyed", s.Observed)
		}
		if s.Name == "kill" && s.ElapsedMS < (grace/2).Milliseconds() {
			t.Errorf("kill at %d ms, want after the %s grace: the stranger's kill request was obeyed", s.ElapsedMS, grace)
		}
	}
	if !l.ended(10 * time.Second) {
		t.Fatal("the supervisor did not exit after the stop")
	}
	end, err := reg.Read("s")
	if err != nil || end.State != registry.StateStopped || end.StopReason != "request" {
		t.Errorf("record after the stop: %+v, %v; want stopped by request", end, err)
	}
	if _, err := os.Stat(l.rt); !os.IsNotExist(err) {
		t.Errorf("runtime dir after a confirmed stop: %v, want it removed", err)
	}
	if ents, _ := os.ReadDir(reg.RequestsDir()); len(ents) != 1 || ents[0].Name() != filepath.Base(theirs) {
		t.Errorf("requests dir after the stop: %v; want only the other supervisor's request", ents)
	}
}

// TestSuperviseOwnerDeath: the supervisor stops its session when its
// owner dies (SIGKILL: nothing of the owner's takes part), with reason
// owner-exit and the TERM-ignoring daemon killed; a supervisor whose
// owner is already dead refuses the start (owner-gone) and leaves no
// record behind.
func TestSuperviseOwnerDeath(t *testing.T) {
	reg := newRegistry(t)
	owner := exec.Command("sleep", "1000")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { owner.Process.Kill(); owner.Wait() }()
	tok := token(t, owner.Process.Pid)
	ready := filepath.Join(t.TempDir(), "ready")
	l := launch(t, reg, sessionctl.Spec{Name: "owned", Argv: daemon(ready), Owner: "pid", OwnerToken: tok, Grace: 200 * time.Millisecond})
	if !l.report.OK {
		t.Fatalf("report %+v, want OK", l.report)
	}
	daemonReady(t, ready)
	owner.Process.Kill()
	owner.Wait()
	if !l.ended(20 * time.Second) {
		t.Fatal("the session outlived its owner by 20 s")
	}
	end, err := reg.Read("owned")
	if err != nil || end.State != registry.StateStopped || end.StopReason != "owner-exit" {
		t.Fatalf("record: %+v, %v; want stopped, owner-exit", end, err)
	}
	r, err := sessionctl.ReadReceipt(reg, end)
	if err != nil || !r.StopConfirmed || !r.Evidence.KillUsed || r.Stop.Reason != "owner-exit" {
		t.Errorf("receipt %+v, %v; want confirmed, the daemon killed, reason owner-exit as the record's", r, err)
	}

	// The owner is dead now: a new supervisor for it refuses.
	l = launch(t, reg, sessionctl.Spec{Name: "orphan", Argv: daemon(ready), Owner: "pid", OwnerToken: tok})
	if l.report.OK || l.report.Code != 125 || l.report.Refusal != receipt.RefusedOwnerGone {
		t.Errorf("report for a dead owner: %+v; want code 125, refusal %s", l.report, receipt.RefusedOwnerGone)
	}
	if !l.ended(10 * time.Second) {
		t.Fatal("the refusing supervisor did not exit")
	}
	if rec, err := reg.Read("orphan"); err == nil {
		t.Errorf("a refused start left its record: %+v", rec)
	}
}

// token is the identity token of the live process pid.
func token(t *testing.T, pid int) string {
	h, err := identity.OpenPID(pid)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	return h.Token.String()
}
