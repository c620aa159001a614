//go:build unix

package registry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// Registry is one user's state directory.
type Registry struct {
	Dir string
	uid int // the user whose state it is: every entry must be theirs
}

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
func DefaultDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_RUNTIME_DIR"); d != "" {
		if err := checkBase("XDG_RUNTIME_DIR", d); err != nil {
			return "", err
		}
		return filepath.Join(d, "tether"), nil
	}
	if os.Getuid() == 0 {
		if runtime.GOOS == "darwin" {
			return "/var/run/tether", nil // macOS has no /run
		}
		return "/run/tether", nil
	}
	if d := getenv("XDG_STATE_HOME"); d != "" {
		if err := checkBase("XDG_STATE_HOME", d); err != nil {
			return "", err
		}
		return filepath.Join(d, "tether"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("registry: no state directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "tether"), nil
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
	return fmt.Errorf("%w: %s=%q: %s; set it to an absolute directory or unset it", ErrBadEnv, v, shown, why)
}

// checkDir refuses a directory that is a symlink, not ours, or
// accessible to group or others.
func (r *Registry) checkDir(d string) error {
	var st unix.Stat_t
	if err := unix.Lstat(d, &st); err != nil {
		return &os.PathError{Op: "lstat", Path: d, Err: err}
	}
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return fmt.Errorf("%w: %s is a symlink; tether does not follow symlinks in its state", ErrUnsafe, d)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return fmt.Errorf("%w: %s is not a directory", ErrUnsafe, d)
	case int(st.Uid) != r.uid:
		return fmt.Errorf("%w: %s is owned by uid %d, not %d; tether will not use another user's state", ErrUnsafe, d, st.Uid, r.uid)
	case st.Mode&0o077 != 0:
		return fmt.Errorf("%w: %s has mode %#o; it must be 0700 (chmod 700 %s)", ErrUnsafe, d, st.Mode&0o777, d)
	}
	return nil
}

// ReadFile reads a file of the state dir (a record, a receipt, a
// session's spec.json) as the registry reads records: never through a
// symlink (ErrUnsafe), never blocking on a FIFO or reading a device (an
// ErrCorrupt "not a regular file"), only the caller's and not writable
// by others (ErrUnsafe), at most max bytes (ErrCorrupt). A missing file
// is an error wrapping os.ErrNotExist.
func (r *Registry) ReadFile(p string, max int64) ([]byte, error) {
	// O_NONBLOCK: a FIFO planted in the state dir must not hang the reader.
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("%w: %s is a symlink", ErrUnsafe, p)
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
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrCorrupt, p)
	}
	if int(st.Uid) != r.uid || st.Mode&0o022 != 0 {
		return nil, fmt.Errorf("%w: %s is owned by uid %d with mode %#o", ErrUnsafe, p, st.Uid, st.Mode&0o777)
	}
	return readBounded(f, p, st.Size, max)
}
