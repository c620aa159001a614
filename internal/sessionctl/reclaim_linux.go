package sessionctl

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/stop"
	"github.com/tether-run/tether/internal/store"

	"github.com/tether-run/tether/registry"
)

// Reclaim stops an unsupervised session through its leaf, acting only on
// what it can prove: the leaf directory is opened and its inode must equal
// the recorded cgroup id before cgroup.kill is written. A session without
// a leaf (fallback mechanism) is left to `tether reap`.
func Reclaim(reg *store.Registry, rec *registry.Record) error {
	if h, err := SupervisorOf(rec); err == nil {
		h.Close()
		return fmt.Errorf("session: %q is supervised", rec.Name)
	}
	if rec.Cgroup != "" {
		if err := killLeaf(rec.Cgroup, rec.CgroupID); err != nil {
			return err
		}
		for _, p := range rec.V1Cgroups {
			if err := cgroup.RemoveRecordedV1(p); err != nil {
				return err
			}
		}
	} else if rec.Main != "" {
		return fmt.Errorf("session: %q has no leaf to prove its members by; `tether reap` handles it", rec.Name)
	}
	rec.State, rec.StopReason, rec.UpdatedAt = registry.StateStopped, "reclaimed", time.Now().UTC()
	return errors.Join(reg.Write(rec), reg.Release(rec.Name))
}

// killLeaf stops and removes the leaf at path if it is still the one with
// id (cgroup.OpenLeaf proves it by the directory's inode), through the one
// stop protocol with no grace: the session is unsupervised and its slot
// is wanted now.
func killLeaf(path string, id uint64) error {
	l, err := cgroup.OpenLeaf(path, id)
	if errors.Is(err, os.ErrNotExist) {
		return nil // already gone
	}
	if err != nil {
		return fmt.Errorf("session: %w: left alone", err)
	}
	s := &stop.Run{Leaf: l, Policy: stop.Policy{KillWait: 5 * time.Second}}
	s.Do()
	if !s.Evidence.Empty || !s.Evidence.LeafRemoved {
		last := s.Steps[len(s.Steps)-1]
		return fmt.Errorf("session: %s not stopped: %s %s", path, last.Observed, last.Error)
	}
	return nil
}
