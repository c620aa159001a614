package contain

import (
	"testing"
	"time"
)

// TestMainStartedAtIsTheSpawn (issue 11): main.started_at lies between
// clock readings taken just before Start and just after it returned. It
// used to be derived from the kernel's start ticks and the whole-second
// boot time, and read up to a second early (by the fraction of a second
// at which this machine booted).
func TestMainStartedAtIsTheSpawn(t *testing.T) {
	for _, mech := range mechanisms(t) {
		t.Run(string(mech), func(t *testing.T) {
			for range 3 {
				c := Command("true")
				c.Mechanism = mech
				before := time.Now()
				if err := c.Start(); err != nil {
					t.Fatalf("Start() = %v", err)
				}
				after := time.Now()
				c.Wait()
				r := c.Receipt()
				if r.Main == nil {
					t.Fatalf("receipt has no main process: %+v", r)
				}
				if got := r.Main.StartedAt; got.Before(before) || got.After(after) {
					t.Errorf("main.started_at = %s, want within [%s, %s] (before and after Start)", got.Format(time.RFC3339Nano), before.UTC().Format(time.RFC3339Nano), after.UTC().Format(time.RFC3339Nano))
				}
				if r.Main.StartedAt.Before(r.StartedAt) {
					t.Errorf("main.started_at = %s before the run's started_at %s", r.Main.StartedAt, r.StartedAt)
				}
			}
		})
	}
}
