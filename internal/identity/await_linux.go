package identity

import (
	"os"

	"golang.org/x/sys/unix"
)

// AwaitChildExit returns once pid, a child of this process not yet
// reaped, has exited; the caller's Wait then reaps it without blocking.
// It waits in the runtime's poller on a pidfd: os/exec's Wait blocks in
// waitid(2), which holds an OS thread for the child's whole life — a
// thread every short `tether run` and `tether start` created, woke and
// tore down at its exit for nothing (issue 30). The pidfd cannot name
// another process: the child is not reaped until the caller's Wait. With
// no pidfd (EMFILE), it returns at once and that Wait blocks as before.
func AwaitChildExit(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	// Read calls its func, and again each time the pidfd becomes
	// readable, until it returns true. The func asks the pidfd itself:
	// Read resets the poller's readiness first, so a readiness from
	// before the call (a child that exited before Read began) is gone,
	// and only an edge after it would wake the wait (a `tether run --
	// true` hung one time in eight on "the first call is before the
	// exit").
	rc.Read(func(fd uintptr) bool {
		for {
			n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
			if err != unix.EINTR {
				return err != nil || n > 0 // an error: not waited on, the caller's Wait blocks
			}
		}
	})
}
