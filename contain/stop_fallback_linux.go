package contain

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

// runFallback is the stop protocol (stop.Drive) without a cgroup:
// members are found by walking the process tree from the main process
// and from the orphans reparented to us, each proven through a pidfd,
// and every signal goes through one.
func (p *protocol) runFallback() {
	if stop.Drive(fallbackGroup{p}, p.c.policy(), &p.Log) {
		if obs, ok, err := p.finishLimits(); ok {
			p.Step("limits", obs, 0, err)
		}
	}
}

// fallbackGroup is the fallback's process tree as stop.Drive sees it.
type fallbackGroup struct{ *protocol }

func (g fallbackGroup) Term(_ *stop.Log, sig syscall.Signal) (empty, wait bool) {
	members := g.walk()
	for _, h := range members {
		g.term(h)
	}
	g.Step("term", fmt.Sprintf("%d members found by walking the process tree; %s (and SIGCONT) sent to %d", len(members), stop.SignalName(sig), g.Evidence.Signalled), len(members), nil)
	return len(members) == 0, true
}

// Wait walks, signalling members forked since the last walk, and sleeps
// out d when members are left.
func (g fallbackGroup) Wait(d time.Duration) (bool, string, error) {
	members := g.walk()
	if len(members) == 0 {
		return true, "walk found no member: every member exited after " + stop.SignalName(g.c.StopSignal), nil
	}
	for _, h := range members {
		g.term(h) // those forked since the last walk
	}
	time.Sleep(d)
	return false, fmt.Sprintf("%d members left", len(members)), nil
}

func (g fallbackGroup) EmptyBy() string { return "process-tree walk" }

// Confirm collects the main process and the orphans of the group, and
// counts the members whose pidfds reported exit.
func (g fallbackGroup) Confirm(_ *stop.Log, deadline time.Time) {
	mainOK := g.c.awaitMain(deadline)
	reaped, running, rerr := g.reapOrphans(deadline, g.fallbackOrphan)
	g.Evidence.Reaped = reaped
	for _, t := range running {
		stop.Unconfirmed(&g.Evidence, t)
	}
	g.confirm()
	g.Step("reap", fmt.Sprintf("main reaped: %t; %d orphans reaped; %d members confirmed gone, %d not", mainOK, reaped, g.Evidence.ConfirmedGone, len(g.Evidence.Unconfirmed)), 0, rerr)
}

// Kill SIGKILLs every member, walking again until a walk finds none or
// the kill wait ends: without cgroup.kill, children forked during the
// kill are only found by the next walk.
//
// The first round kills the members already proven, without a walk: a
// walk reads every process on the machine (~10 ms beside 1,000 members
// here), and the deaths of those it would only find again need not wait
// for it. Later walks find what was forked since.
func (g fallbackGroup) Kill(_ *stop.Log, killWait time.Duration) bool {
	var members []*identity.Handle
	first := true
	return stop.Rounds{
		Look: func() (int, error) {
			if members = nil; first {
				first, members = false, g.liveHeld()
			}
			if len(members) == 0 {
				members = g.walk()
			}
			return len(members), nil
		},
		Kill: func() int { return stop.KillAll(members) },
		// Wait on the pidfds already held rather than walking /proc
		// again at once: a walk reads every process on the machine, so
		// its cost follows the machine, not the group. The next walk only
		// has to catch children forked during the kill.
		Settle: func(deadline time.Time) {
			for _, h := range members {
				h.WaitExit(time.Until(deadline))
			}
			g.reapOrphans(time.Now(), g.fallbackOrphan) // the rest: the reap step's
		},
	}.Run(&g.Log, killWait)
}

// liveHeld returns the members proven before that have not exited, in
// the order they were proven: a parent is killed before its children,
// as a walk would have it, so that it cannot act on their deaths (a
// shell's wait returning, a supervisor forking a replacement).
func (p *protocol) liveHeld() []*identity.Handle {
	var out []*identity.Handle
	for _, h := range p.admitted {
		if !h.Exited() {
			out = append(out, h)
		}
	}
	return out
}

// walk returns the live members, each proven through a pidfd: the main
// process and the orphans reparented to us (while our children, their
// pids cannot change hands), and their descendants. A /proc snapshot is
// not proof of parentage: a member that exits mid-scan may have its pid
// reused, and the newcomer's children then name it as their parent. So a
// child counts only when its stat, read after its pidfd is open, still
// names the member as its parent, and the member's pidfd reports it
// alive after that read: a live process owns its pid. (A member that
// exited had its children reparented to us; the next walk finds them as
// orphans.)
//
// A scan that finds no member is the one the stop believes, so it must
// not have lost one: the snapshot is read whole before any proof, and a
// process that exits in between takes its place in the tree with it,
// its children reparented to us after the snapshot named them its own.
// A scan that dropped a candidate that way (lost) and found nothing is
// run again, up to walkRetries times.
func (p *protocol) walk() []*identity.Handle {
	for i := 0; ; i++ {
		members := p.scan()
		if len(members) > 0 || !p.lost || i == walkRetries {
			return members
		}
	}
}

// walkRetries bounds the scans of one walk that found nothing but lost a
// candidate: each loss is a process that exited during a scan.
const walkRetries = 5

// scan is one pass of walk; it sets p.lost when it dropped a candidate
// that exited or moved during the pass and may have had members below it.
func (p *protocol) scan() []*identity.Handle {
	p.lost = false
	procs := readAllStats()
	kids := map[int][]identity.Stat{}
	for _, st := range procs {
		kids[st.PPID] = append(kids[st.PPID], st)
	}
	self := os.Getpid()
	var roots []*identity.Handle
	mainTok := p.c.mainToken()
	for _, st := range procs {
		var h *identity.Handle
		switch {
		case st.PID == mainTok.PID && st.StartTime == mainTok.StartTime:
			h = p.prove(st)
		case st.PPID == self && !isOwned(st.PID) && p.claims(st):
			h = p.prove(st)
		default:
			continue
		}
		if h == nil {
			p.dropped(st, kids)
			continue
		}
		p.saw(h, st)
		roots = append(roots, h)
	}
	var out []*identity.Handle
	for len(roots) > 0 {
		h := roots[len(roots)-1]
		roots = roots[:len(roots)-1]
		out = append(out, h)
		roots = append(roots, p.children(h, kids[h.Token.PID], kids)...)
	}
	return out
}

// dropped notes a candidate the scan could not prove: if the snapshot
// names children of it, they may be members reparented to us since.
func (p *protocol) dropped(st identity.Stat, kids map[int][]identity.Stat) {
	if len(kids[st.PID]) > 0 {
		p.lost = true
	}
}

// prove returns the handle of the live member st describes, a child of
// ours or the main process, or nil when that cannot be proven. A member
// proven before is returned from the handles held.
func (p *protocol) prove(st identity.Stat) *identity.Handle {
	if st.State == 'Z' || st.State == 'X' {
		return nil
	}
	if h, ok := p.held(st); ok {
		return h
	}
	boot, _ := identity.BootID()
	h, err := identity.Open(identity.Token{OS: "linux", BootID: boot, PID: st.PID, StartTime: st.StartTime})
	if err != nil {
		return nil
	}
	p.admit(h)
	return h
}

// children returns the live members among sts, what the snapshot says
// are parent's children. Each one not held yet is opened and its stat
// read again after the open (OpenPIDStat, which also checks it alive
// after the read): it must still name parent, with the start time the
// snapshot had. Then parent must be alive: once, after all of its
// children's reads.
func (p *protocol) children(parent *identity.Handle, sts []identity.Stat, kids map[int][]identity.Stat) []*identity.Handle {
	var out, opened []*identity.Handle
	for _, st := range sts {
		if st.State == 'Z' || st.State == 'X' {
			p.dropped(st, kids)
			continue
		}
		if h, ok := p.held(st); ok {
			if h != nil {
				p.saw(h, st)
				out = append(out, h)
			} else {
				p.dropped(st, kids)
			}
			continue
		}
		h, now, err := identity.OpenPIDStat(st.PID)
		if err != nil {
			p.dropped(st, kids)
			continue
		}
		if now.PPID != parent.Token.PID || now.StartTime != st.StartTime {
			// Reparented to us since the snapshot (the parent exited),
			// or its pid reused: either way a next scan tells.
			p.lost = true
			h.Close()
			continue
		}
		p.saw(h, now)
		opened = append(opened, h)
	}
	if len(opened) > 0 && parent.Exited() {
		// Live children of a parent that exited: ours now.
		p.lost = true
		for _, h := range opened {
			h.Close()
		}
		return out
	}
	for _, h := range opened {
		p.admit(h)
	}
	return append(out, opened...)
}

// saw notes whether member h was stopped ('T') in st, its latest stat
// (term). Only stopped members are kept: most stops have none.
func (p *protocol) saw(h *identity.Handle, st identity.Stat) {
	if st.State != 'T' {
		delete(p.stopped, h)
		return
	}
	if p.stopped == nil {
		p.stopped = map[*identity.Handle]bool{}
	}
	p.stopped[h] = true
}

// held looks st up among the members proven before: ok when it is one,
// with its handle, or nil if it has exited since.
func (p *protocol) held(st identity.Stat) (*identity.Handle, bool) {
	boot, _ := identity.BootID()
	h, ok := p.handles[identity.Token{OS: "linux", BootID: boot, PID: st.PID, StartTime: st.StartTime}]
	if !ok {
		return nil, false
	}
	if h.Exited() {
		return nil, true
	}
	return h, true
}

// claims reports whether an orphan child of ours belongs to this group.
func (p *protocol) claims(st identity.Stat) bool {
	if p.c.AdoptOrphans {
		return true
	}
	boot, _ := identity.BootID()
	if _, ok := p.handles[identity.Token{OS: "linux", BootID: boot, PID: st.PID, StartTime: st.StartTime}]; ok {
		return true
	}
	env, err := procfs.ReadFile("/proc/" + strconv.Itoa(st.PID) + "/environ")
	return err == nil && procfs.EnvHas(env, store.MarkerEnv+"="+p.c.marker)
}

// fallbackOrphan decides which orphan child to reap in the fallback.
func (p *protocol) fallbackOrphan(h *identity.Handle) bool {
	if p.c.AdoptOrphans {
		return true
	}
	if h.Identify() != nil {
		return false
	}
	_, ok := p.handles[h.Token.Key()]
	return ok
}

func (c *Cmd) mainToken() identity.Token {
	if c.sys.main != nil {
		return c.sys.main.Token
	}
	return identity.Token{PID: -1}
}

func isOwned(pid int) bool {
	owned.Lock()
	defer owned.Unlock()
	return owned.pids[pid]
}

// readAllStats is the snapshot walks start from; tests replace it to
// stage a pid reused mid-scan.
var readAllStats = readAllStatsProc

// readAllStatsProc reads /proc/PID/stat for every process.
func readAllStatsProc() []identity.Stat {
	pids := procfs.PIDs()
	out := make([]identity.Stat, 0, len(pids))
	for _, pid := range pids {
		if st, err := identity.ReadStat(pid); err == nil {
			out = append(out, st)
		}
	}
	return out
}
