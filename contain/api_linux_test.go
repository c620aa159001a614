package contain

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/leakcheck"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/internal/watch"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// The os/exec-shaped API, with real processes, under every mechanism this
// machine has.

// TestContextDeadlineStopsGroup: a context deadline ends the run through
// the stop protocol, the daemon the command left included, and Wait's
// error is an *exec.ExitError for errors.As, as with os/exec.
func TestContextDeadlineStopsGroup(t *testing.T) {
	for _, mech := range mechanisms(t) {
		t.Run(string(mech), func(t *testing.T) {
			mark, dir := caseMark(t), t.TempDir()
			// The deadline passes once the group is whole: a deadline
			// set at the start raced sh's fork of its daemon (300 ms,
			// then 2 s, under TCG on a loaded host).
			ctx := newCueDeadline()
			c := CommandContext(ctx, "sh", "-c", `setsid sleep 1000 & touch "$0/ready"; sleep 1000`, dir)
			c.Env = append(os.Environ(), "TETHER_CASE="+mark)
			c.Mechanism = mech
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			waitFile(t, filepath.Join(dir, "ready"))
			ctx.pass()
			err := c.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ProcessState == nil || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
				t.Fatalf("Run() = %v; want an *exec.ExitError for SIGTERM", err)
			}
			var ce *ExitError
			if !errors.As(err, &ce) || ce.Code != 128+int(syscall.SIGTERM) || ce.ExitCode() != ce.Code {
				t.Errorf("Run() = %#v; want *ExitError with code 143", err)
			}
			r := c.Receipt()
			if r.Stop.Reason != string(ReasonContext) || !r.StopConfirmed || r.Evidence.MembersSeen < 2 {
				t.Errorf("receipt: reason %q, confirmed %t, members %d; want context, true, >= 2", r.Stop.Reason, r.StopConfirmed, r.Evidence.MembersSeen)
			}
			if c.ProcessState == nil || c.ProcessState.Pid() != r.Main.PID {
				t.Errorf("ProcessState = %v; want the main process's", c.ProcessState)
			}
			if left := marked(mark); len(left) != 0 {
				t.Errorf("left running: %v", left)
			}
		})
	}
}

// cueDeadline is a context whose deadline passes when the test says
// (pass), not at a time set before the command started, which a slow
// start could reach first. Once it has passed, Done is closed and Err is
// context.DeadlineExceeded, as for a deadline.
type cueDeadline struct {
	context.Context
	done chan struct{}
}

func newCueDeadline() *cueDeadline {
	return &cueDeadline{Context: context.Background(), done: make(chan struct{})}
}

// pass makes the deadline pass.
func (c *cueDeadline) pass() { close(c.done) }

func (c *cueDeadline) Done() <-chan struct{} { return c.done }

func (c *cueDeadline) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// TestContextCancelMainSucceeds: a main process that exits 0 on SIGTERM
// makes Wait return the context's error, as os/exec does.
func TestContextCancelMainSucceeds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	c := CommandContext(ctx, "sh", "-c", `trap "exit 0" TERM; touch "$0/ready"; while :; do sleep 0.05; done`, dir)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(dir, "ready"))
	cancel()
	if err := c.Wait(); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait() = %v; want context.Canceled", err)
	}
	if c.ExitCode() != 0 {
		t.Errorf("ExitCode() = %d; want 0", c.ExitCode())
	}
}

// TestContextDoneBeforeStart: nothing starts.
func TestContextDoneBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := CommandContext(ctx, "true")
	if err := c.Start(); !errors.Is(err, context.Canceled) || c.Pid() != 0 {
		t.Errorf("Start() = %v, pid %d; want context.Canceled and nothing started", err, c.Pid())
	}
	c = Command("true")
	c.Cancel = func() error { return nil }
	if err := c.Start(); err == nil || c.Pid() != 0 {
		t.Errorf("Start() with Cancel but no context = %v; want an error", err)
	}
}

// TestWaitDelayKills: after Cancel, WaitDelay bounds the grace: members
// that ignore SIGTERM are killed then, not after an hour.
func TestWaitDelayKills(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	c := CommandContext(ctx, "sh", "-c", `trap "" TERM; touch "$0/ready"; while :; do sleep 0.05; done`, dir)
	c.Grace = time.Hour
	c.WaitDelay = 200 * time.Millisecond
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(dir, "ready"))
	cancel()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		var ce *ExitError
		if !errors.As(err, &ce) || ce.Signal != "SIGKILL" {
			t.Errorf("Wait() = %v; want the main process killed by SIGKILL", err)
		}
	case <-time.After(30 * time.Second):
		c.Kill()
		<-done
		t.Fatal("WaitDelay did not cut the grace short")
	}
	if r := c.Receipt(); !r.Evidence.KillUsed || !r.StopConfirmed {
		t.Errorf("receipt: kill used %t, confirmed %t; want both", r.Evidence.KillUsed, r.StopConfirmed)
	}
}

// TestOutput: stdout is returned; a failure carries the start of stderr
// in the *exec.ExitError, as exec.Cmd.Output does.
func TestOutput(t *testing.T) {
	out, err := Command("sh", "-c", "echo out; echo err >&2; exit 3").Output()
	if string(out) != "out\n" {
		t.Errorf("Output() = %q; want %q", out, "out\n")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || string(ee.Stderr) != "err\n" {
		t.Errorf("Output() error = %v (stderr %q); want exit 3 with stderr %q", err, stderrOf(ee), "err\n")
	}
	out, err = Command("echo", "hi").Output()
	if err != nil || string(out) != "hi\n" {
		t.Errorf("Output() = %q, %v; want %q, nil", out, err, "hi\n")
	}
	c := Command("true")
	c.Stdout = io.Discard
	if _, err := c.Output(); err == nil {
		t.Error("Output() with Stdout set succeeded")
	}
}

func stderrOf(ee *exec.ExitError) []byte {
	if ee == nil {
		return nil
	}
	return ee.Stderr
}

// TestCombinedOutput: one pipe for both streams keeps their order.
func TestCombinedOutput(t *testing.T) {
	out, err := Command("sh", "-c", "for i in 1 2 3 4 5; do echo o$i; echo e$i >&2; done").CombinedOutput()
	want := "o1\ne1\no2\ne2\no3\ne3\no4\ne4\no5\ne5\n"
	if err != nil || string(out) != want {
		t.Errorf("CombinedOutput() = %q, %v; want %q, nil", out, err, want)
	}
}

// TestPipes: StdinPipe and StdoutPipe, as with os/exec.
func TestPipes(t *testing.T) {
	c := Command("sh", "-c", "while read l; do echo got $l; done")
	in, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errp, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, errp)
	io.WriteString(in, "a\nb\n")
	in.Close()
	var lines []string
	for s := bufio.NewScanner(out); s.Scan(); {
		lines = append(lines, s.Text())
	}
	if err := c.Wait(); err != nil {
		t.Errorf("Wait() = %v", err)
	}
	if strings.Join(lines, ",") != "got a,got b" {
		t.Errorf("read %q; want got a, got b", lines)
	}
	if err := in.Close(); err != nil {
		t.Errorf("second Close of the stdin pipe = %v; want nil", err)
	}
	if _, err := c.StdoutPipe(); err == nil {
		t.Error("StdoutPipe after Start succeeded")
	}
}

// TestStopAndSignal: Signal reaches the main process by pidfd; Stop ends
// the run and confirms it; both say when the process is gone.
func TestStopAndSignal(t *testing.T) {
	dir := t.TempDir()
	c := Command("sh", "-c", `trap "exit 7" USR1; touch "$0/ready"; while :; do sleep 0.05; done`, dir)
	if err := c.Stop(context.Background()); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Stop before Start = %v; want ErrNotStarted", err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(dir, "ready"))
	if err := c.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	var ce *ExitError
	if err := c.Wait(); !errors.As(err, &ce) || ce.Code != 7 {
		t.Errorf("Wait() = %v; want exit 7", err)
	}
	if err := c.Signal(syscall.SIGUSR1); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("Signal after the end = %v; want os.ErrProcessDone", err)
	}

	c = Command("sleep", "1000")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(context.Background()); err != nil {
		t.Errorf("Stop() = %v; want nil", err)
	}
	if err := c.Wait(); !errors.As(err, &ce) || ce.Signal != "SIGTERM" {
		t.Errorf("Wait() after Stop = %v; want killed by SIGTERM", err)
	}
	if r := c.Receipt(); r.Stop.Reason != string(ReasonRequest) || !r.StopConfirmed {
		t.Errorf("receipt: reason %q confirmed %t; want request, true", r.Stop.Reason, r.StopConfirmed)
	}
}

// TestRegistryRecord: with Registry set, the run has a record while it
// runs, naming its main process and cgroup, and none after a confirmed
// stop.
func TestRegistryRecord(t *testing.T) {
	for _, mech := range mechanisms(t) {
		t.Run(string(mech), func(t *testing.T) {
			state := t.TempDir()
			os.Chmod(state, 0o700)
			leakcheck.AwaitAtCleanup(t, watch.Env, state) // its watcher, before the dir goes
			reg, err := store.Open(state)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			c := Command("sh", "-c", `touch "$0/ready"; sleep 1000`, dir)
			c.StateDir = reg.Dir
			c.Mechanism = mech
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			waitFile(t, filepath.Join(dir, "ready"))
			recs, errs := reg.List()
			if len(errs) != 0 || len(recs) != 1 {
				c.Kill()
				c.Wait()
				t.Fatalf("records while running: %v, %v; want one", recs, errs)
			}
			r := c.Receipt()
			rec := recs[0]
			if rec.Kind != "run" || rec.State != registry.StateRunning || rec.RunID != r.RunID || rec.Mechanism != string(r.Mechanism) {
				t.Errorf("record %+v; want a running run record of %s", rec, r.RunID)
			}
			// The record is written once, before the spawn (issue 13):
			// with a leaf it names the leaf, which is what reap acts on;
			// in the fallback the main process is recorded after it.
			switch {
			case mech == receipt.MechanismCgroup && (rec.Cgroup != r.Cgroup.Path || rec.CgroupID != r.Cgroup.ID || rec.Main != ""):
				t.Errorf("record cgroup %q id %d main %q; want leaf %q id %d and no main", rec.Cgroup, rec.CgroupID, rec.Main, r.Cgroup.Path, r.Cgroup.ID)
			case mech == receipt.MechanismFallback && (rec.Main != r.Main.Token || rec.Cgroup != ""):
				t.Errorf("record main %q cgroup %q; want main %s and no leaf", rec.Main, rec.Cgroup, r.Main.Token)
			}
			c.Kill()
			c.Wait()
			if recs, _ := reg.List(); len(recs) != 0 {
				t.Errorf("records after a confirmed stop: %v; want none", recs)
			}
		})
	}
}

// TestWaitErrorWraps: a stop that could not be proven is ErrNotConfirmed
// and keeps the main process's failure for errors.As.
func TestWaitErrorWraps(t *testing.T) {
	r := &receipt.Receipt{Exit: receipt.Exit{Code: 3, MainStatus: 3}}
	err := waitError(r, nil)
	var ce *ExitError
	if !errors.Is(err, ErrNotConfirmed) || !errors.As(err, &ce) || ce.Code != 3 || !strings.Contains(err.Error(), "group not seen empty") {
		t.Errorf("waitError = %v; want ErrNotConfirmed wrapping exit 3", err)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Errorf("waitError without a process state gave an *exec.ExitError %v", ee)
	}
	r.StopConfirmed, r.Exit = true, receipt.Exit{}
	if err := waitError(r, nil); err != nil {
		t.Errorf("waitError of a clean run = %v; want nil", err)
	}
}
