package contain

import (
	"time"

	"github.com/tether-run/tether/receipt"
)

// stepLog records a stop protocol's steps as the receipt lists them, and
// hands each to Progress.
type stepLog struct {
	c     *Cmd
	t0    time.Time
	steps []receipt.Step
}

// step records a step that ends now.
func (l *stepLog) step(name, observed string, members int, err error) {
	l.stepFrom(time.Now(), name, observed, members, err)
}

// stepFrom records a step whose At is when it began.
func (l *stepLog) stepFrom(at time.Time, name, observed string, members int, err error) {
	s := receipt.Step{Name: name, At: at.UTC(), ElapsedMS: at.Sub(l.t0).Milliseconds(), Observed: observed, Members: members}
	if err != nil {
		s.Error = err.Error()
	}
	l.steps = append(l.steps, s)
	if l.c.Progress != nil {
		l.c.Progress(s)
	}
}

// graceNow is the grace period in force now (SetGrace may change it).
func (c *Cmd) graceNow() time.Duration {
	c.mu.Lock()
	g := c.Grace
	c.mu.Unlock()
	switch {
	case g < 0:
		return 0
	case g == 0:
		return DefaultGrace
	}
	return g
}

// killWaitNow bounds the wait after the kill.
func (c *Cmd) killWaitNow() time.Duration {
	if c.KillWait > 0 {
		return c.KillWait
	}
	return DefaultKillWait
}

// skippedNow reports whether a second stop request cut the grace short.
func (c *Cmd) skippedNow() bool {
	select {
	case <-c.skipCh:
		return true
	default:
		return false
	}
}
