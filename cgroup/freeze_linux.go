package cgroup

import (
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// HasKill reports whether the leaf has cgroup.kill (Linux 5.14+). Without
// it a group is killed by freezing it and signalling each member.
func (l *Leaf) HasKill() bool { return l.Has("cgroup.kill") }

// Freeze writes cgroup.freeze (Linux 5.2+): true asks the kernel to freeze
// every task in the leaf and its descendants, false thaws them. Freezing
// is asynchronous; WaitFrozen waits for it to take effect.
func (l *Leaf) Freeze(on bool) error {
	v := "0"
	if on {
		v = "1"
	}
	return l.write("cgroup.freeze", v)
}

// FreezeRequested reports whether cgroup.freeze says 1: someone asked for
// the leaf to be frozen (it may not be frozen yet).
func (l *Leaf) FreezeRequested() (bool, error) {
	b, err := l.read("cgroup.freeze")
	if err != nil {
		return false, err
	}
	return len(b) > 0 && b[0] == '1', nil
}

// WaitFrozen waits up to d for cgroup.events to say "frozen 1" and reports
// whether it did. An empty leaf is frozen at once.
func (l *Leaf) WaitFrozen(d time.Duration) (bool, error) {
	path := filepath.Join(l.Path, "cgroup.events")
	// The wait polls an fd of its own, so Close need not wait for it.
	l.mu.RLock()
	fd, err := -1, ErrClosed
	if l.dirfd >= 0 {
		fd, err = unix.Openat(l.dirfd, "cgroup.events", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	l.mu.RUnlock()
	if err == ErrClosed {
		return false, err
	}
	if err != nil {
		return false, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	deadline := time.Now().Add(d)
	buf := make([]byte, 256)
	for {
		n, err := unix.Pread(fd, buf, 0)
		if err != nil {
			return false, &os.PathError{Op: "read", Path: path, Err: err}
		}
		ev, err := ParseEvents(buf[:n])
		if err != nil {
			return false, err
		}
		if ev.Frozen {
			return true, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false, nil
		}
		// Notifications are rate-limited like those of populated (see
		// WaitEmpty): poll in short slices instead of trusting POLLPRI.
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLPRI}}
		if _, err := unix.Poll(fds, int(min(left, 2*time.Millisecond)/time.Millisecond)+1); err != nil && err != unix.EINTR {
			return false, os.NewSyscallError("poll", err)
		}
	}
}
