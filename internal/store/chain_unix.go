//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/registry"
)

// maxLinks bounds the symlinks one walk follows, as the kernel's
// MAXSYMLINKS (40) bounds a path lookup.
const maxLinks = 40

// chain walks the path of a state directory from /, one component at a
// time, each opened relative to the directory before it (issue 22). Every
// directory on the way must be one no one but root and the caller can
// change: owned by root or by the caller, and not writable by group or
// others unless sticky (in a sticky directory others can write, as /tmp,
// an entry of another user's is refused like any other: anyone may have
// made it, and only its owner and root can rename it). A symlink is followed only if it is root's or the caller's, and its
// target is walked by the same rules. With these rules nobody but root
// can swap a component under the caller after the walk, and root
// running with another user's XDG_RUNTIME_DIR (su without -l, sudo -E) is
// refused, as pam_systemd refuses to set one the user does not own.
type chain struct {
	uid int
	// state is the state directory the walk leads to, named in errors.
	state string
	// create makes missing components 0700 (the XDG base directory
	// spec's rule for XDG_STATE_HOME), each then checked as any other.
	create bool
}

// open walks to the directory p (absolute) and returns an fd of it
// (O_PATH on Linux: search permission is all the walk needs).
func (c chain) open(p string) (int, error) {
	p = filepath.Clean(p)
	for links := 0; ; links++ {
		fd, target, rest, err := c.walk(p)
		if err != nil || target == "" {
			return fd, err
		}
		if links == maxLinks {
			return -1, c.errorf(unix.ELOOP, "%s: too many levels of symbolic links", p)
		}
		p = filepath.Join(target, rest)
	}
}

// walk walks p from / until its end (returning an fd of it) or a symlink
// (returning the absolute, lexically clean path it names and the rest of
// p after it, for open to walk again from /: every component before it is
// a directory, so a ".." in the target is the physical parent).
func (c chain) walk(p string) (fd int, target, rest string, err error) {
	fd, err = unix.Open("/", pathFlags, 0)
	if err != nil {
		return -1, "", "", &os.PathError{Op: "open", Path: "/", Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, "", "", &os.PathError{Op: "fstat", Path: "/", Err: err}
	}
	if err := c.checkDir("/", &st, nil); err != nil {
		unix.Close(fd)
		return -1, "", "", err
	}
	cur, parent := "/", st
	comps := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if p == "/" {
		comps = nil
	}
	for i, name := range comps {
		next := filepath.Join(cur, name)
		nfd, err := c.step(fd, name, next)
		if errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
			target, err = c.link(fd, name, next, &parent)
			unix.Close(fd)
			if err != nil {
				return -1, "", "", err
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(cur, target)
			}
			return -1, target, strings.Join(comps[i+1:], "/"), nil
		}
		if err == nil {
			err = unix.Fstat(nfd, &st)
			if err != nil {
				unix.Close(nfd)
				err = &os.PathError{Op: "fstat", Path: next, Err: err}
			} else if err = c.checkDir(next, &st, &parent); err != nil {
				unix.Close(nfd)
			}
		}
		unix.Close(fd)
		if err != nil {
			return -1, "", "", err
		}
		fd, cur, parent = nfd, next, st
	}
	return fd, "", "", nil
}

// step opens the directory name in the directory dirfd (at path p),
// creating it first if it is missing and c.create is set.
func (c chain) step(dirfd int, name, p string) (int, error) {
	fd, err := unix.Openat(dirfd, name, pathFlags, 0)
	if errors.Is(err, unix.ENOENT) && c.create {
		// EEXIST: made meanwhile by someone else, whose it is the check
		// of what open finds then says.
		if err := unix.Mkdirat(dirfd, name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
			return -1, c.errorf(&os.PathError{Op: "mkdir", Path: p, Err: err}, "")
		}
		fd, err = unix.Openat(dirfd, name, pathFlags, 0)
	}
	if err != nil {
		return -1, c.errorf(&os.PathError{Op: "open", Path: p, Err: err}, "")
	}
	return fd, nil
}

// link checks what is at name in dirfd (path p), which open refused as a
// directory: a symlink of root's or the caller's has its target
// returned; anything else is refused.
func (c chain) link(dirfd int, name, p string, parent *unix.Stat_t) (string, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return "", c.errorf(&os.PathError{Op: "lstat", Path: p, Err: err}, "")
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return "", c.errorf(&os.PathError{Op: "open", Path: p, Err: unix.ENOTDIR}, "")
	}
	if err := c.checkOwner(p, "a symlink owned", &st, parent); err != nil {
		return "", err
	}
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dirfd, name, buf)
	if err != nil {
		return "", c.errorf(&os.PathError{Op: "readlink", Path: p, Err: err}, "")
	}
	return string(buf[:n]), nil
}

// checkDir applies the walk's rules to the directory at p with status st,
// found in the directory parent (nil for /).
func (c chain) checkDir(p string, st, parent *unix.Stat_t) error {
	if err := c.checkOwner(p, "owned", st, parent); err != nil {
		return err
	}
	if st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0 {
		return c.errorf(registry.ErrUnsafe, "%s is writable by group or others (mode %#o) and not sticky: they could replace what is in it; chmod go-w %s", p, st.Mode&0o7777, p)
	}
	return nil
}

// checkOwner refuses p (described as what: "owned", "a symlink owned")
// unless it is root's or the caller's. In a sticky directory others can
// write the error says so: anyone may have made what is there. A root's
// entry there is safe (the sticky bit keeps others from renaming it) and
// common (t.TempDir's parents, /tmp/.X11-unix).
func (c chain) checkOwner(p, what string, st, parent *unix.Stat_t) error {
	uid := int(st.Uid)
	switch {
	case uid == 0 || uid == c.uid:
		return nil
	case parent != nil && parent.Mode&unix.S_ISVTX != 0 && parent.Mode&0o022 != 0:
		return c.errorf(registry.ErrUnsafe, "%s is %s by uid %d, not by you (uid %d), in %s, a sticky directory others can write: anyone may have made it", p, what, uid, c.uid, filepath.Dir(p))
	case c.uid == 0:
		return c.errorf(registry.ErrUnsafe, "%s is %s by uid %d, not by you (uid 0)", p, what, uid)
	}
	return c.errorf(registry.ErrUnsafe, "%s is %s by uid %d, neither by you (uid %d) nor by root", p, what, uid, c.uid)
}

// errorf returns an error about the state directory: the message format
// (or, if it is empty, err's), wrapping err.
func (c chain) errorf(err error, format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	if format == "" {
		msg = err.Error()
	}
	return &chainError{msg: fmt.Sprintf("registry: state directory %s: %s", c.state, msg), err: err}
}

// chainError is an error of the walk to a state directory. It reads as
// its message alone (not "registry: unsafe path: ..."): the message says
// what is wrong and whose; errors.Is still finds registry.ErrUnsafe or the errno.
type chainError struct {
	msg string
	err error
}

func (e *chainError) Error() string { return e.msg }
func (e *chainError) Unwrap() error { return e.err }
