// Package leaky is a test that leaves a daemon behind (setsid: a session
// and process group of its own) and passes: run under `go test -exec
// 'tether run --'`, the daemon is stopped with the test binary.
package leaky

import (
	"os/exec"
	"syscall"
	"testing"
)

func TestLeavesADaemon(t *testing.T) {
	cmd := exec.Command("sleep", "3142.26")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
}
