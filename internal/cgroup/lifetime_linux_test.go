package cgroup

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCloseWaitsForHeldFD is the regression test for "the leaf's mutex
// protects the fd number, not the fd's lifetime": an fd handed out by
// StartFD must stay the leaf's directory until it is released, even when
// another goroutine closes the leaf meanwhile (Close waits); before, Close
// freed the number at once and a start could land in whatever reused it.
func TestCloseWaitsForHeldFD(t *testing.T) {
	l := newLeaf(t)
	fd, release, err := l.StartFD()
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() { l.Close(); close(closed) }()
	time.Sleep(50 * time.Millisecond) // give Close its chance to run
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Ino != l.ID {
		t.Errorf("held fd %d after a concurrent Close: ino %d, %v; want the leaf's %d", fd, st.Ino, err, l.ID)
	}
	select {
	case <-closed:
		t.Error("Close returned while the fd was held")
	default:
	}
	release()
	<-closed
	if _, _, err := l.StartFD(); err != ErrClosed {
		t.Errorf("StartFD() after Close = %v, want ErrClosed", err)
	}
	unix.Rmdir(l.Path)
}

// TestConcurrentReadsAndClose reads the leaf's files beside Close; under
// -race it proves every use of the fds is under the lock Close takes.
func TestConcurrentReadsAndClose(t *testing.T) {
	for range 20 {
		l := newLeaf(t)
		done := make(chan struct{})
		go func() {
			defer close(done)
			l.Procs()
			l.Events()
			l.Has("cgroup.procs")
			l.WaitEmpty(time.Millisecond)
		}()
		l.Close()
		<-done
		unix.Rmdir(l.Path)
	}
}
