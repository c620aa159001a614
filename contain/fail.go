//go:build linux || windows || darwin

package contain

import (
	"time"

	"github.com/tether-run/tether/receipt"
)

// abortStarted kills a process that started but must not run (it could
// not be identified, or it is outside its group) and cleans up through
// the ordinary protocol, which has ended when it returns.
func (c *Cmd) abortStarted(cause error) {
	c.rec.Error = cause.Error()
	go c.supervise()
	c.BeginStop(ReasonError)
	c.Kill()
	<-c.done
}

// failStart finishes the receipt of a start that failed. The system's
// undoStart removes what was made for a process and says whether one
// ran: if it did, abortStarted's protocol has stopped it already;
// if not, the group is trivially confirmed empty.
func (c *Cmd) failStart(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ran := c.undoStart()
	if c.rec.Error == "" {
		c.rec.Error = err.Error()
	}
	c.rec.Exit.Code = StartErrorCode(err)
	if c.rec.Outcome == "" {
		c.rec.Outcome = receipt.OutcomeStartFailed
	}
	c.rec.EndedAt = time.Now().UTC()
	c.rec.DurationMS = c.rec.EndedAt.Sub(c.rec.StartedAt).Milliseconds()
	if !ran {
		c.rec.StopConfirmed = true
		c.rec.Evidence.Empty = true
		c.rec.Evidence.EmptyBy = "nothing was started"
		c.rec.Evidence.LeafRemoved = c.rec.Cgroup != nil && c.rec.Cgroup.Removed
	}
	if c.rec.Stop.Reason == "" {
		c.rec.Stop.Reason = string(ReasonStartFailed)
	}
	c.waitErr = err
	c.track.finish(&c.rec, err)
	if !ran {
		c.nothingRan()
	}
	select {
	case <-c.done:
	default:
		close(c.done)
	}
}
