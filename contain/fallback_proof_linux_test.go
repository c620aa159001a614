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

// TestFallbackWalkRescansALoss stages what a member's exit during a walk
// looks like to it: the /proc snapshot, read whole before any proof,
// names a daemon the child of a parent that has exited by the time the
// walk proves it. That first scan finds no member; the walk must not
// believe it, but scan again and find the daemon, now our orphan.
func TestFallbackWalkRescansALoss(t *testing.T) {
	mark := caseMark(t)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	c := Command("sh", "-c", "setsid -f sleep 1000; exit 0")
	c.Env = append(os.Environ(), "TETHER_CASE="+mark)
	c.Mechanism = receipt.MechanismFallback
	c.AdoptOrphans = true
	staged := 0
	readAllStats = func() []identity.Stat {
		st := readAllStatsProc()
		if staged > 0 {
			return st
		}
		for i := range st {
			if st[i].PPID == os.Getpid() && st[i].Comm == "sleep" {
				staged++
				st[i].PPID = gone.Process.Pid // the parent it had when read
				st = append(st, identity.Stat{PID: gone.Process.Pid, Comm: "sh", State: 'S', PPID: os.Getpid(), StartTime: 1})
				break
			}
		}
		return st
	}
	defer func() { readAllStats = readAllStatsProc }()
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	r := c.Receipt()
	if staged == 0 {
		t.Fatalf("the daemon was never seen to stage its lost parent; steps %+v", r.Stop.Steps)
	}
	if r.Evidence.MembersSeen < 1 || !r.StopConfirmed {
		t.Errorf("members seen %d, confirmed %t; want the daemon found by a second scan\nsteps %+v", r.Evidence.MembersSeen, r.StopConfirmed, r.Stop.Steps)
	}
	if left := marked(mark); len(left) > 0 {
		t.Errorf("left running: %v", left)
	}
}

// TestFallbackRunningOrphanUnconfirmed: an orphan of the group that every
// walk misses (staged: each snapshot names it the child of a parent that
// cannot be proven) and that still runs at the reap's deadline is a
// member not confirmed gone: the receipt lists its token, and the stop is
// not confirmed, whatever the walks said.
func TestFallbackRunningOrphanUnconfirmed(t *testing.T) {
	mark := caseMark(t)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	c := Command("sh", "-c", "setsid -f sleep 1000; exit 0")
	c.Env = append(os.Environ(), "TETHER_CASE="+mark)
	c.Mechanism = receipt.MechanismFallback
	c.AdoptOrphans = true
	c.KillWait = 200 * time.Millisecond
	daemon := 0
	readAllStats = func() []identity.Stat {
		st := readAllStatsProc()
		for i := range st {
			if st[i].PPID == os.Getpid() && st[i].Comm == "sleep" {
				daemon = st[i].PID
				st[i].PPID = gone.Process.Pid
				st = append(st, identity.Stat{PID: gone.Process.Pid, Comm: "sh", State: 'S', PPID: os.Getpid(), StartTime: 1})
				break
			}
		}
		return st
	}
	defer func() { readAllStats = readAllStatsProc }()
	err := c.Run()
	r := c.Receipt()
	if daemon == 0 {
		t.Fatalf("the daemon was never seen; steps %+v", r.Stop.Steps)
	}
	if r.StopConfirmed || !errors.Is(err, ErrNotConfirmed) {
		t.Errorf("stop confirmed %t, Run() = %v; want not confirmed with the daemon running\nsteps %+v", r.StopConfirmed, err, r.Stop.Steps)
	}
	found := false
	for _, tok := range r.Evidence.Unconfirmed {
		if p, err := identity.Parse(tok); err == nil && p.PID == daemon && p.StartTime != 0 {
			found = true
		}
	}
	if !found {
		t.Errorf("unconfirmed = %q; want the daemon's (pid %d) full token", r.Evidence.Unconfirmed, daemon)
	}
}
