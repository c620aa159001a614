package contain

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/identity"
	"github.com/tether-run/tether/receipt"
)

// TestFallbackProvesParentage stages what a pid reused mid-scan looks like
// to the fallback's walk: a process outside the group that the /proc
// snapshot names as the child of a member. The walk must prove parentage
// through pidfds and leave it alone.
func TestFallbackProvesParentage(t *testing.T) {
	innocent := exec.Command("sleep", "1000")
	if err := innocent.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { innocent.Wait(); close(exited) }()
	t.Cleanup(func() { innocent.Process.Kill(); <-exited })

	c := Command("sleep", "1000")
	c.Mechanism = receipt.MechanismFallback
	c.Grace = 100 * time.Millisecond
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	mainPID := c.Pid()
	readAllStats = func() []identity.Stat {
		st := readAllStatsProc()
		for i := range st {
			if st[i].PID == innocent.Process.Pid {
				st[i].PPID = mainPID // as if its parent had the member's pid
			}
		}
		return st
	}
	defer func() { readAllStats = readAllStatsProc }()
	c.BeginStop(ReasonRequest)
	c.Wait()
	select {
	case <-exited:
		t.Fatalf("a process outside the group, named a member's child only by a stale snapshot, was killed")
	case <-time.After(100 * time.Millisecond):
	}
	if r := c.Receipt(); r.Evidence.MembersSeen != 1 || !r.StopConfirmed {
		t.Errorf("members seen %d, confirmed %t; want only the main process, stop confirmed", r.Evidence.MembersSeen, r.StopConfirmed)
	}
}

// TestIdentifyFailureKillsMain: when the main process cannot be
// identified, Start returns an error and nothing it started is left
// running.
func TestIdentifyFailureKillsMain(t *testing.T) {
	for _, mech := range mechanisms(t) {
		t.Run(string(mech), func(t *testing.T) {
			identifyMain = func(*identity.Handle) error { return errors.New("staged failure") }
			defer func() { identifyMain = (*identity.Handle).Identify }()
			mark := caseMark(t)
			c := Command("sleep", "1000")
			c.Env = append(os.Environ(), "TETHER_CASE="+mark)
			c.Mechanism = mech
			c.Grace = 100 * time.Millisecond
			err := c.Start()
			if err == nil {
				c.Kill()
				c.Wait()
				t.Fatal("Start() = nil, want the identification error")
			}
			for deadline := time.Now().Add(5 * time.Second); len(marked(mark)) > 0 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if left := marked(mark); len(left) > 0 {
				t.Errorf("Start() = %v, and left running: %v", err, left)
				for pid := range left {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		})
	}
}
