//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/registry"
)

// Registry is one user's state directory.
type Registry struct {
	Dir string
	uid int // the user whose state it is: every entry must be theirs
	// held are the state directory (".") and the subdirectories the
	// registry writes in, opened and checked by Open. What the registry
	// creates, replaces or removes there is relative to them (openat,
	// renameat, unlinkat), so that a directory renamed and replaced by a
	// symlink after Open redirects nothing (issue 22). Read-only after
	// Open: safe for concurrent use.
	held map[string]*os.File
}

// heldDirs are the directories Open keeps open besides the state dir.
var heldDirs = []string{"records", "ended", "s", "receipts", "logs", "configs", "requests"}

func newRegistry(dir string) (*Registry, error) { return &Registry{Dir: dir, uid: os.Getuid()}, nil }

// mkdirPrivate creates the directory d, 0700.
func (r *Registry) mkdirPrivate(d string) error { return os.Mkdir(d, 0o700) }

// DefaultDir returns the state directory: $XDG_RUNTIME_DIR/tether when
// set, /run/tether for root, else $XDG_STATE_HOME/tether (default
// ~/.local/state/tether). getenv is os.Getenv in production.
//
// A set variable must be a usable absolute path, or tether refuses it,
// naming the variable, its value and the reason (issue 15): a relative
// one would put the state under whatever directory tether runs in (and
// each caller's elsewhere, so sessions would not be found), and one with
// a control character or longer than PATH_MAX cannot be a state dir that
// error messages and tables can show.
//
// The base directory (the variable's value, /run, ~/.local/state) must
// exist, and every directory from / down to it must be root's or the
// caller's, not writable by group or others unless sticky (issue 22: root
// with a user's XDG_RUNTIME_DIR, from su without -l or sudo -E, would
// otherwise keep root's state where that user can swap it for symlinks).
// Root is refused such an XDG_RUNTIME_DIR with a message saying so, not
// sent to /run/tether instead: tether refuses what is unsafe rather than
// fixing it silently, and the caller learns where its state is. The base
// of XDG_STATE_HOME is the one DefaultDir creates when it is missing, as
// the XDG base directory spec asks: each missing directory 0700, then
// checked as the others (a new user has no ~/.local/state).
func DefaultDir(getenv func(string) string) (string, error) {
	v, base, create := "XDG_RUNTIME_DIR", getenv("XDG_RUNTIME_DIR"), false
	switch {
	case base != "":
	case os.Getuid() == 0:
		v, base = "", "/run"
		if runtime.GOOS == "darwin" {
			base = "/var/run" // macOS has no /run
		}
	default:
		v, base, create = "XDG_STATE_HOME", getenv("XDG_STATE_HOME"), true
		if base == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("registry: no state directory: %w", err)
			}
			v, base = "HOME", filepath.Join(home, ".local", "state")
			if err := checkBase(v, home); err != nil {
				return "", err
			}
		}
	}
	if err := checkBase(v, base); v != "HOME" && v != "" && err != nil {
		return "", err
	}
	dir := filepath.Join(base, "tether")
	fd, err := chain{uid: os.Getuid(), state: dir, create: create}.open(base)
	if err != nil {
		return "", advise(err, v)
	}
	unix.Close(fd)
	return dir, nil
}

// advise adds to err, an unsafe base from the variable v, what the caller
// can do.
func advise(err error, v string) error {
	var advice string
	switch {
	case !errors.Is(err, registry.ErrUnsafe):
		return err
	case v == "XDG_RUNTIME_DIR":
		advice = "unset XDG_RUNTIME_DIR or use su -l"
	case v == "XDG_STATE_HOME":
		advice = "set XDG_STATE_HOME to a directory of yours, or unset it"
	default:
		return err
	}
	return &chainError{msg: err.Error() + "; " + advice, err: err}
}

// open checks every directory on the way to the state directory (see
// chain), then creates what is missing of the state directory and its
// subdirectories, each relative to the one before and checked, and keeps
// those it writes in open.
func (r *Registry) open() error {
	dir := filepath.Clean(r.Dir)
	if dir == "/" {
		return fmt.Errorf("%w: / cannot be a state directory", registry.ErrUnsafe)
	}
	pfd, err := chain{uid: r.uid, state: dir}.open(filepath.Dir(dir))
	if err != nil {
		return err
	}
	state, err := r.ensureAt(pfd, filepath.Base(dir), r.Dir)
	unix.Close(pfd)
	if err != nil {
		return err
	}
	r.held = map[string]*os.File{".": state}
	for _, sub := range subdirs {
		f, err := r.ensureAt(int(state.Fd()), sub, filepath.Join(r.Dir, sub))
		if err != nil {
			r.Close()
			return err
		}
		if slices.Contains(heldDirs, sub) {
			r.held[sub] = f
		} else {
			f.Close()
		}
	}
	return nil
}

// Close releases the directories the registry holds open. Operations
// that need them fail afterwards. A Registry dropped without Close has
// them closed when it is garbage collected.
func (r *Registry) Close() error {
	var errs []error
	for _, f := range r.held {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// at runs fn with the fd of the held directory sub (".": the state
// directory). The fd stays valid while fn runs, even if Close is called
// meanwhile or the registry is no longer referenced.
func (r *Registry) at(sub string, fn func(dirfd int) error) error {
	f := r.held[sub]
	if f == nil {
		return fmt.Errorf("registry: %s: not open (a Registry comes from Open)", filepath.Join(r.Dir, sub))
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return &os.PathError{Op: "use", Path: f.Name(), Err: err}
	}
	return ferr
}

// checkBase refuses the value d of the environment variable v as the base
// of the state dir unless it is an absolute path of printable characters
// within PATH_MAX.
func checkBase(v, d string) error {
	var why string
	switch {
	case len(d) > unix.PathMax:
		why = fmt.Sprintf("%d bytes is longer than PATH_MAX (%d)", len(d), unix.PathMax)
	case !filepath.IsAbs(d):
		why = "not an absolute path"
	case strings.ContainsFunc(d, func(r rune) bool { return r < ' ' || r == 0x7f }):
		why = "a control character in it"
	default:
		return nil
	}
	shown := d
	if len(shown) > 80 {
		shown = shown[:80] + "..."
	}
	return fmt.Errorf("%w: %s=%q: %s; set it to an absolute directory or unset it", registry.ErrBadEnv, v, shown, why)
}

// checkDir refuses a directory that is a symlink, not ours, or
// accessible to group or others.
func (r *Registry) checkDir(d string) error {
	var st unix.Stat_t
	if err := unix.Lstat(d, &st); err != nil {
		return &os.PathError{Op: "lstat", Path: d, Err: err}
	}
	return r.checkStat(d, &st)
}

// checkStat applies checkDir's rules to the directory d with status st.
func (r *Registry) checkStat(d string, st *unix.Stat_t) error {
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return fmt.Errorf("%w: %s is a symlink; tether does not follow symlinks in its state", registry.ErrUnsafe, d)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return fmt.Errorf("%w: %s is not a directory", registry.ErrUnsafe, d)
	case int(st.Uid) != r.uid:
		return fmt.Errorf("%w: %s is owned by uid %d, not %d; tether will not use another user's state", registry.ErrUnsafe, d, st.Uid, r.uid)
	case st.Mode&0o077 != 0:
		return fmt.Errorf("%w: %s has mode %#o; it must be 0700 (chmod 700 %s)", registry.ErrUnsafe, d, st.Mode&0o777, d)
	}
	return nil
}

// ReadFile reads a file of the state dir (a record, a receipt, a
// session's spec.json) as the registry reads records: never through a
// symlink (registry.ErrUnsafe), never blocking on a FIFO or reading a device (an
// registry.ErrCorrupt "not a regular file"), only the caller's and not writable
// by others (registry.ErrUnsafe), at most max bytes (registry.ErrCorrupt). A missing file
// is an error wrapping os.ErrNotExist.
func (r *Registry) ReadFile(p string, max int64) ([]byte, error) {
	return r.readFileAt(unix.AT_FDCWD, p, p, max)
}

// readFileAt is ReadFile of the file name in the directory dirfd (p is
// its path, for errors).
func (r *Registry) readFileAt(dirfd int, name, p string, max int64) ([]byte, error) {
	// O_NONBLOCK: a FIFO planted in the state dir must not hang the reader.
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("%w: %s is a symlink", registry.ErrUnsafe, p)
		}
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "fstat", Path: p, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%w: %s is not a regular file", registry.ErrCorrupt, p)
	}
	if int(st.Uid) != r.uid || st.Mode&0o022 != 0 {
		return nil, fmt.Errorf("%w: %s is owned by uid %d with mode %#o", registry.ErrUnsafe, p, st.Uid, st.Mode&0o777)
	}
	return readBounded(f, p, st.Size, max)
}
