package reap

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/procfs"
	"github.com/tether-run/tether/internal/stop"
	"github.com/tether-run/tether/internal/store"
)

// recordedGroup is a dead owner's fallback group as stop.Drive sees it:
// the recorded main process, proven by its token, and — when the record
// names the group's marker — every process of this boot, started no
// earlier than the main process, whose environment carries the marker.
// Such a process is proven through a pidfd: its start time and its
// environment are read after the open, and it is alive after the reads,
// so a pid reused meanwhile cannot pass. The marker is 64 random bits
// that only the group's members (and whoever may read their environment)
// know. The members are not our children: they are confirmed gone by
// their pidfds, never reaped.
type recordedGroup struct {
	*stop.Log
	main   identity.Token
	marker string // store.MarkerEnv=marker, or "" to stop the main process alone
	sig    syscall.Signal

	held   map[identity.Token]*identity.Handle
	order  []*identity.Handle // in the order proven
	termed map[*identity.Handle]bool
}

func newRecordedGroup(l *stop.Log, main identity.Token, marker string) *recordedGroup {
	g := &recordedGroup{Log: l, main: main, held: map[identity.Token]*identity.Handle{}, termed: map[*identity.Handle]bool{}}
	if marker != "" {
		g.marker = store.MarkerEnv + "=" + marker
	}
	return g
}

// scan proves what is new of the group since the last scan and returns
// the members alive now. The main process is looked for once: a main
// that is gone or whose pid was reused is reported in the identify step.
func (g *recordedGroup) scan() []*identity.Handle {
	if len(g.order) == 0 && g.held[g.main.Key()] == nil {
		h, err := identity.Open(g.main)
		if err != nil {
			g.Step("identify", "main process gone or its pid reused: "+err.Error(), 0, nil)
			g.held[g.main.Key()] = nil
		} else {
			g.admit(h)
		}
	}
	if g.marker != "" {
		self := os.Getpid()
		for _, pid := range procfs.PIDs() {
			if pid != self {
				g.prove(pid)
			}
		}
	}
	var live []*identity.Handle
	for _, h := range g.order {
		if !h.Exited() {
			live = append(live, h)
		}
	}
	return live
}

// prove admits pid if it is a new member: started no earlier than the
// main process and carrying the marker, read while its pidfd is open.
func (g *recordedGroup) prove(pid int) {
	st, err := identity.ReadStat(pid)
	if err != nil || st.StartTime < g.main.StartTime || st.State == 'Z' || st.State == 'X' {
		return
	}
	k := identity.Token{OS: "linux", BootID: g.main.BootID, PID: pid, StartTime: st.StartTime}
	if _, seen := g.held[k]; seen {
		return
	}
	if !g.carries(pid) { // most processes: no pidfd opened for them
		return
	}
	h, now, err := identity.OpenPIDStat(pid)
	if err != nil {
		return
	}
	if now.StartTime != st.StartTime || !g.carries(pid) || h.Exited() {
		h.Close()
		return
	}
	g.admit(h)
}

// carries reports whether pid's environment holds the marker.
func (g *recordedGroup) carries(pid int) bool {
	env, err := procfs.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return err == nil && procfs.EnvHas(env, g.marker)
}

func (g *recordedGroup) admit(h *identity.Handle) {
	g.held[h.Token.Key()] = h
	g.order = append(g.order, h)
	g.Evidence.MembersSeen++
}

// term sends the stop signal (then SIGCONT) to h, once.
func (g *recordedGroup) term(h *identity.Handle) {
	if g.termed[h] {
		return
	}
	g.termed[h] = true
	if stop.Term(h, g.sig) {
		g.Evidence.Signalled++
	}
}

func (g *recordedGroup) what() string {
	if g.marker == "" {
		return "the recorded main process"
	}
	return "the recorded main process and the processes carrying the group's marker"
}

func (g *recordedGroup) Term(_ *stop.Log, sig syscall.Signal) (empty, wait bool) {
	g.sig = sig
	live := g.scan()
	for _, h := range live {
		g.term(h)
	}
	g.Step("term", fmt.Sprintf("%d members (%s); %s (and SIGCONT) sent to %d", len(live), g.what(), stop.SignalName(sig), g.Evidence.Signalled), len(live), nil)
	return len(live) == 0, true
}

// Wait scans again, signalling members that appeared since, and waits
// out d on the first live member's pidfd.
func (g *recordedGroup) Wait(d time.Duration) (bool, string, error) {
	live := g.scan()
	if len(live) == 0 {
		return true, "no member left: every member exited after " + stop.SignalName(g.sig), nil
	}
	for _, h := range live {
		g.term(h)
	}
	live[0].WaitExit(d)
	return false, fmt.Sprintf("%d members left", len(live)), nil
}

// Kill SIGKILLs every live member, scanning again until a scan finds
// none or the kill wait ends.
func (g *recordedGroup) Kill(_ *stop.Log, wait time.Duration) bool {
	var live []*identity.Handle
	return stop.Rounds{
		Look: func() (int, error) {
			live = g.scan()
			return len(live), nil
		},
		Kill: func() int { return stop.KillAll(live) },
		Settle: func(deadline time.Time) {
			for _, h := range live {
				h.WaitExit(time.Until(deadline))
			}
		},
	}.Run(g.Log, wait)
}

func (g *recordedGroup) EmptyBy() string {
	if g.marker == "" {
		return "the recorded main process's pidfd reported exit"
	}
	return "no live process carries the group's marker, and every member's pidfd reported exit"
}

// Confirm waits for every member's pidfd to report exit.
func (g *recordedGroup) Confirm(_ *stop.Log, deadline time.Time) {
	for _, h := range g.order {
		if h.WaitExit(time.Until(deadline)) {
			g.Evidence.ConfirmedGone++
		} else {
			stop.Unconfirmed(&g.Evidence, h.Token.String())
		}
	}
	g.Step("reap", fmt.Sprintf("%d members confirmed gone by their pidfds, %d not (not our children: their exit statuses went to whoever adopted them)", g.Evidence.ConfirmedGone, len(g.Evidence.Unconfirmed)), 0, nil)
}

func (g *recordedGroup) close() {
	for _, h := range g.order {
		h.Close()
	}
}
