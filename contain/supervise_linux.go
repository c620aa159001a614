package contain

import (
	"syscall"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/stop"
	"github.com/tether-run/tether/receipt"
)

// supervise waits for the run to end (main exit, timeout or Stop), runs the
// stop protocol, and completes the receipt.
func (c *Cmd) supervise() {
	defer close(c.done)
	reason := c.awaitEnd()
	p := &protocol{Log: c.stopLog(), c: c, reason: reason, handles: map[identity.Token]*identity.Handle{}}
	p.run()
	c.awaitCopies()
	c.endStorage()
	c.finish(p)
	c.track.finish(&c.rec, c.waitErr)
	c.unwatchOwner()
	c.releaseSubreaper()
}

// emptyWake is nil on Linux: waitEmpty looks on its tick.
func (c *Cmd) emptyWake() <-chan struct{} { return nil }

// groupEmpty reports whether the group has no live member.
func (c *Cmd) groupEmpty() bool {
	if c.leaf != nil {
		empty, err := c.leaf.WaitEmpty(0)
		return err == nil && empty
	}
	p := &protocol{c: c, handles: map[identity.Token]*identity.Handle{}}
	defer p.closeHandles()
	return len(p.walk()) == 0
}

// protocol is one run of the stop protocol (stop.Drive) on the run's
// group: its leaf (stop.Run), or the fallback's process tree
// (fallbackGroup).
type protocol struct {
	stop.Log
	c       *Cmd
	reason  Reason
	handles map[identity.Token]*identity.Handle // members identified, by Token.Key
	// admitted holds the same members in the order the walks proved
	// them: a parent before its children (fallbackKill).
	admitted []*identity.Handle
	strag    []receipt.Process
	nstrag   int
	termed   map[*identity.Handle]bool // members sent SIGTERM
	// stopped holds the members the fallback's latest walk found
	// stopped, for term's SIGCONT.
	stopped map[*identity.Handle]bool
	lost    bool // the fallback's latest scan dropped a candidate (walk)
	// What the protocol learned for the receipt, applied by finish under
	// the Cmd's lock: Receipt may be called from any goroutine meanwhile.
	cpu    *receipt.CPU
	limits *receipt.Limits
}

// admit records a verified member of the fallback: a handle kept for the
// confirmation step, and a straggler entry.
func (p *protocol) admit(h *identity.Handle) bool {
	if _, ok := p.handles[h.Token.Key()]; ok {
		h.Close()
		return false
	}
	p.handles[h.Token.Key()] = h
	p.admitted = append(p.admitted, h)
	p.Evidence.MembersSeen++
	p.straggler(h.Token)
	return true
}

// straggler lists a member found after the main process exited.
func (p *protocol) straggler(t identity.Token) {
	if p.reason != ReasonMainExit {
		return
	}
	p.nstrag++
	if len(p.strag) < receipt.MaxListed {
		p.strag = append(p.strag, *p.c.processRecord(t))
	}
}

// term sends the stop signal (then SIGCONT) to a member, once. A member
// sent it before and found stopped by the latest walk is sent SIGCONT
// again: it was stopped after its stop signal, which stays pending until
// it is continued, and would otherwise wait for the kill.
func (p *protocol) term(h *identity.Handle) {
	if p.termed == nil {
		p.termed = map[*identity.Handle]bool{}
	}
	if p.termed[h] {
		if p.stopped[h] {
			h.Signal(syscall.SIGCONT)
		}
		return
	}
	p.termed[h] = true
	if stop.Term(h, p.c.StopSignal) {
		p.Evidence.Signalled++
	}
}

func (p *protocol) closeHandles() {
	for _, h := range p.handles {
		h.Close()
	}
}

func (p *protocol) run() {
	if p.c.leaf != nil {
		p.runCgroup()
	} else {
		p.runFallback()
	}
}

// confirm counts members whose pidfd reported exit and lists the rest.
func (p *protocol) confirm() {
	for _, h := range p.handles {
		if h.Exited() {
			p.Evidence.ConfirmedGone++
		} else {
			stop.Unconfirmed(&p.Evidence, h.Token.String())
		}
		h.Close()
	}
}

// finish fills in how the run ended and releases what the run held.
func (c *Cmd) finish(p *protocol) {
	c.exe.wait() // before the lock: Receipt() does not wait for a hash
	c.mu.Lock()
	defer c.mu.Unlock()
	r := &c.rec
	c.exe.into(r)
	r.Stop = receipt.Stop{Reason: string(p.reason), Signal: stop.SignalName(p.c.StopSignal), Steps: p.Steps}
	r.Stragglers, r.StragglersTotal = p.strag, p.nstrag
	r.TimedOut = p.reason == ReasonTimeout
	p.Evidence.MainReaped = c.sys.exit != nil
	r.Evidence = p.Evidence
	// A leaf that could not be removed is not a confirmed stop: rmdir's
	// EBUSY means members (or cgroups) the looks did not account for.
	r.StopConfirmed = p.Evidence.Empty && p.Evidence.MainReaped && len(p.Evidence.Unconfirmed) == 0 && (r.Cgroup == nil || p.Evidence.LeafRemoved)
	if r.Cgroup != nil {
		// A fresh copy: receipts handed out earlier share the old one.
		cg := *r.Cgroup
		cg.Removed = p.Evidence.LeafRemoved
		if p.cpu != nil {
			cg.CPU = p.cpu
		}
		r.Cgroup = &cg
	}
	if p.limits != nil {
		r.Limits = p.limits
	}
	if len(p.Caveats) > 0 {
		r.Caveats = append(append([]string(nil), r.Caveats...), p.Caveats...)
	}
	if c.sys.main != nil {
		c.sys.main.Close()
	}
	if c.sys.stdinW != nil {
		c.sys.stdinW.Close()
	}
	r.Exit = exitOf(c.sys.exit)
	r.Exit.Code = endCode(Reason(r.Stop.Reason), r.Exit)
	// The kernel's OOM killer, not the stop protocol, ended the main
	// process: it died of SIGKILL before any stop began, and the memory
	// controller counted an OOM kill.
	if p.reason == ReasonMainExit && r.Exit.Signal == "SIGKILL" && r.Limits != nil && r.Limits.Outcome != nil && r.Limits.Outcome.OOMKills > 0 {
		r.Exit.OOMKilled = true
	}
	r.EndedAt = time.Now().UTC()
	r.DurationMS = r.EndedAt.Sub(r.StartedAt).Milliseconds()
	c.waitErr = waitError(r, c.sys.processState())
}
