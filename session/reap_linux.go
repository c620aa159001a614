package session

import (
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// reapSupervisor waits for the supervisor cmd to exit and collects it.
// It waits in the runtime's poller on a pidfd first: os/exec's Wait
// blocks in waitid(2), which holds an OS thread of the caller for the
// supervisor's whole life — a thread that every short `tether start`
// created, woke and tore down at its exit for nothing (issue 30). The
// pidfd cannot name another process: the supervisor is this process's
// child, not reaped until the Wait below.
func reapSupervisor(cmd *exec.Cmd) {
	if fd, err := unix.PidfdOpen(cmd.Process.Pid, unix.PIDFD_NONBLOCK); err == nil {
		f := os.NewFile(uintptr(fd), "pidfd")
		if rc, err := f.SyscallConn(); err == nil {
			waited := false
			// Read calls its func again once the pidfd is readable: the
			// process has exited.
			rc.Read(func(uintptr) bool {
				defer func() { waited = true }()
				return waited
			})
		}
		f.Close()
	}
	cmd.Wait()
}
