package contain

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tether-run/tether/receipt"
)

// TestReceiptWhileStopping reads the receipt from another goroutine for
// the whole of a run's stop protocol. Under -race it is the regression
// test for the protocol writing the receipt (limits, CPU, leaf removal)
// without the lock that Receipt takes.
func TestReceiptWhileStopping(t *testing.T) {
	for _, mech := range mechanisms(t) {
		t.Run(string(mech), func(t *testing.T) {
			c := Command("sh", "-c", "sleep 1000 & exit 0")
			c.Mechanism = mech
			c.Env = append(os.Environ(), "TETHER_CASE="+caseMark(t))
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					r := c.Receipt()
					if r.Cgroup != nil {
						_ = r.Cgroup.Removed
						_ = r.Cgroup.CPU
					}
					_ = r.Limits
					select {
					case <-done:
						return
					default:
					}
				}
			}()
			err := c.Wait()
			close(done)
			wg.Wait()
			if r := c.Receipt(); !r.StopConfirmed {
				t.Errorf("Wait() = %v; receipt not confirmed: %+v", err, r.Evidence)
			}
		})
	}
}

// TestSetGraceDuringStop is the regression test for a grace changed while
// the stop protocol waits (a session's `tether stop --grace 0` during its
// TTL stop): SetGrace must reach the wait under way, which before read
// Grace once, unlocked, and waited the old grace out.
func TestSetGraceDuringStop(t *testing.T) {
	for _, mech := range mechanisms(t) {
		t.Run(string(mech), func(t *testing.T) {
			dir := t.TempDir()
			c := Command("sh", "-c", `trap "" TERM; touch "$0/ready"; sleep 1000`, dir)
			c.Mechanism = mech
			c.Env = append(os.Environ(), "TETHER_CASE="+caseMark(t))
			c.Grace = time.Hour
			termed := make(chan struct{})
			c.Progress = func(s receipt.Step) {
				if s.Name == "term" {
					close(termed)
				}
			}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			// The trap is set before the file appears: a fixed sleep was
			// too short under TCG, and SIGTERM ended sh before its trap.
			waitFile(t, filepath.Join(dir, "ready"))
			c.BeginStop(ReasonRequest)
			// The grace wait begins right after the term step; on a slow
			// host (TCG) the walk before it took longer than a fixed sleep.
			<-termed
			time.Sleep(100 * time.Millisecond) // the grace wait has begun
			c.SetGrace(-1)
			waited := make(chan error, 1)
			go func() { waited <- c.Wait() }()
			select {
			case <-waited:
			case <-time.After(30 * time.Second): // a hang guard: the grace is an hour
				c.Kill()
				<-waited
				t.Fatal("SetGrace(-1) during the grace wait did not end it")
			}
			r := c.Receipt()
			if !r.StopConfirmed || !r.Evidence.KillUsed {
				t.Errorf("receipt confirmed %t kill used %t, want both", r.StopConfirmed, r.Evidence.KillUsed)
			}
			if g := stepNamed(r, "grace"); g == nil || !strings.Contains(g.Observed, "changed by a later stop request") {
				t.Errorf("grace step = %+v, want it to say the grace was changed", g)
			}
		})
	}
}

// caseMark returns a fresh marker for the test's processes, and kills
// whatever still carries it when the test ends.
func caseMark(t *testing.T) string {
	var b [8]byte
	rand.Read(b[:])
	mark := hex.EncodeToString(b[:])
	t.Cleanup(func() {
		for pid := range marked(mark) {
			syscallKill(pid)
		}
	})
	return mark
}
