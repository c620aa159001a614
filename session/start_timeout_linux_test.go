package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/registry"
)

// TestStartTimeoutKillsSupervisor is the regression test for a start whose
// supervisor never reports: Start used to release the runtime dir and
// return while the supervisor ran on (and could still start the command
// into a name now free). The supervisor must be dead when Start returns.
func TestStartTimeoutKillsSupervisor(t *testing.T) {
	dir := t.TempDir()
	reg, err := store.Open(filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	// A stand-in supervisor that records its pid and never reports.
	exe, pidFile := standIn(t, dir, "")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	c := &Client{reg: reg, Supervisor: exe}
	err = startOnceRun(t, c, ctx, Options{Name: "hung", Argv: []string{"true"}, Owner: "none"}, pidFile)
	if !errors.Is(err, ErrSupervisor) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Start() = %v, want ErrSupervisor and the context's deadline", err)
	}
	assertStandInDead(t, pidFile, err)
	if _, serr := os.Stat(reg.RuntimeDir("hung")); !os.IsNotExist(serr) {
		t.Errorf("runtime dir after the failed start: %v, want it removed", serr)
	}
	if r, rerr := reg.Read("hung"); rerr != nil || r.State != registry.StateFailed {
		t.Errorf("record = %+v, %v; want failed", r, rerr)
	}
}

// standIn writes a stand-in supervisor into dir: a script that records
// its pid in the returned file, runs the shell commands do, and hangs
// without reading its hand-off or reporting.
func standIn(t *testing.T, dir, do string) (exe, pidFile string) {
	t.Helper()
	pidFile = filepath.Join(dir, "pid")
	exe = filepath.Join(dir, "stand-in-supervisor")
	script := "#!/bin/sh\necho $$ > " + pidFile + "\n" + do + "\nexec sleep 1000\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe, pidFile
}

// startOnceRun runs c.Start(ctx, o) with the registry's lock held until
// the stand-in supervisor has created path, and returns Start's error.
// Start spawns the supervisor, then claims the name under the lock: what
// ends the start (its context's deadline, abandon's second) comes after
// the stand-in has run so far, not before its sh got there (TCG, a loaded
// host), which left no pid to check.
func startOnceRun(t *testing.T, c *Client, ctx context.Context, o Options, path string) error {
	t.Helper()
	unlock, err := c.reg.Lock()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Start(ctx, o)
		done <- err
	}()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			break
		}
		if time.Now().After(deadline) {
			unlock()
			t.Fatalf("the stand-in supervisor never created %s (Start: %v)", path, <-done)
		}
	}
	unlock()
	return <-done
}

// assertStandInDead checks that the stand-in whose pid is in pidFile ran
// and is dead once Start returned err (killing it if not).
func assertStandInDead(t *testing.T, pidFile string, err error) {
	t.Helper()
	b, rerr := os.ReadFile(pidFile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if rerr != nil || pid <= 0 {
		t.Fatalf("the stand-in supervisor never ran: %v", rerr)
	}
	if serr := syscall.Kill(pid, 0); serr == nil {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("supervisor %d still running after Start returned %v", pid, err)
	}
}
