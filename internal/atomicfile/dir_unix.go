//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// dir is a directory that writes are made in: an fd, so that every step
// of a write (openat, renameat, linkat, unlinkat) acts on the same
// directory whatever is renamed meanwhile.
type dir struct {
	fd   int
	path string // its path, for errors
	own  bool   // opened by openDir: close closes it
}

// openDir opens the directory p, through a symlink at p only if follow.
func openDir(p string, follow bool) (dir, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Open(p, flags, 0)
	if err != nil {
		return dir{}, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return dir{fd: fd, path: p, own: true}, nil
}

func (d dir) close() {
	if d.own {
		unix.Close(d.fd)
	}
}

// join returns the path of name in d.
func (d dir) join(name string) string { return filepath.Join(d.path, name) }

// newFile creates the file name in d exclusively, never through a
// symlink, with mode as open(2) applies it.
func (d dir) newFile(name string, mode os.FileMode) (*os.File, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(mode.Perm()))
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: d.join(name), Err: err}
	}
	return os.NewFile(uintptr(fd), d.join(name)), nil
}

func (d dir) rename(old, new string) error {
	if err := unix.Renameat(d.fd, old, d.fd, new); err != nil {
		return &os.LinkError{Op: "rename", Old: d.join(old), New: d.join(new), Err: err}
	}
	return nil
}

// link makes new a hard link to old; never through a symlink at new.
func (d dir) link(old, new string) error {
	if err := unix.Linkat(d.fd, old, d.fd, new, 0); err != nil {
		return &os.LinkError{Op: "link", Old: d.join(old), New: d.join(new), Err: err}
	}
	return nil
}

// remove removes the file name, if it is there: the best a failed write
// can do to clean up.
func (d dir) remove(name string) { unix.Unlinkat(d.fd, name, 0) }

func (d dir) sync() error {
	if err := unix.Fsync(d.fd); err != nil {
		return &os.PathError{Op: "sync", Path: d.path, Err: err}
	}
	return nil
}
