//go:build linux || windows

package contain

import "time"

// awaitEnd waits for the run's end — the main process's exit (and with
// UntilEmpty the group's emptiness), the timeout, or Stop — marks the
// stop as begun and calls BeforeStop; it returns the reason. The stop
// protocol that follows is each system's own.
func (c *Cmd) awaitEnd() string {
	var timeout <-chan time.Time
	if c.Timeout > 0 {
		t := time.NewTimer(c.Timeout - time.Since(c.rec.StartedAt))
		defer t.Stop()
		timeout = t.C
	}
	var reason string
	select {
	case ex := <-c.sys.exitCh:
		c.sys.exit = &ex
		reason = ReasonMainExit
		if c.UntilEmpty {
			reason = c.waitEmpty(timeout)
		}
	case <-timeout:
		reason = ReasonTimeout
	case reason = <-c.stopCh:
	}
	c.mu.Lock()
	c.stopping = true
	c.mu.Unlock()
	if c.BeforeStop != nil {
		c.BeforeStop(reason)
	}
	return reason
}
