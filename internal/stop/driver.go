package stop

import (
	"fmt"
	"syscall"
	"time"

	"github.com/tether-run/tether/internal/crash"
	"github.com/tether-run/tether/receipt"
)

// Group is a group of processes as the stop protocol sees it, whatever
// holds it: a cgroup v2 leaf (Leaf), the fallback's process tree and the
// macOS process group (contain's walks), a Windows Job Object, a dead
// owner's recorded main process (reap). Drive runs the protocol over it;
// each method records its own step in the Log it is given.
type Group interface {
	// Term identifies the members and sends each the stop signal (on
	// Unix then SIGCONT, so that a stopped member acts on it). It
	// records the term step, and reports whether the group is empty
	// already, and whether a grace can help: false when the polite
	// request reached no member, so nothing would end on it.
	Term(l *Log, sig syscall.Signal) (empty, wait bool)
	// Wait waits up to d for the group to be empty; a group found by
	// walks signals the members that appeared meanwhile. It says what it
	// saw: why it is empty, or what is left ("still populated", "3
	// members left"). An error ends the grace.
	Wait(d time.Duration) (empty bool, saw string, err error)
	// Kill kills every member and waits up to wait for the group to be
	// empty, recording the kill and kill-wait steps.
	Kill(l *Log, wait time.Duration) (empty bool)
	// EmptyBy names the evidence that the group is empty, for the
	// receipt ("cgroup.events populated 0", "process-tree walk").
	EmptyBy() string
	// Confirm collects what the caller can reap and confirms every
	// member it identified gone, under one deadline (every member was
	// signalled already); it records the reap step.
	Confirm(l *Log, deadline time.Time)
}

// Policy is how a stop ends a group: the signal, the grace for members
// to exit on it, the bound on the kill, and what may change the grace
// while it runs.
type Policy struct {
	// Signal is the first signal every member is sent (0: SIGTERM), as
	// timeout -s and systemd's KillSignal= choose it. Windows sends
	// CTRL_BREAK_EVENT whatever it says.
	Signal syscall.Signal
	// Grace is how long members have to exit after the signal before
	// the kill. NoGrace (or any duration not above zero) kills at once.
	Grace time.Duration
	// GraceNow, if set, is consulted instead of Grace throughout the
	// grace: a later stop request may change the grace under way.
	GraceNow func() time.Duration
	// Skip, when closed, cuts the grace short (a second stop request).
	Skip <-chan struct{}
	// KillWait bounds the wait for emptiness after the kill and,
	// separately, the confirmation.
	KillWait time.Duration
	// Exec, if set, is run first, before any signal, to end the group
	// through its own protocol (--stop-exec: tmux kill-server), by the
	// deadline the grace sets; if it succeeds, the group then has what is
	// left of that grace to end on it before the stop signal (where the
	// group can be watched without signalling: a Quiet group). The
	// signal's grace is a grace of its own.
	Exec func(deadline time.Time) *receipt.StopExec
}

// Quiet is a Group that can wait for its members to exit without
// signalling any (a cgroup leaf, a Job Object): after Policy.Exec, a
// group that ends on it is never sent the stop signal. The process-tree
// walks signal the members they find, so they go on to Term at once.
type Quiet interface {
	WaitQuiet(d time.Duration) (empty bool)
}

// NoGrace is the grace of a stop that kills at once.
const NoGrace time.Duration = 0

// graceSlice bounds one Wait of the grace, so that Skip, or a grace
// changed through GraceNow, is seen within it.
const graceSlice = 25 * time.Millisecond

// Drive runs the stop protocol over g to its bounded end, recording
// every step in l, and reports whether g was found empty:
//
//  1. Term: the stop signal to every identified member;
//  2. the grace: Wait for the group to be empty, in slices, until the
//     grace (as it stands now) is over or Skip is closed;
//  3. Kill, when members are left, and the wait for emptiness;
//  4. Confirm: reap what is ours, and confirm each member gone.
//
// What is a group's own — sealing a leaf before the first look, removing
// it after — is its caller's, around Drive.
func Drive(g Group, p Policy, l *Log) bool {
	if l.T0.IsZero() {
		l.T0 = time.Now()
	}
	if p.Exec != nil {
		stopExec(g, p, l)
	}
	empty, wait := g.Term(l, p.Signal)
	crash.Point("stop-after-term")
	switch {
	case empty:
	case !wait:
		l.Step("grace", "skipped: the polite request reached no member, so nothing would end on it", 0, nil)
	default:
		empty = grace(g, p, l)
	}
	if !empty {
		l.Evidence.KillUsed = true
		crash.Point("stop-before-kill")
		empty = g.Kill(l, p.KillWait)
	}
	if empty {
		l.Evidence.Empty, l.Evidence.EmptyBy, l.Evidence.EmptyAt = true, g.EmptyBy(), time.Now().UTC()
	}
	crash.Point("stop-before-reap")
	g.Confirm(l, time.Now().Add(p.KillWait))
	return empty
}

// stopExec runs p.Exec within the grace and records it. A Quiet group
// then has what is left of that grace to end on it, if the command
// succeeded; the stop signal that follows has a grace of its own.
func stopExec(g Group, p Policy, l *Log) {
	gr := p.Grace
	if p.GraceNow != nil {
		gr = p.GraceNow()
	}
	began := time.Now()
	x := p.Exec(began.Add(max(gr, 0)))
	obs := fmt.Sprintf("%q exited %d", x.Argv, x.ExitCode)
	if q, ok := g.(Quiet); ok && gr > 0 && x.ExitCode == 0 {
		if q.WaitQuiet(max(time.Until(began.Add(gr)), 0)) {
			obs += "; the group ended on it"
		} else {
			obs += "; members left after it"
		}
	}
	l.Step("stop-exec", obs, 0, nil)
	l.Steps[len(l.Steps)-1].StopExec = x
}

// grace waits up to the grace in force for g to be empty.
func grace(g Group, p Policy, l *Log) bool {
	now := func() time.Duration {
		if p.GraceNow != nil {
			return p.GraceNow()
		}
		return p.Grace
	}
	g0 := now()
	if g0 <= NoGrace {
		l.Step("grace", "no grace period", 0, nil)
		return false
	}
	began := time.Now()
	for {
		select {
		case <-p.Skip:
			l.Step("grace", "cut short by a second stop request", 0, nil)
			return false
		default:
		}
		gr := now()
		left := time.Until(began.Add(gr))
		empty, saw, err := g.Wait(min(max(left, 0), graceSlice))
		switch {
		case err != nil:
			l.Step("grace", saw, 0, err)
			return false
		case empty:
			l.Step("grace", saw, 0, nil)
			return true
		case left <= 0 || time.Since(began) >= gr:
			obs := fmt.Sprintf("%s after %s", saw, max(gr, 0))
			if gr != g0 {
				obs += " (grace changed by a later stop request)"
			}
			l.Step("grace", obs, 0, nil)
			return false
		}
	}
}
