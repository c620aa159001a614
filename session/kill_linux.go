package session

import (
	"errors"
	"syscall"

	"github.com/tether-run/tether/identity"
	"github.com/tether-run/tether/registry"
)

// signalMembers sends sig to every process in the session's leaf, each
// proven a member through its pidfd (its cgroup is the leaf's id) after
// it was listed, so a pid reused meanwhile is not signalled.
func signalMembers(rec *registry.Record, sig syscall.Signal) (int, error) {
	if rec.Cgroup == "" {
		return 0, registry.Errorf(rec.Name, errors.ErrUnsupported, "signalling every member needs the session's cgroup leaf, and it has none (mechanism %s): tether kill without --all signals its main process, tether stop stops it whole", rec.Mechanism)
	}
	n := 0
	for _, pid := range members(rec) {
		h, err := identity.OpenPID(pid)
		if err != nil {
			continue // gone since the listing
		}
		if id, err := h.CgroupID(); err == nil && id == rec.CgroupID && h.Signal(sig) == nil {
			n++
		}
		h.Close()
	}
	return n, nil
}
