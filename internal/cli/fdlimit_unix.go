//go:build unix

package cli

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// minOpenFiles is the open-file limit below which tether refuses to start
// a command. Starting one takes about 14 fds (runtime poller, leaf and
// parent dirs, pipes, pidfds; a session about 20) and the Go runtime dies
// with a fatal error, not an error, when it cannot make its poller: a
// clear refusal is better than a crash halfway.
const minOpenFiles = 16

// checkFDLimit refuses an open-file limit too small to start anything.
// The Go runtime has already raised the soft limit to the hard one.
func checkFDLimit() error {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return nil // cannot tell: let the real failure speak
	}
	if rl.Cur < minOpenFiles {
		return fmt.Errorf("the open-file limit (ulimit -n) is %d; tether needs at least %d to start a command", rl.Cur, minOpenFiles)
	}
	return nil
}
