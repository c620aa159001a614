//go:build linux || darwin

package sessionctl

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/internal/identity"
)

// SignalNum is the signal named name (SIGUSR1), 0 if none is.
func SignalNum(name string) syscall.Signal { return unix.SignalNum(name) }

// SignalName is sig's name (SIGUSR1).
func SignalName(sig syscall.Signal) string { return unix.SignalName(sig) }

// StopRequests is how a `tether stop` wakes the supervisor with token
// self: SIGTERM (SIGINT for one without grace; SIGHUP as SIGTERM).
func StopRequests(self string) (chan os.Signal, error) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	return sigs, nil
}

// Wake wakes the supervisor sup to read its stop requests: SIGTERM, or
// SIGINT when urgent (a stop without grace whose request file could not
// be written).
func Wake(sup *identity.Handle, urgent bool) error {
	if urgent {
		return sup.Signal(unix.SIGINT)
	}
	return sup.Signal(unix.SIGTERM)
}
