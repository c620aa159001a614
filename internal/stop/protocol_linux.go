package stop

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/crash"
	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/par"
	"golang.org/x/sys/unix"
)

// Run is one run of the stop protocol on a leaf. Set the fields, call Do,
// then read Steps, Evidence and Caveats.
type Run struct {
	Leaf *cgroup.Leaf
	// Policy is the signal, the grace and the kill wait.
	Policy
	// Log receives the steps, the evidence and the caveats; set its T0
	// and Progress before Do.
	Log
	// Member, if set, is called once for each member identified.
	Member func(h *identity.Handle)
	// Reap, if set, collects the caller's children before members are
	// confirmed gone (a subreaper's orphans, the main process), by
	// deadline; it returns what it observed for the reap step.
	Reap func(deadline time.Time) (string, error)
	// Finish, if set, runs before the leaf is removed (read counters of
	// the group, remove the v1 leaves once it is empty).
	Finish func(empty bool)

	handles map[identity.Token]*identity.Handle
	byPID   map[int]*identity.Handle // the latest member with each pid
	viaProc bool
}

// Do runs the protocol (Drive) on the leaf to its bounded end: sealed
// before the first look, removed after the last.
func (r *Run) Do() {
	if r.T0.IsZero() {
		r.T0 = time.Now()
	}
	r.handles = map[identity.Token]*identity.Handle{}
	r.byPID = map[int]*identity.Handle{}
	defer r.closeAll()
	// Before the first look: whatever tether starts into the leaf from
	// now on (tether exec's Join) is refused, and what it was starting is
	// placed by the time Seal returns, so the look below sees it.
	r.Leaf.Seal()
	empty := Drive(leafGroup{r}, r.Policy, &r.Log)
	if r.viaProc {
		r.Caveats = append(r.Caveats, CaveatProcMembership)
	}
	if r.Finish != nil {
		r.Finish(empty)
	}
	if !empty {
		// Removing a populated leaf fails; keep it so that reap can find
		// it by its recorded id.
		r.Leaf.Close()
		r.step("remove", "leaf kept: still populated", 0, errors.New("leaf not empty"))
		return
	}
	crash.Point("stop-before-rmdir")
	err := r.remove()
	if err != nil {
		r.Leaf.Close()
	}
	r.Evidence.LeafRemoved = err == nil
	r.step("remove", "rmdir "+r.Leaf.Path, 0, err)
}

// leafGroup is the leaf as Drive sees it.
type leafGroup struct{ *Run }

func (g leafGroup) Term(_ *Log, sig syscall.Signal) (empty, wait bool) {
	return g.term(sig), true
}

func (g leafGroup) Wait(d time.Duration) (bool, string, error) {
	empty, err := g.Leaf.WaitEmpty(d)
	switch {
	case err != nil:
		return false, "cannot watch cgroup.events", err
	case empty:
		return true, "populated 0: every member exited after " + SignalName(g.Signal), nil
	}
	return false, "still populated", nil
}

func (g leafGroup) Kill(_ *Log, wait time.Duration) bool { return g.kill(wait) }

// WaitQuiet waits up to d for the leaf to be empty, signalling nothing.
func (g leafGroup) WaitQuiet(d time.Duration) bool {
	empty, err := g.Leaf.WaitEmpty(d)
	return empty && err == nil
}

func (g leafGroup) EmptyBy() string { return "cgroup.events populated 0" }

func (g leafGroup) Confirm(_ *Log, deadline time.Time) { g.confirm(deadline) }

// againRounds bounds how often a leaf populated again is killed anew.
const againRounds = 3

// remove removes the leaf. The seal refuses tether's own starts, not a
// pid written to cgroup.procs by a member allowed to (root, or a user the
// leaf's parent is delegated to): a leaf populated again since the kernel
// said empty fails rmdir with EBUSY, and the stop goes on — its new
// members are identified, killed, waited for and confirmed gone, and the
// removal is tried again, a bounded number of rounds. A leaf that is
// still not removed leaves the stop unconfirmed (LeafRemoved false).
func (r *Run) remove() error {
	err := r.Leaf.Remove()
	for round := 0; round < againRounds && errors.Is(err, unix.EBUSY); round++ {
		if ev, eerr := r.Leaf.Events(); eerr != nil || !ev.Populated {
			return err // a child cgroup that would not go: Remove names it
		}
		r.step("remove", "populated again: "+err.Error(), 0, err)
		if !r.again() {
			r.Evidence.Empty = false
			return err
		}
		err = r.Leaf.Remove()
	}
	return err
}

// again identifies the members of a leaf populated again, kills them and
// confirms them gone; it reports whether the leaf is empty again.
func (r *Run) again() bool {
	pids, _ := r.Leaf.Procs()
	var fresh []*identity.Handle
	for _, pid := range pids {
		if h, _ := r.open(pid); h != nil {
			fresh = append(fresh, h)
		}
	}
	r.Evidence.KillUsed = true
	empty := r.kill(r.KillWait)
	deadline := time.Now().Add(r.KillWait)
	if r.Reap != nil {
		r.Reap(deadline) // members reparented to us since
	}
	gone := 0
	for _, h := range fresh {
		if h.WaitExit(time.Until(deadline)) {
			gone++
		} else {
			Unconfirmed(&r.Evidence, h.Token.String())
		}
	}
	r.Evidence.ConfirmedGone += gone
	r.step("reap", fmt.Sprintf("%d members that entered after the kernel said empty: %d confirmed gone", len(fresh), gone), len(fresh), nil)
	return empty
}

// step records a step that ends now.
func (r *Run) step(name, observed string, members int, err error) {
	r.Log.Step(name, observed, members, err)
}

// term thaws a frozen leaf and sends the stop signal sig (then SIGCONT)
// to every member. It reports whether the leaf was already empty.
func (r *Run) term(sig syscall.Signal) bool {
	if ev, err := r.Leaf.Events(); err == nil && !ev.Populated {
		// The usual end of a run: its main process was the last member.
		// The kernel says the leaf is empty; there is nothing to thaw,
		// list or signal (two file reads fewer).
		r.step("term", "populated 0: no member left to signal", 0, nil)
		return true
	}
	thawed := ""
	if frozen, err := r.Leaf.FreezeRequested(); err == nil && frozen {
		// A frozen member keeps SIGTERM pending until thawed: thaw first,
		// or the grace passes with nothing acting on it.
		if err := r.Leaf.Freeze(false); err == nil {
			thawed = "leaf was frozen: thawed; "
		}
	}
	pids, err := r.Leaf.Procs()
	unopened, openErr := 0, error(nil)
	var members []*identity.Handle
	for _, o := range openAll(pids) {
		h, oerr := r.admit(o.h, o.err)
		if oerr != nil {
			// Out of fds (EMFILE) most likely: such a member gets no
			// SIGTERM, only the kill after the grace.
			unopened, openErr = unopened+1, oerr
			continue
		}
		if h != nil {
			members = append(members, h)
		}
	}
	for _, h := range members {
		if Term(h, sig) {
			r.Evidence.Signalled++
		}
	}
	if unopened > 0 && err == nil {
		err = fmt.Errorf("%d members could not be opened, so were not sent %s: %w", unopened, SignalName(sig), openErr)
	}
	r.step("term", fmt.Sprintf("%s%d members in cgroup.procs; %s (and SIGCONT) sent to %d", thawed, len(pids), SignalName(sig), r.Evidence.Signalled), len(pids), err)
	if len(pids) != 0 || err != nil {
		return false
	}
	empty, _ := r.Leaf.WaitEmpty(0)
	return empty
}

// opened is one pid of cgroup.procs opened as a pidfd: its handle, or why
// it could not be.
type opened struct {
	h   *identity.Handle
	err error
}

// parallelOpen is the member count from which openAll spreads the opens
// over par's goroutines: each open proves a process through /proc, ~19 µs,
// and 1,000 of them took 18–20 ms on one core (issue 13); a few are not
// worth the goroutines.
const parallelOpen = 256

// openAll opens a pidfd for each pid and reads its token, in pids' order.
// Proving every member before the first signal also keeps the opens off
// cores busy with members already exiting.
func openAll(pids []int) []opened {
	out := make([]opened, len(pids))
	open := func(i int) { out[i].h, out[i].err = identity.OpenPID(pids[i]) }
	if len(pids) < parallelOpen {
		for i := range pids {
			open(i)
		}
	} else {
		par.For(len(pids), open)
	}
	return out
}

// open opens a pidfd for pid and proves it a member, as admit says.
func (r *Run) open(pid int) (*identity.Handle, error) {
	h, err := identity.OpenPID(pid)
	return r.admit(h, err)
}

// admit proves the opened handle h a member. It returns the handle when
// the member is new; nil when it is gone, not a member, or already
// identified; an error when it could not be opened for lack of file
// descriptors.
func (r *Run) admit(h *identity.Handle, err error) (*identity.Handle, error) {
	if errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE) {
		return nil, err
	}
	if err != nil {
		return nil, nil
	}
	in, viaProc := InLeaf(r.Leaf, h)
	r.viaProc = r.viaProc || viaProc
	if _, seen := r.handles[h.Token]; !in || seen {
		h.Close()
		return nil, nil
	}
	r.handles[h.Token] = h
	r.byPID[h.Token.PID] = h
	r.Evidence.MembersSeen++
	if r.Member != nil {
		r.Member(h)
	}
	return h, nil
}

// Identified reports whether h's process was identified as a member
// while it ran. Reap uses it for zombies: before PIDFD_GET_INFO (6.13) a
// zombie's membership can only be read from /proc/PID/cgroup, which on
// some kernels (6.12) no longer names the leaf once the process exited.
func (r *Run) Identified(h *identity.Handle) bool {
	m := r.byPID[h.Token.PID]
	return m != nil && m.Token.Matches(h.Token)
}

// confirm lets the caller reap, then waits for every identified member's
// pidfd to report exit, all under one deadline: every member was already
// signalled, so one wait covers them all.
func (r *Run) confirm(deadline time.Time) {
	obs, err := "", error(nil)
	if r.Reap != nil {
		obs, err = r.Reap(deadline)
		obs += "; "
	}
	for _, h := range r.handles {
		if h.WaitExit(time.Until(deadline)) {
			r.Evidence.ConfirmedGone++
		} else {
			Unconfirmed(&r.Evidence, h.Token.String())
		}
	}
	r.step("reap", fmt.Sprintf("%s%d members confirmed gone, %d not", obs, r.Evidence.ConfirmedGone, len(r.Evidence.Unconfirmed)), 0, err)
}

func (r *Run) closeAll() {
	for _, h := range r.handles {
		h.Close()
	}
}
