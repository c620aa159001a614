package reap_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/receipt"
)

// ownerDeathPoints are where a SIGKILLed owner has a group to leave: from
// the leaf's registration with the watcher (before the spawn) to the end
// of its own stop. Before it, nothing of the run exists but an empty leaf
// (tether reap's orphan sweep).
var ownerDeathPoints = append([]string{"before-start", "after-start"}, faultStopPoints...)

// ownerDeathBound is a hang guard for the watcher's stop, not a timing
// assertion: the time taken is logged (issue 24's target is 1 s).
const ownerDeathBound = 15 * time.Second

// TestOwnerDeathRun kills `tether run` (SIGKILL, through its crash points)
// at every phase from before the exec to the end of its stop, and while
// its command runs: the watcher stops what was left — a TERM-ignoring
// main, a setsid'd and a double-forked descendant — writes the receipt to
// --receipt FILE and the state dir (stop reason owner-died) and ends the
// record, and tether reap then finds nothing to do (issue 24). Before the
// watcher, every one of these left the whole tree running.
func TestOwnerDeathRun(t *testing.T) {
	t.Parallel()
	for _, point := range append(ownerDeathPoints, "running") {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			f := faultSetup(t)
			f.watched = true
			rc := filepath.Join(f.io, "receipt.json")
			var killed time.Time
			if point == "running" {
				p := f.start(nil, "run", "--no-reap", "--receipt", rc, "--", "sh", "-c", faultRunScript)
				f.awaitSleepers(3)
				killed = time.Now()
				p.cmd.Process.Signal(syscall.SIGKILL)
				p.wait()
			} else {
				r := f.crashRun(point, "--no-reap", "--receipt", rc, "--grace", "100ms")
				killed = time.Now()
				f.killedAt("tether run", point, r)
			}
			took := f.awaitNoSurvivors(killed)
			t.Logf("%s: the group was gone %s after tether's death", point, took.Round(time.Millisecond))
			r := awaitReceipt(t, rc)
			if r.Stop.Reason != "owner-died" || !r.StopConfirmed || r.Cgroup == nil || !r.Cgroup.Removed {
				t.Errorf("receipt: reason %q, confirmed %t, cgroup %+v; want owner-died, confirmed, its leaf removed", r.Stop.Reason, r.StopConfirmed, r.Cgroup)
			}
			if files := f.recordFiles(); len(files) != 0 {
				t.Errorf("records left: %v", slices.Collect(func(yield func(string) bool) {
					for k := range files {
						if !yield(k) {
							return
						}
					}
				}))
			}
			f.checkNoop()
		})
	}
}

// TestOwnerDeathSession kills a session's supervisor while its command
// runs and at every step of its stop: the watcher stops the group and
// ends the record (stopped, supervisor-died, with its receipt), and the
// name is free again (issue 24). Before, the session was left
// "unsupervised" with its whole tree running.
func TestOwnerDeathSession(t *testing.T) {
	t.Parallel()
	for _, point := range append([]string{"running"}, faultStopPoints...) {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			f := faultSetup(t)
			f.watched = true
			var env []string
			if point != "running" {
				env = []string{"TETHER_CRASH_AT=" + point}
			}
			start := f.tether(env, "start", "--no-reap", "--owner", "none", "--name", "s", "--grace", "100ms", "--", "sh", "-c", faultSessionScript)
			if start.code != 0 {
				t.Fatalf("tether start = %s: %s", start, start.stderr)
			}
			ready := filepath.Join(f.state, "s", "s", "ready")
			for deadline := time.Now().Add(faultPatience); ; time.Sleep(10 * time.Millisecond) {
				if _, err := os.Stat(ready); err == nil && f.sleepers() >= 2 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the session's workload never became ready")
				}
			}
			var killed time.Time
			if point == "running" {
				killed = time.Now()
				f.killSupervisor("s")
			} else {
				stop := f.tether(nil, "stop", "--grace", "100ms", "s")
				killed = time.Now()
				t.Logf("tether stop = %s: %s", stop, stop.stderr)
			}
			took := f.awaitNoSurvivors(killed)
			t.Logf("%s: the session's group was gone %s after its supervisor's death", point, took.Round(time.Millisecond))
			var rec = f.record("s")
			for deadline := time.Now().Add(ownerDeathBound); rec == nil || rec.State != "stopped"; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					break
				}
				rec = f.record("s")
			}
			if rec == nil || rec.State != "stopped" || rec.StopReason != "supervisor-died" || rec.Receipt == "" {
				t.Fatalf("session record: %+v; want stopped, supervisor-died, with a receipt", rec)
			}
			r := awaitReceipt(t, rec.Receipt)
			if !r.StopConfirmed || r.Stop.Reason != "supervisor-died" {
				t.Errorf("receipt: confirmed %t, reason %q; want confirmed, supervisor-died", r.StopConfirmed, r.Stop.Reason)
			}
			f.checkNoop()
			// The name is free: it starts again (and is waited for, so
			// that nothing of it is in flight when the test ends).
			if again := f.tether(nil, "start", "--no-reap", "--owner", "none", "--name", "s", "--", "true"); again.code != 0 {
				t.Errorf("tether start of the name again = %s: %s", again, again.stderr)
			}
			f.tether(nil, "wait", "s")
		})
	}
}

// awaitNoSurvivors waits (up to ownerDeathBound, a hang guard) until no
// process of the test is left, fails the test if one is, and returns how
// long after since it took.
func (f *faultEnv) awaitNoSurvivors(since time.Time) time.Duration {
	f.t.Helper()
	for deadline := time.Now().Add(ownerDeathBound); len(f.survivors()) > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			for pid, argv := range f.survivors() {
				f.t.Errorf("pid %d %q survived its owner's death by %s", pid, argv, ownerDeathBound)
			}
			break
		}
	}
	return time.Since(since)
}

// awaitReceipt waits for the receipt file p the watcher writes once its
// stop is over, and decodes it.
func awaitReceipt(t *testing.T, p string) *receipt.Receipt {
	t.Helper()
	var r receipt.Receipt
	for deadline := time.Now().Add(ownerDeathBound); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(p)
		if err == nil && json.Unmarshal(b, &r) == nil && r.Stop.Reason != "" {
			return &r
		}
		if time.Now().After(deadline) {
			t.Fatalf("no receipt at %s: %v %s", p, err, b)
		}
	}
}
