//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/internal/atomicfile"
	"github.com/tether-run/tether/registry"
)

// The registry's writes on Unix, each relative to a directory Open holds
// (see Registry.held): never by a path that a rename could redirect.

// dirFlags open a directory of the state, never through a symlink.
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// ensureAt opens the directory name in dirfd (p is its path, for
// errors), creating it 0700 if it is missing, and checks it (checkDir's
// rules, on what was opened).
func (r *Registry) ensureAt(dirfd int, name, p string) (*os.File, error) {
	fd, err := unix.Openat(dirfd, name, dirFlags, 0)
	if errors.Is(err, unix.ENOENT) {
		if err := unix.Mkdirat(dirfd, name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
			return nil, fmt.Errorf("registry: create %s: %w", p, &os.PathError{Op: "mkdir", Path: p, Err: err})
		}
		fd, err = unix.Openat(dirfd, name, dirFlags, 0)
	}
	return r.checked(dirfd, name, p, fd, err)
}

// openDirAt opens the existing directory name in dirfd (path p), checked.
func (r *Registry) openDirAt(dirfd int, name, p string) (*os.File, error) {
	fd, err := unix.Openat(dirfd, name, dirFlags, 0)
	return r.checked(dirfd, name, p, fd, err)
}

// checked returns fd, the directory name in dirfd (path p) that openat
// returned with err, as a file if it passes checkDir's rules, else closes
// it. What openat refused as a directory is checked to say why.
func (r *Registry) checked(dirfd int, name, p string, fd int, err error) (*os.File, error) {
	if err != nil {
		// EACCES: most likely another user's directory (root's 0700
		// /run/tether for XDG_RUNTIME_DIR=/run): the check says whose.
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EACCES) {
			if cerr := r.checkAt(dirfd, name, p); cerr != nil {
				return nil, cerr // a symlink, or not a directory
			}
		}
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	if err != nil {
		err = &os.PathError{Op: "fstat", Path: p, Err: err}
	} else {
		err = r.checkStat(p, &st)
	}
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), p), nil
}

// checkAt applies checkDir's rules to name in dirfd (path p). A missing
// one is an error wrapping os.ErrNotExist.
func (r *Registry) checkAt(dirfd int, name, p string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &os.PathError{Op: "lstat", Path: p, Err: err}
	}
	return r.checkStat(p, &st)
}

// ensureDir is EnsureDir: relative to the state directory for one of its
// entries (reap's quarantine/), by path elsewhere.
func (r *Registry) ensureDir(d string) error {
	if filepath.Dir(filepath.Clean(d)) != filepath.Clean(r.Dir) || r.held["."] == nil {
		return r.ensureDirPath(d)
	}
	return r.at(".", func(dirfd int) error {
		f, err := r.ensureAt(dirfd, filepath.Base(d), d)
		if err == nil {
			f.Close()
		}
		return err
	})
}

// claim creates the runtime directory of name, with tmp/ and sock/ in it.
// An entry in its place is os.ErrExist if it is the user's directory,
// else refused (registry.ErrUnsafe).
func (r *Registry) claim(name string) error {
	return r.at("s", func(s int) error {
		d := r.RuntimeDir(name)
		if err := unix.Mkdirat(s, name, 0o700); err != nil {
			if errors.Is(err, unix.EEXIST) {
				if cerr := r.checkAt(s, name, d); errors.Is(cerr, registry.ErrUnsafe) {
					return cerr
				}
			}
			return &os.PathError{Op: "mkdir", Path: d, Err: err}
		}
		f, err := r.openDirAt(s, name, d)
		if err == nil {
			for _, sub := range []string{"tmp", "sock"} {
				if err = unix.Mkdirat(int(f.Fd()), sub, 0o700); err != nil {
					err = &os.PathError{Op: "mkdir", Path: filepath.Join(d, sub), Err: err}
					break
				}
			}
			f.Close()
		}
		if err != nil {
			removeAllAt(s, name, d)
		}
		return err
	})
}

// release removes the runtime directory of name, if it is there and the
// user's, without following any symlink in it.
func (r *Registry) release(name string) error {
	return r.at("s", func(s int) error {
		d := r.RuntimeDir(name)
		var st unix.Stat_t
		if err := unix.Fstatat(s, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				return nil
			}
			return &os.PathError{Op: "lstat", Path: d, Err: err}
		}
		// Whatever the session's own command made of its runtime dir (its
		// TETHER_SESSION_DIR: chmod'ed, replaced by a symlink or a file;
		// issue 22) goes with the session, or its name stays taken: s/ is
		// the user's alone, so an entry of the user's in it is theirs to
		// remove (a symlink is removed, never followed). Only another
		// user's entry is refused.
		if int(st.Uid) != r.uid {
			return r.checkStat(d, &st)
		}
		return removeAllAt(s, name, d)
	})
}

// replace writes file in the held directory sub atomically
// (atomicfile.ReplaceAt: a symlink or anything else at file is replaced,
// never written through).
func (r *Registry) replace(sub, file string, b []byte) error {
	return r.at(sub, func(dirfd int) error {
		return atomicfile.ReplaceAt(dirfd, file, filepath.Join(r.Dir, sub, file), b, 0o600)
	})
}

// create writes the new file in the held directory sub atomically and
// exclusively (atomicfile.CreateAt).
func (r *Registry) create(sub, file string, b []byte) error {
	return r.at(sub, func(dirfd int) error {
		return atomicfile.CreateAt(dirfd, file, filepath.Join(r.Dir, sub, file), b, 0o600)
	})
}

// remove removes file from the held directory sub if it is there. Unlike
// os.Remove it never tries rmdir: a directory in a record's place is
// reported, not removed.
func (r *Registry) remove(sub, file string) error {
	return r.at(sub, func(dirfd int) error {
		if err := unix.Unlinkat(dirfd, file, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return &os.PathError{Op: "remove", Path: filepath.Join(r.Dir, sub, file), Err: err}
		}
		return nil
	})
}

// readIn reads file in the held directory sub under ReadFile's rules.
func (r *Registry) readIn(sub, file string, max int64) (b []byte, err error) {
	err = r.at(sub, func(dirfd int) error {
		b, err = r.readFileAt(dirfd, file, filepath.Join(r.Dir, sub, file), max)
		return err
	})
	return b, err
}

// readDirNames lists the held directory sub (by path if it is not held).
// It reads through a new open file description, so that concurrent
// listings do not share a directory offset.
func (r *Registry) readDirNames(sub string) (names []string, err error) {
	p := filepath.Join(r.Dir, sub)
	if r.held[sub] == nil {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return f.Readdirnames(-1)
	}
	err = r.at(sub, func(dirfd int) error {
		fd, err := unix.Openat(dirfd, ".", dirFlags, 0)
		if err != nil {
			return &os.PathError{Op: "open", Path: p, Err: err}
		}
		f := os.NewFile(uintptr(fd), p)
		defer f.Close()
		names, err = f.Readdirnames(-1)
		return err
	})
	return names, err
}

// rename renames from to to in the held directory sub (replacing to).
func (r *Registry) rename(sub, from, to string) error {
	return r.at(sub, func(dirfd int) error {
		if err := unix.Renameat(dirfd, from, dirfd, to); err != nil {
			return &os.LinkError{Op: "rename", Old: filepath.Join(r.Dir, sub, from), New: filepath.Join(r.Dir, sub, to), Err: err}
		}
		return nil
	})
}
