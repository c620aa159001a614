package identity

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tether-run/tether/internal/procfs"
	"golang.org/x/sys/unix"
)

// clockTicks is USER_HZ, which the kernel fixes at 100 on every
// architecture Go supports; /proc/PID/stat reports start time in these units.
const clockTicks = 100

// BootID returns this boot's id, read once.
func BootID() (string, error) { return bootID() }

var bootID = sync.OnceValues(func() (string, error) {
	b, err := procfs.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", fmt.Errorf("identity: boot id: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
})

// bootTime is the wall-clock time of boot, to the nanosecond: the clock
// now less the time since boot (CLOCK_BOOTTIME, which the start ticks of
// /proc/PID/stat count from). /proc/stat's btime is the same difference
// truncated to whole seconds, which put start times up to a second early;
// it remains the fallback.
var bootTime = sync.OnceValues(func() (time.Time, error) {
	var ts unix.Timespec
	now := time.Now()
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err == nil {
		return now.Add(-time.Duration(ts.Nano())).UTC(), nil
	}
	return btime()
})

func btime() (time.Time, error) {
	b, err := procfs.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("identity: btime %q: %w", v, err)
			}
			return time.Unix(n, 0).UTC(), nil
		}
	}
	return time.Time{}, errors.New("identity: no btime in /proc/stat")
}

// ReadStat reads /proc/PID/stat. A missing process is ErrGone.
func ReadStat(pid int) (Stat, error) {
	b, err := procfs.ReadRecord("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ESRCH) {
			return Stat{}, fmt.Errorf("%w: pid %d", ErrGone, pid)
		}
		return Stat{}, err
	}
	return ParseStat(b)
}

// Of returns the token of the process that has pid now. The answer is only
// as good as the moment it was read; OpenPID gives one tied to a pidfd.
func Of(pid int) (Token, error) {
	boot, err := BootID()
	if err != nil {
		return Token{}, err
	}
	st, err := ReadStat(pid)
	if err != nil {
		return Token{}, err
	}
	return Token{OS: "linux", BootID: boot, PID: pid, StartTime: st.StartTime}, nil
}

// StartedAt converts the token's start time to wall-clock time. The start
// time counts clock ticks (10 ms), so the result is up to a tick before
// the process really started; a clock stepped since boot shifts it too.
func StartedAt(t Token) time.Time {
	bt, err := bootTime()
	if err != nil {
		return time.Time{}
	}
	return bt.Add(time.Duration(t.StartTime) * time.Second / clockTicks)
}

// Cmdline returns the argv of pid, or nil when it cannot be read (a zombie or
// kernel thread has none).
func Cmdline(pid int) []string {
	b, err := procfs.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
}

// AwaitExec waits up to within for process pid to complete the execve
// that follows its fork (Stat.Execed), and reports whether it did; false
// at once when it is gone or a zombie. A fork+exec that returned does not
// mean /proc shows the new image yet (see Stat.Execed); what reads the
// program's identity from /proc right after a start waits here first.
func AwaitExec(pid int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for wait := 50 * time.Microsecond; ; wait = min(2*wait, 10*time.Millisecond) {
		st, err := ReadStat(pid)
		switch {
		case err != nil || st.State == 'Z' || st.State == 'X':
			return false
		case st.Execed():
			return true
		case time.Now().After(deadline):
			return false
		}
		time.Sleep(wait)
	}
}
