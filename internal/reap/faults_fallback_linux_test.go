package reap_test

import (
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/reap"
	"github.com/tether-run/tether/receipt"
)

// fallbackRunKilled starts `tether run --mechanism fallback` of the run
// workload (a TERM-ignoring main, a setsid'd and a double-forked
// descendant), waits for its 3 sleeps, then kills it: SIGKILL while the
// command runs, or at a crash point of its stop (crashRun: a SIGTERM
// starts the stop). Its parent death signal kills the main process; the
// descendants are left, reparented to init. It returns the receipt path
// and when tether died.
func fallbackRunKilled(f *faultEnv, point string) (string, time.Time) {
	t := f.t
	t.Helper()
	rc := filepath.Join(f.io, "receipt.json")
	if point != "running" {
		r := f.crashRun(point, "--mechanism", "fallback", "--no-reap", "--receipt", rc, "--grace", "100ms")
		at := time.Now()
		f.killedAt("tether run --mechanism fallback", point, r)
		return rc, at
	}
	p := f.start(nil, "run", "--mechanism", "fallback", "--no-reap", "--receipt", rc, "--", "sh", "-c", faultRunScript)
	f.awaitSleepers(3)
	at := time.Now()
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.wait()
	return rc, at
}

// fallbackPoints are the moments a fallback run's owner is killed: while
// its command runs, and at each crash point of its stop (the leaf's rmdir
// is not the fallback's).
var fallbackPoints = []string{"running", "stop-after-term", "stop-before-kill", "stop-before-reap"}

// TestOwnerDeathFallback (issue 24): a fallback-mechanism run whose
// tether is SIGKILLed — while its command runs, and in its stop — leaves
// nothing: the watcher stops the main process by its token and the
// setsid'd and double-forked descendants by the group's marker, and
// confirms them gone. Before, only the main process died (its parent
// death signal) and the descendants lived on.
func TestOwnerDeathFallback(t *testing.T) {
	t.Parallel()
	for _, point := range fallbackPoints {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			f := faultSetup(t)
			f.watched = true
			rc, killed := fallbackRunKilled(f, point)
			took := f.awaitNoSurvivors(killed)
			t.Logf("%s: the group was gone %s after tether's death", point, took.Round(time.Millisecond))
			r := awaitReceipt(t, rc)
			if r.Stop.Reason != "owner-died" || !r.StopConfirmed || r.Mechanism != receipt.MechanismFallback {
				t.Errorf("receipt: reason %q, confirmed %t, mechanism %s; want owner-died, confirmed, fallback\nsteps %+v", r.Stop.Reason, r.StopConfirmed, r.Mechanism, r.Stop.Steps)
			}
			f.checkNoop()
		})
	}
}

// TestReapFallbackDescendants (issue 24): with no watcher (killed with
// its owner), `tether reap --grace 0` stops what a fallback run left —
// the descendants its main process's death left to init — through the
// group's marker recorded with the run, at once (0 was its default 2 s
// before), and its receipt says so.
func TestReapFallbackDescendants(t *testing.T) {
	t.Parallel()
	f := faultSetup(t)
	fallbackRunKilled(f, "running")
	if n := f.sleepers(); n < 2 {
		t.Fatalf("%d descendants alive after tether's death, want the 2 its main's death left", n)
	}
	r, rep := f.reap("--grace", "0")
	if r.code != 0 || len(rep.Actions) != 1 {
		t.Fatalf("tether reap = %s, %d actions: %s\n%+v", r, len(rep.Actions), r.stderr, rep.Actions)
	}
	a := rep.Actions[0]
	if a.Class != reap.DeadFallback || !a.Done || a.Receipt == nil || !a.Receipt.StopConfirmed {
		t.Fatalf("action %+v; want %s, done, its stop confirmed", a, reap.DeadFallback)
	}
	if ev := a.Receipt.Evidence; ev.MembersSeen < 2 || ev.ConfirmedGone != ev.MembersSeen {
		t.Errorf("evidence %+v; want the 2 descendants seen and confirmed gone", ev)
	}
	if !slices.ContainsFunc(a.Receipt.Stop.Steps, func(s receipt.Step) bool { return s.Name == "grace" && s.Observed == "no grace period" }) {
		t.Errorf("steps %+v; want --grace 0 to give no grace", a.Receipt.Stop.Steps)
	}
	if c := strings.Join(a.Receipt.Caveats, "; "); !strings.Contains(c, "marker") {
		t.Errorf("caveats %q; want the marker named as how descendants were proven", c)
	}
	f.assertNoSurvivors("after tether reap")
	f.checkNoop()
}

// TestOwnerDeathFallbackSession (issue 24): a fallback-mechanism
// session whose supervisor is SIGKILLed while its command runs is
// stopped whole — main and setsid'd descendant — by the watcher, and its
// record ends stopped, supervisor-died.
func TestOwnerDeathFallbackSession(t *testing.T) {
	t.Parallel()
	f := faultSetup(t)
	f.watched = true
	start := f.tether(nil, "start", "--no-reap", "--owner", "none", "--mechanism", "fallback", "--name", "s", "--grace", "100ms", "--", "sh", "-c", faultSessionScript)
	if start.code != 0 {
		t.Fatalf("tether start = %s: %s", start, start.stderr)
	}
	for deadline := time.Now().Add(faultPatience); f.sleepers() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the session's workload never forked its 2 sleeps (%d)", f.sleepers())
		}
	}
	if rec := f.record("s"); rec == nil || rec.Marker == "" {
		t.Fatalf("session record %+v; want the group's marker recorded", rec)
	}
	killed := time.Now()
	f.killSupervisor("s")
	took := f.awaitNoSurvivors(killed)
	t.Logf("the session's group was gone %s after its supervisor's death", took.Round(time.Millisecond))
	rec := f.record("s")
	for deadline := time.Now().Add(ownerDeathBound); rec == nil || rec.State != "stopped"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			break
		}
		rec = f.record("s")
	}
	if rec == nil || rec.State != "stopped" || rec.StopReason != "supervisor-died" {
		t.Fatalf("session record: %+v; want stopped, supervisor-died", rec)
	}
	f.checkNoop()
}
