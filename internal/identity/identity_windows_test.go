package identity

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary be a sleeper for the tests below.
func TestMain(m *testing.M) {
	if os.Getenv("TETHER_IDENTITY_SLEEP") == "1" {
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// sleeper starts a child that sleeps a minute; the test kills it if it
// is still there at the end.
func sleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), "TETHER_IDENTITY_SLEEP=1")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c
}

// TestWindowsToken: a token read through a process handle names the
// process — this boot, its pid, its creation time — and proves it again
// only with the same creation time and boot.
func TestWindowsToken(t *testing.T) {
	before := time.Now().Add(-time.Second)
	c := sleeper(t)
	h, err := OpenPID(c.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	boot, err := BootID()
	if err != nil || boot == "" {
		t.Fatalf("BootID = %q, %v", boot, err)
	}
	tok := h.Token
	if tok.OS != "windows" || tok.BootID != boot || tok.PID != c.Process.Pid {
		t.Fatalf("token %s", tok)
	}
	if at := StartedAt(tok); at.Before(before) || at.After(time.Now().Add(time.Second)) {
		t.Errorf("StartedAt = %v, want between %v and now", at, before)
	}
	back, err := Parse(tok.String())
	if err != nil || back != tok {
		t.Fatalf("Parse(%s) = %v, %v", tok, back, err)
	}
	if err := Check(tok.String()); err != nil {
		t.Errorf("Check(live) = %v", err)
	}
	later := tok
	later.StartTime++
	if _, err := Open(later); !errors.Is(err, ErrMismatch) {
		t.Errorf("Open(creation time + 100 ns) = %v, want ErrMismatch", err)
	}
	other := tok
	other.BootID += "x"
	if _, err := Open(other); !errors.Is(err, ErrMismatch) {
		t.Errorf("Open(another boot) = %v, want ErrMismatch", err)
	}
	self, err := OpenPID(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	self.Close()
	if self.Token.StartTime >= tok.StartTime {
		t.Errorf("the child (%d) was created before its parent (%d)", tok.StartTime, self.Token.StartTime)
	}
}

// TestWindowsKill: SIGKILL through a handle terminates the process with
// exit code 137; WaitExit and Exited see it; then the handle reports it
// gone, and its token no longer checks.
func TestWindowsKill(t *testing.T) {
	c := sleeper(t)
	h, err := OpenPID(c.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if h.WaitExit(50*time.Millisecond) || h.Exited() {
		t.Fatal("a sleeping process reported exited")
	}
	if err := h.Signal(0); err != nil {
		t.Errorf("Signal(0) = %v", err)
	}
	if err := h.Signal(syscall.SIGTERM); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Signal(SIGTERM) = %v, want ErrUnsupported", err)
	}
	if err := h.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if !h.WaitExit(30 * time.Second) {
		t.Fatal("not exited 30 s after SIGKILL")
	}
	if !h.Exited() {
		t.Error("Exited = false after WaitExit")
	}
	c.Wait()
	if code := c.ProcessState.ExitCode(); code != 137 {
		t.Errorf("exit code %d, want 137", code)
	}
	if err := h.Signal(syscall.SIGKILL); !errors.Is(err, ErrGone) {
		t.Errorf("Signal after exit = %v, want ErrGone", err)
	}
	tok := h.Token.String()
	h.Close()
	if err := Check(tok); !errors.Is(err, ErrGone) && !errors.Is(err, ErrMismatch) {
		t.Errorf("Check(dead) = %v, want ErrGone or ErrMismatch", err)
	}
	if err := h.Signal(syscall.SIGKILL); !errors.Is(err, ErrClosed) {
		t.Errorf("Signal after Close = %v, want ErrClosed", err)
	}
}

// TestWindowsCloseWakesWait: Close ends a WaitExit in progress, which
// reports false (the process did not exit).
func TestWindowsCloseWakesWait(t *testing.T) {
	c := sleeper(t)
	h, err := OpenPID(c.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan bool)
	go func() { got <- h.WaitExit(time.Hour) }()
	time.Sleep(50 * time.Millisecond)
	h.Close()
	h.Close() // a second Close does nothing
	select {
	case exited := <-got:
		if exited {
			t.Error("WaitExit reported an exit after Close")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not wake WaitExit")
	}
	if _, err := OpenPID(1 << 30); !errors.Is(err, ErrGone) {
		t.Errorf("OpenPID(no such pid) = %v, want ErrGone", err)
	}
}
