//go:build unix

package cli

import (
	"os"
	"syscall"
)

// forwardedSignals are what tether exec passes on to its command.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}
