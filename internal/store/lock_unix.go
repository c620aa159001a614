//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/registry"
)

// lockName is the registry's lock file, beside records/.
const lockName = "lock"

// Lock takes the registry's exclusive lock (flock(2) on <dir>/lock) and
// returns the func that releases it. It serializes decisions that read
// several records and then write one, such as a pool's admission, the
// name's claim and the new record: without it, concurrent starts each
// count the pool before any of them has written its record. The lock is
// released by the kernel if the holder dies.
//
// The lock file is created 0600 in the state directory Open holds, never
// through a symlink, and must be a regular file of the caller's that no
// one else may write (registry.ErrUnsafe).
func (r *Registry) Lock() (unlock func(), err error) {
	p := filepath.Join(r.Dir, lockName)
	var fd int
	err = r.at(".", func(dirfd int) (err error) {
		fd, err = unix.Openat(dirfd, lockName, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0o600)
		return err
	})
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("%w: %s is a symlink", registry.ErrUnsafe, p)
		}
		if errors.Is(err, unix.EISDIR) {
			return nil, fmt.Errorf("%w: %s is not a regular file", registry.ErrUnsafe, p)
		}
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fstat", Path: p, Err: err}
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		unix.Close(fd)
		return nil, fmt.Errorf("%w: %s is not a regular file", registry.ErrUnsafe, p)
	case int(st.Uid) != r.uid || st.Mode&0o077 != 0:
		unix.Close(fd)
		return nil, fmt.Errorf("%w: lock %s is owned by uid %d with mode %#o; want uid %d, mode 0600", registry.ErrUnsafe, p, st.Uid, st.Mode&0o777, r.uid)
	}
	for {
		err = unix.Flock(fd, unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "flock", Path: p, Err: err}
	}
	// Closing the fd releases the flock.
	return func() { unix.Close(fd) }, nil
}
