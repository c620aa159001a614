package contain

import (
	"fmt"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/stop"
	"github.com/tether-run/tether/receipt"
)

// runCgroup runs the one stop protocol (internal/stop) on the leaf; what
// is contain's own is the reaping of its children and the straggler list.
func (p *protocol) runCgroup() {
	leaf := p.c.leaf
	s := &stop.Run{
		Leaf: leaf, Policy: p.c.policy(), Log: p.Log,
		Member: func(h *identity.Handle) { p.straggler(h.Token) },
	}
	s.Reap = func(deadline time.Time) (string, error) {
		mainOK := p.c.awaitMain(deadline)
		reaped, running, err := p.reapOrphans(deadline, func(h *identity.Handle) bool {
			if id, err := h.CgroupID(); err == nil && id == leaf.ID {
				return true // the kernel's answer, of a zombie too: no token needed
			}
			// The full token (start time, pidfs inode) tells a zombie
			// member by its identity where the kernel cannot report a
			// zombie's cgroup through its pidfd (before 6.13).
			if h.Identify() != nil {
				return false
			}
			in, _ := stop.InLeaf(leaf, h)
			return in || s.Identified(h)
		})
		s.Evidence.Reaped = reaped
		for _, t := range running {
			stop.Unconfirmed(&s.Evidence, t)
		}
		return fmt.Sprintf("main reaped: %t; %d orphans reaped", mainOK, reaped), err
	}
	s.Finish = func(empty bool) {
		if cpu, err := leaf.CPU(); err == nil {
			p.cpu = &receipt.CPU{UsageUsec: cpu.UsageUsec, UserUsec: cpu.UserUsec, SystemUsec: cpu.SystemUsec}
		}
		if empty {
			if obs, ok, err := p.finishLimits(); ok {
				s.Step("limits", obs, 0, err)
			}
		}
	}
	s.Do()
	p.Log = s.Log
	if s.Evidence.LeafRemoved {
		if rerr := p.c.sys.budget.Restore(); rerr != nil {
			p.Step("restore", "disable the controllers enabled for the leaf in its parent", 0, rerr)
		}
	}
}
