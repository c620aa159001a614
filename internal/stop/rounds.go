package stop

import (
	"fmt"
	"time"
)

// Rounds is the kill of a group that no kernel object holds (the
// fallback's tree, the macOS process group, a dead owner's recorded
// processes): without cgroup.kill, a child forked during a kill is found
// only by the next look. Each round, Look finds the live members, Kill
// SIGKILLs them (it returns how many it reached), and Settle waits, up to
// the deadline, for them to exit; rounds go on until a look finds none
// or the kill wait is over. Rounds records the kill step (from its start)
// and the kill-wait step, and reports whether the group was found empty.
type Rounds struct {
	Look   func() (members int, err error)
	Kill   func() (killed int)
	Settle func(deadline time.Time)
}

// Run runs the rounds, for at most wait.
func (k Rounds) Run(l *Log, wait time.Duration) bool {
	began := time.Now()
	deadline := began.Add(wait)
	killed, rounds := 0, 0
	for {
		n, err := k.Look()
		if err == nil && n == 0 {
			l.Step("kill-wait", fmt.Sprintf("walk found no member after %d rounds (%d SIGKILLs)", rounds, killed), 0, nil)
			return true
		}
		if time.Now().After(deadline) {
			l.Step("kill-wait", fmt.Sprintf("%d members left after %s", n, wait), n, err)
			return false
		}
		killed += k.Kill()
		if rounds == 0 {
			l.StepFrom(began, "kill", fmt.Sprintf("SIGKILL sent to %d members", killed), n, err)
		}
		rounds++
		k.Settle(deadline)
	}
}
