package contain

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/identity"
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
	scans := 0
	c, mark, _, err := runLosingDaemon(t, func() bool { scans++; return scans == 1 })
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Receipt(); r.Evidence.MembersSeen < 1 || !r.StopConfirmed {
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
	c, _, daemon, err := runLosingDaemon(t, func() bool { return true })
	r := c.Receipt()
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

// runLosingDaemon runs, with the fallback, a main process that leaves a
// daemon (setsid -f sleep: our orphan once its parent exits) and exits
// when the test says. Each snapshot for which stage says so names the
// daemon the child of a process that has exited (a reaped pid, listed
// alive) and so cannot be proven. It returns what Run returned once the
// stop that the main's exit begins has ended.
func runLosingDaemon(t *testing.T, stage func() bool) (c *Cmd, mark string, daemon int, err error) {
	t.Helper()
	mark, dir := caseMark(t), t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	c = Command("sh", "-c", `setsid -f sleep 1000; while [ ! -e "$D/go" ]; do sleep 0.01; done`)
	c.Env = append(os.Environ(), "TETHER_CASE="+mark, "D="+dir)
	c.Mechanism = receipt.MechanismFallback
	c.AdoptOrphans = true
	c.KillWait = 200 * time.Millisecond
	// Staged from the start (set before Start, so the protocol's
	// goroutine reads it in order), acting once the daemon is known.
	var staged atomic.Int64
	readAllStats = func() []identity.Stat {
		st := readAllStatsProc()
		d := int(staged.Load())
		if d == 0 || !stage() {
			return st
		}
		for i := range st {
			if st[i].PID == d {
				st[i].PPID = gone.Process.Pid // the parent it had when read
			}
		}
		return append(st, identity.Stat{PID: gone.Process.Pid, Comm: "sh", State: 'S', PPID: os.Getpid(), StartTime: 1})
	}
	t.Cleanup(func() { readAllStats = readAllStatsProc })
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); daemon == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the daemon never became our orphan")
		}
		for _, st := range readAllStatsProc() {
			if st.PPID == os.Getpid() && st.Comm == "sleep" {
				daemon = st.PID
			}
		}
	}
	staged.Store(int64(daemon))
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return c, mark, daemon, c.Wait()
}
