package contain

import (
	"testing"
	"time"
)

// TestStopBeforeStart: a stop request that arrives before Start (a signal
// during start-up) is kept and ends the run as soon as it starts.
func TestStopBeforeStart(t *testing.T) {
	c := Command("sleep", "1000")
	c.Grace = time.Second
	c.BeginStop(ReasonSignal)
	c.Kill()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	r := c.Receipt()
	if r.Stop.Reason != string(ReasonSignal) || !r.StopConfirmed || r.Exit.Signal == "" {
		t.Errorf("reason %q confirmed %t exit %+v; want signal, true, killed", r.Stop.Reason, r.StopConfirmed, r.Exit)
	}
}
