//go:build linux || darwin

package sessionlog

import (
	"errors"
	"fmt"
	"os"

	"github.com/tether-run/tether/registry"
	"golang.org/x/sys/unix"
)

// openLogReader opens a file of a session's log for reading. The log dir is the
// user's own, but what is in it is checked as the registry checks records
// (issue 15): a symlink is not followed, a FIFO is not waited on (status
// and logs would hang on it), and anything but a regular file of the
// user's, closed to others, is refused with its path (registry.ErrUnsafe).
func openLogReader(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%w: log %s is a symlink", registry.ErrUnsafe, path)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Getuid() || st.Mode&0o022 != 0 {
		f.Close()
		return nil, fmt.Errorf("%w: log %s is not a regular file of this user's closed to others (mode %#o, uid %d)", registry.ErrUnsafe, path, st.Mode, st.Uid)
	}
	return f, nil
}
