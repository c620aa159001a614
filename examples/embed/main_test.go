package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/session"
)

// TestMain makes the test binary its sessions' supervisor, as main does.
func TestMain(m *testing.M) {
	session.MaybeSupervise()
	os.Exit(m.Run())
}

// alive reports whether any process's command line contains s.
func alive(s string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), s) {
			return true
		}
	}
	return false
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

// TestDeadlineOutputExitError: a command run with a context deadline,
// its output read, its failure seen as os/exec's *exec.ExitError, and the
// daemon it left stopped with it.
func TestDeadlineOutputExitError(t *testing.T) {
	tag := "embed-daemon-" + time.Now().Format("150405.000000000")
	ready := t.TempDir() + "/ready"
	// The deadline must fall after "up" (the daemon started and ready):
	// it passes once the main process says it printed it. One set at the
	// start (0.5 s, then 2 s) raced sh on a loaded CI host or under TCG.
	ctx := newCueDeadline()
	c := contain.CommandContext(ctx, "sh", "-c", `setsid sh -c 'touch "$1"; while :; do sleep 1; done' "$0" "$1" & while [ ! -e "$1" ]; do sleep 0.01; done; echo up; touch "$1.up"; exec sleep 1000`, tag, ready)
	go func() {
		defer ctx.pass() // at the latest after 30 s, a hang guard
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(ready + ".up"); err == nil {
				return
			}
		}
	}()
	out, err := c.Output()
	if string(out) != "up\n" {
		t.Errorf("output %q; want %q", out, "up\n")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Fatalf("error %v; want an *exec.ExitError for SIGTERM", err)
	}
	r := c.Receipt()
	if r.Evidence.MembersSeen < 2 {
		t.Errorf("the stop saw %d members; want the main process and the daemon", r.Evidence.MembersSeen)
	}
	if !r.StopConfirmed || r.Stop.Reason != "context" {
		t.Errorf("receipt: confirmed %t, reason %q; want true, context", r.StopConfirmed, r.Stop.Reason)
	}
	if alive(tag) {
		t.Errorf("the daemon %s outlived the run", tag)
	}

	code, err := runContained(context.Background(), []string{"sh", "-c", "exit 7"})
	if code != 7 || err != nil {
		t.Errorf("runContained(exit 7) = %d, %v; want 7, nil", code, err)
	}
}

// TestSessionStartStop: a named session started, reached and stopped
// through a Client, its member gone after.
func TestSessionStartStop(t *testing.T) {
	state := t.TempDir()
	os.Chmod(state, 0o700)
	client, err := session.Open(state)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tag := "embed-session-" + time.Now().Format("150405.000000000")
	rec, err := client.Start(ctx, session.Options{Name: "dev", Argv: []string{"sh", "-c", "while :; do sleep 1; done", tag}, Owner: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != "running" || !alive(tag) {
		t.Errorf("started: state %q, member alive %t; want running, true", rec.State, alive(tag))
	}
	st, err := client.Status("dev")
	if err != nil || st.Procs < 1 {
		t.Errorf("status: %d procs, %v; want at least 1", st.Procs, err)
	}
	r, err := client.Stop(ctx, "dev", session.StopOptions{})
	if err != nil || !r.StopConfirmed {
		t.Fatalf("stop: %v (receipt %+v); want confirmed", err, r)
	}
	if alive(tag) {
		t.Errorf("the session's member outlived its stop")
	}
	if rec, err := client.Wait(ctx, "dev"); err != nil || rec.State != "stopped" {
		t.Errorf("wait after stop: %+v, %v; want stopped", rec, err)
	}
}

// TestEmbedderKilled: a program that runs a command through contain with
// default options, SIGKILLed while the command runs, leaves nothing: the
// watcher contain started for it stops the group (issue 24). Before, the
// command's setsid'd daemon ran on for good.
func TestEmbedderKilled(t *testing.T) {
	bin := t.TempDir() + "/embed"
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tag := "embed-killed-" + time.Now().Format("150405.000000000")
	ready := t.TempDir() + "/ready"
	// The daemon ignores SIGTERM: only the protocol's kill ends it.
	cmd := exec.Command(bin, "-timeout", "1h", "--", "sh", "-c", `trap "" TERM; setsid sh -c 'trap "" TERM; touch "$1"; while :; do sleep 1; done' "$0" "$1" & exec sleep 1000`, tag, ready)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil && alive(tag) {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("the daemon never started")
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	killed := time.Now()
	// A hang guard, not a timing assertion: the time is logged.
	for deadline := time.Now().Add(15 * time.Second); alive(tag); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon %s outlived the SIGKILLed program that ran it by 15s", tag)
		}
	}
	t.Logf("the group was gone %s after the program's SIGKILL", time.Since(killed).Round(time.Millisecond))
}
