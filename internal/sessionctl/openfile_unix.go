//go:build linux || darwin

package sessionctl

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// OpenRegular opens path for reading only if it is a regular file of
// ours, and never waits doing so. The runtime dir is the session's
// TETHER_SESSION_DIR: its command can put anything there, and a FIFO in
// place of a file tether reads would block open(2) until a writer came
// (issue 22: a planted progress.jsonl hung every stop). O_NONBLOCK makes
// the open of a FIFO return at once, O_NOFOLLOW refuses a symlink, and
// the fstat refuses whatever is not a regular file.
func OpenRegular(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() {
		unix.Close(fd)
		return nil, fmt.Errorf("session: %s is not a regular file of uid %d: refused", path, os.Geteuid())
	}
	return os.NewFile(uintptr(fd), path), nil
}

// CreateExclusive creates path, which must not exist, for appending.
func CreateExclusive(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND|unix.O_NOFOLLOW, 0o600)
}
