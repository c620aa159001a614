package identity

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tether-run/tether/internal/oldkernel"
	"github.com/tether-run/tether/internal/pidfd"
	"golang.org/x/sys/unix"
)

// Handle is a pidfd proven to refer to the process its Token names.
// Every signal tether sends goes through a Handle.
//
// Its methods may be called from several goroutines, Close included: the
// pidfd is closed only once no call is using it, so a number freed by
// Close and reused by another open can never be signalled or polled by
// mistake. Close wakes a WaitExit in progress, which then reports false.
type Handle struct {
	Token Token

	mu   sync.RWMutex // held for reading across each use of fd, for writing by Close
	fd   int
	wake wakeFD // lets Close end a WaitExit in progress
}

func newHandle(t Token, fd int) *Handle { return &Handle{Token: t, fd: fd, wake: wakeFD{fd: -1}} }

// openByIno opens the process t names by its pidfs inode, which is unique
// per process for the boot: a pidfd with the token's inode is that
// process, no /proc read needed. ok is false when that cannot decide (no
// inode in t, or a pidfd with another one): Open then goes by start time.
func openByIno(t Token) (h *Handle, ok bool, err error) {
	if t.Ino == 0 {
		return nil, false, nil
	}
	fd, err := unix.PidfdOpen(t.PID, unix.PIDFD_NONBLOCK)
	if err != nil {
		return nil, false, nil
	}
	if pidfsIno(fd) != t.Ino {
		unix.Close(fd)
		return nil, false, nil
	}
	if !alive(fd) { // a zombie: it has exited
		unix.Close(fd)
		return nil, true, fmt.Errorf("%w: %s exited", ErrGone, t)
	}
	return newHandle(t, fd), true, nil
}

// OpenPID opens a pidfd for pid and reads its token. The token is read after
// the pidfd is open and checked while the process is still alive, so a pid
// reused in between cannot lend its identity to the pidfd.
func OpenPID(pid int) (*Handle, error) {
	h, _, err := OpenPIDStat(pid)
	return h, err
}

// OpenPIDStat is OpenPID with the stat it read: its parent and state as
// they were while the pidfd's process held pid.
func OpenPIDStat(pid int) (*Handle, Stat, error) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		// ENOENT (EINVAL before Linux 6.9): the pid is now a thread of
		// another process, not a process; whichever process had it is gone.
		if errors.Is(err, unix.ESRCH) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EINVAL) {
			return nil, Stat{}, fmt.Errorf("%w: pid %d is not a process", ErrGone, pid)
		}
		return nil, Stat{}, os.NewSyscallError("pidfd_open", err)
	}
	boot, err := BootID()
	var st Stat
	if err == nil {
		st, err = ReadStat(pid)
	}
	if err == nil && !alive(fd) {
		// Exited (perhaps reused) between the open and the read: whatever
		// /proc said may belong to another process.
		err = fmt.Errorf("%w: pid %d exited while being identified", ErrGone, pid)
	}
	if err != nil {
		unix.Close(fd)
		return nil, Stat{}, err
	}
	tok := Token{OS: "linux", BootID: boot, PID: pid, StartTime: st.StartTime, Ino: pidfsIno(fd)}
	return newHandle(tok, fd), st, nil
}

// FD returns the pidfd, or -1 after Close. It stays owned by the Handle
// and is valid only until Close: use the Handle's methods where another
// goroutine may close it.
func (h *Handle) FD() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.fd
}

// Signal sends sig to the process. A process that already exited is ErrGone.
func (h *Handle) Signal(sig syscall.Signal) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.fd < 0 {
		return ErrClosed
	}
	err := unix.PidfdSendSignal(h.fd, sig, nil, 0)
	if errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("%w: %s", ErrGone, h.Token)
	}
	if err != nil {
		return os.NewSyscallError("pidfd_send_signal", err)
	}
	return nil
}

// CgroupID returns the id of the process's cgroup v2 (the inode number of
// its cgroup directory), from the pidfd info ioctl (Linux 6.13+). It works
// for zombies too. errors.ErrUnsupported means the kernel lacks the ioctl.
func (h *Handle) CgroupID() (uint64, error) {
	if oldkernel.NoPidfdInfo() {
		return 0, errors.ErrUnsupported
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.fd < 0 {
		return 0, ErrClosed
	}
	info := pidfd.Info{Mask: pidfd.InfoCgroupID}
	if err := pidfd.GetInfo(h.fd, &info); err != nil {
		if errors.Is(err, unix.ENOTTY) || errors.Is(err, unix.EINVAL) {
			return 0, errors.ErrUnsupported
		}
		if errors.Is(err, unix.ESRCH) {
			return 0, fmt.Errorf("%w: %s", ErrGone, h.Token)
		}
		return 0, os.NewSyscallError("ioctl PIDFD_GET_INFO", err)
	}
	if info.Mask&pidfd.InfoCgroupID == 0 {
		return 0, errors.ErrUnsupported
	}
	return info.CgroupID, nil
}

// Exited reports whether the process has exited (it may still be a
// zombie). A closed handle reports false: it can no longer tell.
func (h *Handle) Exited() bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.fd >= 0 && !alive(h.fd)
}

// WaitExit waits up to d for the process to exit and reports whether it
// did. It returns false at once when Close is called meanwhile.
func (h *Handle) WaitExit(d time.Duration) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.fd < 0 {
		return false
	}
	if !alive(h.fd) {
		return true
	}
	if d <= 0 {
		return false
	}
	// Only a wait that may block needs a way to be woken by Close.
	wfd, err := h.wake.get()
	deadline := time.Now().Add(d)
	for {
		ms := max(int(time.Until(deadline)/time.Millisecond), 0)
		fds := []unix.PollFd{{Fd: int32(h.fd), Events: unix.POLLIN}}
		if err == nil {
			fds = append(fds, unix.PollFd{Fd: int32(wfd), Events: unix.POLLIN})
		} else {
			ms = min(ms, 100) // no wake fd (EMFILE): poll in slices so Close waits briefly
		}
		n, perr := unix.Poll(fds, ms)
		switch {
		case perr == unix.EINTR:
			continue
		case perr != nil:
			return true // as before: a pidfd that cannot be polled is not waited on
		case fds[0].Revents != 0:
			return true
		case len(fds) > 1 && fds[1].Revents != 0:
			return false // Close was called
		case n == 0 && !time.Now().Before(deadline):
			return !alive(h.fd)
		case err != nil && h.wake.closing():
			return false
		}
	}
}

// Close releases the pidfd once no other call is using it; a WaitExit in
// progress is woken and returns false.
func (h *Handle) Close() error {
	if h == nil {
		return nil
	}
	h.wake.signal()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fd < 0 {
		return nil
	}
	err := unix.Close(h.fd)
	h.fd = -1
	h.wake.close()
	return err
}

// alive reports whether the pidfd's process has not yet exited. A pidfd
// polls readable once its process exits.
func alive(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 0)
		if err == unix.EINTR {
			continue
		}
		return err == nil && n == 0
	}
}

// OpenChild opens a pidfd for an unreaped child of the calling process,
// exited or not. A child's pid cannot be reused until its parent reaps it,
// so no liveness check is needed. The handle's Token holds only the pid;
// Identify completes it. Reaping many orphans does not need the rest, and
// reading /proc for each would cost more than the reaping.
func OpenChild(pid int) (*Handle, error) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil, fmt.Errorf("%w: pid %d", ErrGone, pid)
		}
		return nil, os.NewSyscallError("pidfd_open", err)
	}
	return newHandle(Token{PID: pid}, fd), nil
}

// Identify completes the token of a handle from OpenChild. It is exact
// while the child is unreaped (even as a zombie).
func (h *Handle) Identify() error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.fd < 0 {
		return ErrClosed
	}
	tok, err := Of(h.Token.PID)
	if err != nil {
		return err
	}
	tok.Ino = pidfsIno(h.fd)
	h.Token = tok
	return nil
}

// Reap collects the exit status of h's process, which must be an exited
// child of the caller, through waitid(P_PIDFD). ECHILD (not our child, or
// already reaped) is reported as ErrGone.
func (h *Handle) Reap() error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.fd < 0 {
		return ErrClosed
	}
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PIDFD, h.fd, &info, unix.WEXITED, nil)
		if err == unix.EINTR {
			continue
		}
		if errors.Is(err, unix.ECHILD) {
			return fmt.Errorf("%w: %s not waitable", ErrGone, h.Token)
		}
		if err != nil {
			return os.NewSyscallError("waitid", err)
		}
		return nil
	}
}

// pidfsMagic is PID_FS_MAGIC: pidfds are files of pidfs (Linux 6.9+).
const pidfsMagic = 0x50494446

// pidfsIno returns the pidfs inode of a pidfd: unique per process within
// a boot, never reused. It is 0 on kernels whose pidfds are anonymous
// inodes (all sharing one inode number).
func pidfsIno(fd int) uint64 {
	if !pidfdsArePidfs(fd) {
		return 0
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return 0
	}
	return st.Ino
}

// pidfsKnown holds what the first pidfd said of the kernel: 1 its pidfds
// are pidfs files, 2 they are not. Every pidfd of a kernel is the same
// kind, so one fstatfs answers for all: a stop of 1,000 members made
// 1,000 of them (issue 13).
var pidfsKnown atomic.Int32

// pidfdsArePidfs reports whether the kernel's pidfds, fd among them, are
// files of pidfs (Linux 6.9+).
func pidfdsArePidfs(fd int) bool {
	switch pidfsKnown.Load() {
	case 1:
		return true
	case 2:
		return false
	}
	var fs unix.Statfs_t
	if unix.Fstatfs(fd, &fs) != nil {
		return false // not learned: asked again with the next pidfd
	}
	if fs.Type != pidfsMagic {
		pidfsKnown.Store(2)
		return false
	}
	pidfsKnown.Store(1)
	return true
}
