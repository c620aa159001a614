package contain

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/testuser"
	"github.com/tether-run/tether/receipt"
	"golang.org/x/sys/windows"
)

// hangGuard bounds every wait of these tests. It is never an assertion
// about how long something takes.
const hangGuard = 30 * time.Second

// awaitSleepers waits until n sleepers have reported ready in dir, and
// returns their pids.
func awaitSleepers(t *testing.T, dir string, n int) []uint32 {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		ents, _ := os.ReadDir(dir)
		var pids []uint32
		for _, e := range ents {
			if p, ok := strings.CutPrefix(e.Name(), "sleep-"); ok {
				v, _ := strconv.ParseUint(p, 10, 32)
				pids = append(pids, uint32(v))
			}
		}
		if len(pids) >= n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d sleepers ready after %s", len(pids), n, hangGuard)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkGone fails t if any process carrying tag is alive: as Linux sees
// Wine's processes (by command line in /proc), and as Windows sees the
// sleepers (their pids, opened and found exited or absent).
func checkGone(t *testing.T, tag string, sleepers []uint32) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		pids, ok := procTagged(tag)
		if len(pids) == 0 {
			if !ok {
				t.Logf("/proc not readable here: only Windows' view checked")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes tagged %s still alive after %s: Linux pids %v", tag, hangGuard, pids)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, pid := range sleepers {
		h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, pid)
		if err != nil {
			continue // gone
		}
		ev, _ := windows.WaitForSingleObject(h, 0)
		windows.CloseHandle(h)
		if ev != windows.WAIT_OBJECT_0 {
			t.Errorf("sleeper %d still alive", pid)
		}
	}
}

// checkReceipt checks what every contained run's receipt must say.
func checkReceipt(t *testing.T, r *receipt.Receipt, minProcs uint32) {
	t.Helper()
	if !r.StopConfirmed || !r.Evidence.Empty || !r.Evidence.MainReaped || len(r.Evidence.Unconfirmed) > 0 {
		b, _ := r.JSON()
		t.Fatalf("stop not confirmed:\n%s", b)
	}
	if r.Mechanism != receipt.MechanismJobObject || r.Job == nil || !r.Job.Closed {
		t.Errorf("mechanism %q, job %+v; want job-object, closed", r.Mechanism, r.Job)
	}
	if r.Job != nil && (r.Job.TotalProcesses < minProcs || r.Job.ActiveProcesses != 0) {
		t.Errorf("job accounting total %d active %d; want total >= %d, active 0", r.Job.TotalProcesses, r.Job.ActiveProcesses, minProcs)
	}
	if r.Evidence.MembersSeen < int(minProcs) || r.Evidence.ConfirmedGone != r.Evidence.MembersSeen {
		t.Errorf("members seen %d, confirmed gone %d; want >= %d, all", r.Evidence.MembersSeen, r.Evidence.ConfirmedGone, minProcs)
	}
	// The main's token is identity's, of this boot, as the receipt's host.
	boot, _ := identity.BootID()
	if r.Host.BootID == "" || r.Host.BootID != boot {
		t.Errorf("host boot id %q, want %q", r.Host.BootID, boot)
	}
	if r.Main == nil {
		t.Fatal("no main process in the receipt")
	}
	tok, err := identity.Parse(r.Main.Token)
	if err != nil || tok.OS != "windows" || tok.BootID != boot || tok.PID != r.Main.PID {
		t.Errorf("main token %q: %+v, %v", r.Main.Token, tok, err)
	}
	if at := identity.StartedAt(tok); at.Before(r.StartedAt.Add(-time.Second)) || at.After(time.Now()) || !r.Main.StartedAt.Equal(at) {
		t.Errorf("main started at %v (token) and %v (receipt); the run started at %v", at, r.Main.StartedAt, r.StartedAt)
	}
}

// leaks are the leak matrix's scenarios: how many processes the job must
// have held (main included), and how many are alive while the main stays.
var leaks = []struct {
	name   string
	helper string
	procs  uint32
	alive  int
}{
	{"child", "child", 2, 2},
	{"grandchild", "grandchild", 3, 3},
	{"spawns and exits early", "spawn-exit", 3, 2},
	{"breakaway attempt", "breakaway", 2, 2},
}

// TestLeaksMainExit: the main process exits leaving its descendants; the
// run's end stops them all.
func TestLeaksMainExit(t *testing.T) {
	for _, tc := range leaks {
		t.Run(tc.name, func(t *testing.T) {
			tag, dir := newTag(), testuser.TempDir(t)
			c := helperCmd(t, tc.helper, tag, dir)
			var out, errOut bytes.Buffer
			c.Stdout, c.Stderr, c.Grace = &out, &errOut, -1
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			// Under the hang guard only: the run ends on its own.
			guard := time.AfterFunc(hangGuard, c.Kill)
			defer guard.Stop()
			if err := c.Wait(); err != nil {
				t.Fatalf("Wait() = %v, want nil; stderr %q", err, errOut.String())
			}
			r := c.Receipt()
			checkReceipt(t, r, tc.procs)
			if r.Stop.Reason != string(ReasonMainExit) || r.Exit.Code != 0 {
				t.Errorf("reason %q exit %d; want main-exit, 0", r.Stop.Reason, r.Exit.Code)
			}
			if r.StragglersTotal < 1 {
				t.Errorf("stragglers %d, want >= 1", r.StragglersTotal)
			}
			if tc.helper == "breakaway" && !strings.Contains(out.String(), "breakaway: denied") {
				t.Errorf("breakaway helper said %q, want denied", out.String())
			}
			checkGone(t, tag, nil)
		})
	}
}

// TestLeaksTimeout: everything is still running when the timeout ends the
// run: exit 124, nothing left.
func TestLeaksTimeout(t *testing.T) {
	for _, tc := range leaks {
		t.Run(tc.name, func(t *testing.T) {
			tag, dir := newTag(), testuser.TempDir(t)
			c := helperCmd(t, tc.helper, tag, dir, "stay")
			c.Timeout, c.Grace = time.Hour, -1
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			sleepers := awaitSleepers(t, dir, 1)
			if pids, ok := procTagged(tag); ok && len(pids) < tc.alive {
				// The leak check below must be able to see them.
				t.Errorf("/proc shows %d processes tagged %s, want >= %d", len(pids), tag, tc.alive)
			}
			c.BeginStop(ReasonTimeout) // what the timer does; TestTimeoutExpires runs the timer

			var ee *ExitError
			if err := c.Wait(); !errors.As(err, &ee) || ee.Code != 124 {
				t.Fatalf("Wait() = %v, want exit 124", err)
			}
			r := c.Receipt()
			checkReceipt(t, r, tc.procs)
			if !r.TimedOut || !r.Evidence.KillUsed {
				t.Errorf("timed_out %v kill_used %v; want both", r.TimedOut, r.Evidence.KillUsed)
			}
			checkGone(t, tag, sleepers)
		})
	}
}

// TestTimeoutExpires: a real timer, exit 124.
func TestTimeoutExpires(t *testing.T) {
	tag, dir := newTag(), testuser.TempDir(t)
	c := helperCmd(t, "child", tag, dir, "stay")
	c.Timeout, c.Grace = 500*time.Millisecond, -1
	if err := c.Run(); c.ExitCode() != 124 {
		t.Fatalf("Run() = %v, exit %d; want 124", err, c.ExitCode())
	}
	// At least the main: under load the child may not have started when
	// the timer fired (TestLeaksTimeout waits for the tree first).
	checkReceipt(t, c.Receipt(), 1)
	checkGone(t, tag, nil)
}

// TestTetherKilled: tether dies (TerminateProcess, as a crash or kill -9
// from Linux would end it) while its run holds a child and a grandchild;
// KILL_ON_JOB_CLOSE ends them with it.
func TestTetherKilled(t *testing.T) {
	for _, nested := range []bool{false, true} {
		t.Run("nested="+strconv.FormatBool(nested), func(t *testing.T) {
			tag, dir := newTag(), testuser.TempDir(t)
			args := []string{tag, dir}
			if nested {
				args = append(args, "nested")
			}
			args = append(args, "grandchild", "stay")
			exe, _ := os.Executable()
			tether := exec.Command(exe, args...)
			tether.Env = append(helperEnviron(), helperEnv+"=tether")
			if err := tether.Start(); err != nil {
				t.Fatal(err)
			}
			sleepers := awaitSleepers(t, dir, 1)
			if err := tether.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			tether.Wait()
			checkGone(t, tag, sleepers)
		})
	}
}

// TestNested: tether inside a job of its own (as CI runners run it) still
// contains its run in a job nested there, and stops it.
func TestNested(t *testing.T) {
	tag, dir := newTag(), testuser.TempDir(t)
	exe, _ := os.Executable()
	tether := exec.Command(exe, tag, dir, "nested", "grandchild")
	tether.Env = append(helperEnviron(), helperEnv+"=tether")
	if out, err := tether.CombinedOutput(); err != nil {
		t.Fatalf("tether: %v: %s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "receipt.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r receipt.Receipt
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	checkReceipt(t, &r, 3)
	if !r.Job.Nested {
		t.Errorf("job.nested = false, want true")
	}
	checkGone(t, tag, nil)
}

// TestExitCode: the main process's code passes through.
func TestExitCode(t *testing.T) {
	tag, dir := newTag(), testuser.TempDir(t)
	c := helperCmd(t, "exit", tag, dir, "7")
	var ee *ExitError
	if err := c.Run(); !errors.As(err, &ee) || ee.Code != 7 {
		t.Fatalf("Run() = %v, want exit status 7", err)
	}
	r := c.Receipt()
	checkReceipt(t, r, 1)
	if r.Exit.MainStatus != 7 || len(r.Stop.Steps) == 0 {
		t.Errorf("main_status %d, %d steps; want 7 and the protocol's steps", r.Exit.MainStatus, len(r.Stop.Steps))
	}
}

// TestPoliteStop: CTRL_BREAK_EVENT to the command's group first. Wine 8
// refuses the event for a process without a real console ("Incorrect
// access to Shell-no-window console"), so there the step must record the
// failure and the kill must follow; on Windows the command must exit by
// itself within the grace.
func TestPoliteStop(t *testing.T) {
	tag, dir := newTag(), testuser.TempDir(t)
	c := helperCmd(t, "polite", tag, dir)
	c.Grace = time.Minute
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(hangGuard); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "polite")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("polite helper not ready")
		}
	}
	c.BeginStop(ReasonRequest)
	c.Wait()
	r := c.Receipt()
	checkReceipt(t, r, 1)
	term := r.Stop.Steps[0]
	if term.Name != "term" || r.Stop.Signal != "CTRL_BREAK_EVENT" {
		t.Fatalf("first step %q, signal %q; want term, CTRL_BREAK_EVENT", term.Name, r.Stop.Signal)
	}
	switch {
	case term.Error == "":
		if r.Evidence.KillUsed || r.Exit.MainStatus != 3 {
			t.Errorf("break sent, but kill_used %v main_status %d; want the helper's own exit 3", r.Evidence.KillUsed, r.Exit.MainStatus)
		}
	case wineVersion() != "":
		t.Logf("under Wine %s the break was refused (%s); the kill followed: %v", wineVersion(), term.Error, r.Evidence.KillUsed)
		if !r.Evidence.KillUsed {
			t.Error("kill_used = false after a refused break")
		}
		// A break that reached no one has nothing to wait for: the
		// minute's grace is skipped.
		if g := r.Stop.Steps[1]; g.Name != "grace" || !strings.HasPrefix(g.Observed, "skipped") {
			t.Errorf("after a refused break, step %q: %q; want the grace skipped", g.Name, g.Observed)
		}
	default:
		t.Skipf("no console to send CTRL_BREAK_EVENT on: %s", term.Error)
	}
	checkGone(t, tag, nil)
}

// TestStartErrors: nothing runs, and the codes are run's.
func TestStartErrors(t *testing.T) {
	c := Command("tether-no-such-program")
	if err := c.Start(); StartErrorCode(err) != 127 {
		t.Errorf("Start(missing) = %v (code %d), want 127", err, StartErrorCode(err))
	}
	// A run's job is always new: a job with its name is refused.
	tag, dir := newTag(), testuser.TempDir(t)
	first := helperCmd(t, "sleep", tag, dir)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Wait()
	defer first.Kill()
	second := helperCmd(t, "sleep", tag, dir)
	second.RunID = first.RunID
	if err := second.Start(); !errors.Is(err, ErrNoJob) || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("Start(a run id whose job exists) = %v, want ErrNoJob saying so", err)
		second.Kill()
		second.Wait()
	}
}
