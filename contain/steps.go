package contain

import (
	"time"

	"github.com/tether-run/tether/internal/stop"
)

// policy is the stop policy in force: the stop signal, the grace as
// SetGrace leaves it, the cut of a second stop request, the kill wait.
func (c *Cmd) policy() stop.Policy {
	p := stop.Policy{Signal: c.StopSignal, GraceNow: c.graceNow, Skip: c.skipCh, KillWait: c.killWaitNow()}
	if len(c.StopExec) > 0 {
		p.Exec = c.runStopExec
	}
	return p
}

// stopLog is a fresh log for a stop beginning now, whose steps go to
// Progress as they are recorded.
func (c *Cmd) stopLog() stop.Log {
	return stop.Log{T0: time.Now(), Progress: c.Progress}
}

// graceNow is the grace period in force now (SetGrace may change it);
// stop.NoGrace when Grace is negative.
func (c *Cmd) graceNow() time.Duration {
	c.mu.Lock()
	g := c.Grace
	c.mu.Unlock()
	switch {
	case g < 0:
		return stop.NoGrace
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
