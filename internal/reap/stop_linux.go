package reap

import (
	"errors"
	"os"

	"time"

	"github.com/tether-run/tether/internal/stop"
	"github.com/tether-run/tether/internal/store"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// killWait bounds the wait for emptiness after cgroup.kill or SIGKILL.
const killWait = 5 * time.Second

// stopLeaf runs the one stop protocol (internal/stop) on a dead
// supervisor's leaf, held anew and proven by its cgroup id. The members
// are not our children (their supervisor died), so they are confirmed by
// their pidfds, not reaped.
func stopLeaf(rec *registry.Record, o Options) (*receipt.Receipt, error) {
	l, err := cgroup.OpenLeaf(rec.Cgroup, rec.CgroupID)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	r := newReceipt(rec, receipt.MechanismCgroup, o.Reason)
	r.Stop.Signal = stop.SignalName(unix.SignalNum(rec.StopSignal))
	r.Cgroup = &receipt.Cgroup{Path: l.Path, ID: l.ID, Parent: l.Parent, Verified: "leaf-inode-matches-record"}
	s := &stop.Run{Leaf: l, Policy: stop.Policy{Grace: max(o.Grace, stop.NoGrace), KillWait: killWait, Signal: unix.SignalNum(rec.StopSignal)}}
	s.Do()
	r.Stop.Steps, r.Evidence = s.Steps, s.Evidence
	r.Caveats = append(r.Caveats, s.Caveats...)
	r.Cgroup.Removed = s.Evidence.LeafRemoved
	finish(r)
	r.StopConfirmed = r.StopConfirmed && s.Evidence.LeafRemoved // as contain's: EBUSY is not confirmed
	return r, nil
}

// stopMain runs the one stop protocol on a fallback-mechanism record's
// group (recordedGroup): its main process, if its token still matches —
// boot id, pid and start time through a pidfd — and the processes that
// carry the group's marker.
func stopMain(rec *registry.Record, o Options) (*receipt.Receipt, error) {
	tok, err := identity.Parse(rec.Main)
	if err != nil {
		return nil, err
	}
	r := newReceipt(rec, receipt.MechanismFallback, o.Reason)
	sig := unix.SignalNum(rec.StopSignal)
	r.Stop.Signal = stop.SignalName(sig)
	r.Caveats = []string{"reaped without a cgroup: the recorded main process is proven by its token, its descendants by the group's marker in their environment; a descendant that cleared its environment is not found"}
	if rec.Marker == "" {
		r.Caveats = []string{"reaped without a cgroup: only the recorded main process could be proven (the record names no group marker); its descendants cannot be, and are left alone"}
	}
	l := &stop.Log{T0: r.StartedAt}
	g := newRecordedGroup(l, tok, rec.Marker)
	defer g.close()
	stop.Drive(g, stop.Policy{Signal: sig, Grace: max(o.Grace, stop.NoGrace), KillWait: killWait}, l)
	r.Stop.Steps, r.Evidence = l.Steps, l.Evidence
	return finish(r), nil
}

func newReceipt(rec *registry.Record, m receipt.Mechanism, reason string) *receipt.Receipt {
	if reason == "" {
		reason = "reap"
	}
	r := receipt.New(rec.RunID, rec.Argv, rec.Cwd)
	r.Mechanism, r.Stop, r.Exit.Code = m, receipt.Stop{Reason: reason}, -1
	return r
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

// Stop stops the group rec describes, whose owner is known to be dead
// (a watcher saw its connection end: internal/watch), through what rec
// proves — its leaf, held anew by the recorded cgroup id, or its main
// process by its token — without asking whether the owner lives: a dead
// owner may be a zombie its parent has not reaped, which an identity
// check takes for alive. With reg set, rec's record there is ended as Run
// ends one (a run's deleted, its receipt kept; a session's marked
// stopped, its runtime dir released), unless it has ended already.
func Stop(reg *store.Registry, rec *registry.Record, o Options) Action {
	_, o = newReport(o)
	a := Action{Name: rec.Name, Kind: rec.Kind, Class: DeadEmpty, Plan: "its owner died"}
	var r *receipt.Receipt
	var err error
	switch {
	case rec.Cgroup != "":
		a.Class = DeadLeaf
		r, err = stopLeaf(rec, o)
		if errors.Is(err, os.ErrNotExist) {
			a.Class, r, err = DeadEmpty, nil, nil // its owner's own stop removed it
		}
	case rec.Main != "":
		a.Class = DeadFallback
		r, err = stopMain(rec, o)
	}
	a.Receipt = r
	if err == nil && r != nil && r.StopConfirmed {
		err = removeV1(rec)
	}
	if err == nil && reg != nil {
		if cur, rerr := reg.Read(rec.Name); rerr == nil && cur.Live() {
			err = finishRecord(reg, cur, o.Reason, r)
		}
	}
	a.Done = err == nil
	if err != nil {
		a.Error = err.Error()
	}
	return a
}
