package identity

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// On macOS there is no pidfd. A Handle is a kqueue watching the process's
// exit (EVFILT_PROC NOTE_EXIT), registered and then checked against the
// token: once registered, the kqueue reports the exit of exactly that
// process, so a pid that is reused afterwards is seen as gone, never as
// the process the token names. Between the last check of the kqueue and a
// kill(2) there remains a window of one system call in which the process
// could exit, be reaped and its pid be reused: the kernel offers nothing
// narrower without a pidfd.
//
// Built and unit-tested on Linux (mac.go), not yet run on macOS.

// BootID returns this boot's id, read once: kern.bootsessionuuid.
func BootID() (string, error) { return bootID() }

var bootID = sync.OnceValues(func() (string, error) {
	s, err := unix.Sysctl("kern.bootsessionuuid")
	if err != nil || s == "" {
		return "", fmt.Errorf("identity: boot id (kern.bootsessionuuid): %v", err)
	}
	return s, nil
})

// ReadStat is Linux's /proc/PID/stat; not implemented here.
func ReadStat(pid int) (Stat, error) { return Stat{}, errors.ErrUnsupported }

// Of returns the token of the process that has pid now. The answer is only
// as good as the moment it was read: use OpenPID to hold on to it.
func Of(pid int) (Token, error) {
	boot, err := BootID()
	if err != nil {
		return Token{}, err
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		// A pid of no process yields an empty answer, which x/sys
		// reports as EIO.
		if errors.Is(err, unix.EIO) || errors.Is(err, unix.ESRCH) {
			return Token{}, fmt.Errorf("%w: pid %d is not a process", ErrGone, pid)
		}
		return Token{}, os.NewSyscallError("sysctl kern.proc.pid", err)
	}
	st := kp.Proc.P_starttime
	return macToken(boot, macProc{PID: int(kp.Proc.P_pid), StartSec: int64(st.Sec), StartUsec: int32(st.Usec), Stat: kp.Proc.P_stat})
}

// StartedAt converts the token's start time to wall-clock time.
func StartedAt(t Token) time.Time { return macStartedAt(t) }

// Cmdline is not read on macOS yet: nil.
func Cmdline(pid int) []string { return nil }

// Handle is a kqueue proven to watch the process its Token names. Every
// signal tether sends goes through a Handle.
//
// Its methods may be called from several goroutines, Close included. Close
// wakes a WaitExit in progress, which then reports false.
type Handle struct {
	Token Token

	mu     sync.RWMutex // held for reading across each use of kq, for writing by Close
	kq     int          // -1 after Close
	exited atomic.Bool  // the kqueue reported the exit
	close  sync.Once
}

// wakeIdent is the EVFILT_USER event Close triggers.
const wakeIdent = 1

// openByIno does nothing on macOS: tokens have no inode.
func openByIno(Token) (*Handle, bool, error) { return nil, false, nil }

// OpenPID watches pid's exit through a new kqueue and reads its token
// after the watch is in place, so that the token read is the watched
// process's.
func OpenPID(pid int) (*Handle, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("%w: pid %d is not a process", ErrGone, pid)
	}
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, os.NewSyscallError("kqueue", err)
	}
	unix.CloseOnExec(kq)
	ev := make([]unix.Kevent_t, 2)
	unix.SetKevent(&ev[0], pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_CLEAR)
	ev[0].Fflags = unix.NOTE_EXIT
	// Level-triggered (no EV_CLEAR): once Close triggers it, every wait
	// sees it, however many polls race.
	unix.SetKevent(&ev[1], wakeIdent, unix.EVFILT_USER, unix.EV_ADD)
	if _, err := unix.Kevent(kq, ev, nil, nil); err != nil {
		unix.Close(kq)
		if errors.Is(err, unix.ESRCH) {
			return nil, fmt.Errorf("%w: pid %d is not a process", ErrGone, pid)
		}
		return nil, os.NewSyscallError("kevent", err)
	}
	tok, err := Of(pid)
	h := &Handle{Token: tok, kq: kq}
	if err == nil && h.Exited() {
		err = fmt.Errorf("%w: pid %d exited while being identified", ErrGone, pid)
	}
	if err != nil {
		unix.Close(kq)
		return nil, err
	}
	return h, nil
}

// OpenChild is OpenPID on macOS.
func OpenChild(pid int) (*Handle, error) { return OpenPID(pid) }

// Identify does nothing on macOS: OpenChild read the whole token.
func (h *Handle) Identify() error { return nil }

// Reap does nothing on macOS: the process's parent reaps it.
func (h *Handle) Reap() error { return nil }

// FD is -1 on macOS: a Handle holds a kqueue, not a pidfd.
func (h *Handle) FD() int { return -1 }

// CgroupID is not implemented on macOS: there are no cgroups.
func (h *Handle) CgroupID() (uint64, error) { return 0, errors.ErrUnsupported }

// Signal sends sig to the process unless the kqueue has seen it exit. A
// process that already exited is ErrGone.
func (h *Handle) Signal(sig syscall.Signal) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.kq < 0 {
		return ErrClosed
	}
	if h.poll(0) {
		return fmt.Errorf("%w: %s", ErrGone, h.Token)
	}
	if err := unix.Kill(h.Token.PID, sig); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("%w: %s", ErrGone, h.Token)
		}
		return os.NewSyscallError("kill", err)
	}
	return nil
}

// Exited reports whether the process has exited. A closed handle reports
// false: it can no longer tell.
func (h *Handle) Exited() bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.kq >= 0 && h.poll(0)
}

// WaitExit waits up to d for the process to exit and reports whether it
// did. It returns false at once when Close is called meanwhile.
func (h *Handle) WaitExit(d time.Duration) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.kq >= 0 && h.poll(max(d, 0))
}

// poll reads the kqueue for up to d and reports whether the process has
// exited; the caller holds mu for reading. A wake by Close ends the wait.
func (h *Handle) poll(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !h.exited.Load() {
		ts := unix.NsecToTimespec(max(time.Until(deadline), 0).Nanoseconds())
		ev := make([]unix.Kevent_t, 2)
		n, err := unix.Kevent(h.kq, nil, ev, &ts)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return true // as on Linux: a handle that cannot be waited on is not waited on
		}
		woken := false
		for _, e := range ev[:n] {
			switch e.Filter {
			case unix.EVFILT_PROC:
				h.exited.Store(true)
			case unix.EVFILT_USER:
				woken = true
			}
		}
		if woken || n == 0 {
			break
		}
	}
	return h.exited.Load()
}

// Close releases the kqueue once no other call is using it; a WaitExit in
// progress is woken and returns false.
func (h *Handle) Close() error {
	if h == nil {
		return nil
	}
	var err error
	h.close.Do(func() {
		ev := make([]unix.Kevent_t, 1)
		unix.SetKevent(&ev[0], wakeIdent, unix.EVFILT_USER, 0)
		ev[0].Fflags = unix.NOTE_TRIGGER
		unix.Kevent(h.kq, ev, nil, nil)
		h.mu.Lock()
		defer h.mu.Unlock()
		err = unix.Close(h.kq)
		h.kq = -1
	})
	return err
}
