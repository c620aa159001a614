//go:build windows || darwin

package session

import "os/exec"

// reapSupervisor waits for the supervisor cmd to exit and collects it.
func reapSupervisor(cmd *exec.Cmd) { cmd.Wait() }
