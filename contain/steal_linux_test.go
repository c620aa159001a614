package contain

import (
	"os/exec"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/identity"
)

// TestNeverStealsExitStatus: a child the program started with os/exec
// beside a contained run keeps its exit status, though the run's stop
// protocol reaps orphans of the same (subreaper) process. The fallback
// only keeps this promise without AdoptOrphans.
func TestNeverStealsExitStatus(t *testing.T) {
	for _, mech := range mechanisms(t) {
		t.Run(string(mech), func(t *testing.T) {
			own := exec.Command("sh", "-c", "exit 7")
			if err := own.Start(); err != nil {
				t.Fatal(err)
			}
			// A zombie while the run's protocol reaps: stealable.
			for st, _ := identity.ReadStat(own.Process.Pid); st.State != 'Z'; st, _ = identity.ReadStat(own.Process.Pid) {
				time.Sleep(time.Millisecond)
			}
			c := Command("sh", "-c", "(sleep 1000 &); setsid sleep 1000 & sleep 0.2")
			c.Mechanism = mech
			c.Grace = 100 * time.Millisecond
			if err := c.Run(); err != nil {
				t.Errorf("contained run: %v", err)
			}
			if r := c.Receipt(); !r.StopConfirmed || r.Evidence.MembersSeen < 2 {
				t.Errorf("stop_confirmed %t members %d, want true, ≥2", r.StopConfirmed, r.Evidence.MembersSeen)
			}
			err := own.Wait()
			if own.ProcessState == nil || own.ProcessState.ExitCode() != 7 {
				t.Errorf("own child's Wait() = %v, state %v; want exit status 7 (not stolen)", err, own.ProcessState)
			}
		})
	}
}
