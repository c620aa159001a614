//go:build linux || darwin

package contain

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/tether-run/tether/identity"
	"github.com/tether-run/tether/internal/stop"
	"github.com/tether-run/tether/receipt"
)

// The pgroup mechanism's stop protocol, free of the system it runs on:
// macOS gives it kern.proc.all and its kqueue identity handles; the tests
// run it on Linux, over /proc, against real process trees.

// procSource is how the pgroup protocol sees and signals processes.
type procSource interface {
	// table is a snapshot of every process.
	table() ([]tableEntry, error)
	// token names e for good.
	token(e tableEntry) identity.Token
}

// pgroupState is what a pgroup run knows of its processes.
type pgroupState struct {
	src  procSource
	main memberKey
	self int

	mu    sync.Mutex
	known map[memberKey]identity.Token // every member ever seen
	seen  int
}

func newPgroupState(src procSource, main identity.Token, self int) *pgroupState {
	k := memberKey{main.PID, main.StartTime}
	return &pgroupState{src: src, main: k, self: self, known: map[memberKey]identity.Token{k: main}, seen: 1}
}

// walk reads the process table and returns the live members, each named
// by its token; every member found is remembered.
func (g *pgroupState) walk() ([]identity.Token, error) {
	snap, err := g.src.table()
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []identity.Token
	for _, e := range groupMembers(snap, g.main, func(k memberKey) bool { _, ok := g.known[k]; return ok }, g.self) {
		tok, ok := g.known[e.key()]
		if !ok {
			tok = g.src.token(e)
			g.known[e.key()] = tok
			g.seen++
		}
		out = append(out, tok)
	}
	return out, nil
}

// pgroupProtocol is one run of the stop protocol on a process group: the
// stop signal (and SIGCONT) to every member, the grace with walks that
// signal newcomers, SIGKILL to every member until a walk finds none, then
// every member ever seen checked gone by its token.
type pgroupProtocol struct {
	stepLog
	g   *pgroupState
	sig syscall.Signal // the stop signal; 0 means SIGTERM
	// straggler, if set, is called for each member found first by the
	// stop's first walk.
	straggler func(identity.Token)
	ev        receipt.Evidence
	termed    map[identity.Token]bool
}

// run runs the protocol to its bounded end; confirm is left to the
// caller, once the main process is reaped.
func (p *pgroupProtocol) run() {
	p.termed = map[identity.Token]bool{}
	members, err := p.g.walk()
	for _, t := range members {
		if p.straggler != nil {
			p.straggler(t)
		}
		p.term(t)
	}
	p.step("term", fmt.Sprintf("%d members found in the process table; %s (and SIGCONT) sent to %d", len(members), stop.SignalName(p.sig), p.ev.Signalled), len(members), err)
	empty := len(members) == 0 && err == nil
	if !empty {
		empty = p.graceWait()
	}
	if !empty {
		p.ev.KillUsed = true
		empty = p.kill()
	}
	if empty {
		p.ev.Empty, p.ev.EmptyBy, p.ev.EmptyAt = true, "process-table walk", time.Now().UTC()
	}
}

// term sends the stop signal, then SIGCONT, to the member t names, once,
// through a handle proven to be it.
func (p *pgroupProtocol) term(t identity.Token) {
	if p.termed[t] {
		return
	}
	p.termed[t] = true
	h, err := identity.Open(t)
	if err != nil {
		return
	}
	defer h.Close()
	if stop.Term(h, p.sig) {
		p.ev.Signalled++
	}
}

// graceWait walks until no member is left or the grace is over,
// signalling members that appear meanwhile.
func (p *pgroupProtocol) graceWait() bool {
	g := p.c.graceNow()
	if g == 0 {
		p.step("grace", "no grace period", 0, nil)
		return false
	}
	began := time.Now()
	for {
		if p.c.skippedNow() {
			p.step("grace", "cut short by a second stop request", 0, nil)
			return false
		}
		members, err := p.g.walk()
		if err == nil && len(members) == 0 {
			p.step("grace", "walk found no member: every member exited after "+stop.SignalName(p.sig), 0, nil)
			return true
		}
		for _, t := range members {
			p.term(t)
		}
		g = p.c.graceNow()
		left := time.Until(began.Add(g))
		if left <= 0 {
			p.step("grace", fmt.Sprintf("%d members left after %s", len(members), g), len(members), err)
			return false
		}
		time.Sleep(min(left, 20*time.Millisecond))
	}
}

// kill SIGKILLs every member, walking again until a walk finds none or
// the kill wait ends.
func (p *pgroupProtocol) kill() bool {
	began := time.Now()
	killWait := p.c.killWaitNow()
	deadline := began.Add(killWait)
	killed, rounds := 0, 0
	for {
		members, err := p.g.walk()
		if err == nil && len(members) == 0 {
			p.step("kill-wait", fmt.Sprintf("walk found no member after %d rounds (%d SIGKILLs)", rounds, killed), 0, nil)
			return true
		}
		if time.Now().After(deadline) {
			p.step("kill-wait", fmt.Sprintf("%d members left after %s", len(members), killWait), len(members), err)
			return false
		}
		for _, t := range members {
			if h, err := identity.Open(t); err == nil {
				if h.Signal(syscall.SIGKILL) == nil {
					killed++
				}
				h.Close()
			}
		}
		if rounds == 0 {
			p.stepFrom(began, "kill", fmt.Sprintf("SIGKILL sent to %d members", killed), len(members), err)
		}
		rounds++
		time.Sleep(5 * time.Millisecond)
	}
}

// confirm checks every member ever seen gone by its token; mainReaped
// says whether the main process's exit was collected.
func (p *pgroupProtocol) confirm(mainReaped bool) {
	p.g.mu.Lock()
	known := make([]identity.Token, 0, len(p.g.known))
	for _, t := range p.g.known {
		known = append(known, t)
	}
	p.ev.MembersSeen = p.g.seen
	p.g.mu.Unlock()
	var errs []error
	for _, t := range known {
		switch err := identity.Check(t.String()); {
		case errors.Is(err, identity.ErrGone), errors.Is(err, identity.ErrMismatch):
			p.ev.ConfirmedGone++
		default:
			p.ev.Unconfirmed = append(p.ev.Unconfirmed, t.String())
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	obs := fmt.Sprintf("main reaped: %t; %d members ever seen, %d confirmed gone by their tokens", mainReaped, p.ev.MembersSeen, p.ev.ConfirmedGone)
	if n := len(p.ev.Unconfirmed); n > 0 {
		obs += fmt.Sprintf(", %d not", n)
	}
	p.step("reap", obs, len(p.ev.Unconfirmed), errors.Join(errs...))
}
