package contain

import "syscall"

// syscallKill is test cleanup for a process that escaped: the tests failed
// already, and nothing here proves identity, so it is never used by tether.
func syscallKill(pid int) { syscall.Kill(pid, syscall.SIGKILL) }
