//go:build linux || darwin

package session

import (
	"os"
	"os/exec"
	"syscall"
)

// What sessions do alike on Linux and macOS: the supervisor is started
// in a session of its own with the report pipe as fd 3, and woken by
// signals. What differs (a systemd scope, the enclosing session found by
// cgroup, how inherited descriptors are found) is in os_linux.go and
// os_darwin.go.

// startDetached starts cmd, the supervisor, in a session of its own, with
// wr, the report pipe's write end, as its fd 3, and returns it.
func startDetached(cmd *exec.Cmd, wr *os.File) (*exec.Cmd, error) {
	cmd.ExtraFiles = []*os.File{wr}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd, cmd.Start()
}
