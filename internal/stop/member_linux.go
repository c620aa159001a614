package stop

import (
	"errors"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/identity"
)

// Caveats a receipt carries when a path of an older kernel was taken.
const (
	CaveatProcMembership = "membership proven by /proc/PID/cgroup (the kernel lacks PIDFD_GET_INFO, Linux 6.13): read after the pidfd was opened, while the process held its pid"
	CaveatFreezeKill     = "the kernel lacks cgroup.kill (Linux 5.14): the leaf was frozen and every member SIGKILLed through a verified pidfd, then thawed, until empty"
)

// InLeaf reports whether h's process is (or, as a zombie, was) in leaf,
// and whether the answer came from /proc rather than the pidfd.
func InLeaf(leaf *cgroup.Leaf, h *identity.Handle) (in, viaProc bool) {
	id, err := h.CgroupID()
	if err == nil {
		return id == leaf.ID, false
	}
	if !errors.Is(err, errors.ErrUnsupported) {
		return false, false
	}
	path, err := ProcCgroupPath(h.Token.PID)
	if err != nil || path != leaf.Path {
		return false, true
	}
	// The read was about h's process only if that process still held the
	// pid after it: alive, or an unreaped zombie whose /proc/PID/stat
	// still names it. A reaped process's pid may be another's by now.
	return !h.Exited() || zombieStill(h), true
}

// zombieStill reports whether h's process is an unreaped zombie: its pid
// still names it (/proc/PID/stat has its boot, pid and start time).
func zombieStill(h *identity.Handle) bool {
	t, err := identity.Of(h.Token.PID)
	return err == nil && t.Matches(h.Token)
}

// ProcCgroupPath returns the absolute cgroup v2 directory of pid from
// /proc/PID/cgroup.
func ProcCgroupPath(pid int) (string, error) {
	p, err := cgroup.Self(pid)
	if err != nil {
		return "", err
	}
	m, err := cgroup.Mount()
	if err != nil {
		return "", err
	}
	if p == "/" {
		return m, nil
	}
	return m + p, nil
}
