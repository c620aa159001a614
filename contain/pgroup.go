//go:build linux || darwin

package contain

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/stop"
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

// pgroupProtocol is the process group as the stop driver (stop.Drive)
// sees it: the stop signal (and SIGCONT) to every member, grace walks
// that signal newcomers, SIGKILL to every member until a walk finds
// none, then every member ever seen checked gone by its token.
type pgroupProtocol struct {
	stop.Log
	g *pgroupState
	// straggler, if set, is called for each member found first by the
	// stop's first walk.
	straggler func(identity.Token)
	// awaitMain waits, until the deadline, for the main process's exit
	// to be collected, and reports whether it was.
	awaitMain func(deadline time.Time) bool
	sig       syscall.Signal
	termed    map[identity.Token]bool
}

// run runs the protocol to its bounded end.
func (p *pgroupProtocol) run(pol stop.Policy) {
	p.termed = map[identity.Token]bool{}
	stop.Drive(p, pol, &p.Log)
}

func (p *pgroupProtocol) Term(_ *stop.Log, sig syscall.Signal) (empty, wait bool) {
	p.sig = sig
	members, err := p.g.walk()
	for _, t := range members {
		if p.straggler != nil {
			p.straggler(t)
		}
		p.term(t)
	}
	p.Step("term", fmt.Sprintf("%d members found in the process table; %s (and SIGCONT) sent to %d", len(members), stop.SignalName(sig), p.Evidence.Signalled), len(members), err)
	return len(members) == 0 && err == nil, true
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
		p.Evidence.Signalled++
	}
}

// Wait walks, signalling members that appeared since the last walk, and
// sleeps out d when members are left.
func (p *pgroupProtocol) Wait(d time.Duration) (bool, string, error) {
	members, err := p.g.walk()
	if err == nil && len(members) == 0 {
		return true, "walk found no member: every member exited after " + stop.SignalName(p.sig), nil
	}
	for _, t := range members {
		p.term(t)
	}
	time.Sleep(d)
	return false, fmt.Sprintf("%d members left", len(members)), nil
}

// Kill SIGKILLs every member, walking again until a walk finds none or
// the kill wait ends.
func (p *pgroupProtocol) Kill(_ *stop.Log, killWait time.Duration) bool {
	var members []identity.Token
	return stop.Rounds{
		Look: func() (n int, err error) {
			members, err = p.g.walk()
			return len(members), err
		},
		Kill: func() (killed int) {
			for _, t := range members {
				if h, err := identity.Open(t); err == nil {
					if h.Signal(syscall.SIGKILL) == nil {
						killed++
					}
					h.Close()
				}
			}
			return killed
		},
		Settle: func(time.Time) { time.Sleep(5 * time.Millisecond) },
	}.Run(&p.Log, killWait)
}

func (p *pgroupProtocol) EmptyBy() string { return "process-table walk" }

// Confirm waits for the main process's exit to be collected, then
// checks every member ever seen gone by its token.
func (p *pgroupProtocol) Confirm(_ *stop.Log, deadline time.Time) {
	mainReaped := p.awaitMain(deadline)
	p.g.mu.Lock()
	known := make([]identity.Token, 0, len(p.g.known))
	for _, t := range p.g.known {
		known = append(known, t)
	}
	p.Evidence.MembersSeen = p.g.seen
	p.g.mu.Unlock()
	var errs []error
	for _, t := range known {
		switch err := identity.Check(t.String()); {
		case errors.Is(err, identity.ErrGone), errors.Is(err, identity.ErrMismatch):
			p.Evidence.ConfirmedGone++
		default:
			p.Evidence.Unconfirmed = append(p.Evidence.Unconfirmed, t.String())
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	obs := fmt.Sprintf("main reaped: %t; %d members ever seen, %d confirmed gone by their tokens", mainReaped, p.Evidence.MembersSeen, p.Evidence.ConfirmedGone)
	if n := len(p.Evidence.Unconfirmed); n > 0 {
		obs += fmt.Sprintf(", %d not", n)
	}
	p.Step("reap", obs, len(p.Evidence.Unconfirmed), errors.Join(errs...))
}
