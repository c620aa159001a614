package session

import (
	"errors"
	"syscall"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/stop"
	"github.com/tether-run/tether/registry"
)

// signalMembers sends sig to every process in the session's leaf — held
// by its recorded id — each proven a member after its pidfd was opened,
// as the stop protocol proves one (stop.InLeaf: the pidfd's cgroup, or
// before Linux 6.13 /proc/PID/cgroup read while the pidfd held the pid),
// so a pid reused meanwhile is not signalled.
func signalMembers(rec *registry.Record, sig syscall.Signal) (int, error) {
	if rec.Cgroup == "" {
		return 0, registry.Errorf(rec.Name, errors.ErrUnsupported, "signalling every member needs the session's cgroup leaf, and it has none (mechanism %s): tether kill without --all signals its main process, tether stop stops it whole", rec.Mechanism)
	}
	leaf, err := cgroup.OpenLeaf(rec.Cgroup, rec.CgroupID)
	if err != nil {
		e := registry.Errorf(rec.Name, ErrEnded, "its leaf is gone")
		e.Cause = err
		return 0, e
	}
	defer leaf.Close()
	pids, err := leaf.Procs()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, pid := range pids {
		h, err := identity.OpenPID(pid)
		if err != nil {
			continue // gone since the listing
		}
		if in, _ := stop.InLeaf(leaf, h); in && h.Signal(sig) == nil {
			n++
		}
		h.Close()
	}
	return n, nil
}
