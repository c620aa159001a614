package stop

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/receipt"
)

// fakeGroup is a Group whose members leave when the test says: after
// the signal (exitOnTerm), after some Waits (exitAfterWaits), or only
// when killed (neither). It records the calls Drive makes, in order.
type fakeGroup struct {
	members        int
	exitOnTerm     bool
	exitAfterWaits int // > 0: empty after that many Waits
	termReached    bool
	waitErr        error
	killEmpties    bool
	unconfirmed    []string

	calls  []string
	waits  int
	signal syscall.Signal
}

func (g *fakeGroup) Term(l *Log, sig syscall.Signal) (bool, bool) {
	g.calls = append(g.calls, "term")
	g.signal = sig
	l.Step("term", "fake", g.members, nil)
	if g.exitOnTerm {
		g.members = 0
	}
	return g.members == 0, g.termReached
}

func (g *fakeGroup) Wait(d time.Duration) (bool, string, error) {
	g.waits++
	if len(g.calls) == 0 || g.calls[len(g.calls)-1] != "wait" {
		g.calls = append(g.calls, "wait")
	}
	if g.waitErr != nil {
		return false, "cannot watch", g.waitErr
	}
	if g.exitAfterWaits > 0 && g.waits >= g.exitAfterWaits {
		g.members = 0
		return true, "every member exited", nil
	}
	time.Sleep(d)
	return false, "still populated", nil
}

func (g *fakeGroup) Kill(l *Log, wait time.Duration) bool {
	g.calls = append(g.calls, "kill")
	l.Step("kill", "fake", g.members, nil)
	if g.killEmpties {
		g.members = 0
	}
	return g.members == 0
}

func (g *fakeGroup) EmptyBy() string { return "fake empty" }

func (g *fakeGroup) Confirm(l *Log, deadline time.Time) {
	g.calls = append(g.calls, "confirm")
	for _, u := range g.unconfirmed {
		Unconfirmed(&l.Evidence, u)
	}
	l.Step("reap", "fake", 0, nil)
}

// stepNames lists l's steps by name.
func stepNames(l *Log) string {
	var n []string
	for _, s := range l.Steps {
		n = append(n, s.Name)
	}
	return strings.Join(n, ",")
}

// TestDriveOrder: the protocol's order over any group, in each way a
// stop ends — empty at once, on the signal within the grace, only after
// the kill, not even then — and the evidence each way leaves.
func TestDriveOrder(t *testing.T) {
	for _, c := range []struct {
		name      string
		g         *fakeGroup
		grace     time.Duration
		calls     string
		steps     string
		empty     bool
		killUsed  bool
		confirmed bool
	}{
		{"already empty", &fakeGroup{termReached: true}, time.Second, "term,confirm", "term,reap", true, false, true},
		{"exits on the signal", &fakeGroup{members: 3, termReached: true, exitAfterWaits: 2, killEmpties: true}, time.Second, "term,wait,confirm", "term,grace,reap", true, false, true},
		{"ignores the signal", &fakeGroup{members: 3, termReached: true, killEmpties: true}, 60 * time.Millisecond, "term,wait,kill,confirm", "term,grace,kill,reap", true, true, true},
		{"no grace", &fakeGroup{members: 3, termReached: true, killEmpties: true}, NoGrace, "term,kill,confirm", "term,grace,kill,reap", true, true, true},
		{"signal reached no member", &fakeGroup{members: 3, killEmpties: true}, time.Minute, "term,kill,confirm", "term,grace,kill,reap", true, true, true},
		{"the kill does not empty it", &fakeGroup{members: 3, termReached: true}, NoGrace, "term,kill,confirm", "term,grace,kill,reap", false, true, false},
		{"a member not confirmed gone", &fakeGroup{members: 3, termReached: true, killEmpties: true, unconfirmed: []string{"linux:b:7:1"}}, NoGrace, "term,kill,confirm", "term,grace,kill,reap", true, true, false},
		{"cgroup.events unreadable", &fakeGroup{members: 3, termReached: true, killEmpties: true, waitErr: errors.New("EIO")}, time.Minute, "term,wait,kill,confirm", "term,grace,kill,reap", true, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &Log{}
			empty := Drive(c.g, Policy{Signal: syscall.SIGHUP, Grace: c.grace, KillWait: time.Second}, l)
			if got := strings.Join(c.g.calls, ","); got != c.calls {
				t.Errorf("calls %s, want %s", got, c.calls)
			}
			if got := stepNames(l); got != c.steps {
				t.Errorf("steps %s, want %s", got, c.steps)
			}
			ev := l.Evidence
			confirmed := ev.Empty && len(ev.Unconfirmed) == 0
			if empty != c.empty || ev.Empty != c.empty || ev.KillUsed != c.killUsed || confirmed != c.confirmed {
				t.Errorf("empty %t, evidence %+v; want empty %t, kill used %t, confirmed %t", empty, ev, c.empty, c.killUsed, c.confirmed)
			}
			if ev.Empty && (ev.EmptyBy != "fake empty" || ev.EmptyAt.IsZero()) {
				t.Errorf("empty by %q at %v; want the group's evidence, and when", ev.EmptyBy, ev.EmptyAt)
			}
			if c.g.signal != syscall.SIGHUP {
				t.Errorf("the group was asked for signal %v, want the policy's SIGHUP", c.g.signal)
			}
		})
	}
}

// TestDriveGrace: the grace step's words and how long it lasts — the
// whole grace when nothing exits, cut short at once by Skip, and the
// grace in force read again throughout (GraceNow).
func TestDriveGrace(t *testing.T) {
	grace := func(l *Log) string {
		for _, s := range l.Steps {
			if s.Name == "grace" {
				return s.Observed
			}
		}
		return ""
	}
	t.Run("over", func(t *testing.T) {
		l, g := &Log{}, &fakeGroup{members: 1, termReached: true, killEmpties: true}
		began := time.Now()
		Drive(g, Policy{Grace: 150 * time.Millisecond, KillWait: time.Second}, l)
		if took := time.Since(began); took < 150*time.Millisecond {
			t.Errorf("the stop took %s, less than its grace", took)
		}
		if got := grace(l); got != "still populated after 150ms" {
			t.Errorf("grace step %q, want %q", got, "still populated after 150ms")
		}
	})
	t.Run("skip", func(t *testing.T) {
		skip := make(chan struct{})
		close(skip)
		l, g := &Log{}, &fakeGroup{members: 1, termReached: true, killEmpties: true}
		Drive(g, Policy{Grace: time.Hour, Skip: skip, KillWait: time.Second}, l)
		if got := grace(l); got != "cut short by a second stop request" || g.waits != 0 {
			t.Errorf("grace step %q after %d waits, want it cut short before any", got, g.waits)
		}
	})
	t.Run("changed", func(t *testing.T) {
		l, g := &Log{}, &fakeGroup{members: 1, termReached: true, killEmpties: true}
		calls := 0
		now := func() time.Duration {
			calls++
			if calls > 2 {
				return 50 * time.Millisecond // a later request shortened an hour
			}
			return time.Hour
		}
		Drive(g, Policy{GraceNow: now, KillWait: time.Second}, l)
		if got := grace(l); got != "still populated after 50ms (grace changed by a later stop request)" {
			t.Errorf("grace step %q, want the changed grace named", got)
		}
	})
	t.Run("progress", func(t *testing.T) {
		var seen []string
		l := &Log{Progress: func(s receipt.Step) { seen = append(seen, s.Name) }}
		Drive(&fakeGroup{members: 1, termReached: true, killEmpties: true}, Policy{KillWait: time.Second}, l)
		if strings.Join(seen, ",") != stepNames(l) {
			t.Errorf("progress saw %v, the log has %s", seen, stepNames(l))
		}
	})
}

// quietGroup is a fakeGroup that can be watched without a signal, and
// whose members leave on the stop-exec when exitOnExec.
type quietGroup struct {
	*fakeGroup
	exitOnExec bool
	execRan    bool
}

func (g *quietGroup) WaitQuiet(d time.Duration) bool {
	g.calls = append(g.calls, "quiet")
	if g.exitOnExec && g.execRan {
		g.members = 0
	}
	return g.members == 0
}

// TestDriveStopExec: Policy.Exec runs first, before any signal, bounded
// by the grace; a Quiet group it empties gets no signal (term finds it
// empty), one it does not gets the signal with what is left of the
// grace; a walk group (not Quiet) goes to term at once.
func TestDriveStopExec(t *testing.T) {
	x := &receipt.StopExec{Argv: []string{"tmux", "kill-server"}}
	for _, c := range []struct {
		name      string
		fake      *fakeGroup
		grace     time.Duration
		calls     string
		steps     string
		maxBudget time.Duration
	}{
		{"quiet, ended by it", &fakeGroup{members: 2}, time.Second, "quiet,term,confirm", "stop-exec,term,reap", time.Second},
		{"quiet, not ended by it", &fakeGroup{members: 2, termReached: true, exitAfterWaits: 1}, 200 * time.Millisecond, "quiet,term,wait,confirm", "stop-exec,term,grace,reap", 200 * time.Millisecond},
		{"walks", &fakeGroup{members: 2, exitOnTerm: true}, time.Second, "term,confirm", "stop-exec,term,reap", time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			var g Group = c.fake
			q := &quietGroup{fakeGroup: c.fake, exitOnExec: c.name == "quiet, ended by it"}
			if c.name != "walks" {
				g = q
			}
			var budget time.Duration
			l := &Log{}
			p := Policy{Grace: c.grace, KillWait: time.Second, Exec: func(deadline time.Time) *receipt.StopExec {
				if len(c.fake.calls) != 0 {
					t.Errorf("exec ran after %v: it must run before any signal", c.fake.calls)
				}
				budget = time.Until(deadline)
				q.execRan = true
				return x
			}}
			Drive(g, p, l)
			if got := strings.Join(c.fake.calls, ","); got != c.calls {
				t.Errorf("calls %s, want %s", got, c.calls)
			}
			if got := stepNames(l); got != c.steps {
				t.Errorf("steps %s, want %s", got, c.steps)
			}
			if budget <= 0 || budget > c.maxBudget {
				t.Errorf("exec's deadline was %s away, want within the grace %s", budget, c.grace)
			}
			if l.Steps[0].StopExec != x {
				t.Errorf("the stop-exec step does not carry what ran: %+v", l.Steps[0])
			}
		})
	}
}
