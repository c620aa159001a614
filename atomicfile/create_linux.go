package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tether-run/tether/internal/crash"
	"golang.org/x/sys/unix"
)

// createUnnamed is Create through an O_TMPFILE file: five system calls
// (open, write, fchmod, link, close) where a named temporary file takes
// a dozen with the rename and the runtime poller's checks. It reports
// done false, with nothing created, when the filesystem or kernel has no
// O_TMPFILE or /proc is not mounted, so that Create takes the portable
// way.
func createUnnamed(filename string, data []byte, perm os.FileMode) (done bool, err error) {
	dir := filepath.Dir(filename)
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, uint32(perm.Perm()))
	switch {
	case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EISDIR), errors.Is(err, unix.EINVAL):
		return false, nil // no O_TMPFILE here (EISDIR: a kernel without it)
	case err != nil:
		return true, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	for b := data; len(b) > 0; {
		n, err := unix.Write(fd, b)
		if err != nil {
			return true, &os.PathError{Op: "write", Path: filename, Err: err}
		}
		b = b[n:]
	}
	// The mode given to open was reduced by the umask; perm is exact.
	if err := unix.Fchmod(fd, uint32(perm.Perm())); err != nil {
		return true, &os.PathError{Op: "chmod", Path: filename, Err: err}
	}
	crash.Point("atomic-before-rename")
	// linkat(fd, "", AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH; the
	// /proc/self/fd link is how an unprivileged process links the file.
	err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, filename, unix.AT_SYMLINK_FOLLOW)
	if errors.Is(err, unix.ENOENT) {
		if _, serr := os.Stat("/proc/self/fd"); serr != nil {
			return false, nil // no /proc: the unnamed file goes with the close
		}
	}
	if err != nil {
		return true, &os.LinkError{Op: "link", Old: "/proc/self/fd/" + strconv.Itoa(fd), New: filename, Err: err}
	}
	return true, nil
}
