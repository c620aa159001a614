package identity

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func startSleep(t *testing.T) *exec.Cmd {
	t.Helper()
	c := exec.Command("sleep", "1000")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c
}

func TestOpenVerifiesToken(t *testing.T) {
	c := startSleep(t)
	tok, err := Of(c.Process.Pid)
	if err != nil {
		t.Fatalf("Of(%d) error = %v", c.Process.Pid, err)
	}
	h, err := Open(tok)
	if err != nil {
		t.Fatalf("Open(%s) error = %v", tok, err)
	}
	defer h.Close()
	// pidfds are pidfs files from Linux 6.9; before that a token has no
	// inode and boot + pid + start time are the whole identity.
	hasPidfs := pidfsIno(h.fd) != 0
	if !tok.Matches(h.Token) || hasPidfs && h.Token.Ino == 0 {
		t.Errorf("Open(%s).Token = %s, want the same process (with its pidfs inode where the kernel has pidfs: %t)", tok, h.Token, hasPidfs)
	}
	if hasPidfs {
		// Same pid and start time, another pidfs inode: another process
		// (a pid reused within one clock tick).
		reused := h.Token
		reused.Ino++
		if _, err := Open(reused); !errors.Is(err, ErrMismatch) {
			t.Errorf("Open(inode +1) error = %v, want ErrMismatch", err)
		}
	} else {
		t.Logf("no pidfs (Linux < 6.9): the same-tick pid reuse check does not apply")
	}

	stale := tok
	stale.StartTime++
	if _, err := Open(stale); !errors.Is(err, ErrMismatch) {
		t.Errorf("Open(start time +1) error = %v, want ErrMismatch", err)
	}
	other := tok
	other.BootID = "00000000-0000-0000-0000-000000000000"
	if _, err := Open(other); !errors.Is(err, ErrMismatch) {
		t.Errorf("Open(other boot) error = %v, want ErrMismatch", err)
	}

	if err := h.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("Signal(SIGKILL) error = %v", err)
	}
	if !h.WaitExit(5 * time.Second) {
		t.Fatal("WaitExit after SIGKILL = false, want true")
	}
	c.Wait()
	if err := h.Signal(syscall.SIGTERM); !errors.Is(err, ErrGone) {
		t.Errorf("Signal after reap error = %v, want ErrGone", err)
	}
	if _, err := Open(tok); !errors.Is(err, ErrGone) && !errors.Is(err, ErrMismatch) {
		t.Errorf("Open(reaped) error = %v, want ErrGone or ErrMismatch", err)
	}
}

func TestOpenChildAndReap(t *testing.T) {
	// A child started without os/exec's bookkeeping: reaped through the
	// pidfd as tether reaps orphans.
	pid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", "exit 7"}, &syscall.ProcAttr{Env: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	h, err := OpenChild(pid)
	if err != nil {
		t.Fatalf("OpenChild(%d) error = %v", pid, err)
	}
	defer h.Close()
	if !h.WaitExit(5 * time.Second) {
		t.Fatal("WaitExit = false, want true")
	}
	// A zombie child is still identifiable.
	if err := h.Identify(); err != nil || h.Token.StartTime == 0 || h.Token.BootID == "" {
		t.Fatalf("Identify() = %v, token %s", err, h.Token)
	}
	if err := h.Reap(); err != nil {
		t.Fatalf("Reap() error = %v", err)
	}
	if err := h.Reap(); !errors.Is(err, ErrGone) {
		t.Errorf("second Reap() error = %v, want ErrGone", err)
	}
	if _, err := ReadStat(pid); !errors.Is(err, ErrGone) {
		t.Errorf("ReadStat(reaped %d) error = %v, want ErrGone", pid, err)
	}
}

func TestCmdlineAndStartedAt(t *testing.T) {
	c := startSleep(t)
	var got []string
	for range 100 { // exec may not have happened yet
		if got = Cmdline(c.Process.Pid); len(got) == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(got) != 2 || got[0] != "sleep" || got[1] != "1000" {
		t.Errorf("Cmdline(%d) = %q, want [sleep 1000]", c.Process.Pid, got)
	}
	tok, _ := Of(c.Process.Pid)
	at := StartedAt(tok)
	if d := time.Since(at); d < -2*time.Second || d > time.Minute {
		t.Errorf("StartedAt(%s) = %v, %v from now; want within a minute", tok, at, d)
	}
}

// TestStartedAtWithinATick: the start time is exact to the kernel's tick
// (10 ms); with /proc/stat's whole-second btime it read up to a second
// early (by the fraction of a second at which this machine booted).
func TestStartedAtWithinATick(t *testing.T) {
	before := time.Now()
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := Of(pid)
	var ws syscall.WaitStatus
	syscall.Wait4(pid, &ws, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	tick := time.Second / clockTicks
	if at := StartedAt(tok); at.Before(before.Add(-tick)) || at.After(after) {
		t.Errorf("StartedAt = %s, want within [%s − one tick, %s]", at.Format(time.RFC3339Nano), before.UTC().Format(time.RFC3339Nano), after.UTC().Format(time.RFC3339Nano))
	}
}

// TestOpenZombieIsGone: a process that exited but is not yet reaped is
// gone for Open, on the pidfs-inode fast path too.
func TestOpenZombieIsGone(t *testing.T) {
	pid, err := syscall.ForkExec("/bin/true", []string{"true"}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := OpenChild(pid)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Identify(); err != nil {
		t.Fatal(err)
	}
	h.WaitExit(5 * time.Second)
	if _, err := Open(h.Token); !errors.Is(err, ErrGone) {
		t.Errorf("Open(zombie %s) = %v, want ErrGone", h.Token, err)
	}
	h.Reap()
}
