package identity

import (
	"errors"
	"syscall"
	"testing"
	"time"
)

// TestCloseWhileWaiting is the regression test for the owner's pidfd being
// closed while another goroutine polls it (a session supervisor's owner
// watch): Close must wake the wait, which reports no exit, and only then
// free the fd number. Before, the wait kept polling a number Close had
// freed, which any later open could reuse.
func TestCloseWhileWaiting(t *testing.T) {
	c := startSleep(t)
	h, err := OpenPID(c.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan bool, 1)
	go func() { got <- h.WaitExit(time.Hour) }()
	time.Sleep(50 * time.Millisecond) // let it block in poll
	if err := h.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	select {
	case exited := <-got:
		if exited {
			t.Error("WaitExit woken by Close = true, want false: the process is alive")
		}
	case <-time.After(10 * time.Second): // a hang guard: the wait is an hour
		t.Fatal("WaitExit still blocked 10s after Close")
	}
	if err := h.Signal(syscall.Signal(0)); !errors.Is(err, ErrClosed) {
		t.Errorf("Signal after Close = %v, want ErrClosed", err)
	}
	if h.WaitExit(time.Second) || h.Exited() {
		t.Error("a closed handle reports an exit")
	}
}

// TestConcurrentUseAndClose runs every use of a handle beside Close; run
// under -race it proves the fd is read under the lock that Close takes.
func TestConcurrentUseAndClose(t *testing.T) {
	c := startSleep(t)
	for range 20 {
		h, err := OpenPID(c.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.Signal(syscall.Signal(0))
			h.CgroupID()
			h.Exited()
			h.WaitExit(time.Millisecond)
		}()
		h.Close()
		<-done
	}
}
