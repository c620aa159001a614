//go:build unix

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// survivePipes points os.Stdout and os.Stderr at duplicates of
// descriptors 1 and 2: a write to a closed stdout or stderr must fail with
// EPIPE, not kill tether — a diagnostic that cannot be written is no
// reason to abandon a cleanup. Go kills a program whose write to a broken
// pipe fails on descriptor 1 or 2 (os.File raises SIGPIPE for those two)
// unless SIGPIPE is notified (os/signal); on any other descriptor the
// write just fails. A duplicate is the same open file: the commands
// tether starts with it get the same standard output as before, and keep
// SIGPIPE's default action (an ignored signal would stay ignored across
// exec). Notifying SIGPIPE did the same at ~0.1 ms of every run, as the
// first Notify starts the runtime's signal threads (issue 13). The
// descriptors are read by number, not through os.File.Fd, which would
// clear O_NONBLOCK on a file shared with the caller. Call it first, before
// anything holds os.Stdout or os.Stderr.
func survivePipes() {
	os.Stdout = dupStd(1, os.Stdout)
	os.Stderr = dupStd(2, os.Stderr)
}

// dupStd returns a duplicate of fd (close-on-exec, above 2), or f where
// none can be made (fd closed: writes then fail with EBADF, harmlessly).
func dupStd(fd int, f *os.File) *os.File {
	d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return f
	}
	return os.NewFile(uintptr(d), f.Name())
}
