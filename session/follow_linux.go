package session

import (
	"context"
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/internal/identity"
)

// followWatch is the inotify instance a follow sleeps on, and the
// eventfd that wakes it when its context is done.
type followWatch struct {
	in     int
	wake   int           // -1 before wakeOn
	stop   func() bool   // ends the wait for the context
	woken  chan struct{} // closed once the wake is written
	fileWD int           // the watch on the file followed; -1 before
	ino    uint64
}

// watchFollow watches the log directory for files created, renamed or
// removed (rotations) and the record directories for records replaced
// (they are written by rename) or moved. Writes to the log are watched on
// the file followed only (watchFile), so the other sessions' output does
// not wake the follow.
func watchFollow(logDir string, recordDirs ...string) (*followWatch, error) {
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	fw := &followWatch{in: in, wake: -1, fileWD: -1}
	const dirEvents = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_DELETE
	for _, d := range append([]string{logDir}, recordDirs...) {
		if _, err := unix.InotifyAddWatch(in, d, dirEvents); err != nil {
			unix.Close(in)
			return nil, &os.PathError{Op: "inotify_add_watch", Path: d, Err: err}
		}
	}
	return fw, nil
}

// watchFile moves the file watch to f (through /proc/self/fd, so it is
// the file held, whatever its name is now), and reports whether it moved:
// the caller then reads f once more, for what was written before the
// watch was in place.
func (fw *followWatch) watchFile(f *os.File) (bool, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return false, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	if fw.fileWD >= 0 && st.Ino == fw.ino {
		return false, nil
	}
	if fw.fileWD >= 0 {
		unix.InotifyRmWatch(fw.in, uint32(fw.fileWD))
	}
	p := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	wd, err := unix.InotifyAddWatch(fw.in, p, unix.IN_MODIFY)
	if err != nil {
		return false, &os.PathError{Op: "inotify_add_watch", Path: f.Name(), Err: err}
	}
	fw.fileWD, fw.ino = wd, st.Ino
	return true, nil
}

// wakeOn makes await return once ctx is done.
func (fw *followWatch) wakeOn(ctx context.Context) error {
	if ctx.Done() == nil {
		return nil
	}
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return os.NewSyscallError("eventfd", err)
	}
	fw.wake, fw.woken = fd, make(chan struct{})
	fw.stop = context.AfterFunc(ctx, func() {
		unix.Write(fd, []byte{1, 0, 0, 0, 0, 0, 0, 0})
		close(fw.woken)
	})
	return nil
}

func (fw *followWatch) Close() error {
	if fw.wake >= 0 {
		if !fw.stop() {
			<-fw.woken // the wake may be being written: not to a closed fd
		}
		unix.Close(fw.wake)
	}
	return unix.Close(fw.in)
}

// await blocks until inotify reports a change or the supervisor exits
// (its pidfd becomes readable; without one, a second at most), then
// empties the inotify queue.
func (fw *followWatch) await(sup *identity.Handle) error {
	fds := []unix.PollFd{{Fd: int32(fw.in), Events: unix.POLLIN}}
	if fw.wake >= 0 {
		fds = append(fds, unix.PollFd{Fd: int32(fw.wake), Events: unix.POLLIN})
	}
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
		if n, err := unix.Read(fw.in, buf[:]); n <= 0 || err != nil {
			return nil
		}
	}
}
