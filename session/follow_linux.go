package session

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/tether-run/tether/identity"
	"github.com/tether-run/tether/registry"
	"golang.org/x/sys/unix"
)

// Logs writes session name's log to w: the rotated part, then the
// current one. With follow it goes on writing what is appended, following
// the log by name across rotations, and returns once the session has
// ended and all it wrote was written (nil), or once its supervisor is
// gone without ending it (an error wrapping ErrUnsupervised): nothing
// will write the log again.
//
// It waits on inotify (the log's and the records' directories) and on
// the supervisor's pidfd, not on a timer.
func Logs(reg *registry.Registry, name string, w io.Writer, follow bool) error {
	rec, err := reg.Read(name)
	if err != nil {
		return err
	}
	in := -1
	if follow {
		// Watched before the log is opened, so that no change is missed.
		if in, err = watchDirs(filepath.Dir(reg.LogPath(name)), filepath.Join(reg.Dir, "records"), filepath.Join(reg.Dir, "ended")); err != nil {
			return err
		}
		defer unix.Close(in)
	}
	t, err := openTail(reg.LogPath(rec.Name), w)
	if err != nil {
		return err
	}
	defer t.f.Close()
	if err := t.drain(); err != nil || !follow {
		return err
	}
	var sup *identity.Handle
	defer func() {
		if sup != nil {
			sup.Close()
		}
	}()
	for {
		if rec, err = reg.Read(name); err != nil {
			return err
		}
		if !rec.Live() {
			return t.drain()
		}
		if sup == nil && rec.Supervisor != "" {
			if sup, err = Supervisor(rec); err != nil {
				return gone(reg, name, t, err)
			}
		}
		if sup == nil && time.Since(rec.CreatedAt) > superviseTimeout {
			return registry.Errorf(name, ErrUnsupervised, "unsupervised: no supervisor recorded since %s", rec.CreatedAt.Format(time.RFC3339))
		}
		if sup != nil && sup.Exited() {
			return gone(reg, name, t, registry.Errorf(name, ErrUnsupervised, "unsupervised: its supervisor exited without ending it; `tether reap` reclaims it"))
		}
		if err := await(in, sup); err != nil {
			return err
		}
		if err := t.drain(); err != nil {
			return err
		}
	}
}

// superviseTimeout is how long a session may stay "starting" without a
// supervisor on record: Start gives up on its supervisor after as long.
const superviseTimeout = 2 * time.Minute

// gone ends a follow whose supervisor is gone: the rest of the log is
// written, and err returned unless the session did end (the supervisor
// recorded the end just before it exited).
func gone(reg *registry.Registry, name string, t *tail, err error) error {
	if derr := t.drain(); derr != nil {
		return derr
	}
	if rec, rerr := reg.Read(name); rerr == nil && !rec.Live() {
		return t.drain()
	}
	return err
}

// watchDirs returns an inotify fd watching dirs for entries created,
// written, renamed or removed.
func watchDirs(dirs ...string) (int, error) {
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return -1, os.NewSyscallError("inotify_init1", err)
	}
	for _, d := range dirs {
		if _, err := unix.InotifyAddWatch(in, d, unix.IN_MODIFY|unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_MOVED_FROM|unix.IN_DELETE); err != nil {
			unix.Close(in)
			return -1, &os.PathError{Op: "inotify_add_watch", Path: d, Err: err}
		}
	}
	return in, nil
}

// await blocks until inotify reports a change or the supervisor exits
// (its pidfd becomes readable; without one, a second at most), then
// empties the inotify queue.
func await(in int, sup *identity.Handle) error {
	fds := []unix.PollFd{{Fd: int32(in), Events: unix.POLLIN}}
	timeout := 1000
	if sup != nil {
		fds = append(fds, unix.PollFd{Fd: int32(sup.FD()), Events: unix.POLLIN})
		timeout = -1
	}
	if _, err := unix.Poll(fds, timeout); err != nil && !errors.Is(err, unix.EINTR) {
		return os.NewSyscallError("poll", err)
	}
	var buf [4096]byte
	for {
		if n, err := unix.Read(in, buf[:]); n <= 0 || err != nil {
			return nil
		}
	}
}

// tail follows a log file by name.
type tail struct {
	path string
	w    io.Writer
	f    *os.File
	ino  uint64
}

// openTail opens the log at path and writes its rotated part (path.1)
// to w, unless the log rotated between the two opens, so that part is
// the file opened.
func openTail(path string, w io.Writer) (*tail, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	t := &tail{path: path, w: w, f: f, ino: inode(f)}
	if old, err := os.Open(path + ".1"); err == nil {
		if inode(old) != t.ino {
			_, err = io.Copy(w, old)
		}
		old.Close()
		if err != nil {
			f.Close()
			return nil, err
		}
	}
	return t, nil
}

// drain writes what was appended to the followed file and, while the log
// has rotated away from it, moves on to the file now at the path. The
// writer closes a file before it renames it, so a rotated file is
// complete: it is read to its end before the next one.
func (t *tail) drain() error {
	for {
		if _, err := io.Copy(t.w, t.f); err != nil {
			return err
		}
		next, err := os.Open(t.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // between the rename and the new file: its creation wakes us
		}
		if err != nil {
			return err
		}
		ino := inode(next)
		if ino == t.ino {
			next.Close()
			return nil
		}
		if _, err := io.Copy(t.w, t.f); err != nil {
			next.Close()
			return err
		}
		// Rotated more than once since the last look: path.1 is a part
		// between the file followed and the new one. (Older parts are
		// gone: the log keeps two.)
		if mid, err := os.Open(t.path + ".1"); err == nil {
			if m := inode(mid); m != t.ino && m != ino {
				_, err = io.Copy(t.w, mid)
			}
			mid.Close()
			if err != nil {
				next.Close()
				return err
			}
		}
		t.f.Close()
		t.f, t.ino = next, ino
	}
}

// inode returns f's inode number, or 0.
func inode(f *os.File) uint64 {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return 0
	}
	return st.Ino
}
