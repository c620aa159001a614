//go:build linux || windows || darwin

package contain

import "time"

// awaitEnd waits for the run's end — the main process's exit (and with
// UntilEmpty the group's emptiness), the timeout, or a stop — marks the
// stop as begun, updates the run's record and calls the BeforeStop hook;
// it returns the reason. The stop protocol that follows is each system's
// own.
func (c *Cmd) awaitEnd() Reason {
	var timeout <-chan time.Time
	if c.Timeout > 0 {
		t := time.NewTimer(c.Timeout - time.Since(c.rec.StartedAt))
		defer t.Stop()
		timeout = t.C
	}
	c.storage = c.watchStorage()
	var reason Reason
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
	c.storage.halt()
	c.mu.Lock()
	c.stopping = true
	c.mu.Unlock()
	if c.hooks.BeforeStop != nil {
		c.hooks.BeforeStop(string(reason), c.skipCh)
	}
	return reason
}

// waitEmpty keeps the group running after the main process exited, until
// it is empty by itself (ReasonEmpty: groupEmpty, looked at every 100 ms
// and whenever emptyWake fires), the timeout, or a stop request.
func (c *Cmd) waitEmpty(timeout <-chan time.Time) Reason {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if c.groupEmpty() {
			return ReasonEmpty
		}
		select {
		case <-timeout:
			return ReasonTimeout
		case r := <-c.stopCh:
			return r
		case <-c.emptyWake():
		case <-tick.C:
		}
	}
}
