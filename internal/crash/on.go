//go:build crashpoints && unix

package crash

import (
	"os"
	"syscall"
)

var at = os.Getenv(Env)

// Point SIGKILLs the process when $TETHER_CRASH_AT is name.
func Point(name string) {
	if at == name {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
}

// Enabled reports whether crash points are compiled in.
const Enabled = true
