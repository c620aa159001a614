//go:build unix

package registry

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/tether-run/tether/internal/crash"
	"github.com/tether-run/tether/internal/randid"
	"golang.org/x/sys/unix"
)

// The registry's atomic writes, as atomicfile's Replace and Create but
// relative to a directory fd the registry holds (openat, renameat,
// linkat), so that a directory of the state renamed and replaced by a
// symlink after Open redirects nothing (issue 22). The crash point is
// atomicfile's, at the same step, so that fault tests kill a write of a
// record where they always did.

// replaceAt writes data to the file name in the directory dirfd (p is
// its path, for errors) as atomicfile.Replace does: a temporary file
// beside it, mode perm exactly, renamed over it; not synced. A symlink
// or anything else at name is replaced, never written through.
func replaceAt(dirfd int, name, p string, data []byte, perm uint32) error {
	tmp, err := tempAt(dirfd, name, p, data, perm)
	if err != nil {
		return err
	}
	crash.Point("atomic-before-rename")
	if err := unix.Renameat(dirfd, tmp, dirfd, name); err != nil {
		unix.Unlinkat(dirfd, tmp, 0)
		return &os.LinkError{Op: "renameat", Old: filepath.Join(filepath.Dir(p), tmp), New: p, Err: err}
	}
	return nil
}

// createAt writes the new file name in the directory dirfd (path p) as
// atomicfile.Create does: readers see no file or all of it; an existing
// name, a dangling symlink included, fails with an error wrapping
// fs.ErrExist.
func createAt(dirfd int, name, p string, data []byte, perm uint32) error {
	if done, err := createUnnamedAt(dirfd, name, p, data, perm); done {
		return err
	}
	tmp, err := tempAt(dirfd, name, p, data, perm)
	if err != nil {
		return err
	}
	crash.Point("atomic-before-rename")
	err = unix.Linkat(dirfd, tmp, dirfd, name, 0)
	unix.Unlinkat(dirfd, tmp, 0)
	if err != nil {
		return &os.LinkError{Op: "linkat", Old: filepath.Join(filepath.Dir(p), tmp), New: p, Err: err}
	}
	return nil
}

// tempAt writes data to a new file beside name in dirfd, named as
// atomicfile's temporary files are (.NAME.tmpXXXX: reap sweeps those of
// an interrupted write), with mode perm exactly, and returns its name.
func tempAt(dirfd int, name, p string, data []byte, perm uint32) (string, error) {
	for try := 0; ; try++ {
		tmp := "." + name + ".tmp" + randid.Hex(6)
		fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, unix.EEXIST) && try < 100 {
			continue // a name taken, by chance or by a planted link
		}
		if err != nil {
			return "", &os.PathError{Op: "openat", Path: filepath.Join(filepath.Dir(p), tmp), Err: err}
		}
		err = writeAll(fd, data, perm)
		if cerr := unix.Close(fd); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			unix.Unlinkat(dirfd, tmp, 0)
			return "", &os.PathError{Op: "write", Path: filepath.Join(filepath.Dir(p), tmp), Err: err}
		}
		return tmp, nil
	}
}

// writeAll writes data to fd and sets its mode to perm exactly (the mode
// given to open was reduced by the umask).
func writeAll(fd int, data []byte, perm uint32) error {
	for b := data; len(b) > 0; {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return unix.Fchmod(fd, perm)
}
