//go:build linux || darwin

package stop

import (
	"strconv"
	"syscall"

	"github.com/tether-run/tether/identity"
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

// TermMember is Term for a member whose state was read after its pidfd
// opened (the stat its proof read): SIGCONT goes only to a member that was
// stopped ('T') then. A SIGCONT is a system call of ~10 µs here, 10 ms of
// the stop signal's fan-out to 1,000 members (issue 13). A member stopped
// after that read keeps sig pending until the kill that ends the grace:
// it is stopped all the same, less politely. ('t', a ptrace stop, is
// not ended by SIGCONT.)
func TermMember(h *identity.Handle, sig syscall.Signal, state byte) bool {
	if state == 'T' {
		return Term(h, sig)
	}
	return h.Signal(Signal(sig)) == nil
}

// ContNote is what a term step adds for the n members it also sent
// SIGCONT: nothing when none was stopped.
func ContNote(n int) string {
	if n == 0 {
		return ""
	}
	return " (and SIGCONT to the " + strconv.Itoa(n) + " stopped)"
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
