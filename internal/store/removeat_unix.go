//go:build unix

package store

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// removeAllAt removes name from the directory dirfd (p is its path, for
// errors), and first what is in it if it is a directory: os.RemoveAll
// relative to dirfd at every level, so that no rename of a directory
// above or inside it redirects the removal, and never through a symlink
// (one is removed, not what it names). A missing name is no error.
func removeAllAt(dirfd int, name, p string) error {
	// Entries made while the tree is removed (a process of the session
	// not yet gone) leave it not empty: a few rounds, as os.RemoveAll.
	for round := 0; ; round++ {
		fd, err := unix.Openat(dirfd, name, dirFlags|unix.O_NONBLOCK, 0)
		if errors.Is(err, unix.EACCES) {
			// A directory of ours its owner cannot list (chmod 000 by a
			// session's command): give it back its owner's rights once.
			// fchmodat follows a symlink swapped in meanwhile, but only
			// to a file its owner could chmod anyway.
			if unix.Fchmodat(dirfd, name, 0o700, 0) == nil {
				fd, err = unix.Openat(dirfd, name, dirFlags|unix.O_NONBLOCK, 0)
			}
		}
		switch {
		case errors.Is(err, unix.ENOENT):
			return nil
		case errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.ELOOP):
			if err := unix.Unlinkat(dirfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
				return &os.PathError{Op: "unlinkat", Path: p, Err: err}
			}
			return nil
		case err != nil:
			return &os.PathError{Op: "openat", Path: p, Err: err}
		}
		if err := removeEntries(fd, p); err != nil {
			return err
		}
		err = unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) || round == 3 {
			return &os.PathError{Op: "unlinkat", Path: p, Err: err}
		}
	}
}

// removeEntries removes everything in the directory fd (path p), and
// closes fd.
func removeEntries(fd int, p string) error {
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if errors.Is(err, unix.ENOENT) {
		return nil // removed meanwhile (a concurrent Release): nothing in it
	}
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := removeAllAt(fd, n, filepath.Join(p, n)); err != nil {
			return err
		}
	}
	return nil
}
