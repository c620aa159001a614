package contain

import (
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// scope makes the calling process the child subreaper (Linux 3.4+) while
// at least one run holds it, so that the groups' orphans are reparented
// to it and reaped by the stop protocol, and gives the setting back once
// the last run's stop has ended: a program's other daemonizing
// grandchildren are reparented to it only while contained commands run.
var scope struct {
	mu      sync.Mutex
	holders int
	set     bool // we set the flag (it was off before the first holder)
}

// holdSubreaper enters the scope for c's run.
func (c *Cmd) holdSubreaper() error {
	scope.mu.Lock()
	defer scope.mu.Unlock()
	if scope.holders == 0 {
		var was int32
		if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&was)), 0, 0, 0); err != nil {
			return os.NewSyscallError("prctl PR_GET_CHILD_SUBREAPER", err)
		}
		if was == 0 {
			if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
				return os.NewSyscallError("prctl PR_SET_CHILD_SUBREAPER", err)
			}
			scope.set = true
		}
	}
	scope.holders++
	c.sys.subreaper = true
	return nil
}

// releaseSubreaper leaves the scope once c's run has ended (its members
// are reaped); the last run out turns the flag off again if it was off.
func (c *Cmd) releaseSubreaper() {
	scope.mu.Lock()
	defer scope.mu.Unlock()
	if !c.sys.subreaper {
		return
	}
	c.sys.subreaper = false
	scope.holders--
	if scope.holders == 0 && scope.set {
		unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
		scope.set = false
	}
}
