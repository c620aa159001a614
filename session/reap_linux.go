package session

import (
	"os/exec"

	"github.com/tether-run/tether/internal/identity"
)

// reapSupervisor waits for the supervisor cmd to exit and collects it,
// in the runtime's poller rather than on a thread of its own
// (identity.AwaitChildExit).
func reapSupervisor(cmd *exec.Cmd) {
	identity.AwaitChildExit(cmd.Process.Pid)
	cmd.Wait()
}
