package atomicfile

import (
	"errors"
	"os"
	"strconv"

	"github.com/tether-run/tether/internal/crash"
	"golang.org/x/sys/unix"
)

// createUnnamed is create through an O_TMPFILE file in d: six system
// calls (open, fcntl, write, fchmod, link, close) where a named temporary
// file takes more with the link and the removal. It reports done false,
// with nothing created, when the filesystem or kernel has no O_TMPFILE or
// /proc is not mounted, so that create takes the portable way.
func createUnnamed(d dir, name string, data []byte, perm os.FileMode) (done bool, err error) {
	fd, err := unix.Openat(d.fd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, uint32(perm.Perm()))
	switch {
	case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EISDIR), errors.Is(err, unix.EINVAL):
		return false, nil // no O_TMPFILE here (EISDIR: a kernel without it)
	case err != nil:
		return true, &os.PathError{Op: "open", Path: d.path, Err: err}
	}
	f := os.NewFile(uintptr(fd), d.join(name))
	defer f.Close()
	if err := fill(f, data, perm, true, false); err != nil {
		return true, err
	}
	crash.Point("atomic-before-rename")
	// linkat(fd, "", AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH; the
	// /proc/self/fd link is how an unprivileged process links the file.
	proc := "/proc/self/fd/" + strconv.Itoa(fd)
	err = unix.Linkat(unix.AT_FDCWD, proc, d.fd, name, unix.AT_SYMLINK_FOLLOW)
	if errors.Is(err, unix.ENOENT) {
		if _, serr := os.Stat("/proc/self/fd"); serr != nil {
			return false, nil // no /proc: the unnamed file goes with the close
		}
	}
	if err != nil {
		return true, &os.LinkError{Op: "link", Old: proc, New: d.join(name), Err: err}
	}
	return true, nil
}
