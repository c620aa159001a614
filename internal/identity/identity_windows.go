package identity

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"
)

// On Windows a token is windows:BOOT:PID:CREATED, CREATED being the
// process's creation time (GetProcessTimes) in 100 ns units since 1601:
// absolute, so pid + creation time alone tell two processes apart, and a
// held process handle keeps its pid from being reused.

// BootID returns this boot's id, read once: the boot counter Windows 10
// and later keep in the registry (PrefetchParameters\BootId), else the
// boot time in seconds (SystemTimeOfDayInformation), which is what Wine
// offers: there it is the wineserver's start, and no Wine process
// outlives its wineserver.
func BootID() (string, error) { return bootID() }

var bootID = sync.OnceValues(func() (string, error) {
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, `SYSTEM\CurrentControlSet\Control\Session Manager\Memory Management\PrefetchParameters`, registry.QUERY_VALUE)
	if err == nil {
		n, _, err := k.GetIntegerValue("BootId")
		k.Close()
		if err == nil {
			return "b" + strconv.FormatUint(n, 10), nil
		}
	}
	var tod struct {
		BootTime, CurrentTime, TimeZoneBias int64
		TimeZoneID, Reserved                uint32
		BootTimeBias, SleepTimeBias         uint64
	}
	var n uint32
	const systemTimeOfDayInformation = 3
	if err := windows.NtQuerySystemInformation(systemTimeOfDayInformation, unsafe.Pointer(&tod), uint32(unsafe.Sizeof(tod)), &n); err != nil {
		return "", fmt.Errorf("identity: boot id: %w", err)
	}
	return "t" + strconv.FormatInt(tod.BootTime/1e7, 10), nil
})

// Stat is Linux's /proc/PID/stat; ReadStat is not implemented here.
func ReadStat(pid int) (Stat, error) { return Stat{}, errors.ErrUnsupported }

// Of returns the token of the process that has pid now. The answer is only
// as good as the moment it was read: use OpenPID to hold on to it.
func Of(pid int) (Token, error) {
	h, err := OpenPID(pid)
	if err != nil {
		return Token{}, err
	}
	defer h.Close()
	return h.Token, nil
}

// epoch1601 is the Unix epoch in FILETIME units (100 ns since 1601).
const epoch1601 = 116444736000000000

// StartedAt converts the token's creation time to wall-clock time.
func StartedAt(t Token) time.Time {
	if t.StartTime < epoch1601 {
		return time.Time{}
	}
	return time.Unix(0, int64(t.StartTime-epoch1601)*100).UTC()
}

// Cmdline is not read on Windows: nil.
func Cmdline(pid int) []string { return nil }

// Handle is a process handle proven to refer to the process its Token
// names. Every kill tether sends goes through a Handle.
//
// Its methods may be called from several goroutines, Close included: the
// process handle is closed only once no call is using it. Close wakes a
// WaitExit in progress, which then reports false.
type Handle struct {
	Token Token

	mu    sync.RWMutex // held for reading across each use of h, for writing by Close
	h     windows.Handle
	wake  windows.Handle // a manual-reset event Close sets
	close sync.Once
}

// access is what a Handle may do: read the times, wait, terminate.
const access = windows.PROCESS_QUERY_LIMITED_INFORMATION | windows.SYNCHRONIZE | windows.PROCESS_TERMINATE

// openByIno does nothing on Windows: tokens have no inode.
func openByIno(Token) (*Handle, bool, error) { return nil, false, nil }

// OpenPID opens a handle on pid and reads its token through it. While the
// handle is open the pid cannot be reused, so the token read is the
// handle's process. A process that has exited is ErrGone.
func OpenPID(pid int) (*Handle, error) {
	if pid <= 0 || pid > 1<<32-1 {
		return nil, fmt.Errorf("%w: pid %d is not a process", ErrGone, pid)
	}
	ph, err := windows.OpenProcess(access, false, uint32(pid))
	if err != nil {
		if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
			return nil, fmt.Errorf("%w: pid %d is not a process", ErrGone, pid)
		}
		return nil, &processError{op: "OpenProcess", pid: pid, err: err}
	}
	tok, err := OfHandle(ph, pid)
	if err == nil && Exited(ph) {
		// Its object outlives it while someone holds a handle, as a
		// zombie does on Linux: it is gone all the same.
		err = fmt.Errorf("%w: pid %d has exited", ErrGone, pid)
	}
	if err != nil {
		windows.CloseHandle(ph)
		return nil, err
	}
	wake, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		windows.CloseHandle(ph)
		return nil, &processError{op: "CreateEvent", pid: pid, err: err}
	}
	return &Handle{Token: tok, h: ph, wake: wake}, nil
}

// OfHandle reads the token of process pid through ph, a handle to it
// with PROCESS_QUERY_LIMITED_INFORMATION and SYNCHRONIZE. Under Wine 8 a process that has
// only just been created reports the wineserver's fill pattern,
// 0x5555555555555555 (1795), until it has started running, which can
// take a few hundred milliseconds on a loaded machine: a time before 2000
// or after now is read again, for up to plausibleWait, and refused at
// once if the process has an exit time without ever reporting one.
func OfHandle(ph windows.Handle, pid int) (Token, error) {
	boot, err := BootID()
	if err != nil {
		return Token{}, err
	}
	deadline := time.Now().Add(plausibleWait)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		var created, ended, kernel, user windows.Filetime
		if err := windows.GetProcessTimes(ph, &created, &ended, &kernel, &user); err != nil {
			return Token{}, &processError{op: "GetProcessTimes", pid: pid, err: err}
		}
		if at := time.Unix(0, created.Nanoseconds()); at.Year() >= 2000 && !at.After(time.Now().Add(time.Second)) {
			return Token{OS: "windows", BootID: boot, PID: pid, StartTime: uint64(created.HighDateTime)<<32 | uint64(created.LowDateTime)}, nil
		}
		// Not its handle's state: Wine signals a process until its first
		// thread runs.
		exited := ended.HighDateTime != 0 || ended.LowDateTime != 0
		if exited || time.Now().After(deadline) {
			return Token{}, fmt.Errorf("identity: pid %d: no plausible creation time", pid)
		}
		time.Sleep(pause)
	}
}

// plausibleWait bounds OfHandle's wait for a creation time under Wine.
const plausibleWait = 5 * time.Second

type processError struct {
	op  string
	pid int
	err error
}

func (e *processError) Error() string {
	return fmt.Sprintf("identity: %s pid %d: %v", e.op, e.pid, e.err)
}
func (e *processError) Unwrap() error { return e.err }

// OpenChild is OpenPID on Windows: there are no unreaped children.
func OpenChild(pid int) (*Handle, error) { return OpenPID(pid) }

// Identify does nothing on Windows: OpenChild read the whole token.
func (h *Handle) Identify() error { return nil }

// Reap does nothing on Windows: an exited process needs no reaping.
func (h *Handle) Reap() error { return nil }

// FD is -1 on Windows: a Handle holds a process handle, not a pidfd.
func (h *Handle) FD() int { return -1 }

// CgroupID is not implemented on Windows.
func (h *Handle) CgroupID() (uint64, error) { return 0, errors.ErrUnsupported }

// Signal on Windows knows two signals: SIGKILL, which terminates the
// process (exit code 137, as a shell reports a SIGKILL on Unix), and 0,
// which only checks that it has not exited. Others are
// errors.ErrUnsupported: Windows has no signals to send to a process. A
// process that already exited is ErrGone.
func (h *Handle) Signal(sig syscall.Signal) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.h == 0 {
		return ErrClosed
	}
	if Exited(h.h) {
		return fmt.Errorf("%w: %s", ErrGone, h.Token)
	}
	switch sig {
	case 0:
		return nil
	case syscall.SIGKILL:
		if err := windows.TerminateProcess(h.h, 137); err != nil {
			if Exited(h.h) {
				return fmt.Errorf("%w: %s", ErrGone, h.Token)
			}
			return &processError{op: "TerminateProcess", pid: h.Token.PID, err: err}
		}
		return nil
	}
	return fmt.Errorf("identity: signal %v to %s: %w on Windows", sig, h.Token, errors.ErrUnsupported)
}

// Exited reports whether the process has exited. A closed handle reports
// false: it can no longer tell.
func (h *Handle) Exited() bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.h != 0 && Exited(h.h)
}

// WaitExit waits up to d for the process to exit and reports whether it
// did. It returns false at once when Close is called meanwhile.
func (h *Handle) WaitExit(d time.Duration) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.h == 0 {
		return false
	}
	ms := uint32(windows.INFINITE - 1)
	if d < time.Duration(ms)*time.Millisecond {
		ms = uint32(max(d, 0) / time.Millisecond)
	}
	ev, err := windows.WaitForMultipleObjects([]windows.Handle{h.h, h.wake}, false, ms)
	switch {
	case err != nil:
		return true // as on Linux: a handle that cannot be waited on is not waited on
	case ev == windows.WAIT_OBJECT_0:
		return true
	}
	return false // the wake event (Close), or the time is up
}

// Close releases the process handle once no other call is using it; a
// WaitExit in progress is woken and returns false.
func (h *Handle) Close() error {
	if h == nil {
		return nil
	}
	var err error
	h.close.Do(func() {
		windows.SetEvent(h.wake)
		h.mu.Lock()
		defer h.mu.Unlock()
		err = windows.CloseHandle(h.h)
		windows.CloseHandle(h.wake)
		h.h = 0
	})
	return err
}

// Exited reports whether the process behind ph, a handle with
// SYNCHRONIZE and PROCESS_QUERY_LIMITED_INFORMATION, has exited: the
// handle is signalled and the process has an exit time. Wine also
// signals a process whose first thread has not run yet; that one has no
// exit time.
func Exited(ph windows.Handle) bool {
	ev, err := windows.WaitForSingleObject(ph, 0)
	if err != nil || ev != windows.WAIT_OBJECT_0 {
		return false
	}
	var created, ended, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(ph, &created, &ended, &kernel, &user); err != nil {
		return true // signalled, and nothing says otherwise
	}
	return ended.HighDateTime != 0 || ended.LowDateTime != 0
}
