//go:build linux || darwin

package supervisor

import (
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// readyFile is the supervisor's end of the report pipe: fd 3.
func readyFile() *os.File { return os.NewFile(3, "ready") }

// detachFromCaller closes what the supervisor inherited from its caller
// but the report pipe, which its command must not inherit in turn.
func detachFromCaller(ready *os.File) {
	keep := -1
	if ready != nil {
		// Inherited without close-on-exec: the session's command must not
		// hold the report pipe open.
		syscall.CloseOnExec(int(ready.Fd()))
		keep = int(ready.Fd())
	}
	closeInherited(keep)
}

// closeInherited closes the descriptors the supervisor inherited from
// whoever ran tether start, but keep: a session is detached from its
// caller, and a pipe of the caller's held open by the supervisor (and by
// the session's command after it) would keep the caller's reader waiting
// for an EOF that never comes (a shell's $(tether start ...), a test
// harness's pipes). Everything Go opens is close-on-exec, so what lacks
// the flag was inherited.
func closeInherited(keep int) {
	ents, err := os.ReadDir(fdDir)
	if err != nil {
		return
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 || fd == keep {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err == nil && flags&unix.FD_CLOEXEC == 0 {
			unix.Close(fd)
		}
	}
}
