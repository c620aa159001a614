package contain

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/receipt"
)

// waitFile waits for a file the command creates once it is ready.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for range 500 {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", path)
}

func stepNamed(r *receipt.Receipt, name string) *receipt.Step {
	for i := range r.Stop.Steps {
		if r.Stop.Steps[i].Name == name {
			return &r.Stop.Steps[i]
		}
	}
	return nil
}

func TestStopEndsAfterGraceWhenMembersObeyTERM(t *testing.T) {
	for _, mech := range mechanisms(t) {
		t.Run(string(mech), func(t *testing.T) {
			dir := t.TempDir()
			// Every member is forked before "ready": a sleep forked after
			// the TERM pass would be missed by it (seen once in the VM).
			c := Command("sh", "-c", `setsid sleep 1000 & (sleep 1000 &); sleep 1000 & touch "$D/ready"; wait`)
			c.Env = append(os.Environ(), "D="+dir)
			c.Mechanism = mech
			c.Grace = time.Minute
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			waitFile(t, filepath.Join(dir, "ready"))
			c.BeginStop(ReasonRequest)
			err := c.Wait()
			r := c.Receipt()
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Signal != "SIGTERM" || ee.Code != 143 {
				t.Errorf("Wait() error = %v, want main killed by SIGTERM (143)", err)
			}
			if !r.StopConfirmed || r.Evidence.KillUsed || r.Evidence.Signalled < 4 {
				t.Errorf("stop_confirmed %t kill_used %t signalled %d; want true, false, ≥4", r.StopConfirmed, r.Evidence.KillUsed, r.Evidence.Signalled)
			}
			if r.Stop.Reason != string(ReasonRequest) || r.StragglersTotal != 0 {
				t.Errorf("reason %q stragglers %d, want request and 0 (members of a stopped run are not stragglers)", r.Stop.Reason, r.StragglersTotal)
			}
		})
	}
}

func TestKillSkipsGrace(t *testing.T) {
	for _, mech := range mechanisms(t) {
		t.Run(string(mech), func(t *testing.T) {
			dir := t.TempDir()
			c := Command("sh", "-c", `trap "" TERM; setsid sh -c 'trap "" TERM; sleep 1000' & touch "$D/ready"; wait`)
			c.Env = append(os.Environ(), "D="+dir)
			c.Mechanism = mech
			c.Grace = time.Hour
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			waitFile(t, filepath.Join(dir, "ready"))
			c.BeginStop(ReasonSignal)
			time.Sleep(100 * time.Millisecond)
			c.Kill()
			c.Wait()
			r := c.Receipt()
			g := stepNamed(r, "grace")
			if g == nil || !strings.Contains(g.Observed, "cut short") {
				t.Errorf("grace step = %+v, want cut short", g)
			}
			if !r.StopConfirmed || !r.Evidence.KillUsed || r.Exit.Signal != "SIGKILL" {
				t.Errorf("stop_confirmed %t kill_used %t exit %+v", r.StopConfirmed, r.Evidence.KillUsed, r.Exit)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	c := Command("sleep", "1000")
	c.Timeout = 100 * time.Millisecond
	err := c.Run()
	r := c.Receipt()
	if c.ExitCode() != 124 || !r.TimedOut || r.Stop.Reason != string(ReasonTimeout) {
		t.Errorf("exit %d timed_out %t reason %q, want 124 true timeout (err %v)", c.ExitCode(), r.TimedOut, r.Stop.Reason, err)
	}
}

func TestExitStatusPassesThrough(t *testing.T) {
	c := Command("sh", "-c", "exit 3")
	err := c.Run()
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 3 || c.ExitCode() != 3 || c.Receipt().Exit.MainStatus != 3 {
		t.Errorf("Run() = %v, ExitCode() = %d, want 3", err, c.ExitCode())
	}
	c = Command("sh", "-c", "kill -9 $$")
	c.Run()
	if c.ExitCode() != 137 || c.Receipt().Exit.Signal != "SIGKILL" {
		t.Errorf("killed by 9: ExitCode() = %d, exit %+v, want 137 SIGKILL", c.ExitCode(), c.Receipt().Exit)
	}
}

// TestOutputPipeHeldByDaemon: with a non-file Stdout, a daemon holding the
// pipe must not keep Wait from returning, and nothing written is lost.
func TestOutputPipeHeldByDaemon(t *testing.T) {
	var out bytes.Buffer
	c := Command("sh", "-c", "echo hello; setsid sh -c 'echo daemon; exec sleep 1000' & sleep 0.1")
	c.Stdout = &out
	c.Grace = 100 * time.Millisecond
	done := make(chan error, 1)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Wait() = %v", err)
		}
	case <-time.After(30 * time.Second):
		c.Kill()
		<-done
		t.Fatal("Wait() blocked on a pipe held by a daemon")
	}
	if got := out.String(); got != "hello\ndaemon\n" && got != "daemon\nhello\n" {
		t.Errorf("output = %q, want hello and daemon", got)
	}
}

func TestStartErrors(t *testing.T) {
	m, merr := cgroup.Mount()
	exe := filepath.Join(t.TempDir(), "noexec")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o644)
	tests := []struct {
		name   string
		cmd    *Cmd
		code   int
		target error
	}{
		{"not found", Command("tether-no-such-command"), 127, exec.ErrNotFound},
		{"not executable", Command(exe), 126, nil},
		{"directory", Command(t.TempDir()), 126, nil},
		{"relative parent", withParent(Command("true"), "relative/dir"), 125, cgroup.ErrRelative},
		{"non-cgroup parent", withParent(Command("true"), t.TempDir()), 125, cgroup.ErrNotCgroup},
	}
	if merr == nil {
		tests = append(tests, struct {
			name   string
			cmd    *Cmd
			code   int
			target error
		}{"missing parent", withParent(Command("true"), filepath.Join(m, "tether-missing")), 125, os.ErrNotExist})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cmd.Start()
			if err == nil {
				tt.cmd.Wait()
				t.Fatal("Start() succeeded")
			}
			if tt.target != nil && !errors.Is(err, tt.target) {
				t.Errorf("Start() error = %v, want %v", err, tt.target)
			}
			if got := StartErrorCode(err); got != tt.code {
				t.Errorf("StartErrorCode(%v) = %d, want %d", err, got, tt.code)
			}
			r := tt.cmd.Receipt()
			if r.Error == "" || r.Exit.Code != tt.code || tt.cmd.Pid() != 0 {
				t.Errorf("receipt error %q exit %d pid %d; want an error, %d, none", r.Error, r.Exit.Code, tt.cmd.Pid(), tt.code)
			}
			if !errors.Is(tt.cmd.Wait(), err) {
				t.Errorf("Wait() after failed Start = %v, want %v", tt.cmd.Wait(), err)
			}
		})
	}
}

func withParent(c *Cmd, p string) *Cmd {
	c.CgroupParent = p
	return c
}

// TestFreshLeafAfterKill: a run whose leaf was cgroup.killed must not spoil
// the next run under the same parent (the kernel trap in DESIGN.md).
func TestFreshLeafAfterKill(t *testing.T) {
	if len(mechanisms(t)) < 2 {
		t.Skip("no writable cgroup v2 parent")
	}
	var leaves []string
	for i := range 3 {
		c := Command("sh", "-c", `trap "" TERM; echo ok`)
		c.Mechanism = receipt.MechanismCgroup
		c.Grace = -1
		var err error
		if i == 0 {
			// Timed out once its trap is set (a fixed 50 ms timeout could
			// come before it under TCG): the kill is needed.
			dir := t.TempDir()
			c = Command("sh", "-c", `trap "" TERM; touch "$0/ready"; sleep 1000`, dir)
			c.Mechanism = receipt.MechanismCgroup
			c.Grace = -1
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			waitFile(t, filepath.Join(dir, "ready"))
			c.BeginStop(ReasonTimeout)
			err = c.Wait()
		} else {
			err = c.Run()
		}
		r := c.Receipt()
		if i == 0 && !r.Evidence.KillUsed {
			t.Fatalf("first run did not use cgroup.kill: %+v", r.Evidence)
		}
		if i > 0 && (err != nil || r.Exit.Code != 0) {
			t.Errorf("run %d after a kill: %v, exit %+v; want success", i, err, r.Exit)
		}
		leaves = append(leaves, r.Cgroup.Path)
	}
	if leaves[0] == leaves[1] || leaves[1] == leaves[2] {
		t.Errorf("leaves reused: %v", leaves)
	}
}

func TestUntilEmpty(t *testing.T) {
	for _, mech := range mechanisms(t) {
		t.Run(string(mech), func(t *testing.T) {
			// The daemon outlives the main process and exits by itself.
			c := Command("sh", "-c", "setsid sh -c 'sleep 0.3' & exit 0")
			c.Mechanism = mech
			c.UntilEmpty = true
			c.AdoptOrphans = true
			if err := c.Run(); err != nil {
				t.Fatalf("Run() = %v", err)
			}
			r := c.Receipt()
			if r.Stop.Reason != string(ReasonEmpty) || r.Evidence.Signalled != 0 || !r.StopConfirmed {
				t.Errorf("reason %q signalled %d confirmed %t; want empty, 0, true", r.Stop.Reason, r.Evidence.Signalled, r.StopConfirmed)
			}
			// A daemon that stays is stopped on request.
			c = Command("sh", "-c", "setsid sleep 1000 & exit 0")
			c.Mechanism = mech
			c.UntilEmpty = true
			c.AdoptOrphans = true
			c.Grace = 100 * time.Millisecond
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			// Stopped once the main has exited, its daemon forked: a
			// stop before would signal the main too (a fixed 300 ms was
			// not always enough for sh under TCG).
			awaitExited(t, c.Pid())
			c.BeginStop(ReasonRequest)
			c.Wait()
			r = c.Receipt()
			if r.Stop.Reason != string(ReasonRequest) || r.Evidence.Signalled != 1 || !r.StopConfirmed || r.Exit.Code != 0 {
				t.Errorf("reason %q signalled %d confirmed %t exit %+v; want request, 1, true, 0", r.Stop.Reason, r.Evidence.Signalled, r.StopConfirmed, r.Exit)
			}
		})
	}
}
