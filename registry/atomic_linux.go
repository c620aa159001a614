package registry

import (
	"errors"
	"os"
	"strconv"

	"github.com/tether-run/tether/internal/crash"
	"golang.org/x/sys/unix"
)

// createUnnamedAt is createAt through an O_TMPFILE file in dirfd, linked
// in once complete, as atomicfile's createUnnamed: a writer that dies
// midway leaves nothing. It reports done false, with nothing created,
// where the filesystem or kernel has no O_TMPFILE or /proc is not
// mounted.
func createUnnamedAt(dirfd int, name, p string, data []byte, perm uint32) (done bool, err error) {
	fd, err := unix.Openat(dirfd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, perm)
	switch {
	case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EISDIR), errors.Is(err, unix.EINVAL):
		return false, nil // no O_TMPFILE here (EISDIR: a kernel without it)
	case err != nil:
		return true, &os.PathError{Op: "openat", Path: p, Err: err}
	}
	defer unix.Close(fd)
	if err := writeAll(fd, data, perm); err != nil {
		return true, &os.PathError{Op: "write", Path: p, Err: err}
	}
	crash.Point("atomic-before-rename")
	// linkat(fd, "", AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH; the
	// /proc/self/fd link is how an unprivileged process links the file.
	proc := "/proc/self/fd/" + strconv.Itoa(fd)
	err = unix.Linkat(unix.AT_FDCWD, proc, dirfd, name, unix.AT_SYMLINK_FOLLOW)
	if errors.Is(err, unix.ENOENT) {
		if _, serr := os.Stat("/proc/self/fd"); serr != nil {
			return false, nil // no /proc: the unnamed file goes with the close
		}
	}
	if err != nil {
		return true, &os.LinkError{Op: "linkat", Old: proc, New: p, Err: err}
	}
	return true, nil
}
