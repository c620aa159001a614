package reap

import (
	"fmt"
	"syscall"
	"time"

	"github.com/tether-run/tether/cgroup"
	"github.com/tether-run/tether/identity"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// killWait bounds the wait for emptiness after cgroup.kill or SIGKILL.
const killWait = 5 * time.Second

// stopLeaf runs the stop protocol on a dead supervisor's leaf, held anew
// and proven by its cgroup id: SIGTERM through pidfds whose cgroup id
// matches, the grace, cgroup.kill, populated 0, every identified member
// confirmed exited, rmdir. The members are not our children (their
// supervisor died), so they are confirmed by their pidfds, not reaped.
func stopLeaf(rec *registry.Record, grace time.Duration) (*receipt.Receipt, error) {
	l, err := cgroup.OpenLeaf(rec.Cgroup, rec.CgroupID)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	r := newReceipt(rec, receipt.MechanismCgroup)
	r.Cgroup = &receipt.Cgroup{Path: l.Path, ID: l.ID, Parent: l.Parent, Verified: "leaf-inode-matches-record"}
	t0 := time.Now()
	step := func(name, obs string, n int, err error) {
		s := receipt.Step{Name: name, At: time.Now().UTC(), ElapsedMS: time.Since(t0).Milliseconds(), Observed: obs, Members: n}
		if err != nil {
			s.Error = err.Error()
		}
		r.Stop.Steps = append(r.Stop.Steps, s)
	}
	pids, err := l.Procs()
	var handles []*identity.Handle
	for _, pid := range pids {
		h, err := identity.OpenPID(pid)
		if err != nil {
			continue
		}
		if id, err := h.CgroupID(); err != nil || id != l.ID {
			h.Close()
			continue
		}
		handles = append(handles, h)
		if h.Signal(syscall.SIGTERM) == nil {
			r.Evidence.Signalled++
		}
	}
	defer func() {
		for _, h := range handles {
			h.Close()
		}
	}()
	r.Evidence.MembersSeen = len(handles)
	step("term", fmt.Sprintf("%d members in cgroup.procs; SIGTERM sent to %d", len(pids), r.Evidence.Signalled), len(pids), err)
	empty, _ := l.WaitEmpty(grace)
	if !empty {
		r.Evidence.KillUsed = true
		err := l.Kill()
		step("kill", "wrote 1 to cgroup.kill", 0, err)
		empty, err = l.WaitEmpty(killWait)
		step("kill-wait", fmt.Sprintf("populated 0: %t", empty), 0, err)
	}
	if empty {
		r.Evidence.Empty, r.Evidence.EmptyBy, r.Evidence.EmptyAt = true, "cgroup.events populated 0", time.Now().UTC()
	}
	confirm(r, handles)
	step("confirm", fmt.Sprintf("%d members confirmed gone, %d not", r.Evidence.ConfirmedGone, len(r.Evidence.Unconfirmed)), 0, nil)
	if empty {
		err := l.Remove()
		r.Evidence.LeafRemoved = err == nil
		r.Cgroup.Removed = err == nil
		step("remove", "rmdir "+l.Path, 0, err)
	}
	return finish(r), nil
}

// stopMain stops the recorded main process of a fallback-mechanism record
// if its token still matches: boot id, pid and start time through a pidfd.
func stopMain(rec *registry.Record, grace time.Duration) (*receipt.Receipt, error) {
	r := newReceipt(rec, receipt.MechanismFallback)
	r.Caveats = []string{"reaped without a cgroup: only the recorded main process could be proven; its descendants cannot be, and are left alone"}
	tok, err := identity.Parse(rec.Main)
	if err != nil {
		return nil, err
	}
	h, err := identity.Open(tok)
	if err != nil {
		// Gone, or its pid now belongs to another process: nothing to stop.
		r.Stop.Steps = append(r.Stop.Steps, receipt.Step{Name: "identify", At: time.Now().UTC(), Observed: "main process gone or its pid reused: " + err.Error()})
		r.Evidence.Empty, r.Evidence.EmptyBy = true, "recorded main process no longer exists"
		return finish(r), nil
	}
	defer h.Close()
	r.Evidence.MembersSeen = 1
	if h.Signal(syscall.SIGTERM) == nil {
		r.Evidence.Signalled = 1
	}
	if !h.WaitExit(grace) {
		r.Evidence.KillUsed = true
		h.Signal(syscall.SIGKILL)
		h.WaitExit(killWait)
	}
	r.Evidence.Empty, r.Evidence.EmptyBy = h.Exited(), "the recorded main process's pidfd reported exit"
	confirm(r, []*identity.Handle{h})
	return finish(r), nil
}

func newReceipt(rec *registry.Record, m receipt.Mechanism) *receipt.Receipt {
	return &receipt.Receipt{
		SchemaVersion: receipt.SchemaVersion, Argv: rec.Argv, Cwd: rec.Cwd, StartedAt: time.Now().UTC(),
		Mechanism: m, Stop: receipt.Stop{Reason: "reap"}, Exit: receipt.Exit{Code: -1, MainStatus: -1},
	}
}

func confirm(r *receipt.Receipt, hs []*identity.Handle) {
	for _, h := range hs {
		if h.WaitExit(killWait) {
			r.Evidence.ConfirmedGone++
		} else {
			r.Evidence.Unconfirmed = append(r.Evidence.Unconfirmed, h.Token.String())
		}
	}
}

func finish(r *receipt.Receipt) *receipt.Receipt {
	r.EndedAt = time.Now().UTC()
	r.DurationMS = r.EndedAt.Sub(r.StartedAt).Milliseconds()
	// Not our children: the exit statuses went to whoever adopted them.
	r.Evidence.MainReaped = false
	r.StopConfirmed = r.Evidence.Empty && len(r.Evidence.Unconfirmed) == 0
	r.Normalize()
	return r
}
