//go:build linux || darwin

package stop

import (
	"strconv"
	"syscall"

	"github.com/tether-run/tether/internal/identity"
	"golang.org/x/sys/unix"
)

// Term sends sig (the stop signal; 0 means SIGTERM) and then SIGCONT
// through h: a member stopped by SIGSTOP (or a job-control stop) keeps
// the signal pending until it is continued, and would use up the grace
// without acting on it. It reports whether sig was delivered.
func Term(h *identity.Handle, sig syscall.Signal) bool {
	if h.Signal(Signal(sig)) != nil {
		return false
	}
	h.Signal(syscall.SIGCONT)
	return true
}

// Signal is the stop signal in force: sig, or SIGTERM when sig is 0.
func Signal(sig syscall.Signal) syscall.Signal {
	if sig == 0 {
		return syscall.SIGTERM
	}
	return sig
}

// SignalName names a stop signal as the receipt does: SIGTERM, SIGUSR1.
func SignalName(sig syscall.Signal) string {
	if n := unix.SignalName(Signal(sig)); n != "" {
		return n
	}
	return "signal " + strconv.Itoa(int(sig))
}

// KillAll sends SIGKILL through each handle and returns how many it
// reached.
func KillAll(hs []*identity.Handle) (n int) {
	for _, h := range hs {
		if h.Signal(syscall.SIGKILL) == nil {
			n++
		}
	}
	return n
}
