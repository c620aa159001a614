//go:build linux || darwin

package session

import (
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/internal/identity"
)

// What sessions do alike on Linux and macOS: the supervisor is started
// in a session of its own with the report pipe as fd 3, and woken by
// signals. What differs (a systemd scope, the enclosing session found by
// cgroup, how inherited descriptors are found) is in os_linux.go and
// os_darwin.go.

// signalNum is the signal named name (SIGUSR1), 0 if none is.
func signalNum(name string) syscall.Signal { return unix.SignalNum(name) }

// signalName is sig's name (SIGUSR1).
func signalName(sig syscall.Signal) string { return unix.SignalName(sig) }

// readyFile is the supervisor's end of the report pipe: fd 3.
func readyFile() *os.File { return os.NewFile(3, "ready") }

// startDetached starts cmd, the supervisor, in a session of its own, with
// wr, the report pipe's write end, as its fd 3, and returns it.
func startDetached(cmd *exec.Cmd, wr *os.File) (*exec.Cmd, error) {
	cmd.ExtraFiles = []*os.File{wr}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd, cmd.Start()
}

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

// stopRequests is how a `tether stop` wakes the supervisor with token
// self: SIGTERM (SIGINT for one without grace; SIGHUP as SIGTERM).
func stopRequests(self string) (chan os.Signal, error) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	return sigs, nil
}

// wake wakes the supervisor sup to read its stop requests: SIGTERM, or
// SIGINT when urgent (a stop without grace whose request file could not
// be written).
func wake(sup *identity.Handle, urgent bool) error {
	if urgent {
		return sup.Signal(unix.SIGINT)
	}
	return sup.Signal(unix.SIGTERM)
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
