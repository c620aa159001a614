package cli

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tether-run/tether/receipt"
)

// progress tells a person at a terminal what a stop is doing while it
// takes its time: the signal sent and to how many members, what is waited
// for and how long, the kill when it was needed, and at the end whether a
// kill was needed. Nothing is printed unless stderr is a terminal (or
// TETHER_PROGRESS=1 asks for it): scripts and logs get the receipt.
type progress struct {
	e      *env
	grace  time.Duration // the grace in force, if known (0: the session's own)
	hint   string        // how to cut the wait short
	mu     sync.Mutex
	active map[string]bool // stops that had members to signal, by name
}

// newProgress returns a reporter, or nil when nothing is to be printed.
func newProgress(e *env, quiet bool, grace time.Duration, hint string) *progress {
	if quiet {
		return nil
	}
	if e.getenv("TETHER_PROGRESS") != "1" {
		f, ok := e.stderr.(*os.File)
		if !ok || !isTerminal(f.Fd()) {
			return nil
		}
	}
	return &progress{e: e, grace: grace, hint: hint, active: map[string]bool{}}
}

func (p *progress) prefix(name string) string {
	if name == "" {
		return "stop: "
	}
	return name + ": stop: "
}

// step reports one step of the stop of name ("" for tether run's own).
func (p *progress) step(name string, s receipt.Step) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch s.Name {
	case "term":
		if s.Members == 0 {
			return
		}
		p.active[name] = true
		wait := "waiting for them to exit within the grace"
		if p.grace > 0 {
			wait = fmt.Sprintf("waiting up to %s for them to exit", p.grace)
		}
		p.e.warnf("%s%s; %s (%s)", p.prefix(name), s.Observed, wait, p.hint)
	case "grace":
		if p.active[name] {
			p.e.warnf("%s%s", p.prefix(name), s.Observed)
		}
	case "kill":
		p.e.warnf("%skill: %s", p.prefix(name), s.Observed)
	}
}

// done says how the stop of name ended: how many members, how long, and
// whether the kill was needed. For tether run it says nothing when the
// stop had no member to signal (the command left nothing behind).
func (p *progress) done(name string, r *receipt.Receipt, always bool) {
	if p == nil || r == nil {
		return
	}
	p.mu.Lock()
	active := p.active[name]
	p.mu.Unlock()
	if !active && !always {
		return
	}
	var took int64
	if n := len(r.Stop.Steps); n > 0 {
		took = r.Stop.Steps[n-1].ElapsedMS
	}
	kill := "no kill was needed"
	if r.Evidence.KillUsed {
		kill = "the kill was needed"
	}
	msg := fmt.Sprintf("stopped %d %s in %s; %s", r.Evidence.MembersSeen, plural(r.Evidence.MembersSeen, "process", "processes"),
		(time.Duration(took) * time.Millisecond).String(), kill)
	if !r.StopConfirmed {
		msg += "; NOT confirmed (see the receipt's evidence)"
	}
	p.e.warnf("%s%s", strings.TrimSuffix(p.prefix(name), "stop: "), msg)
}

// reported says whether done printed the end of the stop of name.
func (p *progress) reported(name string) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.active[name]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
